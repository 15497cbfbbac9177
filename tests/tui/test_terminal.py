"""`wren watch` and `wren demo` in a real terminal (tmux): what lands on the captured screen."""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tmux import Terminal, python_argv
from tests.tmux import terminal as own_terminal
from tests.tui.conftest import without_dac_override
from tests.tui.journals import SESSION, finished_story, story, user, write_journal
from wren_tui.journal.locks import lock_holder
from wren_tui.journal.writer import JournalWriter

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    with own_terminal() as term:
        yield term


def _start(
    terminal: Terminal,
    args: list[str],
    cwd: Path,
    size: tuple[int, int] = (100, 30),
    prefix: tuple[str, ...] = (),
) -> None:
    """`wren ARGS` in the terminal (behind `prefix`, a command such as setpriv), then its exit status."""
    terminal.start([*prefix, *python_argv(*args)], cwd, size)


def test_watch_shows_events_another_process_appends(tmp_path: Path, terminal: Terminal) -> None:
    path = write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", story()[:2])
    _start(terminal, ["watch", SESSION, "--dir", str(path.parent)], tmp_path)
    terminal.wait_for("run the tests, find the failing case and fix it")
    with JournalWriter.open(path, fsync="none") as writer:
        for n in range(1, 6):
            writer.append(user(f"appended from another process, number {n}"))
        screen = terminal.wait_for("appended from another process, number 5")
        assert " live " in screen
        assert "7 events" in screen
    terminal.keys("q")
    terminal.wait_for("WREN-EXITED-0")


def test_watch_pick_prints_the_chosen_session_and_seq(tmp_path: Path, terminal: Terminal) -> None:
    path = write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", finished_story())
    _start(terminal, ["watch", "--pick", str(path)], tmp_path)
    terminal.wait_for("printed as ID SEQ on exit")
    terminal.keys("Up", "Enter")
    terminal.wait_for("WREN-EXITED-0")
    assert f"{SESSION} 2" in terminal.capture()
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_demo_in_80x24_runs_the_agent_live_and_quitting_stops_it(tmp_path: Path, terminal: Terminal) -> None:
    folder = tmp_path / "journals"
    _start(terminal, ["demo", "--pace-factor", "2", "--dir", str(folder)], tmp_path, size=(80, 24))
    terminal.wait_for("run the tests, find the failing case and fix it", timeout=30)
    terminal.wait_for(" live ")
    journal = next(folder.glob("s-*.jsonl"))
    assert lock_holder(journal) is not None
    terminal.keys("q")
    terminal.wait_for("WREN-EXITED-0", timeout=30)
    # The printed lines as printed: the long folder makes the terminal wrap them at 80 columns.
    screen = terminal.capture(joined=True)
    assert "the agent was still running and has been stopped" in screen
    # The folder is not the default one, so the command carries it and works as printed.
    assert f"watch it again: {shlex.join(['wren', 'watch', '--dir', str(folder), journal.stem])}\n" in screen
    assert lock_holder(journal) is None


def test_fork_in_a_folder_it_cannot_write_says_why_and_the_viewer_keeps_running(
    tmp_path: Path, terminal: Terminal
) -> None:
    prefix = without_dac_override()
    if prefix is None:
        pytest.skip("running as root without setpriv: permission bits cannot be made to hold")
    folder = tmp_path / "journals"
    path = write_journal(folder / f"{SESSION}.jsonl", finished_story())
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        _start(terminal, ["watch", str(path)], tmp_path, prefix=prefix)
        terminal.wait_for("Fixed: mean([]) now returns 0.0")
        terminal.keys("p")
        terminal.wait_for("Fork points of")
        terminal.keys("Enter")
        terminal.wait_for("at seq 25?")
        terminal.keys("y")
        screen = terminal.wait_for("Could not fork:")
        assert "ermission denied" in screen
        assert "Traceback" not in screen
        terminal.keys("Enter")
        assert " done " in terminal.wait_gone("Could not fork:")
        terminal.keys("q")
        terminal.wait_for("WREN-EXITED-0")
    finally:
        folder.chmod(0o755)
    assert sorted(p.name for p in folder.iterdir()) == [path.name]
