"""A Wren journal as search reads it: its raw bytes first, then only the lines that can match, decoded.

The raw pass (`rawpass.raw_scan`) vouches for each line as the reader's fast path does before it
decodes one (whole, no NUL or CR, our CRC right, the seq next), tells a few kinds apart from the
line's head, and says which lines can match the query. Those lines are decoded with the reader's
decoder; a line the pass does not vouch for is read by `decode_line`, exactly as the reader reads
it, so reading stops at the same line for the same reason (`stop`) and warns of the same gaps.

The one check left out: a line the pass vouches for and that cannot match is not decoded, so a line
whose CRC is right but whose event does not fit format 1 (only a program that computes Wren's CRC
over a wrong event can write one) stops the search only when it can match; `wren log` finds it.

The journal as a source (`wren_session.WrenSession`, light: one for every journal of a folder the index answers)
imports this module when it is read; the index reads the lines of its candidates with `stored`, not this module.

Streamed deltas are not searched (their reply follows whole, as a message) unless no reply followed
them (a retry, a crash, a cancel): that partial reply is searched as one text, as the viewer shows it.
"""

from __future__ import annotations

import re
import zlib
from array import array
from collections.abc import Callable, Iterator

import msgspec

from ..journal.errors import JournalError
from ..journal.events import Delta, Event, KnownEvent, Message, RunStart
from ..journal.lines import Lines, Scan, pread_exactly
from .query import Prefilter
from .rawpass import ASSISTANT, DELTA, OTHER, RUN_START, raw_scan
from .sources import Item, Saved
from .spoken import items_of
from .stored import TAIL, Located, own_crc, partial_of

_decoder = msgspec.json.Decoder(KnownEvent)
# A run of deltas no assistant message follows (possessive: the whole run, never a part of it).
_PARTIAL = re.compile(rb"\x01++(?!\x02)")
_DELTAS = re.compile(rb"\x01*")
# The last delta of a run no assistant message follows (or of a run at the end): there is a partial reply.
_RUN_END = re.compile(rb"\x01(?![\x01\x02])")


def kind_of(event: Event) -> int:
    """The raw pass's kind of a decoded event."""
    if isinstance(event, Delta):
        return DELTA
    if isinstance(event, Message) and event.message.role == "assistant":
        return ASSISTANT
    return RUN_START if isinstance(event, RunStart) else OTHER


