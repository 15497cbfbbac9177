"""Session sources: the local journal behind the contract, and a source that is not a file at all.

`MemorySource` below holds its lines in memory (as a journal mirrored over the network would), and
each of its lines is a JSON array of events (as another agent's line, translated, gives several).
It is written against the protocol's docstrings only; the same screen and panes show it.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from array import array
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import msgspec
from textual.app import App

from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from tests.tui.journals import SESSION, encode, story, ts_at, user, write_journal
from wren_tui.journal.events import ChatMessage, Event, KnownEvent, Message, ToolCall, ToolEnd, ToolStart
from wren_tui.journal.forking import Forked
from wren_tui.journal.offsets import Chunk
from wren_tui.journal.verdict import Stop
from wren_tui.sessions import Arrival, LineReader, SessionSource, Whereabouts
from wren_tui.sessions.local import LocalJournal
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine

_LINE = msgspec.json.Decoder(list[KnownEvent])


class MemoryLines:
    """Whole lines of a MemorySource from an offset on; a line that is not a JSON array of events stops it."""

    def __init__(self, source: MemorySource, start: int, lineno: int = 0) -> None:
        self.source = source
        self.offset = self.scanned = start
        self.lineno = lineno
        self.stop: Stop | None = None

    def chunks(self, stop: int | None = None) -> Iterator[Chunk]:
        data = bytes(self.source.data)
        end = len(data) if stop is None else min(stop, len(data))
        whole = data.rfind(b"\n", self.offset, end) + 1
        if self.stop is not None or whole <= self.offset:
            return
        events: list[Event] = []
        starts, ends, parts = array("q"), array("q"), array("i")
        at = self.offset
        for line in data[self.offset : whole].split(b"\n")[:-1]:
            try:
                decoded = _LINE.decode(line)
            except msgspec.DecodeError as exc:
                self.stop = Stop(self.lineno + 1, at, str(exc))
                break
            for part, event in enumerate(decoded):
                events.append(event)
                starts.append(at)
                ends.append(at + len(line) + 1)
                parts.append(part)
            at += len(line) + 1
            self.lineno += 1
        self.offset = self.scanned = at
        if events:
            yield Chunk(events, starts, ends, parts=parts)


class MemorySource:
    """Lines received (here: appended by the test) and held in memory; offsets are in their concatenation."""

    session = "mem-20250301-093000"
    path = None
    agent = None  # a Wren journal's lines, held elsewhere
    fork_folder = None  # not a Wren journal: nothing to fork

    def __init__(self) -> None:
        self.data = bytearray()
        self.alive = True
        self.arrived = asyncio.Event()

    def receive(self, *events: KnownEvent) -> None:
        self.data += msgspec.json.encode(list(events)) + b"\n"
        self.arrived.set()

    def open(self) -> bool:
        return True

    def close(self) -> None:
        pass

    def share(self) -> MemorySource:
        return self  # bytes are only ever added: a worker can read the same buffer

    def size(self) -> int:
        return len(self.data)

    def tail_span(self, size: int, window: int) -> tuple[int, int]:
        start = self.data.find(b"\n", max(size - window, 0) - 1, size) + 1 if size > window else 0
        return start, size

    def lines(self, start: int = 0, *, worker: bool = False) -> MemoryLines:
        return MemoryLines(self, start)

    def lines_after(self, done: LineReader, *, worker: bool = False, retry: bool = False) -> MemoryLines:
        reader = MemoryLines(self, done.offset, done.lineno)
        reader.stop = None if retry else done.stop
        return reader

    def read(self, start: int, length: int) -> bytes:
        return bytes(self.data[start : start + length])

    def decode(self, start: int, end: int, part: int = 0) -> Event:
        return _LINE.decode(bytes(self.data[start : end - 1]))[part]

    def decode_span(self, start: int, end: int) -> list[Event]:
        return [e for line in bytes(self.data[start:end]).split(b"\n")[:-1] for e in _LINE.decode(line)]

    def writer_alive(self) -> bool:
        return self.alive

    def fork(self, seq: int) -> Forked:
        raise AssertionError("a source with no fork folder is never asked to fork")

    def arrival(self) -> Arrival | None:
        return None  # what the test hands in is all there is

    def look(self) -> Whereabouts:
        return Whereabouts("here")

    async def follow(self, changed: Callable[[], Awaitable[None]]) -> None:
        while True:
            await self.arrived.wait()
            self.arrived.clear()
            await changed()


class MemoryApp(App[None]):
    def __init__(self, source: SessionSource) -> None:
        super().__init__()
        self.source = source

    def on_mount(self) -> None:
        self.push_screen(SessionScreen(self.source, clock=FixedClock(datetime(2025, 3, 1, 9, 31, tzinfo=UTC))))


def _at(seq: int) -> dict[str, object]:
    return {"seq": seq, "ts": ts_at(seq - 1)}


async def test_a_source_held_in_memory_whose_lines_give_several_events_shows_in_the_same_panes() -> None:
    source = MemorySource()
    call = ToolCall("c1", "read_file", '{"path": "stats/core.py"}')
    source.receive(Message(**_at(1), message=ChatMessage(role="user", content="what does mean() do?")))
    source.receive(
        Message(
            **_at(2),
            message=ChatMessage(role="assistant", content="Reading it: needle-in-part-zero.", tool_calls=[call]),
        ),
        ToolStart(**_at(3), id="c1", name="read_file", read_only=True),
    )
    source.receive(
        ToolEnd(**_at(4), id="c1", ok=True, elapsed_ms=12, chars=40),
        Message(
            **_at(5), message=ChatMessage(role="tool", content="def mean(xs): needle-in-part-one", tool_call_id="c1")
        ),
    )
    app = MemoryApp(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, "def mean(xs): needle-in-part-one")
        assert "what does mean() do?" in screen_text(app) and "Reading it: needle-in-part-zero." in screen_text(app)
        status = app.screen.query_one(StatusLine)
        assert "5 events" in str(status.render()) and " live " in str(status.render())
        await wait_for(pilot, lambda: "12 ms" in screen_text(app) and " ok" in screen_text(app), "the call's row")

        # Search finds the first and the second event of a line, each decoded by its place in the line.
        await pilot.press("/", *"needle-in-part", "enter")
        view = app.screen.query_one(ConversationView)
        await wait_for(pilot, lambda: view.selected_event is not None and view.selected_event.seq == 2, "a match")
        assert "match 1 of 2" in str(status.render())
        await pilot.press("n")
        await wait_for(pilot, lambda: view.selected_event is not None and view.selected_event.seq == 5, "the next")
        await pilot.press("r")
        await wait_for_text(pilot, "Event 5 (message) as written")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "back")

        # Lines that arrive are shown as they come; a session that is not a Wren journal is not forked.
        source.receive(Message(**_at(6), message=ChatMessage(role="assistant", content="Arrived over the wire.")))
        await wait_for_text(pilot, "Arrived over the wire.")
        await pilot.press("l", "p")
        why = "Only a Wren journal can be forked"
        await wait_for(pilot, lambda: any(n.message.startswith(why) for n in app._notifications), "why not")
        source.alive = False
        await wait_for(pilot, lambda: " interrupted " in str(status.render()), "the writer gone")


def test_a_share_reads_on_after_the_journal_is_closed_and_has_its_own_descriptor(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:3])
    source = LocalJournal(path)
    assert source.open()
    share = source.share()
    source.close()
    reader = share.lines()
    events = [e for chunk in reader.chunks() for e in chunk.events]
    assert [e.seq for e in events] == [1, 2, 3] and reader.offset == path.stat().st_size
    assert share.read(0, 9) == path.read_bytes()[:9]
    share.close()


def test_lines_after_keeps_where_reading_stopped_unless_asked_to_read_that_line_again(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    good = encode(story()[:2])
    path.write_bytes(good + b'{"seq": 3, torn\n')
    source = LocalJournal(path)
    assert source.open()
    reader = source.lines()
    assert [e.seq for chunk in reader.chunks() for e in chunk.events] == [1, 2]
    assert reader.stop is not None and reader.stop.line == 3 and reader.offset == len(good)
    kept = source.lines_after(reader)
    assert kept.stop == reader.stop and list(kept.chunks()) == []
    path.write_bytes(good + encode([user("mended")], first_seq=3))  # the same file, rewritten in place
    again = source.lines_after(reader, retry=True)
    assert [e.seq for chunk in again.chunks() for e in chunk.events] == [3] and again.stop is None
    source.close()


def test_look_says_here_replaced_moved_with_its_new_name_and_deleted(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    source = LocalJournal(tmp_path / "not-yet.jsonl")
    assert not source.open() and source.look() == Whereabouts("absent")
    source = LocalJournal(path)
    assert source.open() and source.look() == Whereabouts("here")
    path.rename(tmp_path / "moved.jsonl")
    assert source.look() == Whereabouts("moved", "moved.jsonl")
    (tmp_path / "moved.jsonl").rename(path)
    assert source.look() == Whereabouts("here")
    write_journal(tmp_path / "other.jsonl", story()[:1]).replace(path)
    assert source.look() == Whereabouts("replaced")
    assert source.open()
    path.unlink()
    assert source.look() == Whereabouts("deleted")
    assert source.size() > 0  # still read through its descriptor
    source.close()


async def test_a_journal_moved_away_while_a_writer_appends_is_still_read_and_said_to_be_moved(tmp_path: Path) -> None:
    # The writer here is any program holding the journal's lock (Wren's own writer stops when its
    # journal is moved: it is the viewer's part that is tested).
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story()[:2])
    app = WrenApp(folder=tmp_path, session=path, clock=FixedClock(datetime.now(UTC)))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        async with app.run_test(size=(140, 30)) as pilot:
            status = app.screen.query_one(StatusLine)
            await wait_for(pilot, lambda: " live " in str(status.render()), "live")
            path.rename(tmp_path / "moved.jsonl")
            os.write(fd, encode([user("written after the move")], first_seq=3))
            await wait_for_text(pilot, "written after the move")
            await wait_for(
                pilot,
                lambda: "moved to moved.jsonl: its writer stops at its next event" in str(status.render()),
                "moved",
            )
            assert "3 events" in str(status.render())
            os.close(fd)
            fd = -1
            await wait_for(
                pilot,
                lambda: "moved to moved.jsonl" in str(status.render()) and "its writer" not in str(status.render()),
                "the writer gone",
            )
    finally:
        if fd >= 0:
            os.close(fd)
