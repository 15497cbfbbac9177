"""Every command Wren prints for a person to run next works as printed, from where they are.

Each printed line is split as a shell would (shlex) and run from the same folder; the folders have
spaces in their names, so quoting is tested too.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from tests.conftest import run_wren
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import ChatMessage, Message, RunEnd, RunStart, ToolCall, ToolStart
from wren_tui.journal.store import journal_paths
from wren_tui.journal.writer import JournalWriter

SID = "s-20260101-000000-unkn"


def printed(output: str, prefix: str) -> str:
    """The command on the line that starts with `prefix` (after any indentation)."""
    for line in output.splitlines():
        if line.strip().startswith(prefix):
            return line.strip()[len(prefix) :].strip()
    raise AssertionError(f"no line starting with {prefix!r} in:\n{output}")


def run_printed(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    assert words[0] == "wren", command
    return run_wren(words[1:], cwd=cwd)


def _here(tmp_path: Path) -> Path:
    here = tmp_path / "where I am"
    here.mkdir()
    return here


def test_the_demo_prepare_hint_and_the_runs_continue_with_work_as_printed(tmp_path: Path, state_home: Path) -> None:
    here = _here(tmp_path)
    prepared = run_wren(["demo", "--prepare", str(tmp_path / "demo ws")], cwd=here)
    assert prepared.returncode == 0, prepared.stderr
    run = printed(prepared.stdout, "wren run")
    assert "--workspace" in run
    first = run_printed("wren run " + run, here)
    assert first.returncode == 0, first.stderr
    again = printed(first.stdout, "continue with:")
    assert "--workspace" in again
    second = run_printed(again, here)
    assert second.returncode == 0, second.stderr
    assert "resumed" in second.stdout
    # The same journal was continued: it is the only one, in the default folder (this test's XDG_STATE_HOME).
    assert len(journal_paths(state_home / "wren" / "journals")) == 1
    assert not (tmp_path / "demo ws" / "journals").exists()


def test_run_with_a_dir_prints_a_continue_with_that_carries_it(tmp_path: Path) -> None:
    here = _here(tmp_path)
    folder = tmp_path / "my journals"
    first = run_wren(["run", "--dir", str(folder), "hello"], cwd=here)
    assert first.returncode == 0, first.stderr
    again = printed(first.stdout, "continue with:")
    assert shlex.split(again)[2:4] == ["--dir", str(folder)]
    second = run_printed(again, here)
    assert second.returncode == 0, second.stderr
    assert len(journal_paths(folder)) == 1 and not (here / "journals").exists()


def test_a_run_in_the_default_folder_prints_no_dir(tmp_path: Path) -> None:
    first = run_wren(["run", "hello"], cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = printed(first.stdout, "continue with:")
    assert again.startswith("wren resume s-") and "--dir" not in again and "--workspace" not in again
    assert run_printed(again, tmp_path).returncode == 0


def test_chat_prints_a_continue_with_that_carries_the_workspace_and_the_folder(tmp_path: Path) -> None:
    here = _here(tmp_path)
    workspace = prepare_workspace(tmp_path / "chat ws")
    folder = tmp_path / "chat journals"
    proc = run_wren(["chat", "--workspace", str(workspace), "--dir", str(folder)], cwd=here, input="what can you do?\n")
    assert proc.returncode == 0, proc.stderr
    again = printed(proc.stdout, "continue with:")
    assert run_printed(again, here).returncode == 0


def test_fork_prints_commands_that_work_from_here(tmp_path: Path) -> None:
    here = _here(tmp_path)
    folder = tmp_path / "my journals"
    first = run_wren(["run", "--dir", str(folder), "hello"], cwd=here)
    assert first.returncode == 0, first.stderr
    sid = journal_paths(folder)[0].stem
    listing = run_wren(["fork", "--dir", str(folder), sid], cwd=here)
    assert listing.returncode == 0, listing.stderr
    fork_at = printed(listing.stdout, f"Clean fork points of {sid} (fork with `").split("`")[0]
    assert fork_at.endswith(" SEQ")
    forked = run_printed(fork_at.replace(" SEQ", " 2"), here)
    assert forked.returncode == 0, forked.stderr
    resume = printed(forked.stdout, "continue it with:")
    assert run_printed(resume + " 'what did I ask?'", here).returncode == 0


def _outcome_unknown(folder: Path) -> Path:
    path = folder / f"{SID}.jsonl"
    call = ToolCall(id="c1", name="run_command", args='{"command": "echo hi > note.txt"}')
    with JournalWriter.create(path) as w:
        w.append(RunStart(pid=os.getpid(), cwd=str(folder), model="scripted", version="test"))
        w.append(Message(message=ChatMessage(role="user", content="run `echo hi > note.txt`")))
        w.append(Message(message=ChatMessage(role="assistant", content="running it", tool_calls=[call])))
        w.append(ToolStart(id="c1", name="run_command", read_only=False, approval="approved"))
    return path


def test_the_refusals_choices_work_as_printed(tmp_path: Path) -> None:
    here = _here(tmp_path)
    folder = tmp_path / "my journals"
    folder.mkdir()
    _outcome_unknown(folder)
    refused = run_wren(["resume", "--dir", str(folder), SID, "go on"], cwd=here)
    assert refused.returncode == 3, refused.stderr
    assume = printed(refused.stderr, "wren resume").split("   ")[0]
    branch = printed(refused.stderr, "wren fork").split("   ")[0]
    forked = run_printed("wren fork " + branch, here)
    assert forked.returncode == 0, forked.stderr
    resumed = run_printed("wren resume " + assume, here)
    assert resumed.returncode == 0, resumed.stderr
    assert "outcome unknown; the model is told so, and to check" in resumed.stdout


def test_a_finished_sessions_give_a_message_line_works_as_printed(tmp_path: Path) -> None:
    here = _here(tmp_path)
    folder = tmp_path / "my journals"
    folder.mkdir()
    path = folder / f"{SID}.jsonl"
    with JournalWriter.create(path) as w:
        w.append(RunStart(pid=os.getpid(), cwd=str(here), model="scripted", version="test"))
        w.append(Message(message=ChatMessage(role="user", content="hello")))
        w.append(Message(message=ChatMessage(role="assistant", content="hello to you")))
        w.append(RunEnd(reason="done"))
    finished = run_wren(["resume", "--dir", str(folder), SID], cwd=here)
    assert finished.returncode == 0, finished.stderr
    again = printed(finished.stdout, f"{SID} is finished; give a message to continue it:")
    proc = run_printed(again, here)
    assert proc.returncode == 0, proc.stderr
    assert "resumed (2 messages replayed)" in proc.stdout
