"""A Continue CLI session in the viewer, through Pilot: the document is read (exported into lines), its
conversation, failed call and answer shown, its status line says it is Continue's and ended; the file keeps every
byte and time."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tests.foreign.test_continue import IDS, document
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)


async def test_a_continue_session_shows_its_prompt_failed_call_and_answer(tmp_path: Path) -> None:
    path = document(tmp_path / "sessions", "tool-error")
    before = path.read_bytes(), path.stat().st_mtime_ns
    app = WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for_text(pilot, "missing.txt does not exist here: cat failed with exit status 1.")
        text = screen_text(app)
        order = ["▌ you", "Show me missing.txt please.", "cat missing.txt", "▌ tool result", "No such file"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        await wait_for(pilot, lambda: " failed" in screen_text(app), "the call failed")
        status = lambda: str(app.screen.query_one(StatusLine).render())  # noqa: E731
        await wait_for(pilot, lambda: f"continue {IDS['tool-error'][:8]}" in status(), "Continue's session")
        assert " ended " in status() and " 1860 tokens" in status()
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
