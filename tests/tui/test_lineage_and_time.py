"""The viewer's screens of lineage and time through Pilot: the fork tree, lineage, a fork beside its parent,
the waterfall, replay and export, as a person uses them."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import OptionList

from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from tests.tui.family import FORK, FORK_START, GRANDCHILD, LATE, family
from tests.tui.journals import SESSION, after_last, finished_story, story, user, write_journal
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import JournalWriter
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.replay import ReplayScreen, Scrubber
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.screens.side_by_side import Columns, SideBySide
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.waterfall import Waterfall, axis, bar

LATER = FORK_START + timedelta(hours=1)


def _notified(app: WrenApp, text: str) -> bool:
    """Whether a notification (a toast, which the screen's text does not hold) says `text`."""
    return any(text in n.message for n in app._notifications)


def _lines_with(app: WrenApp, text: str) -> list[str]:
    return [line for line in screen_text(app).splitlines() if text in line]


# --- the fork tree ----------------------------------------------------------------------------


async def test_the_browser_shows_forks_as_a_tree_under_their_parent_and_space_folds_them(tmp_path: Path) -> None:
    f = family(tmp_path)
    app = WrenApp(folder=f.folder, clock=FixedClock(LATER))
    async with app.run_test(size=(140, 20)) as pilot:
        await wait_for_text(pilot, GRANDCHILD)
        rows = [line for line in screen_text(app).splitlines() if "s-2025" in line]
        order = [re.search(r"s-\d{8}-\d{6}-\w{4}", row).group() for row in rows]  # type: ignore[union-attr]
        assert order == [SESSION, FORK, GRANDCHILD, LATE]
        assert f"▾ {SESSION}" in rows[0]
        assert f"└ ▾ {FORK}" in rows[1] and f"{SESSION}@2" in rows[1]
        assert f"  └ {GRANDCHILD}" in rows[2] and f"{FORK}@10" in rows[2]  # indented one more
        assert f"└ {LATE}" in rows[3] and f"{SESSION}@25" in rows[3]
        await pilot.press("space")  # on the parent: its forks fold away
        await wait_for(pilot, lambda: FORK not in screen_text(app), "the forks folded")
        assert f"▸ {SESSION} (+2)" in screen_text(app)
        await pilot.press("space")
        await wait_for_text(pilot, GRANDCHILD)


async def test_a_fork_whose_parent_is_gone_is_at_the_top_with_its_parent_said_missing(tmp_path: Path) -> None:
    f = family(tmp_path)
    f.parent.unlink()
    app = WrenApp(folder=f.folder, clock=FixedClock(LATER))
    async with app.run_test(size=(140, 20)) as pilot:
        await wait_for_text(pilot, GRANDCHILD)
        [row] = _lines_with(app, f"{FORK} ")
        assert f"{SESSION}@2 (missing)" in row and "└" not in row


# --- lineage --------------------------------------------------------------------------------


async def test_g_shows_the_lineage_and_enter_opens_an_ancestor(tmp_path: Path) -> None:
    f = family(tmp_path)
    app = WrenApp(folder=f.folder, session=f.grandchild, clock=FixedClock(LATER))
    async with app.run_test(size=(120, 32)) as pilot:
        await wait_for_text(pilot, "what was the failing case?")
        await pilot.press("g")
        await wait_for_text(pilot, f"↑2 {SESSION}")
        assert f"↑1 {FORK}  forked at seq 2" in screen_text(app)
        assert f"▶ {GRANDCHILD}  forked at seq 10" in screen_text(app)
        await pilot.press("up", "up", "enter")  # the oldest ancestor
        await wait_for(pilot, lambda: app.screen.title == SESSION, "the ancestor's session screen")
        await wait_for_text(pilot, "Fixed: mean([]) now returns 0.0 and all 8 tests pass.")
        await pilot.press("g")
        await wait_for_text(pilot, f"└ {FORK}  forked at seq 2")
        assert f"  └ {GRANDCHILD}  forked at seq 10" in screen_text(app)


async def test_an_ancestor_that_is_gone_is_listed_missing_and_cannot_be_opened(tmp_path: Path) -> None:
    f = family(tmp_path)
    f.parent.unlink()
    app = WrenApp(folder=f.folder, session=f.grandchild, clock=FixedClock(LATER))
    async with app.run_test(size=(130, 32)) as pilot:
        await pilot.press("g")
        await wait_for_text(pilot, f"↑2 {SESSION}  missing")
        lineage = app.screen
        options = lineage.query_one(OptionList)
        # The cursor passes over it: the oldest row it reaches is the fork that is still there.
        await pilot.press("up", "up", "up")
        await wait_for(pilot, lambda: options.highlighted == 1, "the cursor on the fork above this session")
        assert options.get_option_at_index(0).disabled and not options.get_option_at_index(1).disabled
        # Selected all the same (a click, say), it opens nothing: the lineage stays, no session screen is pushed.
        options.highlighted = 0
        await pilot.press("enter")
        assert app.screen is lineage and app.screen.title != SESSION
        # The fork above it still opens.
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.screen.title == FORK, "the fork's session screen")


