"""A new pane is one widget and one line in the session screen's compose: it hears of every change.

The pane here is the smallest there is: it counts the events it is told of. Added to the screen by
one line, it follows a live journal (appends, a writer coming and going, the whole index taking the
tail's place, the journal replaced) without any other wiring.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual import on
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widget import Widget

from tests.tui.conftest import FixedClock, wait_for, wait_for_text
from tests.tui.journals import SESSION, assistant, encode, finished_story, story, user, write_journal
from wren_tui.journal.events import Delta
from wren_tui.journal.writer import JournalWriter
from wren_tui.sessions.local import LocalJournal
from wren_tui.tui import session_reader
from wren_tui.tui.app import WrenApp
from wren_tui.tui.messages import Tick, TimelineGrew, TimelineReplaced, WriterChanged, is_pane
from wren_tui.tui.screens.session import SessionScreen


class EventCount(Widget):
    """Counts the events the screen tells it of, and says so."""

    DEFAULT_CSS = "EventCount { height: 1; }"
    counted: reactive[int] = reactive(0)
    alive: reactive[bool | None] = reactive(None)

    def __init__(self) -> None:
        super().__init__()
        self.replaced: list[bool] = []  # `continues` of each replacement
        self.ticks = 0

    def on_timeline_replaced(self, message: TimelineReplaced) -> None:
        self.replaced.append(message.continues)
        self.counted = message.timeline.events

    def on_timeline_grew(self, message: TimelineGrew) -> None:
        self.counted += message.added

    def on_writer_changed(self, message: WriterChanged) -> None:
        self.alive = message.alive

    def on_tick(self, message: Tick) -> None:
        self.ticks += 1

    def render(self) -> str:
        return f"counted {self.counted} events; writer {'alive' if self.alive else 'gone'}"


# A subclass in another folder names the stylesheets of the classes it extends.
VIEWER = Path(session_reader.__file__).parent


class CountingScreen(SessionScreen):
    CSS_PATH = VIEWER / "screens" / "session.tcss"

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield EventCount()  # the one line


class CountingApp(WrenApp):
    CSS_PATH = VIEWER / "app.tcss"

    def session_screen(self, path: Path) -> SessionScreen:
        return CountingScreen(LocalJournal(path, watch_mode=self.watch_mode), clock=self.clock)


def _app(path: Path) -> CountingApp:
    return CountingApp(folder=path.parent, session=path, clock=FixedClock(datetime.now(UTC)))


async def test_a_pane_added_by_one_line_follows_a_live_journal(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    app = _app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.screen.query_one(EventCount)
        await wait_for_text(pilot, "counted 2 events; writer gone")
        with JournalWriter.open(path, fsync="none") as writer:
            await wait_for(pilot, lambda: pane.alive is True, "the writer")
            writer.append(Delta(text="Looking"))
            writer.append(Delta(text=" at it"))
            writer.append(assistant("Looking at it."))
            await wait_for_text(pilot, "counted 5 events; writer alive")
            for n in range(20):
                writer.append(user(f"line {n}"))
            await wait_for_text(pilot, "counted 25 events; writer alive")
        await wait_for_text(pilot, "counted 25 events; writer gone")
        await wait_for(pilot, lambda: pane.ticks >= 1, "a tick")
        assert isinstance(app.screen, SessionScreen) and app.screen.timeline.events == 25

        # Another journal put in its place: the pane is told of the new timeline, counted from its start.
        other = tmp_path / "other.jsonl"
        other.write_bytes(encode(finished_story()))
        os.replace(other, path)
        await wait_for_text(pilot, f"counted {len(finished_story())} events")
    assert pane.replaced == [False, False]


async def test_the_pane_hears_when_the_whole_index_takes_the_place_of_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_reader, "TAIL_WINDOW", 2_000)
    events = [user(f"message number {n} " + "x" * 200) for n in range(60)]
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    app = _app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.screen.query_one(EventCount)
        await wait_for(pilot, lambda: pane.replaced == [False, True], "the tail, then the whole index")
        await wait_for_text(pilot, "counted 60 events")


def test_a_widget_is_a_pane_when_it_handles_a_pane_message_by_name_or_by_on() -> None:
    class ByOn(Widget):
        @on(TimelineGrew)
        def grew(self, message: TimelineGrew) -> None: ...

    class Deaf(Widget):
        def on_click(self) -> None: ...

    assert is_pane(EventCount) and is_pane(ByOn)
    assert not is_pane(Deaf) and not is_pane(Widget)
