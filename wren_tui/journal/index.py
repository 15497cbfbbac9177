"""A journal read by byte offsets: validated chunks that say where each line is, and one line decoded on demand.

Built only on the reader's public API (`Tail.feed` validates exactly as `read_events` does,
`parse_line` decodes one line), so a viewer can keep a million offsets in an array, decode only
the lines it shows, and start reading anywhere a line starts (the tail first).
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from .events import Event
from .reader import JournalError, Tail, parse_line

CHUNK = 1 << 20
_LINE_NO = re.compile(r"^line (\d+): ")


@dataclass
class Chunk:
    """The events of a run of whole lines, with the byte span of each line."""

    events: list[Event]
    # starts[i] is where events[i]'s line begins; ends[i] is just past its newline.
    starts: array[int] = field(default_factory=lambda: array("q"))
    ends: array[int] = field(default_factory=lambda: array("q"))


class LineScanner:
    """Whole lines from a byte offset on, in chunks, each checked as `read_events` checks it.

    `first_line` and `after_seq` say what came before `start` (its line count and last seq), so
    line numbers in a reason count from the file's start and seq must keep increasing across
    the boundary. Stops for good at the first line that cannot be read (`reason` says why).
    """

    def __init__(self, path: Path, fd: int, start: int = 0, *, first_line: int = 0, after_seq: int = 0) -> None:
        self.path = path
        self.fd = fd
        self._tail = Tail(path)
        self.offset = start  # just past the last good line
        self.lineno = first_line  # good lines before `offset`
        self.prev_seq = after_seq
        self.reason: str | None = None  # "line N: why", N counted from the file's start

    def chunks(self, stop: int | None = None, size: int = CHUNK) -> Iterator[Chunk]:
        """Chunks of the whole lines between `offset` and `stop` (or the end of the file)."""
        while self.reason is None:
            limit = size if stop is None else min(size, stop - self.offset)
            if limit <= 0:
                return
            data = os.pread(self.fd, limit, self.offset)
            cut = data.rfind(b"\n") + 1
            more = data
            while not cut and more and (stop is None or self.offset + len(data) < stop):
                # One line longer than a chunk: read on until its newline.
                more = os.pread(self.fd, size, self.offset + len(data))
                data += more
                cut = data.rfind(b"\n") + 1
            if not cut:
                return  # nothing whole yet: a partial last line waits for its writer
            yield self._take(data[:cut])

    def _take(self, whole: bytes) -> Chunk:
        before = self.lineno - self._tail.lineno
        fresh = self._tail.lineno == 0
        batch = self._tail.feed(whole)
        events = batch.events
        if fresh and events and events[0].seq <= self.prev_seq:
            # The Tail starts at `start` knowing no seq; the line before it is ours to compare with.
            self.reason = f"line {self.lineno + 1}: seq {events[0].seq} does not increase on {self.prev_seq}"
            return Chunk([])
        lengths = [len(line) + 1 for line in whole.split(b"\n", len(events))[: len(events)]]
        starts = array("q", accumulate(lengths[:-1], initial=self.offset)) if events else array("q")
        ends = array("q", accumulate(lengths, initial=self.offset))[1:]
        self.offset = ends[-1] if events else self.offset
        self.lineno = before + self._tail.lineno
        if events:
            self.prev_seq = events[-1].seq
        if batch.reason is not None:
            self.reason = _renumber(batch.reason, before)
        return Chunk(events, starts, ends)


def _renumber(reason: str, before: int) -> str:
    """The Tail counts lines from where it started; a person counts them from the file's start."""
    match = _LINE_NO.match(reason)
    if match is None:
        return reason
    return f"line {int(match.group(1)) + before}: {reason[match.end() :]}"


def tail_start(fd: int, size: int, window: int) -> int:
    """Where the first whole line of the last `window` bytes begins (0 for a short file)."""
    if size <= window:
        return 0
    data = os.pread(fd, window, size - window)
    newline = data.find(b"\n")
    # No newline in the window: one huge last line, which starts before it; begin at the file's start.
    return 0 if newline < 0 else size - window + newline + 1


def decode_at(fd: int, start: int, end: int) -> Event:
    """The event on the line between `start` and `end` (just past its newline), already validated once."""
    line = os.pread(fd, end - start - 1, start)
    if len(line) != end - start - 1:
        raise JournalError(f"the journal is shorter than its index (line at byte {start}); it was replaced")
    return parse_line(line, 0)
