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
imports this module when it is read; the index imports it for the lines of its candidates (`stored_items`).

Streamed deltas are not searched (their reply follows whole, as a message) unless no reply followed
them (a retry, a crash, a cancel): that partial reply is searched as one text, as the viewer shows it.
"""

from __future__ import annotations

import re
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import islice

import msgspec

from ..journal.errors import JournalError
from ..journal.events import Delta, Event, KnownEvent, Message, RunStart
from ..journal.lines import Lines, Scan, pread_exactly
from ..portable import pread
from .query import Prefilter
from .rawpass import ASSISTANT, DELTA, OTHER, RUN_START, raw_scan
from .sources import Item, Saved
from .spoken import items_of

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
                self.located = (first, ends[index], _own_crc(lines[ends[index] - base - _TAIL : ends[index] - base]))
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
        self.located = (start, self.offset, _own_crc(line[len(line) + 1 - _TAIL :] + b"\n"))
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
        item = _partial_of(data, start, self.project)
        if item is not None:
            self.located = (start, end, zlib.crc32(data))
            yield item


def _partial_of(data: bytes | memoryview, start: int, project: str | None) -> Item | None:
    """The item of a reply streamed and thrown away, from its deltas' lines (`data`, at `start` in the file)."""
    deltas = [e for e in _decoder.decode_lines(data) if isinstance(e, Delta)]
    if not deltas:
        return None
    first = deltas[0]
    text = "".join(d.text for d in deltas)
    return Item(first.seq, first.ts, "assistant", "partial", text, start, 0, project=project)


# Where an item's text is in its journal: the start and end of its line (of its deltas' lines, for a partial reply)
# and the line's own CRC-32 (what its writer wrote at its end; for a partial reply, the CRC-32 of all its lines).
Located = tuple[int, int, int]
# What the index keeps of a Wren journal's item (index version 8): its line's start and length, its CRC-32 (as
# `Located`), which of the line's items it is (-1: the partial reply its deltas make), and the project it was in.
Ref = tuple[int, int, int, int, str | None]
PARTIAL = -1
# The bytes of a file's items read and checked at a time (`stored_items`); a file's candidates past this are
# checked first, in a pass of their own, so nothing is given before every one of them is known to be right.
CHUNK = 4 << 20
_GAP = 4 << 10  # lines at most this far apart are read in one pread (a copy of 4 kB costs about a call)
_READ = 1 << 20  # of at most about this many bytes
# How a line the reader takes ends: `,"crc":"` and its CRC-32 in 8 lowercase hex digits, `"}`, the newline.
_MARK = b',"crc":"'
_TAIL = len(_MARK) + 8 + 3


def _own_crc(tail: bytes | memoryview) -> int:
    """The CRC-32 a line ending in `tail` (its last _TAIL bytes) says it has; -1 if it does not end as a line
    the reader takes (never so for a line an item was read from: `stored_spans` then finds it wrong)."""
    if len(tail) != _TAIL or tail[: len(_MARK)] != _MARK or tail[-3:] != b'"}\n':
        return -1
    try:
        return int(bytes(tail[len(_MARK) : len(_MARK) + 8]), 16)
    except ValueError:
        return -1


def ref_of(item: Item, located: Located, which: int) -> Ref:
    start, end, crc = located
    signed = crc - (1 << 32) if crc >= 1 << 31 else crc  # marshal's 4-byte int
    return (start, end - start, signed, PARTIAL if item.kind == "partial" else which, item.project)


def stored_spans(fd: int, refs: Sequence[Ref]) -> list[memoryview] | None:
    """The bytes each of `refs` points to in the journal open at `fd`; None when any of them is not the line it
    was indexed from (the file changed under the index): the bytes there do not end with a newline and, before
    its `"}`, the line's own CRC-32 kept (its writer's, of its body: another line has another, and a line that
    moved ends elsewhere), or the file ends before them. A partial reply's lines are checked whole against the
    CRC-32 of them kept.

    The line's body is not checked against its CRC again: its own CRC and its end tell one line from another
    (a line damaged under an intact CRC is the reader's to find, as any damage the index did not read).
    """
    spans: list[memoryview] = []
    at = 0
    while at < len(refs):
        low, length = refs[at][0], refs[at][1]
        high, end = low + length, at + 1
        # The next ones in the same line or just after it: one read.
        while end < len(refs) and low <= refs[end][0] <= high + _GAP and high - low < _READ:
            high = max(high, refs[end][0] + refs[end][1])
            end += 1
        wanted = high - low
        read = pread(fd, wanted, low)
        data = memoryview(read if len(read) == wanted else pread_exactly(fd, wanted, low))
        if len(data) < wanted:
            return None
        for start, size, crc, which, _project in refs[at:end]:
            first = start - low
            last = first + size
            if which == PARTIAL:
                if zlib.crc32(data[first:last]) != crc & 0xFFFFFFFF:
                    return None
            # The line's own CRC, 8 hex digits before its `"}` and newline (`,"crc":"` before them: `_own_crc`).
            elif data[last - 1] != _NEWLINE or data[last - 11 : last - 3] != b"%08x" % (crc & 0xFFFFFFFF):
                return None
            spans.append(data[first:last])
        at = end
    return spans


