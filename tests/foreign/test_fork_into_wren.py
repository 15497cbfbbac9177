"""Fork into Wren: a clean point of another agent's session becomes a new Wren journal that `wren resume` continues;
the session's file is only read, and a crash leaves no journal or a whole one."""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import AN_HOUR, copy_session, fixture
from tests.reliability.simfs import RecordingOps, crash_state
from wren_tui.foreign import FORMATS
from wren_tui.foreign.fork import fork_into_wren
from wren_tui.journal.events import Fork, Message, RunStart
from wren_tui.journal.reader import read_events

# The workspace each recording ran in, as the files say.
RECORDED_CWD = {
    "claude": "/var/tmp/wren-claude-code-multi-turn-4yawf81l/ws",
    "codex": "/var/tmp/wren-codex-multi-turn-dy2wjtev/ws",
    "pi": "/var/tmp/wren-pi-multi-turn-fh223b1e/ws",
}
FIRST_ANSWER = {"claude": 27, "codex": 16, "pi": 7}


def fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
def test_wren_fork_lists_the_points_then_forks_into_a_journal_wren_resume_continues(agent: str, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("TODO\n- buy milk\n- fix the flaky test\n")
    # The session worked in a folder of the recording machine: here it is this test's workspace.
    session = tmp_path / "agent" / "session.jsonl"
    session.parent.mkdir()
    session.write_bytes(
        fixture(agent, "multi-turn").read_bytes().replace(RECORDED_CWD[agent].encode(), str(workspace).encode())
    )
    before = fingerprint(session)
    journals = tmp_path / "journals"

    listed = run_wren(["fork", str(session), "--dir", str(journals)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert f"{FIRST_ANSWER[agent]}  assistant: notes.txt is a short to-do list with two items." in listed.stdout
    assert "fork into Wren with" in listed.stdout

    made = run_wren(["fork", str(session), str(FIRST_ANSWER[agent]), "--dir", str(journals), "--json"], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    forked = json.loads(made.stdout)
    assert forked["from"] == str(session) and forked["atSeq"] == FIRST_ANSWER[agent]
    result = read_events(Path(forked["path"]))
    assert result.ok  # every line through the journal kernel: seq, ts, CRC
    start, *middle, last = result.events
    assert isinstance(start, RunStart) and start.cwd == str(workspace)
    assert isinstance(last, Fork) and (last.from_, last.at_seq) == (str(session), FIRST_ANSWER[agent])
    roles = [e.message.role for e in middle if isinstance(e, Message)]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert sorted(p.name for p in journals.iterdir()) == [Path(forked["path"]).name]  # no temporary left
    assert fingerprint(session) == before

    resumed = run_wren(
        ["resume", forked["id"], "what did you find in notes.txt?", "--dir", str(journals), "--model", "scripted"],
        cwd=tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"working in {workspace}" in resumed.stdout
    assert "notes.txt is a short to-do list with two items." in resumed.stdout  # it answers from the forked history
    again = read_events(Path(forked["path"]))
    assert again.ok and isinstance(again.events[len(result.events)], RunStart)
    assert fingerprint(session) == before


def test_a_point_that_is_not_clean_is_refused_with_the_valid_points(tmp_path: Path) -> None:
    session = copy_session("claude", "simple", tmp_path)
    journals = tmp_path / "journals"
    refused = run_wren(["fork", str(session), "22", "--dir", str(journals)], cwd=tmp_path)
    assert refused.returncode == 2
    assert "seq 22 is not a clean fork point" in refused.stderr and "28  assistant: The folder holds" in refused.stderr
    assert not journals.exists()


def test_a_killed_session_forks_at_its_last_clean_point(tmp_path: Path) -> None:
    # What a run killed during its tool leaves: the call's line, and no result after it.
    session = copy_session("pi", "simple", tmp_path, lines=5, age_s=AN_HOUR)
    listed = run_wren(["fork", str(session), "--dir", str(tmp_path / "j"), "--json"], cwd=tmp_path)
    assert [p["seq"] for p in json.loads(listed.stdout)] == [4]


# The prompt of each real run killed during its tool (SIGKILL to the client's process group, 1.5 s into a 5 s build).
KILLED_PROMPT = {"claude": 3, "codex": 8, "pi": 4}


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
def test_a_run_killed_during_its_tool_is_stopped_mid_call_and_forks_at_its_prompt(agent: str, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    session = copy_session(agent, "killed", root, nested=True)
    listed = run_wren(["ls", "--agent", agent, "--dir", str(root), "--json"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [row["state"] for row in json.loads(listed.stdout)] == ["stopped mid-call"]
    journals = tmp_path / "journals"
    points = run_wren(["fork", str(session), "--dir", str(journals), "--json"], cwd=tmp_path)
    assert [p["seq"] for p in json.loads(points.stdout)] == [KILLED_PROMPT[agent]]
    made = run_wren(["fork", str(session), str(KILLED_PROMPT[agent]), "--dir", str(journals), "--json"], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    events = read_events(Path(json.loads(made.stdout)["path"])).events
    said = [(e.message.role, e.message.content) for e in events if isinstance(e, Message)]
    assert said == [("user", "Run the slow build (it takes a few seconds).")]


def test_a_crash_while_forking_leaves_no_journal_or_a_whole_one(tmp_path: Path) -> None:
    session = copy_session("codex", "multi-turn", tmp_path / "agent")
    folder = tmp_path / "journals"
    folder.mkdir()
    ops = RecordingOps()
    forked = fork_into_wren(session, FORMATS["codex"], 31, folder, ops=ops)
    whole = forked.path.read_bytes()
    kinds = [op.kind for op in ops.log]
    # Written under a temporary name, made durable, then renamed and the folder made durable.
    assert kinds[0] == "create" and kinds[-3:] == ["sync", "rename", "sync_dir"] and "sync" not in kinds[:-3]
    assert ops.log[0].path.name.startswith(".") and ops.log[0].path != forked.path
    rng = random.Random(14)
    for upto in range(len(ops.log) + 1):
        for trial in range(8):
            state = crash_state(ops.log, upto, rng if trial else None, keep_all=trial == 1)
            assert state.get(forked.path, whole) == whole, f"a crash after {upto} operations left a partial journal"


def test_the_session_file_is_only_read_while_forking(tmp_path: Path) -> None:
    session = copy_session("claude", "multi-turn", tmp_path / "agent")
    before = fingerprint(session)
    os.chmod(session, 0o444)
    fork_into_wren(session, FORMATS["claude"], 39, tmp_path / "journals")
    assert fingerprint(session) == before and sorted(p.name for p in session.parent.iterdir()) == [session.name]
