"""A Kimi CLI session in the viewer, through Pilot: the conversation, the failed call with its time, the answer, the
tokens; a run killed in its tool shows the call with no result recorded and says stopped mid-call, as `wren ls`
does; the file keeps every byte and time."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tests.foreign.sessions import copy_session
from tests.foreign.test_kimi import CALL_LINE
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)


def _app(path: Path) -> WrenApp:
    return WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK))


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


async def test_a_kimi_session_shows_its_prompt_failed_call_answer_and_tokens(tmp_path: Path) -> None:
    path = copy_session("kimi", "tool-error", tmp_path)
    before = path.read_bytes(), path.stat().st_mtime_ns
    app = _app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for_text(pilot, "missing.txt does not exist here: cat failed with exit status 1.")
        text = screen_text(app)
        order = ["▌ you", "Show me missing.txt please.", "cat missing.txt", "▌ tool result", "No such file"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        await wait_for(pilot, lambda: " failed" in screen_text(app), "the call failed")
        row = next(line for line in screen_text(app).splitlines() if "cat missing.txt" in line and " ms " in line)
        assert "9 ms" in row and row.split()[-1] == "failed"
        await wait_for(pilot, lambda: " 1860 tokens" in _status(app), "the tokens")
        assert " ended " in _status(app) and "kimi tool-error" in _status(app)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


async def test_a_kimi_run_killed_in_its_tool_is_stopped_mid_call_with_no_result_recorded(tmp_path: Path) -> None:
    path = copy_session("kimi", "tool-error", tmp_path, lines=CALL_LINE)
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "the call with no result")
        await wait_for(pilot, lambda: " stopped mid-call " in _status(app), "stopped mid-call")