_NEWLINE = ord("\n")


def item_at(span: bytes | memoryview, ref: Ref) -> Item:
    """The item `ref` points to, from its bytes (`stored_spans`: the very bytes it was indexed from).

    Raises:
        JournalError: they do not give it (only bytes other than those indexed could).
    """
    start, _size, _crc, which, project = ref
    if which == PARTIAL:
        try:
            item = _partial_of(span, start, project)
        except (msgspec.DecodeError, RecursionError):
            item = None
        if item is None:
            raise JournalError(f"offset {start}: no streamed reply there")
        return item
    items = items_of(_event(span), start, 0, project)
    found = next(items if which == 0 else islice(items, which, None), None)
    if found is None:
        raise JournalError(f"offset {start}: the line holds no item {which}")
    return found


def _event(span: bytes | memoryview) -> Event:
    try:
        event: Event = _decoder.decode(span)
    except (msgspec.DecodeError, RecursionError):
        event = _read_line(bytes(span))  # a line the raw pass did not vouch for, read as the reader reads it
    return event


def stored_items(
    fd: int, refs: Sequence[Ref], may_hold: Callable[[memoryview], bool] | None = None
) -> list[Item] | Iterator[Item] | None:
    """The items `refs` point to, in order, read from the journal open at `fd`; None when the file's bytes are
    not those indexed (all of them checked before the first is given). A list when they are read at once (at
    most CHUNK bytes: `fd` is no longer needed); else an iterator reading a chunk at a time from `fd`.

    With `may_hold` (the raw pass's test of a line's bytes, `index._may_hold`), a line it says cannot match is
    not decoded and its item left out (a partial reply's always kept: its match may lie across its deltas).

    Raises (from the iterator): JournalError, when the file changed between the check and the reading.
    """
    chunks: list[Sequence[Ref]] = []
    begin, size = 0, 0
    for n, ref in enumerate(refs):
        size += ref[1]
        if size >= CHUNK:
            chunks.append(refs[begin : n + 1])
            begin, size = n + 1, 0
    if begin < len(refs):
        chunks.append(refs[begin:])
    first = stored_spans(fd, chunks[0]) if chunks else []
    if first is None or any(stored_spans(fd, chunk) is None for chunk in chunks[1:]):
        return None
    if len(chunks) <= 1:
        return _items_at(first, refs, may_hold)
    return _decoded(fd, chunks, first, may_hold)


def _items_at(
    spans: list[memoryview], refs: Sequence[Ref], may_hold: Callable[[memoryview], bool] | None = None
) -> list[Item]:
    """`item_at` of each (those `may_hold` lets through), a line holding several (a reply's reasoning, text and
    calls) decoded once."""
    found: list[Item] = []
    line: list[Item] = []  # the items of the line at `at` made so far, by `making`
    making: Iterator[Item] = iter(())
    at = -1
    for span, ref in zip(spans, refs, strict=True):
        start, which = ref[0], ref[3]
        if which == PARTIAL:
            found.append(item_at(span, ref))
            continue
        if may_hold is not None and start != at and not may_hold(span):
            continue
        if start != at:
            line, making, at = [], items_of(_event(span), start, 0, ref[4]), start
        line.extend(islice(making, which + 1 - len(line)))
        if which >= len(line):
            raise JournalError(f"offset {start}: the line holds no item {which}")
        found.append(line[which])
    return found


def _decoded(
    fd: int, chunks: list[Sequence[Ref]], first: list[memoryview], may_hold: Callable[[memoryview], bool] | None
) -> Iterator[Item]:
    spans: list[memoryview] | None = first
    for n, chunk in enumerate(chunks):
        if n:
            spans = stored_spans(fd, chunk)
        if spans is None:
            raise JournalError("it changed while it was searched: search again")
        yield from _items_at(spans, chunk, may_hold)


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
