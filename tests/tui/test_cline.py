"""A Cline CLI session in the viewer, through Pilot: its conversation and failed call; a run killed in its tool
(status running, nobody writing) shows the call with no result recorded and says stopped mid-call, never live."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tests.foreign.test_cline import killed, session
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)


def _app(path: Path) -> WrenApp:
    return WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK))


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


async def test_a_cline_session_shows_its_prompt_failed_call_and_answer(tmp_path: Path) -> None:
    path = session(tmp_path, "tool-error")
    app = _app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for_text(pilot, "missing.txt does not exist here: cat failed with exit status 1.")
        text = screen_text(app)
        order = ["▌ you", "Show me missing.txt please.", "cat missing.txt", "▌ tool result", "No such file"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        await wait_for(pilot, lambda: " ended " in _status(app), "ended")


async def test_a_killed_cline_run_that_says_running_is_stopped_mid_call_not_live(tmp_path: Path) -> None:
    path = killed(tmp_path)
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "the call with no result")
        await wait_for(pilot, lambda: " stopped mid-call " in _status(app), "stopped mid-call")
        assert " live " not in _status(app)
