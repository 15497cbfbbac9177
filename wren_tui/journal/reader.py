"""Reading a journal: every whole, valid line up to the first one that is not, and why it stopped.

A torn last line is the normal shape of a crash: it ends the journal. A bad line in the middle is
corruption: it ends the journal too, and is reported as such. Nothing is ever skipped or repaired.
The reader reports (a `ReadVerdict` with its `Stop`); what to do about it is the caller's choice.
Whole runs of clean lines take a faster road (`_fastpath`) to the same verdicts.
"""

from __future__ import annotations

import contextlib
import os
import stat
from array import array
from collections.abc import Callable
from pathlib import Path

import msgspec

from ..portable import open_read_only, pread
from ..records import Record
from . import _fastpath
from ._framing import CRC_MISMATCH, crc_problem
from .errors import JournalError
from .events import KNOWN_TYPES, Event, KnownEvent, UnknownEvent
from .lines import Lines, Scan, split
from .targets import kind_of
from .verdict import ReadResult, ReadVerdict, Stop

_decoder = msgspec.json.Decoder(KnownEvent)
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 22

EventSink = Callable[[list[Event], bytes | memoryview], object]
"""Where a reading hands each run of good events, with the bytes of exactly their lines.

The list is the sink's to keep. The bytes (every line ending in its newline) may be a view into
the reader's buffer, valid only during the call: `bytes(lines)` keeps a copy. A sink that raises
stops the reading; the exception reaches the caller.
"""


class _LineError(Exception):
    """One line cannot be read; the message is the reason a person reads (it becomes `Stop.why`)."""


def _parse_line(line: bytes, prev_seq: int) -> Event:
    """Decode one whole line (without its newline) that must follow an event with `prev_seq`."""
    if b"\x00" in line:
        raise _LineError("it holds NUL bytes (the tail of an interrupted write)")
    if line.startswith(_BOM):
        raise _LineError(
            "it starts with a UTF-8 byte-order mark (another program saved this file; Wren never writes one)"
        )
    if b"\r" in line:
        # Wren never writes CR: a line holding one was rewritten by another program (an editor, a
        # CRLF conversion), and appending LF lines after it would leave a file of two styles.
        if line.endswith(b"\r"):
            raise _LineError("it ends with CR (\\r\\n): another program rewrote this file; Wren never writes CR")
        raise _LineError("it holds a CR byte (\\r): another program rewrote this file; Wren never writes CR")
    framing = crc_problem(line)
    if framing == CRC_MISMATCH:
        raise _LineError(framing)  # bytes changed after writing: what they decode to says nothing more
    event = _decode_checked(line)
    if framing is not None:
        # Said after what decoding finds (not JSON, no seq ...), which is the plainer reason when both hold.
        raise _LineError(framing)
    if event.seq <= prev_seq:
        raise _LineError(f"seq {event.seq} does not increase on {prev_seq}")
    return event


def _decode_checked(line: bytes) -> Event:
    """A line's event, with a seq and a ts; its framing (CRC, bytes) is the caller's to check."""
    try:
        event: Event = _decoder.decode(line)
    except msgspec.DecodeError as exc:
        event = _decode_other(line, exc)
    except RecursionError:
        raise _LineError("its JSON is nested too deeply to read") from None
    if event.seq < 1 and not isinstance(event, UnknownEvent):
        raise _LineError("it has no seq")
    if not event.ts:
        raise _LineError("it has no ts")
    return event


def decode_line(line: bytes) -> Event:
    """Decode one journal line met on its own (a copy elsewhere), with every check the reader makes of a line.

    The checks are those `read_events` makes of each line of a file (no NUL, BOM or CR byte, its crc
    member written as the writer writes it and right, format 1, a seq and a ts), so a line this
    accepts is one the reader accepts.
    What needs the lines around it (seq order, where the file ends) is the caller's to check.

    Args:
        line: One line's bytes, with its newline at the end or without it.

    Returns:
        Its event (an `UnknownEvent` for a type this version does not know, as the reader keeps it).

    Raises:
        JournalError: it is not one line the reader would accept; the message is why, as
            `Stop.why` says it ("its CRC does not match its bytes ..."), for the caller's sentence.
    """
    body = line[:-1] if line.endswith(b"\n") else line
    if b"\n" in body:
        raise JournalError("it holds more than one line")
    try:
        return _parse_line(body, 0)
    except _LineError as exc:
        raise JournalError(str(exc)) from None


