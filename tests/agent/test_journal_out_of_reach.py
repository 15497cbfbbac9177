"""The journal against the agent's own commands: where it lives, and a run that stops when it is changed.

Each test is two processes at least: `wren` (the real CLI, scripted model) and the shell command
the model asks for, which deletes, appends to or moves the live journal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, only_journal
from tests.conftest import run_wren
from wren_tui.journal.events import RunEnd, ToolStart
from wren_tui.journal.reader import read_events

SID = "s-20260109-000000-self"


def test_the_default_journals_folder_is_outside_the_workspace(workspace: Path, state_home: Path) -> None:
    proc = run_wren(["run", "--yes", "run `ls -a`"], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    journal = only_journal(state_home / "wren" / "journals")
    assert not journal.is_relative_to(workspace)
    assert "journals" not in proc.stdout.split("$ ls -a", 1)[1]  # the agent's own listing does not see it
    assert not (workspace / "journals").exists()


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("rm -rf {folder}", "the journal and its folder were deleted"),
        ("echo junk >> {journal}", "another program appended 5 bytes to the journal"),
        ("mv {journal} {folder}/moved.jsonl", "the journal was moved away from its path"),
    ],
    ids=["rm-rf-the-folder", "append-to-the-journal", "mv-the-journal"],
)
def test_a_command_that_changes_the_live_journal_stops_the_run_with_exit_5_and_one_sentence(
    workspace: Path, tmp_path: Path, command: str, what: str
) -> None:
    folder = tmp_path / "journals"
    journal = folder / f"{SID}.jsonl"
    shell = command.format(folder=folder, journal=journal)
    proc = run_wren(["run", "--dir", str(folder), "--yes", "--session-id", SID, f"run `{shell}`"], cwd=workspace)
    assert proc.returncode == 5, proc.stderr
    assert (
        proc.stderr
        == f"wren: {journal}: {what} while this run was writing it; the run stopped and records nothing more.\n"
    )
    assert "continue with" not in proc.stdout and "done" not in proc.stdout
    if journal.exists():  # appended to: the run wrote nothing after the foreign bytes
        result = read_events(journal)
        assert result.stop is not None and "not JSON" in str(result.stop)
        assert isinstance(result.events[-1], ToolStart)
        assert journal.read_bytes().endswith(b"junk\n")
    moved = folder / "moved.jsonl"
    if moved.exists():  # moved: the run wrote nothing into the file at its new place either
        events = events_of(moved)
        assert isinstance(events[-1], ToolStart) and not any(isinstance(e, RunEnd) for e in events)


def test_a_chat_whose_journal_is_deleted_stops_with_exit_5(workspace: Path, tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    proc = run_wren(["chat", "--dir", str(folder), "--yes"], cwd=workspace, input=f"run `rm -rf {folder}`\nhello\n")
    assert proc.returncode == 5, proc.stdout
    assert "the journal and its folder were deleted while this run was writing it" in proc.stderr
    assert "continue with" not in proc.stdout
    assert proc.stdout.count("you > ") == 1  # the second line was never taken


def test_resume_without_an_id_takes_the_latest_session_of_this_workspace(tmp_path: Path) -> None:
    folder, mine, other = tmp_path / "journals", tmp_path / "mine", tmp_path / "other"
    mine.mkdir()
    other.mkdir()
    older, newer = "s-20260101-000000-mine", "s-20260102-000000-othr"
    for sid, ws in ((older, mine), (newer, other)):
        proc = run_wren(["run", "--dir", str(folder), "--session-id", sid, "hello"], cwd=ws)
        assert proc.returncode == 0, proc.stderr
    proc = run_wren(["resume", "--dir", str(folder), "hello again"], cwd=mine)
    assert proc.returncode == 0, proc.stderr
    assert f"session {older} resumed" in proc.stdout
    proc = run_wren(["chat", "--dir", str(folder), "--resume", "--workspace", str(other)], cwd=mine, input="/quit\n")
    assert proc.returncode == 0, proc.stderr
    assert f"session {newer}" in proc.stdout
    nobody = tmp_path / "nobody"
    nobody.mkdir()
    proc = run_wren(["resume", "--dir", str(folder), "hello"], cwd=nobody)
    assert proc.returncode == 1
    assert proc.stderr == (f"wren: no session of {nobody} in {folder}; `wren ls --dir {folder}` lists them all\n")
    proc = run_wren(["resume", "hello"], cwd=nobody, env={"WREN_DIR": str(folder)})
    assert proc.stderr == f"wren: no session of {nobody} in {folder}; `wren ls` lists them all\n"


def test_ls_shows_each_session_s_project_and_filters_by_project(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    for name, sid in (("alpha", "s-20260101-000000-alph"), ("beta", "s-20260102-000000-beta")):
        (tmp_path / "code" / name / "sub").mkdir(parents=True)
        proc = run_wren(["run", "--dir", str(folder), "--session-id", sid, "hello"], cwd=tmp_path / "code" / name)
        assert proc.returncode == 0, proc.stderr
    listing = run_wren(["ls", "--dir", str(folder)], cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    head, *rows, space = listing.stdout.splitlines()
    assert "PROJECT" in head and len(rows) == 2 and space.startswith("snapshots: ")  # the runs' snapshot store
    assert rows[0].split()[6].endswith("/code/beta") and rows[1].split()[6].endswith("/code/alpha")
    alpha = run_wren(["ls", "--dir", str(folder), "--project", "code/alpha", "--json"], cwd=tmp_path)
    assert [(s["id"], s["project"]) for s in json.loads(alpha.stdout)] == [
        ("s-20260101-000000-alph", str(tmp_path / "code" / "alpha"))
    ]
    both = run_wren(["ls", "--dir", str(folder), "--project", str(tmp_path / "code"), "--json"], cwd=tmp_path)
    assert len(json.loads(both.stdout)) == 2
    none = run_wren(["ls", "--dir", str(folder), "--project", "code/alpha/sub"], cwd=tmp_path)
    assert none.returncode == 0 and none.stdout == f"no sessions in {folder} of {tmp_path / 'code/alpha/sub'}\n"
