"""A Kilo Code CLI session in the viewer, through Pilot: the session screen reads `kilo.db` by OpenCode's reader,
shows the text said before a call above it and never Kilo's transient spinner text; its status line says the
session is Kilo's and ended, as `wren ls` does; the database keeps every byte and time."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tests.foreign.test_kilo import MULTI_ID, SPINNER, kilo_db
from tests.foreign.test_opencode import fingerprint
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)


def _app(path: Path) -> WrenApp:
    return WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK))


async def test_a_kilo_session_is_watched_with_its_calls_and_answers_and_no_spinner_text(tmp_path: Path) -> None:
    db = kilo_db(tmp_path / "kilo", "multi-turn")
    before = fingerprint(db)
    app = _app(db)
    async with app.run_test(size=(140, 60)) as pilot:
        await wait_for_text(pilot, "hello.py has 3 lines.")
        text = screen_text(app)
        order = ["What does notes.txt say?", "notes.txt is a short to-do list", "wc -l hello.py", "hello.py has 3"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        assert SPINNER not in text
        await wait_for(pilot, lambda: f"kilo {MULTI_ID}" in str(app.screen.query_one(StatusLine).render()), "kilo")
        assert " ended " in str(app.screen.query_one(StatusLine).render())
    assert fingerprint(db) == before


async def test_the_text_kilo_said_before_its_call_is_shown_above_the_call(tmp_path: Path) -> None:
    db = kilo_db(tmp_path / "kilo", "simple")
    app = _app(db)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for_text(pilot, "The folder holds two files")
        text = screen_text(app)
        assert text.index("I'll list the folder first.") < text.index("ls -la") < text.index("The folder holds")
