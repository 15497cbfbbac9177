"""A journal read by byte offsets: validated chunks that say where each line is, and one line decoded on demand.

Built on the reader: `LineScanner` takes its lines from the one scanner (`lines.Lines`) and checks
them exactly as `read_events` does, `_parse_line` decodes one line. So a viewer can keep a million
offsets in an array, decode only the lines it shows, and start reading anywhere a line starts (the
tail first).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..portable import pread
from .errors import JournalError
from .events import Event
from .huge_line import ChildFailed, decode_elsewhere
from .lines import Lines, split
from .reader import _LineError, _Lines, _parse_line

CHUNK = 1 << 20


@dataclass
class Chunk:
    """The events of a run of whole lines, with the byte span of each line."""

    events: list[Event]
    # starts[i] is where events[i]'s line begins; ends[i] is just past its newline.
    starts: array[int] = field(default_factory=lambda: array("q"))
    ends: array[int] = field(default_factory=lambda: array("q"))
    # A huge line decoded elsewhere: its event's long strings are cut, and this is its text's whole length.
    cut_from: int | None = None
    # parts[i] is events[i]'s place among its line's events, for a format whose one line gives several
    # (they share the line's span); None when every line gives one event, as a Wren journal's does.
    parts: array[int] | None = None


class CheckedLines(_Lines):
    """Runs of whole lines in, chunks of checked events out, from any line of a journal on.

    `offset`, `lineno` and `prev_seq` say where the first run starts and what came before it, so a
    stop's line is counted from the journal's start and seq must go on increasing across the
    boundary. The viewer's index reads a file into it; the fleet's remote reader and the viewer's
    held remote lines feed it the bytes they were handed.
    """

    def chunk(self, whole: bytes | memoryview) -> Chunk:
        """The events of a run of whole lines at `offset`, with each line's span, up to a line that cannot be read.

        `warnings` holds this run's gaps in seq.
        """
        begin = self.offset
        self.ends = ends = array("q")
        self.warnings = []
        events: list[Event] = []
        self.take(whole, events)
        starts = array("q", [begin]) + ends[:-1] if events else array("q")
        return Chunk(events, starts, ends)


class LineScanner(CheckedLines):
    """Whole lines from a byte offset on, in chunks, each checked as `read_events` checks it.

    `first_line` and `after_seq` say what came before `start` (its line count and last seq), so
    line numbers in a reason count from the file's start and seq must keep increasing across
    the boundary. Stops for good at the first line that cannot be read (`stop` says where and why).
    """

    def __init__(
        self,
        path: Path,
        fd: int,
        start: int = 0,
        *,
        first_line: int = 0,
        after_seq: int = 0,
        elsewhere: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(offset=start, lineno=first_line, prev_seq=after_seq)
        self.path = path
        self.fd = fd
        # (size, clip): a line over `size` bytes is decoded in a child process, its strings cut to `clip`.
        self.elsewhere = elsewhere
        # No newline between `offset` and this: a long partial last line is not searched twice.
        self.scanned = start

    def chunks(self, stop: int | None = None, size: int = CHUNK) -> Iterator[Chunk]:
        """Chunks of the whole lines between `offset` and `stop` (or the end of the file)."""
        if self.stop is not None:
            return
        huge = None if self.elsewhere is None else self.elsewhere[0]
        lines = Lines(self.fd, self.offset, stop, size, looked=self.scanned, huge=huge)
        for run in lines:
            self.scanned = lines.looked
            if run.lines is None and self.elsewhere is not None:
                far = self._take_elsewhere(run.end, self.elsewhere[1])
                if far is not None:
                    yield far
                    if self.stop is not None:
                        return
                    continue
            yield self.chunk(lines.read(run))
            if self.stop is not None:
                return
        self.scanned = lines.looked

    def _take_elsewhere(self, end: int, clip: int) -> Chunk | None:
        """One huge line, checked and decoded in a child process; None if no child could do it."""
        try:
            decoded = decode_elsewhere(self.fd, self.offset, end - self.offset - 1, self.prev_seq, clip)
        except ChildFailed:
            return None
        except _LineError as exc:
            self.fail(str(exc))
            return Chunk([])
        start, self.offset = self.offset, end
        self.lineno += 1
        self.prev_seq = decoded.event.seq
        return Chunk([decoded.event], array("q", [start]), array("q", [end]), decoded.chars)


def _line_start(fd: int, offset: int, reach: int) -> int | None:
    """Just past the last newline before `offset`, or 0 at the file's start; None if none is within `reach`."""
    low = max(offset - reach, 0)
    end = offset
    while end > low:
        begin = max(end - CHUNK, low)
        newline = pread(fd, end - begin, begin).rfind(b"\n")
        if newline >= 0:
            return begin + newline + 1
        end = begin
    return 0 if low == 0 else None


# How far back the tail looks for where a last line longer than the window starts.
TAIL_REACH = 16 << 20
_LONG_LINES = 4  # long last lines the tail steps over before it gives up


def tail_span(fd: int, size: int, window: int, reach: int = TAIL_REACH) -> tuple[int, int]:
    """The whole lines to show before the first frame: the last of them that fit in `window` bytes.

    A partial last line is left out, and so is a last line longer than the window (a huge message):
    the lines before it are shown, and the background index reads it. (0, 0) when no line start is
    found within `reach` bytes: nothing is read before the first frame.
    """
    stop = _line_start(fd, size, reach)  # the whole lines end here
    for _ in range(_LONG_LINES):
        if stop is None:
            break
        if stop <= window:
            return 0, stop
        begin = stop - window
        # The window ends with the newline of the line before `stop`, so it holds at least one.
        start = begin + pread(fd, window, begin).find(b"\n") + 1
        if start < stop:
            return start, stop
        stop = _line_start(fd, stop - 1, reach)  # the last line alone fills the window
    return 0, 0


def decode_span(fd: int, start: int, end: int) -> list[Event]:
    """The events on the lines between `start` and `end` (just past the last one's newline), validated once."""
    data = pread(fd, end - start, start)
    if len(data) != end - start:
        raise JournalError(f"the journal is shorter than its index (lines at byte {start}); it was replaced")
    return [_parse_line(line, 0) for _start, line in split(data, start)]


def decode_at(fd: int, start: int, end: int) -> Event:
    """The event on the line between `start` and `end` (just past its newline), already validated once."""
    line = pread(fd, end - start - 1, start)
    if len(line) != end - start - 1:
        raise JournalError(f"the journal is shorter than its index (line at byte {start}); it was replaced")
    return _parse_line(line, 0)
