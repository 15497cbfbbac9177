"""A session mirrored to a fleet's server, as a session source: its lines received and held in memory.

The lines come from `fleet.remote`, each checked by Wren's reader as it arrives, and are kept as
the bytes they are, laid end to end: the offsets are the journal's own. A short session is read
from its first line, then followed live. A long one (the session list says how long) is read from
near its end first, so its last lines show at once: the history before them arrives next, by a
second reader, and the screen indexes it as it indexes a big local journal ("loading history").

Lines arrive on the event loop; readers may run on worker threads (the index, a big backlog, a
search), so the bytes held are guarded by a lock, and a worker's reader waits for history that
has not arrived yet (until its screen closes what it opened).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from bisect import bisect_right
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..fleet import FleetError
from ..fleet.remote import SILENT_AFTER_S, Fleet, ReadFrom, RemoteChunk, RemoteSession, Seen
from ..journal.errors import JournalError
from ..journal.events import Event
from ..journal.forking import Forked, fork_from_lines
from ..journal.offsets import CHUNK, CheckedLines, Chunk
from ..journal.reader import decode_line
from ..journal.store import parse_ts
from ..journal.verdict import Stop
from . import Arrival, LineReader, Whereabouts

# A session whose journal is bigger than this is read from near its end first.
TAIL_FIRST = 8 << 20
# About this many last lines are read first (the screen shows what fits its first frame).
TAIL_LINES = 2000
# After a failed read, wait this long before the next try (the last one over and over).
RETRY_S = (0.5, 1.0, 2.0, 5.0)
# A worker waiting for history looks this often whether its screen closed what it waits on.
_WAIT_S = 0.25

_HERE = Whereabouts("here")
_ABSENT = Whereabouts("absent")
_REPLACED = Whereabouts("replaced")


class _Held:
    """The lines received so far, as their bytes at their journal offsets; shared by a source and its shares.

    Live lines are appended at `end`, from `base` on. When reading began near the end, `base` is
    where the first line received begins and the history fills [0, base) from the start; until
    it is all in, `history < base`. Every piece is whole lines, so a piece starts where a line does.
    """

    def __init__(self, base: int = 0, *, first_seq: int = 1, before: int = 0) -> None:
        self.lock = threading.Condition()
        self._starts: list[int] = []
        self._pieces: list[bytes] = []
        self._history_pieces = 0  # they come first
        self.base = base
        self.first_seq = first_seq  # the seq of the line at `base`
        self.before = before  # the stream sequence where that line begins: the history is what comes before
        self.history = 0  # bytes of [0, base) held, from 0
        self.end = base  # just past the last live line
        self.stop: Stop | None = None  # the lines stop for good at `end` (the stream, or the journal itself)
        self.stream_stopped = False  # the stream itself holds a line the reader does not accept
        self.history_stop: Stop | None = None  # the history stops here: the bytes after it never arrive
        # Where the live reading is, to read on after an error: the last line's seq, lines before `end`, the
        # stream sequence of its last message.
        self.last_seq = first_seq - 1
        self.lineno = first_seq - 1
        self.stream_seq = 0
        self.live = False  # every line the stream held when reading began is in
        # The same for the history's reading.
        self.history_seq = 0
        self.history_lineno = 0
        self.history_stream_seq = 0

    @property
    def whole(self) -> bool:
        """Every byte from the journal's start to `end` is held (no history left to come)."""
        return self.history >= self.base

    def add(self, chunk: RemoteChunk) -> None:
        """Live lines, after the last ones."""
        if not chunk.events:
            return
        with self.lock:
            self._starts.append(self.end)
            self._pieces.append(chunk.lines)
            self.end += len(chunk.lines)
            self.last_seq = chunk.events[-1].seq
            self.lineno += len(chunk.events)
            self.stream_seq = chunk.stream_seq
            self.stop = None  # lines after a stop: its writer set a torn tail aside and went on
            self.lock.notify_all()

    def add_history(self, chunk: RemoteChunk) -> None:
        """History lines, after the history held (before the live lines)."""
        if not chunk.events:
            return
        with self.lock:
            at = self._history_pieces
            self._starts.insert(at, self.history)
            self._pieces.insert(at, chunk.lines)
            self._history_pieces += 1
            self.history += len(chunk.lines)
            self.history_seq = chunk.events[-1].seq
            self.history_lineno += len(chunk.events)
            self.history_stream_seq = chunk.stream_seq
            self.lock.notify_all()

    def end_history(self, stop: Stop) -> None:
        with self.lock:
            self.history_stop = stop
            self.lock.notify_all()

    def wake(self) -> None:
        with self.lock:
            self.lock.notify_all()

    def _index(self, offset: int) -> int | None:
        """The piece holding the byte at `offset`, if it is held."""
        i = bisect_right(self._starts, offset) - 1
        if i < 0 or offset >= self._starts[i] + len(self._pieces[i]):
            return None
        return i

    def read(self, start: int, length: int) -> bytes:
        """Exactly the bytes asked for, as long as all of them are held; else JournalError."""
        with self.lock:
            got = self._run(start, length)
        if len(got) < min(length, max(self.end - start, 0)):
            raise JournalError(f"bytes {start}-{start + length} of the session have not arrived from its server")
        return got

    def _run(self, start: int, length: int) -> bytes:
        """Up to `length` held bytes from `start`, as far as they go without a gap (lock held)."""
        i = self._index(start)
        if i is None or length <= 0:
            return b""
        parts, want, at = [], length, start
        while want > 0 and i < len(self._pieces) and self._starts[i] <= at:
            piece = self._pieces[i]
            part = piece[at - self._starts[i] : at - self._starts[i] + want]
            if not part:
                break
            parts.append(part)
            want -= len(part)
            at += len(part)
            i += 1
        return b"".join(parts)

    def lines_at(self, start: int, size: int, until: int, ended: threading.Event | None) -> bytes:
        """Whole lines from `start` to about `size` bytes (at least one whole line), not past `until`.

        Empty when the line at `start` is not held; with `ended`, it is waited for (a history line)
        until it arrives, the history stops before it, or `ended` is set.
        """
        with self.lock:
            while True:
                data = self._run(start, min(size, until - start))
                if data:
                    cut = data.rfind(b"\n") + 1
                    if cut:
                        return data[:cut]
                    more = self._run(start, until - start)  # one line longer than `size`: all of it
                    return more[: more.find(b"\n") + 1]
                if ended is None or ended.is_set() or not self._coming(start):
                    return b""
                self.lock.wait(_WAIT_S)

    def _coming(self, offset: int) -> bool:
        """Bytes at `offset` may still arrive: it is in the history not yet in, which has not stopped before it."""
        return self.history <= offset < self.base and self.history_stop is None

    def line_start(self, offset: int) -> int:
        """The first line start at or after `offset` among the bytes held (the end when there is none)."""
        with self.lock:
            i = self._index(offset)
            if i is None:
                return offset if offset >= self.end else self.base
            if offset == self._starts[i]:
                return offset
            piece = self._pieces[i]
            return self._starts[i] + piece.index(b"\n", offset - self._starts[i] - 1) + 1

    def pieces(self, start: int = 0) -> list[bytes]:
        """The held pieces from the one at `start` on (a snapshot: pieces are never changed)."""
        with self.lock:
            i = self._index(start)
            return [] if i is None else self._pieces[i:]


