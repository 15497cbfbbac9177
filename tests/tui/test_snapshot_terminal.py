"""The viewer's fork picker with snapshots, in a real terminal (tmux): counts, the diff pane, a fork with files.

The session is a real `wren run`; the fork is made from the picker (`f`, a folder typed over the one offered,
Enter), and the fork is then resumed from another folder, where it works in the folder its files were written to.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.test_snapshot_forks import state_of
from tests.conftest import run_wren
from tests.tmux import Terminal, python_argv
from tests.tmux import terminal as own_terminal
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import Fork, Message, Rewind
from wren_tui.journal.reader import read_events

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    with own_terminal() as term:
        yield term


def test_fork_with_files_from_the_viewers_picker_then_resume_in_the_new_folder(
    tmp_path: Path, terminal: Terminal
) -> None:
    workspace = prepare_workspace(tmp_path / "ws")
    before = state_of(workspace)
    journals = tmp_path / "journals"
    proc = run_wren(["run", "--yes", "--dir", str(journals), "run the tests, find the failing case and fix it"],
                    cwd=workspace)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    after = state_of(workspace)
    sid = next(journals.glob("s-*.jsonl")).stem

    terminal.start(python_argv("watch", sid, "--dir", str(journals)), tmp_path, (160, 45))
    terminal.wait_for("passes now")
    terminal.keys("p")
    terminal.wait_for("Fork points of")
    screen = terminal.wait_for("1 changed")  # counts read from the store, beside each point
    assert "0 changed" in screen
    assert "are as in the last snapshot" in terminal.wait_for("are as in the last snapshot")
    terminal.keys("Up")  # the user's point: the diff of the fix the agent made after it
    terminal.wait_for("+    if not values:")
    terminal.keys("f")
    terminal.wait_for("with its files?")
    terminal.wait_for("ws-fork-2")  # the folder offered, beside the workspace (its end, where the cursor is)
    target = tmp_path / "chosen"  # a folder of the person's own, typed over the one offered
    terminal.keys("C-u")
    terminal.wait_gone("ws-fork-2")
    terminal.keys("-l", str(target))
    terminal.wait_for("chosen")
    terminal.keys("Enter")
    screen = terminal.wait_for("Continue it there with:", timeout=30)
    assert not (tmp_path / "ws-fork-2").exists()
    assert f"Forked {sid} at seq 2 → s-" in screen and "wren resume --dir" in screen
    (new,) = {p.stem for p in journals.glob("s-*.jsonl")} - {sid}
    assert new in screen.replace("\n", "").replace(" ", "").replace("█", "")
    terminal.keys("Enter")
    terminal.wait_gone("Continue it there with:")
    terminal.keys("q")
    terminal.wait_for("WREN-EXITED-0")

    assert state_of(target) == before and state_of(workspace) == after
    fork_event = read_events(journals / f"{new}.jsonl").events[-1]
    assert isinstance(fork_event, Fork) and fork_event.workspace == str(target)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resumed = run_wren(["resume", "--yes", "--dir", str(journals), new, "run `pwd`"], cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stderr
    assert f"working in {target}, the session's workspace" in resumed.stdout
    told = [e.message for e in read_events(journals / f"{new}.jsonl").events if isinstance(e, Message)][-2]
    assert told.role == "tool" and told.content.splitlines()[1] == str(target)


def test_rewind_from_the_viewers_picker_shows_the_preview_then_rewinds_in_place_through_wren_rewind(
    tmp_path: Path, terminal: Terminal
) -> None:
    workspace = prepare_workspace(tmp_path / "ws")
    before = state_of(workspace)
    journals = tmp_path / "journals"
    proc = run_wren(["run", "--yes", "--dir", str(journals), "run the tests, find the failing case and fix it"],
                    cwd=workspace)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    after = state_of(workspace)
    sid = next(journals.glob("s-*.jsonl")).stem

    terminal.start(python_argv("watch", sid, "--dir", str(journals)), tmp_path, (160, 45))
    terminal.wait_for("passes now")
    terminal.keys("p")
    terminal.wait_for("1 changed")
    terminal.keys("Up")  # the user's point, before the fix
    terminal.wait_for("+    if not values:")
    terminal.keys("r")
    screen = terminal.wait_for("in place?", timeout=30)
    assert "restore 1 file" in screen  # the preview `wren rewind` printed, with no answer given
    assert state_of(workspace) == after  # the preview changed nothing
    assert not any(isinstance(e, Rewind) for e in read_events(journals / f"{sid}.jsonl").events)
    terminal.keys("y")
    screen = terminal.wait_for("Undo with:", timeout=30)
    assert f"Rewound {sid} to seq 2" in screen and "--undo" in screen
    terminal.keys("Enter")
    terminal.wait_gone("Undo with:")
    terminal.keys("q")
    terminal.wait_for("WREN-EXITED-0")

    assert state_of(workspace) == before
    rewinds = [e for e in read_events(journals / f"{sid}.jsonl").events if isinstance(e, Rewind)]
    assert len(rewinds) == 1 and rewinds[0].at_seq == 2
