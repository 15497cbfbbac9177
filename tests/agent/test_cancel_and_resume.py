"""Ctrl+C, and resume after a process died at each kind of moment: the refusal rule as a user meets it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.agent.conftest import events_of, journals_of, messages_of, only_journal
from tests.conftest import run_wren
from tests.waiting import until as wait_until
from wren_tui.agent.workspace import TEMPLATE
from wren_tui.journal.events import Event, Message, Recovery, RunEnd, RunStart, ToolEnd, ToolStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import new_session_id
from wren_tui.journal.writer import JournalWriter

FIX = "run the tests, find the failing case and fix it"


def test_ctrl_c_cancels_the_tool_records_it_exits_130_and_resume_waits_for_a_live_writer(workspace: Path) -> None:
    sid = new_session_id()
    journal = journals_of(workspace) / f"{sid}.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_") or k == "WREN_SIMULATE_OS"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wren_tui",
            "run",
            "--dir",
            "../journals",
            "--yes",
            "--session-id",
            sid,
            "run `sleep 60`",
        ],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(
            lambda: journal.exists() and any(isinstance(e, ToolStart) for e in read_events(journal).events),
            "the command to start",
        )
        live = run_wren(["resume", "--dir", "../journals", "--yes", "--assume-failed"], cwd=workspace)
        assert live.returncode == 1
        assert f"process {proc.pid} is still writing this session" in live.stderr
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    events = events_of(journal)
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert (end.ok, end.stopped_by) == (False, "cancel")
    told = messages_of(events)[-1].message.content
    assert told.startswith("interrupted: it ran for ") and "stopped by SIGINT (Ctrl+C) before it finished" in told
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "cancelled"
    # The cancelled call has its tool message, so nothing is left uncertain: resume goes on.
    again = run_wren(["resume", "--dir", "../journals", "--yes"], cwd=workspace)
    assert again.returncode == 0, again.stderr
    assert "I started to run `sleep 60`, and it was interrupted" in again.stdout


def start_of(events: list[Event], call_id: str) -> ToolStart:
    return next(e for e in events if isinstance(e, ToolStart) and e.id == call_id)


def finished_run(workspace: Path) -> Path:
    proc = run_wren(["run", "--dir", "../journals", "--yes", FIX], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    # Put the code back as it was, so the journal cut short below matches the workspace again.
    (workspace / "stats" / "core.py").write_bytes((TEMPLATE / "stats" / "core.py").read_bytes())
    return only_journal(journals_of(workspace))


def cut_after(journal: Path, chosen: Callable[[Event], bool], extra: bytes = b"") -> Event:
    """The journal as a process killed right after the chosen event would have left it."""
    result = read_events(journal)
    index = next(i for i, e in enumerate(result.events) if chosen(e))
    with open(journal, "r+b") as f:
        f.truncate(result.line_ends[index])
        f.seek(0, os.SEEK_END)
        f.write(extra)
    return result.events[index]


def test_resume_refuses_an_edit_of_unknown_outcome_names_it_and_writes_nothing(workspace: Path) -> None:
    journal = finished_run(workspace)
    start = cut_after(journal, lambda e: isinstance(e, ToolStart) and e.name == "edit_file")
    assert isinstance(start, ToolStart)
    before = journal.read_bytes()
    proc = run_wren(["resume", "--dir", "../journals", "--yes"], cwd=workspace)
    assert proc.returncode == 3
    assert "edit_file stats/core.py" in proc.stderr and start.id in proc.stderr
    assert f"started at {start.ts}" in proc.stderr
    assert "--assume-failed" in proc.stderr and "wren fork" in proc.stderr
    assert journal.read_bytes() == before
    # Besides the journal only the snapshot store its run made: resume wrote nothing.
    assert sorted(p.name for p in journal.parent.iterdir()) == [".snapshots", journal.name]


def test_assume_failed_records_a_recovery_tells_the_model_and_the_work_completes(workspace: Path) -> None:
    journal = finished_run(workspace)
    start = cut_after(journal, lambda e: isinstance(e, ToolStart) and e.name == "edit_file")
    assert isinstance(start, ToolStart)
    proc = run_wren(["resume", "--dir", "../journals", "--yes", "--assume-failed"], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    events = events_of(journal)
    recovery = next(e for e in events if isinstance(e, Recovery))
    assert recovery.id == start.id and "assumed failed" in recovery.decision
    told = next(m.message for m in messages_of(events) if m.message.tool_call_id == start.id)
    assert told.content.startswith(f"outcome unknown: Wren stopped after this call started (at {start.ts})")
    assert "check the workspace" in told.content
    assert subprocess.run([sys.executable, "-m", "unittest"], cwd=workspace, capture_output=True).returncode == 0


def test_an_edit_that_ended_but_lost_its_output_is_refused_with_how_it_ended(workspace: Path) -> None:
    journal = finished_run(workspace)
    edits = {e.id for e in events_of(journal) if isinstance(e, ToolStart) and e.name == "edit_file"}
    end = cut_after(journal, lambda e: isinstance(e, ToolEnd) and e.id in edits)
    assert isinstance(end, ToolEnd) and end.ok is True
    before = journal.read_bytes()
    refused = run_wren(["resume", "--dir", "../journals", "--yes"], cwd=workspace)
    assert refused.returncode == 3, refused.stderr
    assert f"ended ok after {end.elapsed_ms} ms, but {end.chars} chars of output never reached the journal" in (
        refused.stderr
    )
    assert journal.read_bytes() == before
    proc = run_wren(["resume", "--dir", "../journals", "--yes", "--assume-failed"], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert "its output was lost" in proc.stdout
    events = events_of(journal)
    recovery = next(e for e in events if isinstance(e, Recovery))
    assert recovery.id == end.id and recovery.decision.startswith("output lost")
    told = next(m.message for m in messages_of(events) if m.message.tool_call_id == end.id)
    assert told.content.startswith(f"output lost: this call started at {start_of(events, end.id).ts} and it ended ok")
    assert "check the workspace" in told.content


def test_a_call_recorded_as_not_run_gets_its_message_on_resume_and_is_not_run(workspace: Path) -> None:
    journal = finished_run(workspace)
    asked = cut_after(
        journal, lambda e: isinstance(e, Message) and any(c.name == "edit_file" for c in e.message.tool_calls or ())
    )
    assert isinstance(asked, Message) and asked.message.tool_calls
    call_id = asked.message.tool_calls[0].id
    # The process was cancelled before the edit ran, recorded that, and was killed before its tool message.
    with JournalWriter.open(journal) as writer:
        writer.append(ToolEnd(id=call_id, ok=False, elapsed_ms=0, chars=0, stopped_by="cancel"))
    proc = run_wren(["resume", "--dir", "../journals", "--yes"], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert "not run (cancel), as recorded before" in proc.stdout
    events = events_of(journal)
    assert not any(isinstance(e, ToolStart) and e.id == call_id for e in events)
    told = [m.message.content for m in messages_of(events) if m.message.tool_call_id == call_id]
    assert told == ["not run: the turn was stopped before this call started"]
    assert not any(isinstance(e, Recovery) for e in events)


def test_a_read_only_call_cut_off_is_run_again_and_resume_says_so(workspace: Path) -> None:
    journal = finished_run(workspace)
    start = cut_after(journal, lambda e: isinstance(e, ToolStart) and e.name == "read_file")
    proc = run_wren(["resume", "--dir", "../journals", "--yes"], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert "running it again" in proc.stdout
    events = events_of(journal)
    assert sum(1 for e in events if isinstance(e, ToolStart) and e.id == start.id) == 2  # type: ignore[union-attr]
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "done"


def test_a_call_that_never_started_is_run_on_resume(workspace: Path) -> None:
    journal = finished_run(workspace)
    asked = cut_after(journal, lambda e: isinstance(e, Message) and bool(e.message.tool_calls))
    proc = run_wren(["resume", "--dir", "../journals", "--yes"], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    events = events_of(journal)
    assert isinstance(asked, Message) and asked.message.tool_calls
    call_id = asked.message.tool_calls[0].id
    assert [e.approval for e in events if isinstance(e, ToolStart) and e.id == call_id] == ["approved"]
    assert "All 6 tests pass" in messages_of(events)[-1].message.content


def test_a_torn_tail_is_moved_aside_and_the_session_continues(workspace: Path) -> None:
    journal = finished_run(workspace)
    cut_after(journal, lambda e: isinstance(e, Message) and e.message.role == "tool", extra=b'{"seq":99,"ts":"2026-0')
    proc = run_wren(["resume", "--dir", "../journals", "--yes"], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert (journal.parent / f"{journal.name}.torn").read_bytes() == b'{"seq":99,"ts":"2026-0'
    events = events_of(journal)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert sum(1 for e in events if isinstance(e, RunStart)) == 2


def test_a_denied_call_cut_off_is_asked_again_not_refused(workspace: Path) -> None:
    proc = run_wren(["run", "--dir", "../journals", FIX], cwd=workspace, input="")
    journal = only_journal(journals_of(workspace))
    cut_after(journal, lambda e: isinstance(e, ToolStart) and e.approval == "denied")
    proc = run_wren(["resume", "--dir", "../journals", "--yes"], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    starts = [e for e in events_of(journal) if isinstance(e, ToolStart)]
    assert [e.approval for e in starts][:2] == ["denied", "approved"]
