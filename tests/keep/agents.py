"""A home with every agent's real sessions where each agent keeps them, and what its folders hold, to compare."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, age, copy_session, fixture

KIMI_SESSION = "1b7f573fa294b83a549b9f57561f7241/0000-simple"
CLINE_ID = "1796616332520"
CONTINUE_ID = "424d6214-83c8-47a2-9df8-2f362e3f1331"

# Where each agent's folder of sessions is under a home (no variable set), and the file each test changes there.
ROOTS = {
    "claude": ".claude/projects",
    "codex": ".codex/sessions",
    "pi": ".pi/agent/sessions",
    "gemini": ".gemini/tmp",
    "qwen": ".qwen/projects",
    "copilot": ".copilot/session-state",
    "kimi": ".kimi/sessions",
    "opencode": ".local/share/opencode",
    "kilo": ".local/share/kilo",
    "continue": ".continue/sessions",
    "cline": ".cline/data/sessions",
}


def every_agent(home: Path) -> dict[str, list[str]]:
    """Each agent's recordings placed in `home` as the agent writes them; each agent's files there, relative to
    its folder (the ones `wren keep` keeps)."""
    kept: dict[str, list[str]] = {}
    for agent in ("claude", "codex", "pi", "gemini", "qwen", "copilot"):
        root = home / ROOTS[agent]
        kept[agent] = [
            copy_session(agent, name, root, nested=True, stem=f"000{i}-{name}").relative_to(root).as_posix()
            for i, name in enumerate(("simple", "multi-turn"))
        ]
    kimi = copy_session("kimi", "simple", home / ROOTS["kimi"], nested=True)
    (kimi.parent / "context.jsonl").write_bytes(b'{"role": "_checkpoint", "id": 0}\n')
    (kimi.parent / "state.json").write_bytes(b'{"title": "simple"}\n')
    kept["kimi"] = [f"{KIMI_SESSION}/{name}" for name in ("context.jsonl", "state.json", "wire.jsonl")]
    for agent, wal in (("opencode", "simple.opencode.db"), ("kilo", "simple.kilo.db")):
        root = home / ROOTS[agent]
        root.mkdir(parents=True)
        name = f"{agent}.db"
        for ending in ("", "-wal", "-shm"):  # a database whose last rows are still in its WAL
            shutil.copy(
                AGENTS / ("kilo-cli" if agent == "kilo" else agent) / "wal-unmerged" / (wal + ending),
                root / (name + ending),
            )
        kept[agent] = [name]
    root = home / ROOTS["continue"]
    root.mkdir(parents=True)
    shutil.copy(fixture("continue", "simple"), root / f"{CONTINUE_ID}.json")
    shutil.copy(AGENTS / "continue-cli" / "simple.sessions-index.json", root / "sessions.json")  # its index: not kept
    kept["continue"] = [f"{CONTINUE_ID}.json"]
    root = home / ROOTS["cline"] / CLINE_ID
    root.mkdir(parents=True)
    shutil.copy(fixture("cline", "simple"), root / f"{CLINE_ID}.messages.json")
    shutil.copy(AGENTS / "cline" / "simple.json", root / f"{CLINE_ID}.json")
    kept["cline"] = [f"{CLINE_ID}/{CLINE_ID}.json", f"{CLINE_ID}/{CLINE_ID}.messages.json"]
    for path in home.rglob("*"):
        if path.is_file():
            age(path, 3600)
    return kept


def what_is_there(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file below `folder` (a -wal or -shm too): its bytes and its modification time in nanoseconds."""
    out = {}
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            path = Path(dirpath) / name
            out[path.relative_to(folder).as_posix()] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def keep(home: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`wren keep ARGS` for the user of `home`, whose store is `home/../kept`; its output. It must exit 0."""
    done = run_wren(["keep", *args], cwd=home.parent, env=keep_env(home) | (env or {}))
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def keep_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "WREN_KEEP_DIR": str(home.parent / "kept"), "XDG_DATA_HOME": str(home / ".local/share")}
