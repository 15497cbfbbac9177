"""`wren ls --agent` over the agents' own nested folders, and `wren log` on their files, as a person runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import AN_HOUR, copy_session, fixture
from wren_tui.foreign.live import held_for_writing

AGENT_HOMES = {"claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME", "pi": "PI_CODING_AGENT_DIR"}
SESSIONS = {"claude": "projects", "codex": "sessions", "pi": "sessions"}


def _label(row: dict[str, object]) -> str:
    """The name a test gave a copy (...-0001-simple: simple)."""
    return Path(str(row["path"])).stem.rsplit("000", 1)[-1].split("-", 1)[-1]


def ls(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    result = run_wren(["ls", *args, "--json"], cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return rows


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
def test_ls_lists_an_agents_nested_folder_newest_first_with_project_events_tokens_and_state(
    agent: str, tmp_path: Path
) -> None:
    root = tmp_path / "sessions"
    copy_session(agent, "simple", root, nested=True, stem="0001-simple")
    copy_session(agent, "multi-turn", root, nested=True, stem="0002-multi")
    killed = copy_session(agent, "tool-error", root, nested=True, stem="0003-killed")
    # What a run killed during its tool leaves: the lines up to its call, nothing after.
    lines = fixture(agent, "tool-error").read_bytes().splitlines(keepends=True)
    call = next(i for i, line in enumerate(lines) if b'"cat missing.txt' in line or b"cat missing.txt" in line)
    killed.write_bytes(b"".join(lines[: call + 1]))
    os.utime(killed, (time.time() - AN_HOUR, time.time() - AN_HOUR))
    rows = ls(["--agent", agent, "--dir", str(root)], cwd=tmp_path)
    assert [r["started"] for r in rows] == sorted((r["started"] for r in rows), reverse=True)
    states = {_label(r): r["state"] for r in rows}
    assert states == {"simple": "done", "multi": "done", "killed": "stopped mid-call"}, states
    assert all(r["agent"] == agent for r in rows)
    multi = next(r for r in rows if "0002-multi" in str(r["path"]))
    assert str(multi["project"]).endswith("/ws") and "multi-turn" in str(multi["project"])
    assert isinstance(multi["durationS"], float) and multi["durationS"] > 0
    if agent == "claude":
        assert multi["tokens"] == 6168 and multi["tokensExact"]  # the client's running total
    if agent == "codex":
        assert multi["tokens"] == 4 * 1240 and multi["tokensExact"]
    if agent == "pi":
        assert multi["lines"] == 11 and multi["exact"]  # small enough to be read whole


def test_ls_all_reads_each_agents_folder_from_its_own_variable_and_names_the_agent(tmp_path: Path) -> None:
    env = {}
    for agent, variable in AGENT_HOMES.items():
        home = tmp_path / f"{agent}-home"
        copy_session(agent, "simple", home / SESSIONS[agent], nested=True)
        env[variable] = str(home)
    rows = ls(["--agent", "all"], cwd=tmp_path, env={**env, "HOME": str(tmp_path)})
    assert sorted(str(r["agent"]) for r in rows) == ["claude", "codex", "pi"]
    text = run_wren(["ls", "--agent", "all"], cwd=tmp_path, env={**env, "HOME": str(tmp_path)})
    assert text.returncode == 0 and text.stdout.splitlines()[0].startswith("AGENT")
    assert {line.split()[0] for line in text.stdout.splitlines()[1:]} == {"claude", "codex", "pi"}


def test_ls_leaves_out_a_subagents_thread_and_names_a_missing_folder(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    session = copy_session("claude", "simple", root, nested=True)
    thread = session.parent / session.stem / "subagents" / "agent-a1b2.jsonl"
    thread.parent.mkdir(parents=True)
    thread.write_bytes(fixture("claude", "tool-error").read_bytes())
    assert [Path(str(r["path"])) for r in ls(["--agent", "claude", "--dir", str(root)], cwd=tmp_path)] == [session]
    missing = run_wren(["ls", "--agent", "pi", "--dir", str(tmp_path / "nowhere")], cwd=tmp_path)
    assert missing.returncode == 1 and "nowhere: no such folder" in missing.stderr


def test_a_session_just_written_or_held_open_for_writing_is_live(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    recent = copy_session("pi", "simple", root / "a", age_s=1)
    held = copy_session("codex", "simple", root / "b")
    # Another program holds it open for writing (as Codex does), though it has not written for an hour.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; f = open(sys.argv[1], 'ab'); sys.stdin.read()", str(held)],
        stdin=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 10
        key = (held.stat().st_dev, held.stat().st_ino)
        while not held_for_writing([key]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert held_for_writing([key]) == {key}
        assert ls(["--agent", "pi", "--dir", str(root / "a")], cwd=tmp_path)[0]["state"] == "live"
        assert ls(["--agent", "codex", "--dir", str(root / "b")], cwd=tmp_path)[0]["state"] == "live"
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    assert held_for_writing([key]) == set()
    assert ls(["--agent", "codex", "--dir", str(root / "b")], cwd=tmp_path)[0]["state"] == "done"
    os.utime(recent, (time.time() - 60, time.time() - 60))
    assert ls(["--agent", "pi", "--dir", str(root / "a")], cwd=tmp_path)[0]["state"] == "done"


def test_ls_says_torn_tail_corrupt_and_empty(tmp_path: Path) -> None:
    root = tmp_path / "projects" / "-ws"
    data = fixture("claude", "simple").read_bytes()
    for name, content in (
        ("torn", data[:-40]),
        ("corrupt", data.replace(b"\n", b"\nnot json\n", 1)),
        ("empty", b""),
    ):
        path = root / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        os.utime(path, (time.time() - AN_HOUR, time.time() - AN_HOUR))
    states = {
        Path(str(r["path"])).stem: (r["state"], r["reason"])
        for r in ls(["--agent", "claude", "--dir", str(root)], cwd=tmp_path)
    }
    assert states["torn"][0] == "torn tail" and states["empty"][0] == "empty"
    assert states["corrupt"] == ("corrupt", "line 2: it is not JSON")


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
def test_log_prints_an_agents_file_as_wren_events_by_line_number(agent: str, tmp_path: Path) -> None:
    path = fixture(agent, "tool-error")
    text = run_wren(["log", str(path)], cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "user: 'Show me missing.txt please.'" in text.stdout
    assert "tool_end" in text.stdout and "failed" in text.stdout
    doc = json.loads(run_wren(["log", str(path), "--json"], cwd=tmp_path).stdout)
    assert doc["agent"] == agent and doc["path"] == str(path) and doc["reason"] is None
    assert doc["skipped"]["unknown"] == {}
    seqs = [e["seq"] for e in doc["events"]]
    assert seqs == sorted(seqs) and max(seqs) <= len(path.read_bytes().splitlines())
    if agent != "pi":  # pi writes no bookkeeping line: nothing is left out
        assert "not shown:" in text.stderr


def test_log_stops_at_a_line_that_is_not_json_and_exits_4(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = fixture("pi", "simple").read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:4]) + b"\x00\x00garbage\n" + b"".join(lines[4:]))
    text = run_wren(["log", str(path)], cwd=tmp_path)
    assert text.returncode == 4
    assert "stopped at line 5" in text.stdout and "[corrupt]" in text.stdout
    assert "List the files" in text.stdout and "The folder holds" not in text.stdout


def test_a_damaged_agents_file_says_where_reading_stops_in_log_and_fork(tmp_path: Path) -> None:
    lines = fixture("pi", "simple").read_bytes().splitlines(keepends=True)
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_bytes(b"".join(lines[:4]) + b"not json\n" + b"".join(lines[4:]))
    logged = run_wren(["log", str(corrupt)], cwd=tmp_path)
    assert logged.returncode == 4
    assert f"{corrupt}: line 5" in logged.stderr and f"wren fork {corrupt}" in logged.stderr
    # The points before the damage are listed, and the command says the list stops there.
    listed = run_wren(["fork", str(corrupt), "--dir", str(tmp_path / "j")], cwd=tmp_path)
    assert listed.returncode == 4 and "4  user: List the files" in listed.stdout and "line 5" in listed.stderr
    # A last line its writer has not finished: no resume sets it aside, it may still be being written.
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b"".join(lines)[:-30])
    logged = run_wren(["log", str(torn)], cwd=tmp_path)
    assert logged.returncode == 4 and "its writer may still be writing that line" in logged.stderr
    assert "resum" not in logged.stderr and "Traceback" not in logged.stderr
    listed = run_wren(["fork", str(torn), "--dir", str(tmp_path / "j")], cwd=tmp_path)
    assert listed.returncode == 0 and "4  user: List the files" in listed.stdout