class HeldLines(CheckedLines):
    """A `LineReader` over held lines: each chunk checked and decoded from the bytes, as a file's would be."""

    def __init__(
        self,
        held: _Held,
        start: int,
        *,
        lineno: int = 0,
        prev_seq: int = 0,
        ended: threading.Event | None = None,
    ) -> None:
        super().__init__(offset=start, lineno=lineno, prev_seq=prev_seq)
        self.held = held
        self.scanned = start
        self._ended = ended  # set: a worker waits for history no longer

    def chunks(self, stop: int | None = None) -> Iterator[Chunk]:
        held = self.held
        while self.stop is None:
            until = held.end if stop is None else min(stop, held.end)
            if self.offset >= until:
                if self.offset == held.end and held.stop is not None and held.stop.offset == self.offset:
                    self.stop = held.stop
                return
            data = held.lines_at(self.offset, CHUNK, until, self._ended)
            if not data:
                if held.history_stop is not None and held.history_stop.offset <= self.offset < held.base:
                    self.stop = held.history_stop
                return
            chunk = self.chunk(data)
            self.scanned = self.offset
            yield chunk


@dataclass
class _Opened:
    """What a handle reads: the held lines, and the event that tells its workers to wait no longer."""

    held: _Held
    ended: threading.Event
    owner: bool = True  # False for a share: closing it does not end its parent's waits


