"""Real session files of the other agents (tests/fixtures/agents), copied where a test needs them; and the
commands every reader's tests run on them (`wren_json`, `fork_and_resume`).

A copy's modification time is set an hour back unless asked otherwise, so it is not taken for a
session still being written (live: a process holds it open for writing, or it changed in the last
few seconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import FIXTURES, run_wren
from wren_tui.journal.events import Fork, Message, RunStart
from wren_tui.journal.reader import read_events

AGENTS = FIXTURES / "agents"
EXTERNAL = FIXTURES / "external"
FOLDER = {
    "claude": "claude-code",
    "codex": "codex",
    "pi": "pi",
    "gemini": "gemini-cli",
    "qwen": "qwen-code",
    "copilot": "copilot-cli",
    "opencode": "opencode",
    "kilo": "kilo-cli",
    "kimi": "kimi-cli",
    "continue": "continue-cli",
    "cline": "cline",
    "vibe": "mistral-vibe",
    "aider": "aider",
}
# The formats whose files are not JSON lines, by how a recording's name ends.
_NOT_JSONL = {
    "opencode": ".opencode.db",
    "kilo": ".kilo.db",
    "aider": ".chat.history.md",
    "continue": ".json",
    "cline": ".messages.json",
}
# What each client named its files, and where under its sessions folder (see tests/fixtures/agents/README).
_NAMES = {
    "claude": "-var-tmp-ws/{stem}.jsonl",
    "codex": "2026/11/30/rollout-2026-11-30T09-02-58-{stem}.jsonl",
    "pi": "--var-tmp-ws--/2026-11-30T09-03-15-966Z_{stem}.jsonl",
    "gemini": "ws/chats/session-2026-12-01T14-08-{stem}.jsonl",
    "qwen": "-home-user-project-ws/chats/{stem}.jsonl",
    "copilot": "{stem}/events.jsonl",
    # Kimi CLI: the md5 of the workspace's path, then the session's uuid (its wire.jsonl, renamed simple.jsonl here).
    "kimi": "1b7f573fa294b83a549b9f57561f7241/{stem}/wire.jsonl",
}
AN_HOUR = 3600.0


def fixture(agent: str, name: str) -> Path:
    """A real recording: name is simple, tool-error, multi-turn or (Claude Code, Codex, pi) killed (SIGKILL during
    its tool). Mistral Vibe keeps a folder per session (tests/foreign/test_vibe.py copies it whole): its first
    journal segment that holds records, which is recognised by its content."""
    if agent == "vibe":
        segments = sorted((AGENTS / FOLDER[agent] / name).glob("*/journal/*.jsonl"))
        return next(path for path in segments if path.stat().st_size)
    return AGENTS / FOLDER[agent] / f"{name}{_NOT_JSONL.get(agent, '.jsonl')}"


def lines_of(agent: str, name: str) -> list[bytes]:
    return fixture(agent, name).read_bytes().splitlines(keepends=True)


def copy_session(
    agent: str,
    name: str,
    dest: Path,
    *,
    lines: int | None = None,
    age_s: float = AN_HOUR,
    stem: str | None = None,
    nested: bool = False,
) -> Path:
    """A copy of a recording at `dest` (a folder: named as the agent names it), its first `lines` lines only
    when given (what a killed run leaves), last changed `age_s` seconds ago."""
    data = b"".join(lines_of(agent, name)[:lines])
    if dest.suffix != ".jsonl":
        relative = _NAMES[agent].format(stem=stem or f"0000-{name}") if nested else f"{stem or name}.jsonl"
        dest = dest / relative
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    age(dest, age_s)
    return dest


def age(path: Path, seconds: float) -> None:
    """Set a file's modification time `seconds` back from now."""
    then = time.time() - seconds
    os.utime(path, (then, then))


_PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run([sys.executable, '-m', 'wren_tui', *sys.argv[1:]], capture_output=True, text=True)\n"
    "sys.stderr.write(done.stderr)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "print(done.returncode)\n"
    "sys.stdout.write(done.stdout)\n"
)


def peak_rss_kb_of_wren(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, subprocess.CompletedProcess[str]]:
    """`wren ARGS` run by a fresh Python whose only child it is: the child's peak resident size in KB, and its run."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    full["XDG_STATE_HOME"] = str(cwd / "state")
    full.update(env or {})
    ran = subprocess.run(
        [sys.executable, "-c", _PEAK, *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=300
    )
    peak, code, out = ran.stdout.split("\n", 2)
    return int(peak), subprocess.CompletedProcess(args, int(code), out, ran.stderr)


def wren_json(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> object:
    """What `wren ARGS --json` prints, decoded; it must exit 0."""
    result = run_wren([*args, "--json"], cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def fork_and_resume(
    session: Path, seq: int, journals: Path, cwd: Path
) -> tuple[RunStart, list[tuple[str, str]], subprocess.CompletedProcess[str]]:
    """Fork another agent's session at `seq` into a Wren journal, then resume it with the scripted model.

    The new journal reads whole and ends in its fork event at `seq`; the agent's file is left byte- and
    mtime-identical. Its run_start, the (role, text) of its messages, and the resume's process.
    """
    before = session.read_bytes(), session.stat().st_mtime_ns
    made = wren_json(["fork", str(session), str(seq), "--dir", str(journals)], cwd)
    assert isinstance(made, dict)
    result = read_events(Path(made["path"]))
    assert result.ok
    start, *middle, last = result.events
    assert isinstance(start, RunStart) and isinstance(last, Fork) and last.at_seq == seq
    said = [(e.message.role, e.message.content) for e in middle if isinstance(e, Message)]
    resumed = run_wren(
        ["resume", made["id"], "what did you find?", "--dir", str(journals), "--model", "scripted"], cwd=cwd
    )
    assert resumed.returncode == 0, resumed.stderr
    assert (session.read_bytes(), session.stat().st_mtime_ns) == before
    return start, said, resumed
