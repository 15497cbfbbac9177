"""The browser screen: journals newest first with their state, new ones live, Enter opens one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from textual.widgets import DataTable

from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from tests.tui.journals import START, finished_story, story, user, write_journal
from wren_tui.journal.fork import fork
from wren_tui.journal.writer import JournalWriter
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.browser import BrowserScreen
from wren_tui.tui.screens.session import SessionScreen

OLD, NEW = "s-20250301-093000-aaaa", "s-20250302-101500-bbbb"


def _app(folder: Path) -> WrenApp:
    return WrenApp(folder=folder, clock=FixedClock(datetime.now(UTC)))


def _ids(app: WrenApp) -> list[str]:
    table = app.screen.query_one(DataTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


async def test_browser_lists_journals_newest_first_with_state_events_duration_tokens(tmp_path: Path) -> None:
    write_journal(tmp_path / f"{OLD}.jsonl", finished_story())
    write_journal(tmp_path / f"{NEW}.jsonl", story(), start=START + timedelta(days=1))
    app = _app(tmp_path)
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for_text(pilot, OLD)
        assert _ids(app) == [NEW, OLD]
        text = screen_text(app)
        new_row = next(line for line in text.splitlines() if NEW in line)
        old_row = next(line for line in text.splitlines() if OLD in line)
        assert "outcome unknown" in new_row and " 17 " in new_row and "2051" in new_row
        assert "done" in old_row and " 26 " in old_row and "31.2s" in old_row and "3481" in old_row


async def test_a_fork_shows_where_it_came_from(tmp_path: Path) -> None:
    parent = write_journal(tmp_path / f"{OLD}.jsonl", finished_story())
    forked = fork(parent, 2)
    app = _app(tmp_path)
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for_text(pilot, forked.id)
        row = next(line for line in screen_text(app).splitlines() if forked.id in line)
        assert f"{OLD}@2" in row


async def test_a_new_journal_appears_live_and_a_live_one_turns_done(tmp_path: Path) -> None:
    write_journal(tmp_path / f"{OLD}.jsonl", finished_story())
    app = _app(tmp_path)
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for_text(pilot, OLD)
        writer = JournalWriter.create(tmp_path / f"{NEW}.jsonl", fsync="none")
        writer.append(user("a brand new session"))
        await wait_for(pilot, lambda: _ids(app) == [NEW, OLD], "the new journal at the top")
        await wait_for(pilot, lambda: "live" in _row(app, NEW), "the new journal marked live")
        writer.close()
        await wait_for(pilot, lambda: "interrupted" in _row(app, NEW), "the state to change once the writer left")


def _row(app: WrenApp, session: str) -> str:
    return next((line for line in screen_text(app).splitlines() if session in line), "")


async def test_enter_opens_a_session_and_escape_comes_back(tmp_path: Path) -> None:
    write_journal(tmp_path / f"{OLD}.jsonl", finished_story())
    app = _app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_text(pilot, OLD)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen")
        await wait_for_text(pilot, "Fixed: mean([]) now returns 0.0")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen), "the browser again")


async def test_an_empty_folder_says_how_to_start_a_session(tmp_path: Path) -> None:
    app = _app(tmp_path / "journals")
    async with app.run_test(size=(120, 20)) as pilot:
        await wait_for_text(pilot, "No journals in")
        assert "wren demo" in screen_text(app)
