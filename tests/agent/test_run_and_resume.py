"""`wren run` and `wren resume` as a user runs them, on a fresh copy of the demo workspace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, messages_of, only_journal, types_of
from tests.conftest import run_wren
from wren_tui.agent.workspace import TEMPLATE, WorkspaceError, prepare_workspace
from wren_tui.journal.events import ChatMessage, Message, RunEnd, RunStart, ToolEnd, ToolStart
from wren_tui.journal.replay import replay

FIX = "run the tests, find the failing case and fix it"
FAILING_CASE = "test_mean_of_empty_list_is_zero"


def unittest_in(workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "unittest"], cwd=workspace, capture_output=True, text=True, timeout=60)


def test_the_demo_workspace_starts_with_one_failing_case(workspace: Path) -> None:
    proc = unittest_in(workspace)
    assert proc.returncode == 1
    assert FAILING_CASE in proc.stderr
    assert "ZeroDivisionError" in proc.stderr


def test_prepare_workspace_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(WorkspaceError, match="not empty"):
        prepare_workspace(tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_run_fixes_the_failing_case_and_the_tests_then_pass(workspace: Path) -> None:
    proc = run_wren(["run", "--dir", "../journals", "--yes", FIX], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert FAILING_CASE in proc.stdout
    assert unittest_in(workspace).returncode == 0
    events = events_of(only_journal(journals_of(workspace)))
    assert isinstance(events[0], RunStart) and events[0].model == "scripted"
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "done"
    edits = [e for e in events if isinstance(e, ToolStart) and e.name == "edit_file"]
    assert len(edits) == 1
    final = messages_of(events)[-1].message
    assert final.role == "assistant" and "All 6 tests pass" in final.content


def test_resume_in_a_second_process_answers_the_failing_case_without_a_tool(workspace: Path) -> None:
    first = run_wren(["run", "--dir", "../journals", "--yes", "run the tests and see which case fails"], cwd=workspace)
    assert first.returncode == 0, first.stderr
    journal = only_journal(journals_of(workspace))
    before = len(events_of(journal))

    second = run_wren(["resume", "--dir", "../journals", "what was the failing case?"], cwd=workspace)
    assert second.returncode == 0, second.stderr
    assert FAILING_CASE in second.stdout
    turn = events_of(journal)[before:]
    assert isinstance(turn[0], RunStart) and turn[0].resumed
    assert not any(isinstance(e, ToolStart | ToolEnd) for e in turn)
    said = [m.message for m in messages_of(turn)]
    assert [m.role for m in said] == ["user", "assistant"]
    assert FAILING_CASE in said[1].content and not said[1].tool_calls
    # It answered from the history, not by running the tests again: the code is still broken.
    assert unittest_in(workspace).returncode == 1


def test_the_log_of_one_turn_orders_each_tool_end_between_its_call_and_its_result(workspace: Path) -> None:
    proc = run_wren(["run", "--dir", "../journals", "--yes", FIX], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    events = events_of(only_journal(journals_of(workspace)))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    position = {id(e): i for i, e in enumerate(events)}
    for end in (e for e in events if isinstance(e, ToolEnd)):
        asked = next(
            e for e in events if isinstance(e, Message) and any(c.id == end.id for c in e.message.tool_calls or ())
        )
        start = next(e for e in events if isinstance(e, ToolStart) and e.id == end.id)
        answer = next(e for e in events if isinstance(e, Message) and e.message.tool_call_id == end.id)
        assert position[id(asked)] < position[id(start)] < position[id(end)] < position[id(answer)]
    replayed = replay(events)
    assert replayed.messages == [m.message for m in messages_of(events)]
    assert replayed.open_calls == []
    assert types_of(events).count("run_start") == 1 and types_of(events)[-1] == "run_end"


def test_a_project_set_up_for_pytest_is_tested_with_pytest_and_fixed_from_its_output(workspace: Path) -> None:
    (workspace / "pytest.ini").write_text("[pytest]\n")
    proc = run_wren(["run", "--dir", "../journals", "--yes", FIX], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    events = events_of(only_journal(journals_of(workspace)))
    commands = [c.args for m in messages_of(events) for c in m.message.tool_calls or () if c.name == "run_command"]
    assert len(commands) == 2 and all("-m pytest" in c for c in commands)
    assert unittest_in(workspace).returncode == 0
    assert "All 6 tests pass" in messages_of(events)[-1].message.content


def test_journals_go_to_the_state_folder_outside_the_workspace_unless_a_dir_is_given(
    workspace: Path, tmp_path: Path
) -> None:
    elsewhere, state = tmp_path / "elsewhere", tmp_path / "state"
    elsewhere.mkdir()
    proc = run_wren(["run", "--workspace", str(workspace), "hello"], cwd=elsewhere, env={"XDG_STATE_HOME": str(state)})
    assert proc.returncode == 0, proc.stderr
    assert only_journal(state / "wren" / "journals").exists()
    assert not (workspace / "journals").exists() and not (elsewhere / "journals").exists()
    home = tmp_path / "home"
    proc = run_wren(["run", "hello"], cwd=workspace, env={"XDG_STATE_HOME": "", "HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    assert only_journal(home / ".local" / "state" / "wren" / "journals").exists()
    proc = run_wren(["run", "--workspace", str(workspace), "--dir", "mine", "hello"], cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert only_journal(elsewhere / "mine").exists()
    proc = run_wren(["run", "--workspace", str(workspace), "hello"], cwd=elsewhere, env={"WREN_DIR": "env-dir"})
    assert proc.returncode == 0, proc.stderr
    assert only_journal(elsewhere / "env-dir").exists()
    assert sorted(p.name for p in workspace.iterdir()) == sorted(
        p.name for p in TEMPLATE.iterdir() if p.name != "__pycache__"
    )


def test_resume_after_one_message_says_1_message_replayed(tmp_path: Path) -> None:
    import os

    from wren_tui.journal.writer import JournalWriter

    folder = tmp_path / "journals"
    path = folder / "s-20260101-000000-once.jsonl"
    with JournalWriter.create(path) as w:
        w.append(RunStart(pid=os.getpid(), cwd=str(tmp_path), model="scripted", version="test"))
        w.append(Message(message=ChatMessage(role="user", content="what can you do?")))
    proc = run_wren(["resume", "--dir", str(folder)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("session s-20260101-000000-once resumed (1 message replayed)\n")


def test_a_second_torn_tail_is_set_aside_under_the_name_resume_reports(workspace: Path) -> None:
    first = run_wren(["run", "--dir", "journals", "hello"], cwd=workspace)
    assert first.returncode == 0, first.stderr
    journal = only_journal(workspace / "journals")
    reported = []
    for n in range(2):
        with open(journal, "ab") as f:
            f.write(b'{"seq":99,"ts":"cut short %d' % n)
        proc = run_wren(["resume", "--dir", "journals", "what can you do?"], cwd=workspace)
        assert proc.returncode == 0, proc.stderr
        line = next(x for x in proc.stdout.splitlines() if "moved aside" in x)
        reported.append(line.split("moved aside to ")[1].rstrip("]"))
    assert reported == [f"{journal.name}.torn", f"{journal.name}.torn.1"]
    assert (journal.parent / reported[1]).read_bytes() == b'{"seq":99,"ts":"cut short 1'


def test_the_demo_workspace_refusal_reads_as_a_sentence(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    proc = run_wren(["demo", "--prepare", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"wren: {tmp_path} is not empty; choose an empty or new folder")
