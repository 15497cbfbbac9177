"""The browser screen: journals newest first with their state, new ones live, Enter opens one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import DataTable

from tests.tui.conftest import REPO, FixedClock, screen_text, wait_for, wait_for_text, without_dac_override
from tests.tui.journals import START, finished_story, story, user, write_journal
from wren_tui.journal.forking import fork
from wren_tui.journal.store import SessionInfo
from wren_tui.journal.writer import JournalWriter
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.browser import BrowserScreen, _cells
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.status_line import StatusLine

OLD, NEW = "s-20250301-093000-aaaa", "s-20250302-101500-bbbb"


def _app(folder: Path) -> WrenApp:
    return WrenApp(folder=folder, clock=FixedClock(datetime.now(UTC)))


def _ids(app: WrenApp) -> list[str]:
    """The session of each row, in order (a fork's id cell also shows its place in the tree)."""
    table = app.screen.query_one(DataTable)
    return [re.search(r"s-\d{8}-\d{6}-\w{4}", str(table.get_row_at(i)[0])).group() for i in range(table.row_count)]


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


def _in_state(folder: Path, state: str) -> Path:
    """A journal whose state is `state`: cut off mid-edit, finished, cut off before any reply, a fork never resumed."""
    if state == "forked":
        return fork(_in_state(folder, "done"), 2).path
    events = {"outcome unknown": story(), "done": finished_story(), "interrupted": story()[:2]}[state]
    return write_journal(folder / f"{NEW}.jsonl", events)


@pytest.mark.parametrize("state", ["outcome unknown", "done", "interrupted", "forked"])
async def test_the_list_and_the_session_status_line_say_the_same_state(tmp_path: Path, state: str) -> None:
    path = _in_state(tmp_path, state)
    app = _app(tmp_path)
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for_text(pilot, path.stem)
        row = next(line for line in screen_text(app).splitlines() if path.stem in line)
        assert f" {state} " in row
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=_ids(app).index(path.stem))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen")
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: str(status.render()).startswith(f" {state} "), f"{state} in the status line")
        assert " ended " not in str(status.render())


async def test_a_fork_shows_where_it_came_from(tmp_path: Path) -> None:
    parent = write_journal(tmp_path / f"{OLD}.jsonl", finished_story())
    forked = fork(parent, 2)
    app = _app(tmp_path)
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for_text(pilot, forked.id)
        row = next(line for line in screen_text(app).splitlines() if forked.id in line)
        assert f"{OLD}@2" in row


async def test_at_80_columns_the_origin_of_a_fork_is_readable_and_lesser_columns_give_way(tmp_path: Path) -> None:
    parent = write_journal(tmp_path / f"{OLD}.jsonl", finished_story())
    forked = fork(parent, 2)
    app = _app(tmp_path)
    async with app.run_test(size=(80, 20)) as pilot:
        await wait_for_text(pilot, forked.id)
        row = next(line for line in screen_text(app).splitlines() if forked.id in line)
        assert f"{OLD}@2" in row
        assert "forked" in row  # made and never resumed
        header = next(line for line in screen_text(app).splitlines() if " id " in line)
        assert "tokens" not in header and "forked from" in header
        await pilot.resize_terminal(160, 20)
        await wait_for(pilot, lambda: "tokens" in screen_text(app), "every column when there is room")
        assert _ids(app) == [OLD, forked.id]  # the fork under its parent


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


async def test_a_folder_change_that_lands_after_the_browser_closed_is_dropped(tmp_path: Path) -> None:
    write_journal(tmp_path / f"{OLD}.jsonl", finished_story())
    app = _app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_text(pilot, OLD)
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        await pilot.press("q")
    assert not browser.is_running
    # The watcher's last change, as it lands while the app quits: the table is gone, nothing is read.
    await browser._changed({tmp_path / f"{OLD}.jsonl"})


_UNREADABLE_CHILD = """
import asyncio, sys
from datetime import UTC, datetime
from pathlib import Path
from tests.tui.conftest import screen_text, wait_for_text
from wren_tui.tui.app import WrenApp

async def main():
    app = WrenApp(folder=Path(sys.argv[1]), clock=lambda: datetime(2025, 3, 1, tzinfo=UTC))
    async with app.run_test(size=(140, 20)) as pilot:
        await wait_for_text(pilot, sys.argv[2])
        await wait_for_text(pilot, sys.argv[3])
        print(screen_text(app))

asyncio.run(main())
"""


def test_a_journal_it_cannot_read_is_listed_as_unreadable(tmp_path: Path) -> None:
    prefix = without_dac_override()
    if prefix is None:
        pytest.skip("running as root without setpriv: permission bits cannot be made to hold")
    write_journal(tmp_path / f"{OLD}.jsonl", finished_story())
    locked = write_journal(tmp_path / f"{NEW}.jsonl", story())
    locked.chmod(0)
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", _UNREADABLE_CHILD, str(tmp_path), OLD, NEW],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = proc.stdout.splitlines()
    assert "unreadable" in next(line for line in rows if NEW in line)
    assert "done" in next(line for line in rows if OLD in line)


async def test_an_empty_folder_says_how_to_start_a_session(tmp_path: Path) -> None:
    app = _app(tmp_path / "journals")
    async with app.run_test(size=(120, 20)) as pilot:
        await wait_for_text(pilot, "No journals in")
        assert "wren demo" in screen_text(app)


def test_every_state_is_shown_as_it_is_named_each_in_a_colour_of_its_own() -> None:
    states = ["live", "cancelled", "limit", "error", "interrupted", "outcome unknown", "torn tail", "corrupt"]
    states += ["unreadable", "empty", "paused by policy"]
    styles = {}
    for state in states:
        info = SessionInfo(OLD, Path(f"{OLD}.jsonl"), state, 3, None, None, 0, None, None, None)  # type: ignore[arg-type]
        cell = _cells(info)["state"]
        assert cell.plain == state
        styles[state] = str(cell.style)
    assert "" not in styles.values()
    assert len(set(styles.values())) == len(states)
