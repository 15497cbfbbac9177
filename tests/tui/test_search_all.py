"""Search across every listed session from the browser, through Pilot: the results list, opening a hit, Esc back."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from tests.tui.conftest import folder_app, screen_text, search_every_session, shown_results, wait_for, wait_for_text
from tests.tui.journals import assistant, encode, finished_story, tool_result, user, write_journal
from wren_tui.journal.events import RunStart, ToolCall
from wren_tui.search.engine import Found
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens import results as results_module
from wren_tui.tui.screens.browser import BrowserScreen
from wren_tui.tui.screens.results import SearchResults
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.session_reader import TAIL_WINDOW
from wren_tui.tui.widgets.conversation import ConversationView

OLD, NEW = "s-20250301-093000-aaaa", "s-20250302-100000-bbbb"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "journals"
    write_journal(folder / f"{OLD}.jsonl", finished_story())
    write_journal(
        folder / f"{NEW}.jsonl",
        [
            RunStart(pid=7, cwd="/work/other", model="scripted", version="0.1.0"),
            user("why did ZeroDivisionError come back?"),
            assistant("Let me look.", ToolCall("c1", "grep", '{"pattern": "ZeroDivisionError"}')),
            tool_result("c1", "stats/core.py:12: raise ZeroDivisionError"),
        ],
        start=datetime(2025, 3, 2, 10, 0, 0, tzinfo=UTC),
    )
    return folder


def _app(folder: Path) -> WrenApp:
    return folder_app(folder)


async def _search(pilot: Pilot[object], app: WrenApp, text: str) -> SearchResults:
    await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen), "the browser")
    return await search_every_session(pilot, app, text)


def _rows(results: SearchResults) -> list[str]:
    return [str(option.prompt) for option in results.query_one(OptionList).options]


async def test_search_all_lists_every_hit_newest_session_first_and_says_how_many(tmp_path: Path) -> None:
    app = _app(_folder(tmp_path))
    async with app.run_test(size=(140, 30)) as pilot:
        results = await _search(pilot, app, "zerodivisionerror")
        rows = _rows(results)
        assert [row.split()[:2] for row in rows] == [
            [NEW, "#2"],
            [NEW, "#3"],
            [NEW, "#4"],
            [OLD, "#8"],
            [OLD, "#10"],
        ]
        assert "tool:grep" in rows[1] and "ZeroDivisionError" in rows[1]
        await wait_for_text(pilot, "5 matches in 2 sessions")


async def test_enter_opens_the_session_at_the_match_and_esc_returns_to_the_results(tmp_path: Path) -> None:
    app = _app(_folder(tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        results = await _search(pilot, app, "zerodivisionerror")
        options = results.query_one(OptionList)
        await pilot.press("down", "down", "down", "down")  # OLD's seq 10
        assert options.highlighted == 4
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session")
        view = app.screen.query_one(ConversationView)
        await wait_for(pilot, lambda: view.selected_event is not None and view.selected_event.seq == 10, "seq 10")
        assert view.highlight == "ZeroDivisionError" and not view.follow
        assert "test_mean_of_empty fails with ZeroDivisionError" in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: shown_results(app) is results, "the results again")
        assert options.highlighted == 4 and len(options.options) == 5
        assert results.results.has_focus
        await pilot.press("escape")
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        await wait_for(pilot, lambda: shown_results(app) is None and browser.table.has_focus_within, "the sessions")
        await wait_for_text(pilot, OLD)


async def test_a_damaged_journal_is_said_in_the_results_after_its_hits(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    lines = encode(finished_story()).splitlines(keepends=True)
    digit = lines[11][-4:-3]
    lines[11] = lines[11][:-4] + (b"1" if digit == b"0" else b"0") + lines[11][-3:]
    (folder / f"{OLD}.jsonl").write_bytes(b"".join(lines))
    app = _app(folder)
    async with app.run_test(size=(160, 30)) as pilot:
        results = await _search(pilot, app, "pytest")
        rows = _rows(results)
        assert [row.split()[1] for row in rows[:2]] == ["#5", "#8"]
        assert rows[2].startswith(f"{OLD}: reading stops at line 12: ")
        assert len(rows) == 3
        await wait_for_text(pilot, "1 read only in part")


async def test_a_hit_before_the_tail_opens_once_the_whole_journal_is_indexed(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    filler = [tool_result("c", "x" * 2000) for _ in range(TAIL_WINDOW // 2000 + 50)]
    write_journal(folder / f"{OLD}.jsonl", [user("the needle is here"), *filler])
    app = _app(folder)
    async with app.run_test(size=(140, 30)) as pilot:
        results = await _search(pilot, app, "needle")
        assert len(_rows(results)) == 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session")
        view = app.screen.query_one(ConversationView)
        await wait_for(pilot, lambda: view.selected_event is not None and view.selected_event.seq == 1, "seq 1")
        await wait_for_text(pilot, "the needle is here")


async def test_no_match_says_so(tmp_path: Path) -> None:
    app = _app(_folder(tmp_path))
    async with app.run_test(size=(140, 30)) as pilot:
        results = await _search(pilot, app, "nowhere")
        assert _rows(results) == []
        await wait_for_text(pilot, "no match in 2 sessions")


def _footer(app: WrenApp) -> str:
    return screen_text(app).splitlines()[-1]


async def test_the_results_show_in_place_of_the_sessions_with_their_keys_and_esc_brings_the_sessions_back(
    tmp_path: Path,
) -> None:
    app = _app(_folder(tmp_path))
    async with app.run_test(size=(140, 30)) as pilot:
        results = await _search(pilot, app, "zerodivisionerror")
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        await wait_for(pilot, lambda: results.results.has_focus, "the hits focused")
        await wait_for(pilot, lambda: "Back" in _footer(app), "the results' keys")
        shown = screen_text(app)
        assert "Matches for zerodivisionerror" in shown and "started" not in shown  # the table's header is gone
        assert "Search all" not in _footer(app) and "Refresh" not in _footer(app)
        assert "search every session listed" not in shown  # the box closed
        await pilot.press("r", "space")  # the browser's keys do nothing under the results
        assert shown_results(app) is results and len(results.hits) == 5

        await pilot.press("escape")
        await wait_for(pilot, lambda: shown_results(app) is None and "Search all" in _footer(app), "the sessions")
        assert "Back" not in _footer(app) and "started" in screen_text(app)

        # Another search (the box holds the last pattern): only its hits, under its own title.
        await pilot.press("/", *["backspace"] * len("zerodivisionerror"), *"come back", "enter")
        await wait_for(pilot, lambda: shown_results(app) is results and results.done, "the second search")
        assert [row.split()[:2] for row in _rows(results)] == [[NEW, "#2"]]
        await wait_for_text(pilot, "Matches for come back")
        await wait_for_text(pilot, "1 matches in 2 sessions")
        assert "ZeroDivisionError: division" not in screen_text(app)


async def test_a_search_with_no_hit_yet_says_how_far_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing changes at Enter: the list shows with the first hit, or after a tenth of a second saying how far
    the search is."""
    searching = results_module.search
    go_on = threading.Event()

    def held(*args: object, **kwargs: object) -> Iterator[Found]:
        assert go_on.wait(10), "the test never saw the search under way"
        yield from searching(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(results_module, "search", held)
    app = _app(_folder(tmp_path))
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowserScreen), "the browser")
        await pilot.press("/", *"zerodivisionerror", "enter")
        await wait_for_text(pilot, "searching… 0 of 2 sessions, 0 matches")
        results = shown_results(app)
        assert results is not None and not results.done
        go_on.set()
        await wait_for(pilot, lambda: results.done, "the search to end")
        await wait_for_text(pilot, "5 matches in 2 sessions")


async def test_a_journal_that_appears_under_the_results_is_listed_once_they_close(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    app = _app(folder)
    async with app.run_test(size=(140, 30)) as pilot:
        await _search(pilot, app, "zerodivisionerror")
        later = "s-20250303-080000-cccc"
        write_journal(folder / f"{later}.jsonl", [user("a third session")])
        await pilot.press("escape")
        await wait_for_text(pilot, later)
