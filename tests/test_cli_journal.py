"""The journal commands as a user runs them: wren log, wren ls, wren fork."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_wren
from wren_tui.journal.events import ChatMessage, Message, RunEnd, RunStart, ToolCall, ToolEnd, ToolStart
from wren_tui.journal.store import new_session_id
from wren_tui.journal.writer import JournalWriter


def _session(folder: Path) -> Path:
    path = folder / f"{new_session_id()}.jsonl"
    with JournalWriter.create(path) as w:
        w.append(RunStart(pid=os.getpid(), cwd=str(folder), model="scripted", version="test"))
        w.append(Message(message=ChatMessage(role="user", content="run the tests")))
        call = ToolCall(id="c1", name="run_command", args='{"command": "pytest"}')
        w.append(Message(message=ChatMessage(role="assistant", content="running", toolCalls=[call])))
        w.append(ToolStart(id="c1", name="run_command", readOnly=False, approval="approved"))
        w.append(ToolEnd(id="c1", ok=False, elapsedMs=12, chars=30))
        w.append(Message(message=ChatMessage(role="tool", content="1 failed", toolCallId="c1")))
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


def test_log_of_another_agents_file_stops_at_line_1_and_exits_4(tmp_path: Path) -> None:
    from tests.conftest import FIXTURES

    proc = run_wren(["log", str(FIXTURES / "external" / "codex" / "agentlogs_crud_rollout.jsonl")], cwd=tmp_path)
    assert proc.returncode == 4
    assert proc.stdout.startswith("stopped at line 1 (byte 0): it has no seq [corrupt]")


def test_log_json_of_the_reference_lines_has_three_events_and_the_gap_warning(tmp_path: Path) -> None:
    from tests.conftest import FIXTURES

    proc = run_wren(["log", "--json", str(FIXTURES / "seed" / "mca_excerpt.jsonl")], cwd=tmp_path)
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
    path.write_bytes(
        b'{"seq":1,"ts":"t","type":"run_end","reason":"done","note":"\xff\xfe"}\n'
        b'{"seq":2,"ts":"t","type":"message","message":{"role":"user","content":"caf\xc3\xa9"}}\n'
    )
    proc = run_wren(["log", "--json", str(path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["events"] == [
        {"seq": 1, "ts": "t", "type": "run_end", "reason": "done"},
        {"seq": 2, "ts": "t", "type": "message", "message": {"role": "user", "content": "café"}},
    ]
