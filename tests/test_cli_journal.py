"""The journal commands as a user runs them: wren log, wren ls, wren fork."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.journal.helpers import framed
from wren_tui.journal.events import ChatMessage, Delta, Message, RunEnd, RunStart, ToolCall, ToolEnd, ToolStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import new_session_id
from wren_tui.journal.writer import JournalWriter


def _session(folder: Path) -> Path:
    path = folder / f"{new_session_id()}.jsonl"
    with JournalWriter.create(path) as w:
        w.append(RunStart(pid=os.getpid(), cwd=str(folder), model="scripted", version="test"))
        w.append(Message(message=ChatMessage(role="user", content="run the tests")))
        call = ToolCall(id="c1", name="run_command", args='{"command": "pytest"}')
        w.append(Message(message=ChatMessage(role="assistant", content="running", tool_calls=[call])))
        w.append(ToolStart(id="c1", name="run_command", read_only=False, approval="approved"))
        w.append(ToolEnd(id="c1", ok=False, elapsed_ms=12, chars=30))
        w.append(Message(message=ChatMessage(role="tool", content="1 failed", tool_call_id="c1")))
        w.append(Message(message=ChatMessage(role="assistant", content="test_divide_by_zero fails")))
        w.append(RunEnd(reason="done"))
    return path


def test_log_of_a_torn_journal_prints_what_it_read_and_exits_4(tmp_path: Path) -> None:
    path = _session(tmp_path)
    with open(path, "ab") as f:
        f.write(b'{"seq":9,"ts":"2026-')
    proc = run_wren(["log", path.name[:-6], "--dir", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 4
    assert "test_divide_by_zero fails" in proc.stdout
    assert "stopped at line 9 (byte" in proc.stdout
    assert "cut short" in proc.stdout


def test_ls_json_lists_newest_first_with_state(tmp_path: Path) -> None:
    first = _session(tmp_path)
    second = tmp_path / "s-29990101-000000-zzzz.jsonl"
    second.write_bytes(first.read_bytes()[:-40])
    proc = run_wren(["ls", "--json"], cwd=tmp_path, env={"WREN_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["id"] for r in rows] == [second.name[:-6], first.name[:-6]]
    assert [r["state"] for r in rows] == ["torn tail", "done"]


def test_fork_at_a_point_inside_a_tool_call_is_refused_with_the_valid_points(tmp_path: Path) -> None:
    path = _session(tmp_path)
    before = path.read_bytes()
    proc = run_wren(["fork", str(path), "3"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "not a clean fork point" in proc.stderr
    assert "2  user: run the tests" in proc.stderr
    assert "7  assistant: test_divide_by_zero fails" in proc.stderr
    ok = run_wren(["fork", str(path), "7", "--json"], cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    forked = json.loads(ok.stdout)
    assert forked["atSeq"] == 7 and forked["from"] == path.name[:-6]
    assert path.read_bytes() == before


def test_log_of_a_missing_session_names_it_and_exits_1(tmp_path: Path) -> None:
    proc = run_wren(["log", "s-20260101-000000-abcd", "--dir", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 1
    assert "no session s-20260101-000000-abcd" in proc.stderr


def test_log_of_another_agents_file_reads_it_as_that_agents_session(tmp_path: Path) -> None:
    from tests.conftest import FIXTURES

    # Recognised by its content (a Codex rollout), not taken for a damaged Wren journal.
    proc = run_wren(["log", str(FIXTURES / "external" / "codex" / "agentlogs_crud_rollout.jsonl")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "user: 'create a file `JOKE.md`" in proc.stdout and "stopped at" not in proc.stdout


def test_log_json_of_the_reference_lines_reads_them_as_the_designs_journal_not_as_wren_s(tmp_path: Path) -> None:
    from tests.conftest import FIXTURES

    proc = run_wren(["log", "--json", str(FIXTURES / "seed" / "mca_excerpt.jsonl")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["agent"] == "mca" and doc["reason"] is None
    assert [e["type"] for e in doc["events"]] == ["message", "message", "tool_end", "message"]


def test_log_json_of_the_reference_lines_named_as_a_wren_session_stops_at_line_1_for_want_of_a_crc(
    tmp_path: Path,
) -> None:
    from tests.conftest import FIXTURES

    path = tmp_path / "s-20260907-100000-abcd.jsonl"  # a Wren journal's name: its lines must carry their crcs
    path.write_bytes((FIXTURES / "seed" / "mca_excerpt.jsonl").read_bytes())
    proc = run_wren(["log", "--json", str(path)], cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["events"] == [] and doc["stoppedAtLine"] == 1
    assert doc["reason"].startswith("line 1: it has no crc member")


def test_log_json_of_the_reference_lines_given_crcs_has_three_events_and_the_gap_warning(tmp_path: Path) -> None:
    from tests.conftest import FIXTURES

    path = tmp_path / "excerpt.jsonl"
    path.write_bytes(framed((FIXTURES / "seed" / "mca_excerpt.jsonl").read_bytes()))
    proc = run_wren(["log", "--json", str(path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [e["seq"] for e in doc["events"]] == [1, 4, 5]
    assert doc["warnings"] == ["line 2: seq jumps from 1 to 4"] and doc["reason"] is None


def test_fork_without_seq_lists_the_clean_points(tmp_path: Path) -> None:
    path = _session(tmp_path)
    proc = run_wren(["fork", path.name[:-6], "--dir", str(tmp_path), "--json"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [p["seq"] for p in json.loads(proc.stdout)] == [2, 7]


def test_ls_prints_a_table_of_sessions(tmp_path: Path) -> None:
    path = _session(tmp_path)
    proc = run_wren(["ls", "--dir", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()
    assert header.split()[:3] == ["ID", "STARTED", "EVENTS"]
    assert row.startswith(path.name[:-6]) and " 8 " in row and "done" in row


def test_a_session_id_that_tries_to_leave_the_folder_is_refused(tmp_path: Path) -> None:
    proc = run_wren(["log", "../../etc/passwd", "--dir", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 1
    assert "is neither a session id" in proc.stderr


def test_log_json_gives_each_line_as_written_and_where_a_corrupt_journal_stopped(tmp_path: Path) -> None:
    path = _session(tmp_path)
    lines = path.read_bytes().splitlines()
    with open(path, "ab") as f:
        f.write(b"not json\n" + lines[-1] + b"\n")
    proc = run_wren(["log", "--json", str(path)], cwd=tmp_path)
    assert proc.returncode == 4
    doc = json.loads(proc.stdout)
    assert doc["events"] == [json.loads(line) for line in lines]
    assert [e["crc"] for e in doc["events"]] == [line[-10:-2].decode() for line in lines]
    assert (doc["stoppedAtLine"], doc["stoppedAtOffset"]) == (
        len(lines) + 1,
        path.stat().st_size - 9 - len(lines[-1]) - 1,
    )
    assert doc["reason"] == f"line {len(lines) + 1}: it is not JSON" and doc["torn"] is False
    assert (doc["id"], doc["path"], doc["warnings"]) == (path.stem, str(path), [])


def test_log_json_stays_valid_json_when_a_line_holds_bad_utf8_in_a_field_the_reader_skips(tmp_path: Path) -> None:
    path = tmp_path / "foreign.jsonl"
    lines = framed(
        b'{"seq":1,"ts":"t","type":"run_end","reason":"done","note":"\xff\xfe"}\n'
        b'{"seq":2,"ts":"t","type":"message","message":{"role":"user","content":"caf\xc3\xa9"}}\n'
    )
    path.write_bytes(lines)
    proc = run_wren(["log", "--json", str(path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["events"] == [
        # Re-encoded, not as written (a run holding bytes that are not UTF-8), so without their crc members.
        {"seq": 1, "ts": "t", "type": "run_end", "reason": "done"},
        {"seq": 2, "ts": "t", "type": "message", "message": {"role": "user", "content": "café"}},
    ]


def _as_a_user_without_root_override() -> list[str]:
    """The command prefix that makes permissions bite: nothing for a user, setpriv for root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: root's permission override cannot be dropped")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def test_ls_lists_every_readable_journal_and_marks_an_unreadable_one_with_why(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    readable = [_session(folder) for _ in range(2)]
    locked = folder / "s-20260101-000000-lock.jsonl"
    locked.write_bytes(readable[0].read_bytes())
    locked.chmod(0)
    prefix = _as_a_user_without_root_override()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}

    def ls(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, sys.executable, "-m", "wren_tui", "ls", "--dir", str(folder), *extra],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    text, as_json = ls(), ls("--json")
    for proc in (text, as_json):
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == f"wren: {locked}: permission denied; it is listed as unreadable\n"
    rows = {row["id"]: row for row in json.loads(as_json.stdout)}
    assert {rows[p.stem]["state"] for p in readable} == {"done"}
    assert rows[locked.stem]["state"] == "unreadable"
    assert rows[locked.stem]["reason"] == f"{locked}: permission denied"
    lines = {line.split()[0]: line for line in text.stdout.splitlines()[1:]}
    assert set(lines) == {p.stem for p in [*readable, locked]}
    assert "unreadable" in lines[locked.stem] and "permission denied" in lines[locked.stem]


