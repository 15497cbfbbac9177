"""A finished session as it was at one moment: a source that shows only the lines written up to then.

Replay moves that moment, and the session screen's own machinery does the rest: a later moment is
the journal growing (the panes take the new lines), an earlier one is the journal replaced (they
read it again, up to the moment). It reads through its own handle, so the live screen underneath
is never disturbed, and it writes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..forwarding import Forward
from ..journal.events import Event
from ..journal.offsets import Chunk
from ..journal.verdict import Stop
from . import Arrival, LineReader, SessionSource, Whereabouts

if TYPE_CHECKING:
    from ..journal.forking import Forked

_HERE = Whereabouts("here")
_REPLACED = Whereabouts("replaced")


class CappedReader:
    """A reader that hands out no line ending past its source's moment (`cap`)."""

    def __init__(self, inner: LineReader, cap: Callable[[], int]) -> None:
        self.inner = inner
        self._cap = cap

    offset: Forward[int] = Forward("inner.offset", settable=True)
    lineno: Forward[int] = Forward("inner.lineno", settable=True)
    stop: Forward[Stop | None] = Forward("inner.stop", settable=True)
    scanned: Forward[int] = Forward("inner.scanned", settable=True)

    def chunks(self, stop: int | None = None) -> Iterator[Chunk]:
        cap = self._cap()
        return self.inner.chunks(stop=cap if stop is None else min(stop, cap))


def _unwrapped(reader: LineReader) -> LineReader:
    return reader.inner if isinstance(reader, CappedReader) else reader


class ReplaySource:
    """`inner` (a session source of its own) cut at `cap` bytes; `end` is where the session itself ends."""

    def __init__(self, inner: SessionSource, end: int, cap: int = 0) -> None:
        self.inner = inner
        self.end = end
        self.cap = cap
        self._read_to = cap  # the furthest moment shown since the last open: going back from it reopens
        self._moved = asyncio.Event()

    def move_to(self, cap: int) -> None:
        """Show the session as it was when its line ending at byte `cap` had just been written."""
        self.cap = min(max(cap, 0), self.end)
        self._moved.set()

    # --- the source contract --------------------------------------------------------------

    session: Forward[str] = Forward("inner.session")
    path: Forward[Path | None] = Forward("inner.path")
    agent: Forward[str | None] = Forward("inner.agent")
    fork_folder: Forward[Path | None] = Forward("inner.fork_folder")

    def fork(self, seq: int) -> Forked:
        # A point of the moment shown is a point of the whole session: the fork is the session's own.
        return self.inner.fork(seq)

    def open(self) -> bool:
        self._read_to = self.cap
        return self.inner.open()

    def close(self) -> None:
        self.inner.close()

    def share(self) -> ReplaySource:
        twin = ReplaySource(self.inner.share(), self.end, self.cap)
        return twin

    def size(self) -> int:
        self._read_to = max(self._read_to, self.cap)
        return min(self.cap, self.inner.size())

    def tail_span(self, size: int, window: int) -> tuple[int, int]:
        return self.inner.tail_span(min(size, self.cap), window)

    def lines(self, start: int = 0, *, worker: bool = False) -> LineReader:
        return CappedReader(self.inner.lines(start, worker=worker), lambda: self.cap)

    def lines_after(self, done: LineReader, *, worker: bool = False, retry: bool = False) -> LineReader:
        inner = self.inner.lines_after(_unwrapped(done), worker=worker, retry=retry)
        return CappedReader(inner, lambda: self.cap)

    def read(self, start: int, length: int) -> bytes:
        return self.inner.read(start, length)

    def decode(self, start: int, end: int, part: int = 0) -> Event:
        return self.inner.decode(start, end, part)

    def decode_span(self, start: int, end: int) -> list[Event]:
        return self.inner.decode_span(start, end)

    def writer_alive(self) -> bool:
        # Before its end the session was being written: a call under way was running, not cut off.
        return self.cap < self.end

    def arrival(self) -> Arrival | None:
        return self.inner.arrival()

    def look(self) -> Whereabouts:
        # An earlier moment than the one read: read again from the start, as for a journal replaced.
        return _REPLACED if self.cap < self._read_to else _HERE

    async def follow(self, changed: Callable[[], Awaitable[None]]) -> None:
        while True:
            await self._moved.wait()
            self._moved.clear()
            await changed()
