"""Replay in a real terminal (tmux): its keys as a terminal sends them, and the moment on the captured screen."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.tmux import python_argv, terminal
from tests.tui.journals import SESSION, finished_story, user, write_journal

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_replay_keys_move_through_a_finished_session_in_a_real_terminal(tmp_path: Path) -> None:
    path = write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", [*finished_story(), user("and a second turn")])
    with terminal("wren-replay") as term:
        term.start(python_argv("watch", SESSION, "--dir", str(path.parent)), tmp_path, (120, 36))
        term.wait_for("and a second turn")
        term.keys("R")
        term.wait_for("paused")
        screen = term.wait_for("event 0 of 25")
        assert "run the tests" not in screen
        term.keys("Right", "Right")  # arrow keys, as the terminal encodes them
        screen = term.wait_for("event 2 of 25")
        assert "run the tests, find the failing case and fix it" in screen
        assert "2025-03-01 09:30:01.250" in screen
        term.keys(".")  # the next tool call
        screen = term.wait_for("call 1 of 4")
        assert "running, approved" in screen
        term.keys("]")  # the next turn
        screen = term.wait_for("turn 2 of 2")
        assert "and a second turn" in screen
        term.keys("Left")
        term.wait_for("turn 1 of 2")
        term.keys("<")  # back to the start
        term.wait_for("event 0 of 25")
        term.keys("3", "Space")  # then play at 100x: about half a second for the whole session
        screen = term.wait_for("event 25 of 25", timeout=30)
        assert "and a second turn" in screen
        term.wait_for("paused")
        term.keys("Escape")
        screen = term.wait_for("p Fork points")  # the session screen's footer again
        assert "event 25" not in screen
        term.keys("q")
        term.wait_for("WREN-EXITED-0")