def test_ls_of_a_folder_that_does_not_exist_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    proc = run_wren(["ls", "--dir", str(missing)], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"wren: {missing}: no such folder")
    assert proc.stdout == ""


def test_ls_of_the_default_folder_before_any_session_says_there_are_none(tmp_path: Path) -> None:
    proc = run_wren(["ls"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("no sessions in ")


def _ended(folder: Path, reason: str) -> Path:
    path = folder / f"{new_session_id()}.jsonl"
    with JournalWriter.create(path) as w:
        w.append(RunStart(pid=os.getpid(), cwd=str(folder), model="scripted", version="test"))
        w.append(Message(message=ChatMessage(role="user", content="hello")))
        w.append(RunEnd(reason=reason))  # type: ignore[arg-type]
    return path


def test_ls_shows_how_each_run_ended_cancelled_error_and_limit_are_not_done(tmp_path: Path) -> None:
    paths = {reason: _ended(tmp_path, reason) for reason in ("done", "cancelled", "error", "limit")}
    proc = run_wren(["ls", "--json", "--dir", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    states = {row["id"]: row["state"] for row in json.loads(proc.stdout)}
    assert {reason: states[path.stem] for reason, path in paths.items()} == {
        "done": "done",
        "cancelled": "cancelled",
        "error": "error",
        "limit": "limit",
    }


def test_a_forks_started_is_its_own_fork_time_not_its_parents(tmp_path: Path) -> None:
    parent = _session(tmp_path)
    forked = run_wren(["fork", str(parent), "7", "--json"], cwd=tmp_path)
    assert forked.returncode == 0, forked.stderr
    child = Path(json.loads(forked.stdout)["path"])
    fork_event = read_events(child).events[-1]
    proc = run_wren(["ls", "--json", "--dir", str(tmp_path)], cwd=tmp_path)
    rows = {row["id"]: row for row in json.loads(proc.stdout)}
    assert rows[child.stem]["started"] == fork_event.ts != rows[parent.stem]["started"]
    assert rows[child.stem]["forkedFrom"] == parent.stem


def test_the_fork_list_lines_up_past_seq_9(tmp_path: Path) -> None:
    path = tmp_path / f"{new_session_id()}.jsonl"
    with JournalWriter.create(path) as w:
        w.append(RunStart(pid=os.getpid(), cwd=str(tmp_path), model="scripted", version="test"))
        for n in range(6):
            w.append(Message(message=ChatMessage(role="user", content=f"question {n}")))
            w.append(Message(message=ChatMessage(role="assistant", content=f"answer {n}")))
    proc = run_wren(["fork", str(path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    points = proc.stdout.splitlines()[1:]
    assert points[0] == "   2  user: question 0" and points[-1] == "  13  assistant: answer 5"
    assert len({line.index(":") for line in points if "user" in line}) == 1


def test_log_describes_a_streamed_delta_with_its_text_made_visible(tmp_path: Path) -> None:
    path = tmp_path / f"{new_session_id()}.jsonl"
    with JournalWriter.create(path) as w:
        w.append(RunStart(pid=os.getpid(), cwd=str(tmp_path), model="scripted", version="test"))
        w.append(Delta(text="partial reply \x1b[2J before the stream dropped " + "x" * 200))
    proc = run_wren(["log", str(path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.splitlines()[1]
    assert "delta" in line
    assert "streamed 245 chars: 'partial reply \\x1b[2J before the stream dropped xxx" in line
    assert "\x1b" not in proc.stdout and len(line) < 200


def test_log_finds_a_bare_journal_file_name_in_the_journals_folder(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    path = _session(folder)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_wren(["log", path.name, "--dir", str(folder)], cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert "test_divide_by_zero fails" in proc.stdout
    missing = run_wren(["log", "s-20260101-000000-none.jsonl", "--dir", str(folder)], cwd=elsewhere)
    assert missing.returncode == 1
    assert f"no such journal file (nor in {folder})" in missing.stderr


def test_watch_of_a_workspace_browses_its_journals_folder(tmp_path: Path) -> None:
    from wren_tui.sessions.opening import watched

    workspace = tmp_path / "ws"
    (workspace / "journals").mkdir(parents=True)
    _session(workspace / "journals")
    shown = watched(str(workspace))
    assert (shown.folder, shown.session) == (workspace / "journals", None)
    # A folder that holds journals itself is browsed as it is.
    shown = watched(str(workspace / "journals"))
    assert (shown.folder, shown.session) == (workspace / "journals", None)


@pytest.mark.parametrize(
    "first_line",
    [b"[" * 10_000 + b"]" * 10_000, b'{"a":' * 10_000 + b"1" + b"}" * 10_000],
    ids=["arrays", "objects"],
)
def test_a_first_line_nested_past_the_decoders_depth_is_reported_by_every_command_without_a_traceback(
    tmp_path: Path, first_line: bytes
) -> None:
    # Telling which agent wrote a file decodes its first lines: a line too deep to decode is no format's.
    # Named as a Wren session, the file is a Wren journal damaged at line 1; named otherwise, no session.
    journal = f"{new_session_id()}.jsonl"
    (tmp_path / journal).write_bytes(first_line + b"\n")
    (tmp_path / "deep.jsonl").write_bytes(first_line + b"\n")
    for args in (["log", journal], ["log", journal, "--json"], ["fork", journal]):
        done = run_wren(args, cwd=tmp_path)
        assert "Traceback" not in done.stderr, (args, done.stderr)
        assert done.returncode == 4 and "nested too deeply" in done.stdout + done.stderr, (args, done)
    for args in (["log", "deep.jsonl"], ["fork", "deep.jsonl"]):
        done = run_wren(args, cwd=tmp_path)
        assert done.returncode == 4 and "Traceback" not in done.stderr and "not a Wren journal" in done.stderr
    listed = run_wren(["ls", "--dir", ".", "--json"], cwd=tmp_path)
    assert "Traceback" not in listed.stderr
    states = {row["id"]: row["state"] for row in json.loads(listed.stdout)}
    assert states == {journal[: -len(".jsonl")]: "corrupt", "deep": "unknown"}
