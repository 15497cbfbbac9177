"""What reading a journal found: how far it is good, and where and why the reading stopped.

The reader reports and its callers decide (a writer refuses to append past corruption and sets a
torn tail aside; a listing says "corrupt"; `wren log` exits 4). So a stop is data, never a string
to parse: `Stop.line`, `Stop.offset`, `Stop.why`, `Stop.torn`; `str(stop)` is the sentence.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

from ..records import Frozen, Record

if TYPE_CHECKING:  # for the annotations only: a verdict, a stop and the errors need no event type (no msgspec)
    from .events import Event


class Stop(Frozen):
    """The first line that cannot be read, and why; reading ends there and nothing after it is read.

    Attributes:
        line: Its number, from 1, counted from the start of the file.
        offset: The byte its line starts at: every byte before it is good.
        why: What is wrong with it, in words a person reads ("its CRC does not match its bytes ...").
        torn: True for a torn tail, the normal end of a crash (a last line cut short, or NUL bytes
            to the end of the file): a writer reopening the journal sets it aside and goes on.
            False for corruption (a bad line, whatever follows it): nothing is appended after it.
    """

    __slots__ = ("line", "offset", "torn", "why")
    line: int
    offset: int
    why: str
    torn: bool

    def __init__(self, line: int, offset: int, why: str, torn: bool = False) -> None:
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "why", why)
        object.__setattr__(self, "torn", torn)

    def __str__(self) -> str:
        return f"line {self.line}: {self.why}"


class ReadVerdict(Record):
    """How far a journal is good, and where and why reading stopped (None: it was read to its end)."""

    __slots__ = ("good_bytes", "last_seq", "lines", "stop", "warnings")
    # Good lines read, and the seq of the last one (0 when none).
    lines: int
    last_seq: int
    # Length of the readable prefix: everything before the line that stopped the reading.
    good_bytes: int
    stop: Stop | None
    # Gaps in seq ("line 5: seq jumps from 3 to 7"): reported, never fatal.
    warnings: list[str]

    def __init__(
        self,
        lines: int = 0,
        last_seq: int = 0,
        good_bytes: int = 0,
        stop: Stop | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.lines = lines
        self.last_seq = last_seq
        self.good_bytes = good_bytes
        self.stop = stop
        self.warnings = [] if warnings is None else warnings

    @property
    def ok(self) -> bool:
        """Read to its end: every line is whole and good."""
        return self.stop is None

    @property
    def torn(self) -> bool:
        """Reading stopped at a torn tail (the normal end of a crash), not at corruption."""
        return self.stop is not None and self.stop.torn


class ReadResult(ReadVerdict):
    """The verdict of `read_events`, with every good event and where each one's line ends."""

    __slots__ = ("events", "line_ends")
    events: list[Event]
    # Byte offset just past each event's line, in step with `events`.
    line_ends: array[int]

    def __init__(
        self,
        lines: int = 0,
        last_seq: int = 0,
        good_bytes: int = 0,
        stop: Stop | None = None,
        warnings: list[str] | None = None,
        events: list[Event] | None = None,
        line_ends: array[int] | None = None,
    ) -> None:
        super().__init__(lines, last_seq, good_bytes, stop, warnings)
        self.events = [] if events is None else events
        self.line_ends = array("q") if line_ends is None else line_ends