class RemoteSource:
    """One session of a fleet's server (`host`, `session`), read through `fleet`; forks go to `fork_folder`."""

    def __init__(
        self,
        fleet: Fleet,
        host: str,
        session: str,
        *,
        fork_folder: Path,
        tail_first: int = TAIL_FIRST,
        tail_lines: int = TAIL_LINES,
    ) -> None:
        self.fleet = fleet
        self.host = host
        self.id = session
        self._fork_folder = fork_folder
        self.tail_first = tail_first
        self.tail_lines = tail_lines
        self._held: _Held | None = None  # what the network has brought
        self._open: _Opened | None = None  # what this handle reads
        self._seen: Seen | None = None  # the session's row and its host's beat, as last heard
        self._problem: str | None = None  # why the server cannot be read now
        self._history_of: int | None = None  # reading from the first line: the last seq the list said there was

    # --- what it is -----------------------------------------------------------------------

    @property
    def session(self) -> str:
        return f"{self.host}/{self.id}"

    @property
    def path(self) -> None:
        return None  # not a file on this machine

    @property
    def agent(self) -> None:
        return None  # a Wren journal, mirrored

    @property
    def fork_folder(self) -> Path:
        return self._fork_folder

    # --- opening --------------------------------------------------------------------------

    def open(self) -> bool:
        self.close()
        held = self._held
        if held is None or held.end == held.base:
            return False  # nothing received yet: `follow` says when lines arrive
        self._open = _Opened(held, threading.Event())
        return True

    def close(self) -> None:
        if self._open is not None and self._open.owner:
            self._open.ended.set()
            self._open.held.wake()
        self._open = None

    def share(self) -> RemoteSource:
        opened = self._opened()
        twin = RemoteSource(self.fleet, self.host, self.id, fork_folder=self._fork_folder)
        twin._held, twin._seen = self._held, self._seen
        # Its workers stop waiting when this handle closes what it opened (the screen opened it again, or went).
        twin._open = _Opened(opened.held, opened.ended, owner=False)
        return twin

    def _opened(self) -> _Opened:
        assert self._open is not None, "the session is read only once it is open"
        return self._open

    # --- reading --------------------------------------------------------------------------

    def size(self) -> int:
        return self._opened().held.end

    def tail_span(self, size: int, window: int) -> tuple[int, int]:
        held = self._opened().held
        lowest = 0 if held.whole else held.base
        start = held.line_start(max(size - window, lowest))
        return (start, size) if start < size else (0, 0)

    def lines(self, start: int = 0, *, worker: bool = False) -> HeldLines:
        opened = self._opened()
        return HeldLines(opened.held, start, ended=opened.ended if worker else None)

    def lines_after(self, done: LineReader, *, worker: bool = False, retry: bool = False) -> HeldLines:
        assert isinstance(done, HeldLines), "a remote session reads on only from its own readers"
        opened = self._opened()
        reader = HeldLines(
            opened.held,
            done.offset,
            lineno=done.lineno,
            prev_seq=done.prev_seq,
            ended=opened.ended if worker else None,
        )
        reader.stop = None if retry else done.stop
        return reader

    def read(self, start: int, length: int) -> bytes:
        return self._opened().held.read(start, length)

    def decode(self, start: int, end: int, part: int = 0) -> Event:
        assert part == 0, "a Wren journal's line holds one event"
        return decode_line(self.read(start, end - start))

    def decode_span(self, start: int, end: int) -> list[Event]:
        return [decode_line(line) for line in self.read(start, end - start).split(b"\n")[:-1]]

    # --- forking --------------------------------------------------------------------------

    def fork(self, seq: int) -> Forked:
        held = self._opened().held
        if not held.whole:
            raise JournalError("the session's history is still arriving; fork it once it is in")
        return fork_from_lines(held.pieces(0), seq, parent=self.id, folder=self._fork_folder)

    # --- the writer, the mirror, the server -------------------------------------------------

    def writer_alive(self) -> bool:
        seen = self._seen
        if seen is None or seen.row is None or seen.row.state != "live":
            return False
        return not RemoteSession(seen.row, seen.host_beat).mirror_silent()

    def arrival(self) -> Arrival:
        return Arrival(history=self._history(), silent=self._silence())

    def _history(self) -> float | None:
        """How much of the history is in, while it is arriving."""
        held = self._held
        if held is None:
            return 0.0
        if not held.whole:
            if held.history_stop is not None:
                return None  # it stops there: what came is all that comes
            return held.history / max(held.base, 1)
        if held.live or held.stop is not None or not self._history_of:
            return None
        return min(held.last_seq / self._history_of, 0.99)

    def _silence(self) -> str | None:
        if self._problem is not None:
            return self._problem
        seen = self._seen
        if seen is None or seen.row is None:
            return None
        if seen.row.mirror:
            return f"not mirrored any more: {seen.row.mirror}"
        if seen.row.state != "live" or not RemoteSession(seen.row, seen.host_beat).mirror_silent():
            return None
        beat = parse_ts(seen.host_beat) if seen.host_beat else None
        if beat is None:
            return f"the mirror on {self.host} has not said it is alive"
        quiet = (datetime.now(UTC) - beat).total_seconds()
        return f"the mirror on {self.host} is silent for {_duration(quiet)}: what is shown may be old"

    def look(self) -> Whereabouts:
        held = self._held
        if self._open is None:
            return _ABSENT if held is None or held.end == held.base else _REPLACED
        return _HERE if self._open.held is held else _REPLACED

    # --- receiving ------------------------------------------------------------------------

    async def follow(self, changed: Callable[[], Awaitable[None]]) -> None:
        """Receive the session's lines and its row until cancelled, calling `changed()` as they come."""
        async with asyncio.TaskGroup() as group:
            group.create_task(self._watch_row(changed))
            group.create_task(self._receive(changed))

    async def _watch_row(self, changed: Callable[[], Awaitable[None]]) -> None:
        failures = 0
        while True:
            try:
                async for seen in self.fleet.watch_session(self.host, self.id):
                    self._seen, failures = seen, 0
                    self._stop_from_row()
                    await changed()
            except FleetError:
                pass  # said by the reading of the lines, which meets the same server
            await asyncio.sleep(RETRY_S[min(failures, len(RETRY_S) - 1)])
            failures += 1

    def _stop_from_row(self) -> None:
        """Where the journal itself stops, as its mirror says, once every line before that is held."""
        held, seen = self._held, self._seen
        row = seen.row if seen is not None else None
        stop = row.stop if row is not None else None
        if held is None or row is None or stop is None:
            return
        if row.last_seq == held.last_seq and stop.offset == held.end:
            held.stop = stop

    async def _receive(self, changed: Callable[[], Awaitable[None]]) -> None:
        """The lines: from near the end first when the session is long, else from the first; then live."""
        failures = 0
        while True:
            try:
                if self._held is None:
                    await self._start()
                    await changed()
                assert self._held is not None
                await self._read_on(self._held, changed)
                return
            except* FleetError as group:
                self._problem = f"cannot read it from its server ({group.exceptions[0]})"
            await changed()
            await asyncio.sleep(RETRY_S[min(failures, len(RETRY_S) - 1)])
            failures += 1

    async def _start(self) -> None:
        """Decide where to begin: the last lines of a long session, else its first line."""
        found = await self.fleet.session(self.host, self.id)
        row = found.row if found is not None else None
        if row is not None and row.size > self.tail_first and row.events == row.last_seq > self.tail_lines:
            wanted = row.last_seq - self.tail_lines + 1
            line = await self.fleet.find_line(self.host, self.id, wanted, row.stream_seq)
            if line is not None and line[1] == wanted:
                held = await self._read_tail(line[0], wanted, row.last_seq, row.size)
                if held is not None:
                    self._held = held
                    return
        self._history_of = row.last_seq if row is not None else None
        self._held = _Held()

    async def _read_tail(self, begins: int, first_seq: int, last_seq: int, size: int) -> _Held | None:
        """The lines from `first_seq` (at stream sequence `begins`) through `last_seq`, at their journal offsets.

        Their offsets are known once the line `last_seq`, which the list says ends at byte `size`,
        is in; None when that does not add up (then the session is read from its first line).
        """
        waiting: list[RemoteChunk] = []
        ends_at: int | None = None
        start = ReadFrom(begins, lineno=first_seq - 1)
        async with contextlib.aclosing(self.fleet.read(self.host, self.id, follow=True, start=start)) as chunks:
            async for chunk in chunks:
                waiting.append(chunk)
                for event, end in zip(chunk.events, chunk.ends, strict=True):
                    if event.seq == last_seq:
                        ends_at = end
                if ends_at is not None or chunk.stop is not None or chunk.live:
                    break
        if ends_at is None or not waiting or not waiting[0].events or waiting[0].events[0].seq != first_seq:
            return None
        held = _Held(size - ends_at, first_seq=first_seq, before=begins)
        if held.base <= 0:
            return None
        for chunk in waiting:
            self._take(held, chunk)
        return held

    async def _read_on(self, held: _Held, changed: Callable[[], Awaitable[None]]) -> None:
        """Follow the session live from the last line held, and read the history that is missing."""
        async with asyncio.TaskGroup() as group:
            if not held.stream_stopped:
                group.create_task(self._read_live(held, changed))
            if not held.whole and held.history_stop is None:
                group.create_task(self._read_history(held))

    async def _read_live(self, held: _Held, changed: Callable[[], Awaitable[None]]) -> None:
        start = ReadFrom(held.stream_seq + 1, held.end, held.lineno, held.last_seq) if held.stream_seq else None
        async for chunk in self.fleet.read(self.host, self.id, follow=True, start=start):
            self._take(held, chunk)
            await changed()

    def _take(self, held: _Held, chunk: RemoteChunk) -> None:
        self._problem = None
        held.add(chunk)
        held.live = held.live or chunk.live
        if chunk.stop is not None:
            held.stop = chunk.stop  # the stream holds a line the reader does not accept: nothing after it
            held.stream_stopped = True
        self._stop_from_row()

    async def _read_history(self, held: _Held) -> None:
        """The lines before the first one received live (the messages before `held.before`), into [0, base)."""
        start = None
        if held.history:
            start = ReadFrom(held.history_stream_seq + 1, held.history, held.history_lineno, held.history_seq)
        async for chunk in self.fleet.read(self.host, self.id, start=start, before=held.before):
            held.add_history(chunk)
            if chunk.stop is not None:
                held.end_history(chunk.stop)
                return
        if held.history != held.base or held.history_seq != held.first_seq - 1:
            why = (
                f"the stream's lines before seq {held.first_seq} end at byte {held.history} (seq "
                f"{held.history_seq}), not at byte {held.base}, where its mirror says seq {held.first_seq} begins"
            )
            held.end_history(Stop(held.history_lineno + 1, held.history, why))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


__all__ = ["SILENT_AFTER_S", "HeldLines", "RemoteSource"]