# --- a fork beside its parent --------------------------------------------------------------


async def test_d_on_a_fork_shows_it_beside_its_parent_with_the_differences_marked(tmp_path: Path) -> None:
    f = family(tmp_path)
    app = WrenApp(folder=f.folder, session=f.fork, clock=FixedClock(LATER))
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for_text(pilot, "One test errors; stopping here.")
        await pilot.press("d")
        await wait_for_text(pilot, "── seq 1-2 shared ──")
        assert isinstance(app.screen, SideBySide)
        [row] = _lines_with(app, "unittest")
        assert "pytest -q" in row and " ≠ " in row  # the parent's call and the fork's, side by side
        [answer] = _lines_with(app, "answer: One test errors")
        assert "answer: Fixed: mean([])" in answer
        await pilot.press("n")  # the next difference: the first call
        await wait_for_text(pilot, "differs here: arguments, elapsed")
        await pilot.press("n")
        await wait_for_text(pilot, "differs here: only on the left")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "back to the fork")


async def test_both_columns_scroll_as_one(tmp_path: Path) -> None:
    f = family(tmp_path)
    app = WrenApp(folder=f.folder, session=f.fork, clock=FixedClock(LATER))
    async with app.run_test(size=(120, 8)) as pilot:
        await pilot.press("d")
        await wait_for(
            pilot, lambda: bool(app.screen.query(Columns)) and bool(app.screen.query_one(Columns).rows), "rows"
        )
        columns = app.screen.query_one(Columns)
        for _ in range(len(columns.rows)):
            await pilot.press("down")
        await wait_for(pilot, lambda: columns.scroll_offset.y > 0, "the rows to scroll")
        # The row at the top holds the left and the right of one row of the comparison.
        top = columns.rows[columns.scroll_offset.y]
        line = _lines_with(app, top.left[:20])[0] if top.left else _lines_with(app, top.right[:20])[0]
        assert top.right[:15] in line


async def test_d_on_a_session_that_is_not_a_fork_says_so_in_a_notice_and_opens_no_screen(tmp_path: Path) -> None:
    f = family(tmp_path)
    app = WrenApp(folder=f.folder, session=f.parent, clock=FixedClock(LATER))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_text(pilot, "Fixed: mean([])")
        session = app.screen
        await pilot.press("d")
        await wait_for(pilot, lambda: _notified(app, "is not a fork: it has no fork event"), "the notice")
        assert app.screen is session and not app.screen_stack[-1].query(Columns)
        conversation = app.screen.query_one(ConversationView)
        before = conversation.cursor
        await pilot.press("T")  # the session's own keys still act: no screen stands over it
        await wait_for(pilot, lambda: conversation.cursor != before, "the cursor on the previous tool call")


