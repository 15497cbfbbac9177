"""`wren keep --status`: per agent what is kept and what changed in its folder since the last keep; it writes
nothing, in the agents' folders or in the store."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_wren
from tests.foreign.sessions import copy_session
from tests.keep.agents import CLINE_ID, ROOTS, every_agent, keep, keep_env, what_is_there


def test_status_says_what_is_kept_and_each_kind_of_change_since_and_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    every_agent(home)
    root = home / ROOTS["codex"]
    grows = copy_session("codex", "tool-error", root, nested=True, stem="grows")
    rewritten = copy_session("codex", "killed", root, nested=True, stem="rewritten")
    keep(home)
    with open(grows, "ab") as f:
        f.write(b'{"timestamp":"2026-11-30T09:03:00Z","type":"event_msg","payload":{"type":"x"}}\n')
    data = rewritten.read_bytes()
    at = data.rfind(b'"type"')  # a change within the last 4 KiB: what tells a rewrite from a growth
    rewritten.write_bytes(data[:at] + b'"TYPE"' + data[at + 6 :] + b"\n")
    next((home / ROOTS["codex"]).rglob("*0000-simple*")).unlink()
    truncated = next((home / ROOTS["codex"]).rglob("*0001-multi-turn*"))
    truncated.write_bytes(truncated.read_bytes()[:100])
    new = copy_session("codex", "simple", root, nested=True, stem="new")
    messages = home / ROOTS["cline"] / CLINE_ID / f"{CLINE_ID}.messages.json"
    messages.write_bytes(messages.read_bytes().replace(b"notes", b"NOTES"))
    agents_before, store_before = what_is_there(home), what_is_there(tmp_path / "kept")
    done = run_wren(["keep", "--status", "--json"], cwd=tmp_path, env=keep_env(home))
    assert done.returncode == 0, done.stderr
    assert what_is_there(home) == agents_before and what_is_there(tmp_path / "kept") == store_before
    report = json.loads(done.stdout)
    by_agent = {a["agent"]: a for a in report["agents"]}
    codex = by_agent["codex"]
    rel = lambda path: path.relative_to(root).as_posix()  # noqa: E731
    assert codex["since"] == {
        "new": [rel(new)],
        "grown": [rel(grows)],
        "rewritten": [rel(rewritten)],
        "truncated": [rel(truncated)],
        "deleted": [next(r for r in codex_kept(tmp_path) if "0000-simple" in r)],
    }
    assert (codex["files"], codex["versions"], codex["deleted_by_agent"]) == (4, 4, 0)
    assert by_agent["cline"]["since"] == {"rewritten": [f"{CLINE_ID}/{CLINE_ID}.messages.json"]}
    assert by_agent["claude"]["since"] == {} and by_agent["claude"]["files"] == 2
    assert report["bytes"] > sum(a["bytes"] for a in report["agents"]) > 0
    text = run_wren(["keep", "--status"], cwd=tmp_path, env=keep_env(home)).stdout
    assert "Codex: 4 files kept, " in text
    assert "in 4 versions; since the last keep: 1 new, 1 grown, 1 rewritten, 1 truncated, 1 deleted" in text
    assert f"the store: {tmp_path / 'kept'}, " in text


def codex_kept(tmp_path: Path) -> list[str]:
    return [
        p.relative_to(tmp_path / "kept" / "codex" / "files").as_posix()
        for p in (tmp_path / "kept" / "codex" / "files").rglob("*.jsonl")
    ]
