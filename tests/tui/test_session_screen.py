"""The session screen through Pilot: what a person sees and can do while a journal grows."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from tests.conftest import run_wren
from tests.tui.conftest import FixedClock, screen_strips, screen_text, session_app, wait_for, wait_for_text
from tests.tui.journals import (
    SESSION,
    after_last,
    assistant,
    finished_story,
    story,
    tool_result,
    user,
    write_journal,
)
from wren_tui.journal import watching
from wren_tui.journal.events import Delta, Error, RunStart, ToolCall, ToolEnd, ToolStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import JournalChanged, JournalWriter
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.browser import BrowserScreen
from wren_tui.tui.screens.dialogs import Notice
from wren_tui.tui.screens.fork_flow import Picked
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine


def _app(path: Path, clock: FixedClock | None = None, **kwargs: object) -> WrenApp:
    return session_app(path, clock, **kwargs)


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def _conversation(app: WrenApp) -> ConversationView:
    return app.screen.query_one(ConversationView)


async def _select_seq(pilot: Pilot[object], app: WrenApp, seq: int) -> None:
    """Walk the cursor down from the top, as a person would, to the event with `seq`."""
    view = _conversation(app)
    await pilot.press("home")
    while view.selected_event is not None and view.selected_event.seq < seq:
        await pilot.press("down")
    assert view.selected_event is not None and view.selected_event.seq == seq


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    return write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())


async def test_conversation_shows_user_assistant_and_tool_messages_in_order(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.press("home")
        await wait_for_text(pilot, "run the tests, find the failing case and fix it")
        text = screen_text(app)
        order = ["▌ you", "▌ assistant", "▌ tool result [call_1]", "test_mean_of_empty fails"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)


async def test_long_tool_output_is_folded_until_enter_expands_it(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        await _select_seq(pilot, app, 8)  # the test run's output
        await wait_for_text(pilot, "… 8 more lines · Enter to expand")
        assert "1 failed, 7 passed" not in screen_text(app)
        await pilot.press("enter")
        await wait_for_text(pilot, "1 failed, 7 passed in 0.04s")
        assert "more lines · Enter to expand" not in screen_text(app)
        await pilot.press("enter")
        await wait_for_text(pilot, "… 8 more lines · Enter to expand")


async def test_appended_events_appear_while_following(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    app = _app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_text(pilot, "run the tests, find the failing case")
        with JournalWriter.open(path, fsync="none") as writer:
            writer.append(assistant("Appended while you watched."))
            await wait_for_text(pilot, "Appended while you watched.")
            assert _conversation(app).follow
            assert " live " in _status(app)
        # Once the writer closed, how it stands, as the list says it: its run never ended.
        await wait_for(pilot, lambda: " interrupted " in _status(app), "the status to say so once the writer closed")


async def test_streaming_text_shows_until_the_whole_message_lands(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    app = _app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        with JournalWriter.open(path, fsync="none") as writer:
            writer.append(Delta(text="Reading the failing "))
            writer.append(Delta(text="test now"))
            await wait_for_text(pilot, "Reading the failing test now")
            assert "assistant · writing…" in screen_text(app)
            writer.append(assistant("Reading the failing test now."))
            await wait_for(
                pilot, lambda: "assistant · writing…" not in screen_text(app), "the streaming block to go away"
            )
            assert "Reading the failing test now." in screen_text(app)


async def test_scrolling_up_pauses_follow_counts_new_events_and_l_returns_to_live(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story()[:-1])
    app = _app(path)
    async with app.run_test(size=(100, 24)) as pilot:
        with JournalWriter.open(path, fsync="none") as writer:
            await pilot.press("up", "up")
            await wait_for(pilot, lambda: " paused " in _status(app), "paused in the status line")
            writer.append(user("first while paused"))
            writer.append(user("second while paused"))
            await wait_for(pilot, lambda: "2 new · L to jump to live" in _status(app), "the new-events count")
            assert "second while paused" not in screen_text(app)
            await pilot.press("l")
            await wait_for_text(pilot, "second while paused")
            assert " live " in _status(app)
            assert "new ·" not in _status(app)


async def test_f_turns_follow_off_and_on(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(100, 24)) as pilot:
        view = _conversation(app)
        assert view.follow
        await pilot.press("f")
        assert not view.follow
        await pilot.press("f")
        assert view.follow


async def test_running_call_ticks_and_shows_running_while_its_writer_holds_the_journal(tmp_path: Path) -> None:
    events = story()
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    clock = FixedClock(after_last(events, 3))
    app = _app(path, clock)
    with JournalWriter.open(path, fsync="none"):
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for_text(pilot, "3 s…")
            assert "running, approved" in screen_text(app)
            clock.advance(4)
            await wait_for_text(pilot, "7 s…")
            assert "outcome unknown" not in screen_text(app)


async def test_started_call_whose_writer_is_gone_is_marked_outcome_unknown(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story())
    app = _app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, "outcome unknown, approved")
        assert "running" not in screen_text(app)
        assert _status(app).startswith(" outcome unknown ")  # the session's state, as the list says it


async def test_writer_exiting_mid_call_turns_running_into_outcome_unknown(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story())
    app = _app(path)
    writer = JournalWriter.open(path, fsync="none")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, "running, approved")
        writer.close()
        await wait_for_text(pilot, "outcome unknown, approved")


async def test_a_call_that_ended_but_never_got_its_tool_message_is_marked_output_lost(tmp_path: Path) -> None:
    events = [*story(), ToolEnd(id="call_3", ok=True, elapsed_ms=5, chars=24)]
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    app = _app(path)
    writer = JournalWriter.open(path, fsync="none")
    async with app.run_test(size=(120, 40)) as pilot:
        # While its writer lives, the tool message may be a moment away.
        await wait_for_text(pilot, "ok, approved")
        writer.close()
        await wait_for_text(pilot, "output lost, approved")
        assert "outcome unknown, approved" not in screen_text(app)  # the call's; the session's state is, as listed


async def test_status_line_shows_session_events_tokens_and_time_since_last_event(journal: Path) -> None:
    events = finished_story()
    app = _app(journal, FixedClock(after_last(events, 75)))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: SESSION in _status(app), "the session id")
        status = _status(app)
        assert f"{len(events)} events" in status
        assert "3481 tokens" in status
        assert "1m15s ago" in status
        assert status.startswith(" done ")


async def test_torn_tail_shows_where_reading_stopped_and_the_events_before_it(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story())
    with open(path, "ab") as f:
        f.write(b'{"seq":18,"ts":"2025-03-01T09:30:21.250Z","type":"tool_e')
    app = _app(path)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: "stopped at line 18" in _status(app), "the torn tail in the status line")
        assert "the last line was cut short" in _status(app)
        assert "17 events" in _status(app)


async def test_a_bad_line_in_the_middle_shows_stopped_at_and_its_reason(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story())
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(3, b"this is not json\n")
    path.write_bytes(b"".join(lines))
    app = _app(path)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: "stopped at line 4" in _status(app), "the bad line in the status line")
        assert "JSON" in _status(app)
        assert "3 events" in _status(app)


async def test_e_and_shift_e_move_between_errors_and_t_to_tool_calls(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        view = _conversation(app)
        await pilot.press("home", "e")
        assert isinstance(view.selected_event, ToolEnd) and view.selected_event.ok is False
        await pilot.press("e")
        assert isinstance(view.selected_event, Error)
        await pilot.press("E")
        assert isinstance(view.selected_event, ToolEnd)
        await pilot.press("home", "t")
        assert isinstance(view.selected_event, ToolStart) and view.selected_event.id == "call_1"
        await pilot.press("t")
        assert isinstance(view.selected_event, ToolStart) and view.selected_event.id == "call_2"
        assert not view.follow


async def test_r_shows_the_selected_event_as_pretty_json(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("home", "e", "e", "r")
        await wait_for_text(pilot, "Event 15 (error) as written")
        assert '"message": "model gateway timed out after 30 s",' in screen_text(app)
        assert '"retryable": true,' in screen_text(app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the raw view to close")


async def test_search_enter_gives_the_keys_back_so_n_and_shift_n_move_between_matches(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("/")
        await pilot.press(*"zerodivision", "enter")
        view = _conversation(app)
        await wait_for(pilot, lambda: view.selected_event is not None and view.selected_event.seq == 8, "a match")
        await wait_for(pilot, lambda: "match 1 of 2" in _status(app), "the match count")
        assert app.focused is view
        await pilot.press("n")
        await wait_for(pilot, lambda: view.selected_event is not None and view.selected_event.seq == 10, "the next")
        assert "match 2 of 2" in _status(app)
        assert app.screen.query_one("#search", Input).value == "zerodivision"
        await pilot.press("n")
        await wait_for(pilot, lambda: "match 1 of 2" in _status(app), "the first again, around the end")
        await pilot.press("N")
        await wait_for(pilot, lambda: "match 2 of 2" in _status(app), "the previous, around the start")
        await pilot.press("escape")
        await wait_for(pilot, lambda: "match" not in _status(app), "the search forgotten")


async def test_the_session_search_matches_as_wren_search_does_a_capital_letter_makes_it_case_sensitive(
    tmp_path: Path,
) -> None:
    journal = write_journal(
        tmp_path / f"{SESSION}.jsonl",
        [
            user("the Parrot is asleep"),
            assistant("a parrot, then a PARROT"),
            user("no bird here"),
            assistant("Parrot!"),
        ],
    )

    def searched(pattern: str) -> list[int]:
        """The seqs `wren search` finds `pattern` at in the journal (the one Query both make)."""
        found = run_wren(["search", pattern, "--dir", str(tmp_path), "--json", "--no-index"], cwd=tmp_path)
        assert found.returncode in (0, 1), found.stderr
        return sorted({json.loads(line)["seq"] for line in found.stdout.splitlines()})

    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        view = _conversation(app)
        for pattern, expected in (("parrot", 3), ("Parrot", 2), ("PARROT", 1), ("pArrot", 0)):
            await pilot.press("/")
            app.screen.query_one("#search", Input).value = ""
            await pilot.press(*pattern, "enter")
            if not expected:
                await wait_for(pilot, lambda: "match" not in _status(app), f"no match of {pattern}")
                assert searched(pattern) == []
                continue
            await wait_for(pilot, lambda n=expected: f" of {n} " in _status(app), f"the matches of {pattern}")
            seqs = []
            for _ in range(expected):
                assert view.selected_event is not None
                seqs.append(view.selected_event.seq)
                await pilot.press("n")
                await pilot.pause()
            assert sorted(set(seqs)) == searched(pattern)
            strips = screen_strips(app)
            marked = {seg.text for strip in strips for seg in strip if seg.style is not None and seg.style.reverse}
            marked &= {"parrot", "Parrot", "PARROT"}
            assert marked and (pattern.islower() or marked == {pattern}), marked


async def test_search_marks_the_match_in_the_text(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("/", *"zerodivisionerror", "enter")
        await wait_for(pilot, lambda: "match 1 of 2" in _status(app), "the first match")
        marked = [seg for strip in screen_strips(app) for seg in strip if seg.text == "ZeroDivisionError"]
        plain = [seg for strip in screen_strips(app) for seg in strip if "fails with " in seg.text]
        assert marked and all(seg.style is not None and seg.style.reverse for seg in marked)
        assert plain and not any(seg.style is not None and seg.style.reverse for seg in plain)


async def test_a_match_inside_folded_output_unfolds_it_and_shows_the_matching_row(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("/", *"1 failed, 7 passed", "enter")
        await wait_for(pilot, lambda: "match 1 of 1" in _status(app), "the match")
        view = _conversation(app)
        assert view.selected_event is not None and view.selected_event.seq == 8
        await wait_for_text(pilot, "1 failed, 7 passed in 0.04s")
        assert "more lines · Enter to expand" not in screen_text(app)


async def test_the_cursor_row_is_highlighted_behind_its_text_on_a_full_width_line(tmp_path: Path) -> None:
    full = "x" * 200
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [user("first"), user(full), user("last")])
    app = _app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("home", "down")
        view = _conversation(app)
        await wait_for(pilot, lambda: view.selected_event is not None and view.selected_event.seq == 2, "the cursor")
        cursor = view.get_component_rich_style("conversation--cursor").bgcolor
        rows = [strip for strip in screen_strips(app) if "xxxxxxxxxx" in strip.text]
        assert rows
        for strip in rows:
            text_cells = [seg for seg in strip if "x" in seg.text]
            assert text_cells and all(seg.style is not None and seg.style.bgcolor == cursor for seg in text_cells)


async def test_fork_point_enter_confirm_forks_and_shows_the_resume_command(journal: Path) -> None:
    before = journal.read_bytes()
    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("p")
        await wait_for_text(pilot, "Fork points of")
        await wait_for_text(pilot, "25  assistant: Fixed: mean([]) now returns 0.0")
        await pilot.press("up", "enter")
        await wait_for_text(pilot, "Fork s-20250301-093000-demo at seq 2?")
        await pilot.press("y")
        await wait_for_text(pilot, "Continue it with:")
    forks = [p for p in journal.parent.glob("s-*.jsonl") if p != journal]
    assert len(forks) == 1
    assert journal.read_bytes() == before
    result = read_events(forks[0])
    assert [e.seq for e in result.events] == [1, 2, 3]


async def test_a_long_fork_point_is_one_line_cut_with_an_ellipsis_never_wrapped_under_the_seq_column(
    tmp_path: Path,
) -> None:
    asked = "please " * 60 + "THE-END"
    path = write_journal(
        tmp_path / f"{SESSION}.jsonl", [RunStart(pid=1, cwd="/w", model="m", version="v"), user(asked)]
    )
    app = _app(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("p")
        await wait_for_text(pilot, "Fork points of")
        options = app.screen.query_one(OptionList)
        await wait_for(pilot, lambda: options.option_count == 1, "the one point")
        lines = [options.render_line(y).text for y in range(options.size.height)]
        shown = [line for line in lines if "please" in line]
        assert len(shown) == 1, lines  # the point's one line: nothing of it wrapped onto the next
        assert shown[0].lstrip().startswith("2  user: please please") and shown[0].rstrip().endswith("…")
        assert "THE-END" not in "".join(lines)


async def test_fork_shows_the_new_id_and_the_resume_command_with_the_folder_it_is_in(tmp_path: Path) -> None:
    # Resume works in the session's recorded workspace, so the story's must exist for the command to run.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    events = [RunStart(pid=4242, cwd=str(workspace), model="scripted", version="0.1.0"), *finished_story()[1:]]
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    app = _app(journal)
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.press("p")
        await wait_for_text(pilot, "Fork points of")
        await pilot.press("enter", "y")
        await wait_for_text(pilot, "Continue it with:")
        new = next(p.stem for p in journal.parent.glob("s-*.jsonl") if p != journal)
        # The viewer's folder is not the one `wren resume` finds from here, so the command names it
        # (the dialog wraps a long line, so its message is read whole).
        notice = app.screen
        assert isinstance(notice, Notice)
        command = f"wren resume --dir {journal.parent} {new}"
        assert command in notice.message
        assert f"Forked {SESSION} at seq 25 → {new}" in screen_text(app)
    # And it works as printed (the folder is absolute, so from anywhere).
    proc = run_wren([*shlex.split(command)[1:], "what did I ask?"], cwd=journal.parent.parent)
    assert proc.returncode == 0, proc.stderr
    assert f"session {new} resumed" in proc.stdout


async def test_declining_the_fork_writes_nothing(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("p")
        await wait_for_text(pilot, "Fork points of")
        await pilot.press("enter")
        await wait_for_text(pilot, "at seq 25?")
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "back on the session")
    assert sorted(p.name for p in journal.parent.iterdir()) == [journal.name]


async def test_pick_mode_returns_the_session_and_seq_without_forking(journal: Path) -> None:
    app = _app(journal, pick=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, "printed as ID SEQ on exit")
        await pilot.press("up", "enter")
    assert app.return_value == Picked(SESSION, 2)
    assert sorted(p.name for p in journal.parent.iterdir()) == [journal.name]


async def test_a_replaced_journal_is_read_again_from_its_start(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [user("the original first message")])
    app = _app(path)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_for_text(pilot, "the original first message")
        replacement = write_journal(tmp_path / "replacement.tmp", [user("a different history"), user("two")])
        os.replace(replacement, path)
        await wait_for_text(pilot, "a different history")
        assert "the original first message" not in screen_text(app)
        assert "2 events" in _status(app)


async def test_a_journal_moved_away_while_its_writer_writes_says_so_and_goes_on_showing_it(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    app = _app(path)
    with JournalWriter.open(path, fsync="none") as writer:
        async with app.run_test(size=(140, 30)) as pilot:
            await wait_for(pilot, lambda: " live " in _status(app), "live")
            path.rename(tmp_path / "moved.jsonl")
            moved = "moved to moved.jsonl: its writer stops at its next event"
            await wait_for(pilot, lambda: moved in _status(app), "moved")
            # What the status line says is what the writer does: it writes nothing more (a run exits 5).
            with pytest.raises(JournalChanged):
                writer.append(user("written after the move"))
            writer.close()
            await wait_for(pilot, lambda: "its writer" not in _status(app), "the writer gone")
            assert "moved to moved.jsonl" in _status(app)
            assert " ended " not in _status(app)
            assert "2 events" in _status(app)
            assert "run the tests, find the failing case and fix it" in screen_text(app)


async def test_a_journal_deleted_while_its_writer_writes_says_its_writer_stops(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    app = _app(path)
    with JournalWriter.open(path, fsync="none") as writer:
        async with app.run_test(size=(140, 30)) as pilot:
            await wait_for(pilot, lambda: " live " in _status(app), "live")
            path.unlink()
            await wait_for(pilot, lambda: "deleted: its writer stops at its next event" in _status(app), "deleted")
            with pytest.raises(JournalChanged):
                writer.append(user("written after the deletion"))
            assert "run the tests, find the failing case and fix it" in screen_text(app)


async def test_a_deleted_journal_is_said_to_be_deleted(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    app = _app(path)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: " done " in _status(app), "the journal shown")
        path.unlink()
        await wait_for(pilot, lambda: " deleted " in _status(app), "the deletion in the status line")
        assert "deleted: the file is gone" in _status(app)
        assert "Fixed: mean([]) now returns 0.0" in screen_text(app)


async def test_polling_takes_over_when_the_watcher_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_awatch(*args: object, **kwargs: object) -> object:
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watching.watchfiles, "awatch", broken_awatch)
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [user("before")])
    app = _app(path)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_for_text(pilot, "before")
        with JournalWriter.open(path, fsync="none") as writer:
            writer.append(user("seen by polling"))
            await wait_for_text(pilot, "seen by polling")


async def test_a_workers_result_or_a_change_that_lands_after_the_screen_closed_is_dropped(journal: Path) -> None:
    # An index, a read, a search or a folder change landing as the person leaves (Esc, q) crashed the viewer.
    app = WrenApp(folder=journal.parent, clock=FixedClock(datetime.now(UTC)))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_text(pilot, SESSION)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen")
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.is_running, "the session screen to close")
        reader = screen.reader
        progress = partial(reader.index_progress, reader.generation, 0.5)
        await asyncio.to_thread(reader.runner.to_ui, progress)
        await reader.changed()  # and the folder watcher's last word
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen) and app.is_running


async def test_every_key_is_in_the_command_palette(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 40)):
        titles = {command.title for command in app.get_system_commands(app.screen)}
    wanted = {"Follow", "Live", "Next error", "Prev error", "Next tool", "Raw", "Search", "Fork points", "Quit", "Help"}
    assert wanted <= titles


async def test_palette_command_runs_the_key_action(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Follow")
        command.callback()
        await wait_for(pilot, lambda: not _conversation(app).follow, "follow to turn off")


async def test_question_mark_shows_the_keys(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: bool(app.screen.query("HelpPanel")), "the help panel")
        await wait_for_text(pilot, "Next error")


@pytest.mark.parametrize("key", ["q", "escape"])
async def test_q_or_escape_closes_the_help_panel_and_leaves_the_app_and_its_screen_open(
    journal: Path, key: str
) -> None:
    app = _app(journal)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.screen
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: bool(app.screen.query("HelpPanel")), "the help panel")
        await pilot.press(key)
        await wait_for(pilot, lambda: not app.screen.query("HelpPanel"), "the help panel to close")
        assert app.is_running and app.screen is screen  # neither quit nor gone back
        await pilot.press("q")  # with no help open, q quits as before
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")


@pytest.mark.parametrize("width", [80, 60])
async def test_a_narrow_footer_keeps_quit_and_help_and_drops_lesser_keys_first(journal: Path, width: int) -> None:
    app = _app(journal)
    async with app.run_test(size=(width, 24)) as pilot:
        await wait_for(pilot, lambda: "q Quit" in screen_text(app).splitlines()[-1], "q Quit in the footer")
        footer = screen_text(app).splitlines()[-1]
        assert "? Help" in footer and "/ Search" in footer
        assert "f Follow" not in footer
        await pilot.resize_terminal(140, 24)
        await wait_for(pilot, lambda: "f Follow" in screen_text(app).splitlines()[-1], "every key when there is room")
        assert "q Quit" in screen_text(app).splitlines()[-1]


async def test_tool_row_enter_shows_that_call_in_the_conversation(journal: Path) -> None:
    app = _app(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("tab")
        await pilot.press("down", "down")
        # The cursor starts on the last call; two downs stay there, one up reaches call_3.
        await pilot.press("up", "enter")
        view = _conversation(app)
        assert isinstance(view.selected_event, ToolStart) and view.selected_event.id == "call_3"


def test_tool_call_ids_from_the_story_are_unique() -> None:
    ids = [c.id for e in finished_story() for c in (getattr(getattr(e, "message", None), "tool_calls", None) or [])]
    assert len(ids) == len(set(ids)) == 4
    assert ToolCall("x", "y", "{}").args == "{}"
    assert tool_result("a", "b").message.tool_call_id == "a"