# --- the waterfall and time spent ------------------------------------------------------------


def test_a_bar_starts_where_the_call_started_and_is_as_long_as_it_ran() -> None:
    assert bar(0, 4, 10) == "████      "
    assert bar(2.5, 0.5, 10) == "  ▌       "
    assert bar(9.9, 0.001, 10) == "         ▏"  # a millisecond still shows
    assert bar(8, 5, 10) == "        ██"  # cut at the end of the track
    assert axis(60_000, 30).startswith("0") and axis(60_000, 30).endswith("1m00s")


async def test_w_shows_each_call_on_the_time_axis_coloured_by_outcome(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    app = WrenApp(folder=tmp_path, session=path, clock=FixedClock(after_last(finished_story(), 5)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, "Fixed: mean([])")
        await pilot.press("w")
        await wait_for_text(pilot, "Tool calls on the session's time axis")
        waterfall = app.screen.query_one(Waterfall)
        rows = {name: _lines_with(app, f"{name} ")[-1] for name in ("read_file", "edit_file")}
        shell = [line for line in _lines_with(app, "shell ") if "█" in line or "▏" in line]
        assert len(shell) == 2 and "412 ms" in shell[0] and "398 ms" in shell[1]
        # Later calls start further right.
        starts = [
            line.index(next(c for c in line[13:] if c != " "), 13) for line in (shell[0], rows["read_file"], shell[1])
        ]
        assert starts == sorted(starts) and starts[0] < starts[-1]
        strip = waterfall.render_line(1)
        failed = [seg for seg in strip if "█" in seg.text or "▏" in seg.text or "▎" in seg.text]
        assert failed and failed[0].style is not None and failed[0].style.color is not None
        # The axis under the track spans the session: 0, its middle, and its end, from the journal's own times.
        events = read_events(path).events
        span = datetime.fromisoformat(events[-1].ts) - datetime.fromisoformat(events[0].ts)
        seconds = span.total_seconds()
        axis_line = next(line for line in screen_text(app).splitlines() if line.startswith("tool "))
        labels = re.findall(r"\d+(?:\.\d+)? s|\b0\b", axis_line)
        assert labels == ["0", f"{seconds / 2:.1f} s", f"{seconds:.1f} s"], axis_line
        await pilot.press("w")
        await wait_for_text(pilot, "Tool calls")
        assert "arguments" in screen_text(app)  # the table again


async def test_the_running_call_s_bar_grows_as_time_passes(tmp_path: Path) -> None:
    events = story()
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    clock = FixedClock(after_last(events, 10))
    app = WrenApp(
        folder=tmp_path,
        session=path,
        clock=clock,
    )
    with JournalWriter.open(path, fsync="none"):
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("w")
            await wait_for_text(pilot, "10.0 s…")
            before = _lines_with(app, "edit_file ")[-1]
            clock.advance(60)
            await wait_for_text(pilot, "1m10s…")
            after = _lines_with(app, "edit_file ")[-1]
            assert after.count("█") > before.count("█")


async def test_the_status_line_sums_the_time_waiting_for_the_model_and_running_tools(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    app = WrenApp(folder=tmp_path, session=path, clock=FixedClock(after_last(finished_story(), 5)))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for_text(pilot, "model ")
        status = screen_text(app).splitlines()[0]
        # 15 steps of 1.25 s from a user message or a result to the reply; 4 from tool_start to tool_end.
        assert "model 18.8 s · tools 5.0 s" in status


# --- replay ----------------------------------------------------------------------------------


async def test_replay_steps_by_event_turn_and_call_showing_the_session_as_it_was(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [*finished_story(), user("and now?"), *finished_story()[2:]])
    app = WrenApp(folder=tmp_path, session=path, clock=FixedClock(LATER))
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for_text(pilot, "Fixed: mean([])")
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay")
        scrubber = app.screen.query_one(Scrubber)
        await wait_for(pilot, lambda: scrubber.shown == 0, "the start")
        assert " 0 events" in screen_text(app) and "run the tests" not in screen_text(app)
        await pilot.press("right", "right")
        await wait_for_text(pilot, "run the tests, find the failing case and fix it")
        assert "event 2 of" in screen_text(app) and "09:30:01.250" in screen_text(app)
        assert "I'll run the test suite first." not in screen_text(app)  # not yet said at that moment
        await pilot.press("full_stop")  # the next tool call: the moment its tool_start was written
        await wait_for_text(pilot, "call 1 of 8")
        assert "running, approved" in screen_text(app)  # it was running then
        await pilot.press("right_square_bracket")  # the next turn
        await wait_for_text(pilot, "turn 2 of 2")
        assert "and now?" in screen_text(app)
        await pilot.press("left")
        await wait_for_text(pilot, "turn 1 of 2")
        assert "and now?" not in screen_text(app)


async def test_replay_plays_at_the_speed_chosen_and_stops_at_the_end(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    app = WrenApp(folder=tmp_path, session=path, clock=FixedClock(LATER))
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for_text(pilot, "Fixed: mean([])")
        await pilot.press("R", "3", "space")  # 100x: the 31 s session in about a third of a second
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        scrubber = replay.query_one(Scrubber)
        # Every item is a moment (the streamed deltas arrive with their reply).
        await wait_for(pilot, lambda: scrubber.shown == len(replay.moments) == 24, "the end", timeout=20)
        await wait_for(pilot, lambda: not scrubber.playing, "the replay to stop at the end")
        assert "▶" not in screen_text(app).splitlines()[-2]
        assert "Fixed: mean([])" in screen_text(app)


async def test_replay_leaves_the_live_tail_underneath_untouched(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    app = WrenApp(folder=tmp_path, session=path, clock=FixedClock(LATER))
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for_text(pilot, "Fixed: mean([])")
        session = app.screen
        assert isinstance(session, SessionScreen)
        await pilot.press("R", "right")
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        with JournalWriter.open(path, fsync="none") as writer:
            writer.append(user("a new question, asked during the replay"))
        await wait_for(pilot, lambda: session.timeline.events == len(finished_story()) + 1, "the tail to read it")
        assert replay.timeline.events == 1  # the replay is still at its moment
        await pilot.press("escape")
        await wait_for_text(pilot, "a new question, asked during the replay")
        assert session.query_one(ConversationView).follow


async def test_replay_of_a_session_still_being_written_is_refused(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story())
    app = WrenApp(folder=tmp_path, session=path, clock=FixedClock(LATER))
    with JournalWriter.open(path, fsync="none"):
        async with app.run_test(size=(130, 40)) as pilot:
            await wait_for_text(pilot, "running")
            await pilot.press("R")
            await wait_for(pilot, lambda: _notified(app, "Replay is for a finished session"), "why not")
            assert not isinstance(app.screen, ReplayScreen)


# --- export ----------------------------------------------------------------------------------


async def test_x_exports_the_session_to_the_file_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", finished_story())
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    app = WrenApp(folder=path.parent, session=path, clock=FixedClock(LATER))
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for_text(pilot, "Fixed: mean([])")
        await pilot.press("x")
        await wait_for_text(pilot, f"Export {SESSION}")
        await pilot.press("m", "enter")  # Markdown, then write it
        await wait_for(pilot, lambda: (out / f"{SESSION}.md").exists(), "the export")
        await wait_for(pilot, lambda: _notified(app, f"Exported to {SESSION}.md"), "the notice")
    text = (out / f"{SESSION}.md").read_text()
    assert text.startswith(f"# Session `{SESSION}`") and "Fixed: mean([])" in text
    assert sorted(p.name for p in out.iterdir()) == [f"{SESSION}.md"]
    assert list(path.parent.iterdir()) == [path]  # nothing written beside the journal