class Reading(Scan):
    """One reading of one journal: where it is, and what it carries from one run of lines to the next.

    Its lines and its stop come from the one scanner (`journal.lines`); the raw pass and the reader's
    checks are what it does with each run.
    """

    def __init__(self, fd: int, prefilter: Prefilter) -> None:
        super().__init__()
        self.fd = fd
        self.prefilter = prefilter
        self.prev_seq = 0
        self.project: str | None = None
        self.warnings: list[str] = []
        # Deltas at the end of what was read, whose reply may still follow: the (start, end) of their lines.
        self.streaming: tuple[int, int] | None = None
        self.saved: Saved | None = None
        self.located: Located = (0, 0, 0)  # the bytes the items being given come from (`WrenSession.located`)

    def restore(self, saved: Saved) -> None:
        """Go on from where an earlier reading of the same bytes ended (`saved`, from `run`)."""
        import pickle  # a journal read: not loaded by a search the index answers

        state = pickle.loads(saved.state)
        self.offset, self.lineno, self.prev_seq, self.project, self.streaming, warnings = state
        self.warnings.extend(warnings)

    def run(self) -> Iterator[Item]:
        import pickle

        lines = Lines(self.fd, self.offset)
        for run in lines:
            yield from self._take(lines.read(run))
            if self.stop is not None:
                break
        state = (self.offset, self.lineno, self.prev_seq, self.project, self.streaming, self.warnings)
        provisional = 0
        if self.streaming is not None:
            # the journal ends (or stops) while a reply streams: its partial text, until more is written
            for item in self._partial(*self.streaming):
                provisional += 1
                yield item
            self.streaming = None
        self.saved = Saved(state[0], pickle.dumps(state, protocol=5), provisional)
        self.stop = self.ending(self.fd, lines.partial)

    def _take(self, view: memoryview) -> Iterator[Item]:
        """A run of whole lines: runs the raw pass vouches for, and each line it does not."""
        cut = len(view)
        pos = 0
        chunk = b""
        while pos < cut and self.stop is None:
            count, consumed, ends, kinds, hits = raw_scan(view[pos:cut], self.offset, self.prev_seq, *self.prefilter)
            if count:
                yield from self._vouched(view[pos : pos + consumed], ends, kinds, hits)
                pos += consumed
            if pos < cut and self.stop is None:
                chunk = chunk or bytes(view)  # copied only once a line needs reading apart
                newline = chunk.index(b"\n", pos)
                yield from self._single(chunk[pos:newline])
                pos = newline + 1

    def _vouched(self, lines: memoryview, ends_bytes: bytes, kinds: bytes, hits_bytes: bytes) -> Iterator[Item]:
        """A run of lines the raw pass vouched for: decode what can match (and run starts), find partial replies."""
        ends, hits = array("q"), array("i")
        ends.frombytes(ends_bytes)
        hits.frombytes(hits_bytes)
        base, lineno, prev_seq, count = self.offset, self.lineno, self.prev_seq, len(ends)

        def start(index: int) -> int:
            return ends[index - 1] if index else base

        partials = {after: (first, last) for after, first, last in self._delta_runs(kinds, ends, start)}
        matching = {index for index in hits if kinds[index] != DELTA}
        # A run's next line is decoded too: a reply in a shape the pass does not know still ends no run.
        wanted = sorted(matching.union(_all(kinds, RUN_START), partials))
        self.offset, self.lineno, self.prev_seq = ends[-1], lineno + count, prev_seq + count
        events, bad = _decode(lines, base, [(start(i), ends[i]) for i in wanted])
        for index, event in zip(wanted, events, strict=False):
            if index in partials and kind_of(event) != ASSISTANT:
                yield from self._partial(*partials[index])
            if isinstance(event, RunStart):
                self.project = event.cwd
            if index in matching:
                first = start(index)
                self.located = (first, ends[index], own_crc(lines[ends[index] - base - TAIL : ends[index] - base]))
                yield from items_of(event, first, 0, self.project)
        if bad is not None:
            index = wanted[len(events)]
            if index in partials:
                yield from self._partial(*partials[index])  # the deltas before the line reading stops at
            self.offset, self.lineno, self.prev_seq = start(index), lineno + index, prev_seq + index
            self.fail(*bad)
            if self.streaming is not None and self.streaming[0] >= self.offset:
                self.streaming = None  # deltas after the stop were never read

    def _single(self, line: bytes) -> Iterator[Item]:
        """A line the raw pass did not vouch for, read as the reader reads it."""
        try:
            event = _read_line(line)
            if event.seq <= self.prev_seq:
                raise JournalError(f"seq {event.seq} does not increase on {self.prev_seq}")
        except JournalError as exc:
            self.fail(str(exc), line)
            return
        start = self.offset
        self.lineno += 1
        if self.prev_seq and event.seq != self.prev_seq + 1:
            self.warnings.append(f"line {self.lineno}: seq jumps from {self.prev_seq} to {event.seq}")
        self.prev_seq = event.seq
        self.offset += len(line) + 1
        kind = kind_of(event)
        for _after, first, last in self._delta_runs(bytes([kind]), array("q", [self.offset]), lambda _i: start):
            if kind != ASSISTANT:
                yield from self._partial(first, last)
        if isinstance(event, RunStart):
            self.project = event.cwd
        self.located = (start, self.offset, own_crc(line[len(line) + 1 - TAIL :] + b"\n"))
        yield from items_of(event, start, 0, self.project)

    def _delta_runs(self, kinds: bytes, ends: array[int], start: Callable[[int], int]) -> list[tuple[int, int, int]]:
        """Runs of deltas that end in these lines: (the line after the run, its first line's start, its end).

        A run the pass sees followed by an assistant message is left out (its reply came); a run at
        the end of these lines is kept in `streaming` until the next lines say how it ends.
        """
        found: list[tuple[int, int, int]] = []
        if self.streaming is None and _RUN_END.search(kinds) is None:
            return found  # every run of deltas here is followed by its reply: the common case, found in C
        at = 0
        if self.streaming is not None:
            more = _DELTAS.match(kinds)
            stop = more.end() if more is not None else 0
            if stop == len(kinds):
                self.streaming = (self.streaming[0], ends[stop - 1]) if stop else self.streaming
                return found
            first, last = self.streaming[0], ends[stop - 1] if stop else self.streaming[1]
            self.streaming = None
            if kinds[stop] != ASSISTANT:
                found.append((stop, first, last))
            at = stop
        for match in _PARTIAL.finditer(kinds, at):
            begin, stop = match.span()
            if stop == len(kinds):
                self.streaming = (start(begin), ends[stop - 1])
                break
            found.append((stop, start(begin), ends[stop - 1]))
        return found

    def _partial(self, start: int, end: int) -> Iterator[Item]:
        """A reply streamed and thrown away: its deltas' text, joined, as one item at its first delta."""
        data = pread_exactly(self.fd, end - start, start)
        item = partial_of(data, start, self.project)
        if item is not None:
            self.located = (start, end, zlib.crc32(data))
            yield item


def _decode(lines: memoryview, base: int, spans: list[tuple[int, int]]) -> tuple[list[Event], tuple[str, bytes] | None]:
    """The events of the lines at `spans` (file offsets; `lines` starts at `base`), up to one that does not decode.

    Returns them and, for a line that does not decode, why (as the reader says it) and its bytes.
    """
    pieces = [lines[first - base : last - base] for first, last in spans]
    if not pieces:
        return [], None
    try:
        return list(_decoder.decode_lines(b"".join(pieces))), None
    except (msgspec.DecodeError, RecursionError):
        pass  # an unknown type, or a line that does not fit: each is read as the reader reads it
    events: list[Event] = []
    for piece in pieces:
        line = bytes(piece[:-1])
        try:
            events.append(_read_line(line))
        except JournalError as exc:
            return events, (str(exc), line)
    return events, None


def _read_line(line: bytes) -> Event:
    """The line as the journal's reader reads it (`reader.decode_line`): imported for the first line the raw pass
    did not vouch for or msgspec could not decode, not by a search whose every line it decoded.

    Raises:
        JournalError: the reader does not take it.
    """
    from ..journal.reader import decode_line

    return decode_line(line)


def _all(kinds: bytes, kind: int) -> Iterator[int]:
    mark = bytes([kind])
    at = kinds.find(mark)
    while at >= 0:
        yield at
        at = kinds.find(mark, at + 1)