def _decode_other(line: bytes, exc: msgspec.DecodeError) -> Event:
    try:
        raw = msgspec.json.decode(line)
    except msgspec.DecodeError as bad:
        what = "its bytes are not valid UTF-8" if "UTF-8" in str(bad) else "it is not JSON"
        raise _LineError(what) from None
    except RecursionError:
        raise _LineError("its JSON is nested too deeply to read") from None
    if not isinstance(raw, dict):
        raise _LineError(f"it is JSON but not an object ({_json_kind(raw)})")
    kind = raw.get("type")
    if kind is None:
        raise _LineError("it has no type")
    if not isinstance(kind, str):
        raise _LineError("its type is not a string")
    if kind in KNOWN_TYPES:
        raise _LineError(f"a {kind} event that does not fit format 1: {exc}")
    seq, ts = raw.pop("seq", None), raw.pop("ts", None)
    raw.pop("type")
    raw.pop("crc", None)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise _LineError("it has no seq" if seq is None else "its seq is not a positive integer")
    if not isinstance(ts, str):
        raise _LineError("it has no ts" if ts is None else "its ts is not a string")
    return UnknownEvent(seq=seq, ts=ts, type=kind, fields=raw)


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return "a number"


def open_for_reading(path: Path) -> int:
    """A read-only descriptor on a journal, or a JournalError that says what is wrong."""
    try:
        # O_NONBLOCK: a FIFO in place of a journal would otherwise block the open until a writer came
        fd = open_read_only(path)
    except FileNotFoundError:
        raise JournalError(f"{path}: no such journal") from None
    except PermissionError:
        raise JournalError(f"{path}: permission denied") from None
    except OSError as exc:
        if os.path.islink(path):
            raise JournalError(f"{path}: is a symbolic link; journals are opened only directly") from None
        raise JournalError(f"{path}: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise JournalError(f"{path}: is {kind_of(mode)}, not a regular file")
    return fd


class _Lines(Scan):
    """Whole lines in, events out, up to the first line that cannot be read; read_events and Tail share it.

    The scanner's hook for a Wren journal (see `lines`): each run of lines is checked whole by the
    fast path, or line by line as `_parse_line` reads each. `offset`, `lineno` and `prev_seq` may
    start anywhere a line starts (the viewer's line offsets, the fleet's reader read from the middle):
    a stop's line number is then counted from the file's start, and seq must go on increasing.
    """

    def __init__(self, ends: array[int] | None = None, offset: int = 0, lineno: int = 0, prev_seq: int = 0) -> None:
        super().__init__(offset, lineno)
        self.ends = ends
        self.warnings: list[str] = []
        self.prev_seq = prev_seq

    def take(
        self, whole: bytes | memoryview, events: list[Event], lines_checked: _fastpath.LinesChecked | None = None
    ) -> bool:
        """Read a run of whole lines (`whole` ends with a newline); False once a line cannot be read.

        `lines_checked`: what the C line check said of them already (see `_fastpath.read_ahead`), if it did.
        """
        events.extend(self._run(whole, lines_checked))
        return self.stop is None

    def _run(
        self,
        whole: bytes | memoryview,
        lines_checked: _fastpath.LinesChecked | None = None,
        ends_later: list[bytes] | None = None,
    ) -> list[Event]:
        """`take`'s events in a list of their own: the one the fast path decoded them into, not a copy of it.

        `ends_later`: where the C check's line ends (bytes) wait to be added to `ends` at once
        (`_add_ends`), not in one resize of the array a run; added before any other end is.
        """
        checked = _fastpath.check_run(whole, self.offset, self.prev_seq, lines_checked)
        if checked is None:
            if ends_later:
                self._add_ends(ends_later)
            events: list[Event] = []
            self._take_each(whole, events)
            return events
        decoded, ends = checked
        if self.ends is not None:
            if ends_later is not None and isinstance(ends, bytes):
                ends_later.append(ends)
            else:
                if ends_later:
                    self._add_ends(ends_later)
                _fastpath.extend_ends(self.ends, ends, self.offset)
        self.offset += len(whole)
        self.lineno += len(decoded)
        self.prev_seq += len(decoded)
        return decoded

    def _add_ends(self, ends_later: list[bytes]) -> None:
        """Add the line ends `_run` left waiting to `ends`, in one piece."""
        if self.ends is not None:
            self.ends.frombytes(b"".join(ends_later))
        ends_later.clear()

    def _take_each(self, whole: bytes | memoryview, events: list[Event]) -> None:
        """Line by line, as `_parse_line` reads each: the failure model, and the path every doubt takes."""
        for _start, line in split(whole, self.offset):
            try:
                event = _parse_line(line, self.prev_seq)
            except _LineError as exc:
                self.fail(str(exc), line)
                return
            self.lineno += 1
            if self.prev_seq and event.seq != self.prev_seq + 1:
                self.warnings.append(f"line {self.lineno}: seq jumps from {self.prev_seq} to {event.seq}")
            self.prev_seq = event.seq
            events.append(event)
            self.offset += len(line) + 1
            if self.ends is not None:
                self.ends.append(self.offset)

    def read_file(self, fd: int, sink: EventSink) -> bool:
        """Hand the file's whole good lines from `offset` on to `sink`; True when a partial line is left at its end.

        More than a chunk from `offset` is read ahead by C where it can (`_fastpath.read_ahead`): each
        chunk read and its lines checked while the one before is decoded. Where that stops (a line
        longer than a chunk, the end of the file), `Lines` reads on and says what the end is.
        """
        if _fastpath.read_ahead_works() and os.fstat(fd).st_size - self.offset > _CHUNK:
            ends_later: list[bytes] = []
            try:
                with contextlib.closing(_fastpath.read_ahead(fd, self.offset, _CHUNK)) as ahead:
                    for whole, lines_checked in ahead:
                        before = self.offset
                        events = self._run(whole, lines_checked, ends_later)
                        if events:
                            sink(events, whole[: self.offset - before])
                        if self.stop is not None:
                            return False
                        del whole  # held while the next chunk is read, it would add a chunk to what a reading holds
            finally:
                if ends_later:
                    self._add_ends(ends_later)
        lines = Lines(fd, self.offset, size=_CHUNK)
        for run in lines:
            whole = lines.read(run)
            before = self.offset
            events = self._run(whole)
            if events:
                sink(events, whole[: self.offset - before])
            if self.stop is not None:
                return False
            del run, whole  # held while the next chunk is read, they would double the memory a reading takes
        return lines.partial


def _extend(events: list[Event]) -> EventSink:
    return lambda chunk, _lines: events.extend(chunk)


def read_events(path: str | os.PathLike[str]) -> ReadResult:
    """Read a whole journal: every event up to the first line that cannot be read.

    Args:
        path: The journal file (opened read-only, never through a symbolic link).

    Returns:
        Its events and line ends, and the verdict: `stop` says where and why reading stopped
        (None when every line is good), `warnings` the gaps in seq.

    Raises:
        JournalError: the file cannot be opened (missing, a link, not a regular file, no permission).
    """
    fd = open_for_reading(Path(path))
    try:
        result = ReadResult()
        verdict = _scan_fd(fd, _extend(result.events), result.line_ends)
        result.lines, result.last_seq, result.good_bytes = verdict.lines, verdict.last_seq, verdict.good_bytes
        result.stop, result.warnings = verdict.stop, verdict.warnings
        return result
    finally:
        os.close(fd)


def scan_events(path: str | os.PathLike[str], sink: EventSink) -> ReadVerdict:
    """Read a journal exactly as `read_events` does, but hand each run of good events to `sink` and keep none.

    Memory holds two chunks of the file at a time (the one decoded and the next, being read) and one
    line, if a line is longer, whatever the journal's size.

    Args:
        path: The journal file.
        sink: Called with each run of good events, in order (see `EventSink` for what it may keep).

    Returns:
        The verdict `read_events` gives: lines, last seq, good bytes, stop, warnings.

    Raises:
        JournalError: the file cannot be opened. Whatever `sink` raises passes through.
    """
    fd = open_for_reading(Path(path))
    try:
        return _scan_fd(fd, sink)
    finally:
        os.close(fd)


def _scan_fd(fd: int, sink: EventSink, ends: array[int] | None = None) -> ReadVerdict:
    verdict = ReadVerdict()
    lines = _Lines(ends)
    lines.warnings = verdict.warnings
    partial = lines.read_file(fd, sink)
    verdict.lines, verdict.last_seq, verdict.good_bytes = lines.lineno, lines.prev_seq, lines.offset
    verdict.stop = lines.ending(fd, partial)
    return verdict


class HeadAndTail(Record):
    """The first and last events of a journal, read without reading its middle."""

    __slots__ = ("head", "size", "tail")
    head: list[Event]
    tail: list[Event]
    size: int

    def __init__(
        self,
        head: list[Event],
        tail: list[Event],
        size: int,
    ) -> None:
        self.head = head
        self.tail = tail
        self.size = size


def read_head_and_tail(path: str | os.PathLike[str], window: int = 1 << 16) -> HeadAndTail | None:
    """The whole lines in the first and last `window` bytes, or None when either has a problem.

    None (a line that cannot be read, or a torn end) means: read the whole journal to say why.
    The tail's first line is read with no seq before it, so only its own order is checked.
    """
    fd = open_for_reading(Path(path))
    try:
        size = os.fstat(fd).st_size
        head = pread(fd, window, 0)
        head_lines, head_events = _Lines(), list[Event]()
        cut = head.rfind(b"\n") + 1
        if cut == 0 or not head_lines.take(head[:cut], head_events):
            return None
        start = max(size - window, head_lines.offset)
        if start == size:
            return HeadAndTail(head_events, [], size)
        tail = pread(fd, size - start, start)
        if not tail.endswith(b"\n"):
            return None
        if start > 0 and pread(fd, 1, start - 1) != b"\n":
            tail = tail[tail.find(b"\n") + 1 :]  # the window began inside a line
        tail_events: list[Event] = []
        if tail and not _Lines().take(tail, tail_events):
            return None
        return HeadAndTail(head_events, tail_events, size)
    finally:
        os.close(fd)


class TailBatch(Record):
    """What one `Tail.read` or `Tail.feed` found: the new events, and whether reading is stopped."""

    __slots__ = ("events", "restarted", "stop", "warnings")
    events: list[Event]
    # True when the file shrank or was replaced and reading started over from its beginning.
    restarted: bool
    # Set while a line cannot be read; the Tail reads no further past it. A Tail never calls a stop
    # torn: the line may still be finished or set aside by its writer (see Tail).
    stop: Stop | None
    # Gaps in seq among this batch's events.
    warnings: list[str]

    def __init__(
        self,
        events: list[Event],
        restarted: bool = False,
        stop: Stop | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.events = events
        self.restarted = restarted
        self.stop = stop
        self.warnings = [] if warnings is None else warnings


class Tail:
    """Incremental reading: each `read()` returns the whole new lines since the last one.

    What it reads again: a partial last line is left for the next read (nothing of it is kept). A
    file that shrank or whose inode changed is read again from the start, and the batch says so
    (`restarted`). A line that cannot be read stops the Tail there (`stop`); each later read looks
    at that line again, because a writer reopening the journal moves a torn tail aside and appends
    in its place. The checks are those of `read_events`: same events, same stop.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lines = _Lines()
        self._inode: tuple[int, int] | None = None
        self._partial = b""  # only for feed(): read() finds the partial line in the file again

    @property
    def offset(self) -> int:
        """Bytes of whole, good lines read so far."""
        return self._lines.offset

    @property
    def lineno(self) -> int:
        """Good lines read so far."""
        return self._lines.lineno

    @property
    def prev_seq(self) -> int:
        return self._lines.prev_seq

    @property
    def stop(self) -> Stop | None:
        """The line reading is stopped at, while it cannot be read."""
        return self._lines.stop

    def read(self) -> TailBatch:
        """The whole lines added to the file since the last read (an empty batch while it cannot be opened)."""
        try:
            fd = open_for_reading(self.path)
        except JournalError:
            return TailBatch(events=[])
        try:
            st = os.fstat(fd)
            inode = (st.st_dev, st.st_ino)
            restarted = self._inode is not None and (inode != self._inode or st.st_size < self.offset)
            if restarted:
                self._lines = _Lines()
            self._inode = inode
            self._lines.stop, self._lines.bad_line = None, b""
            return self._batch(restarted, lambda events: self._lines.read_file(fd, _extend(events)))
        finally:
            os.close(fd)

    def feed(self, data: bytes) -> TailBatch:
        """Read lines from bytes handed in directly (the same rules as `read`); the partial rest is kept."""

        def take(events: list[Event]) -> None:
            buf = self._partial + data
            cut = buf.rfind(b"\n") + 1
            self._partial = buf[cut:]
            if cut:
                self._lines.take(buf[:cut], events)

        if self._lines.stop is not None:
            return self._batch(False, lambda events: None)
        return self._batch(False, take)

    def _batch(self, restarted: bool, fill: Callable[[list[Event]], object]) -> TailBatch:
        batch = TailBatch(events=[], restarted=restarted)
        self._lines.warnings = batch.warnings
        fill(batch.events)
        batch.stop = self._lines.stop
        return batch
