"""Reading a journal: every whole, valid line up to the first one that is not, and why it stopped.

A torn last line is the normal shape of a crash: it ends the journal. A bad line in the middle is
corruption: it ends the journal too, and is reported as such. Nothing is ever skipped or repaired.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import attrgetter, getitem
from pathlib import Path
from types import ModuleType
from typing import cast

import msgspec

from .events import KNOWN_TYPES, Event, KnownEvent, UnknownEvent

native_lines: ModuleType | None
try:
    # The line check in C, built at install when a compiler is there (see _lines.c); None: Python does it.
    from . import _lines as native_lines
except ImportError:  # pragma: no cover - depends on the install
    native_lines = None

_decoder = msgspec.json.Decoder(KnownEvent)
_CRC_MARK = b',"crc":"'
# ,"crc":"xxxxxxxx"}  -> 8 + 8 + 2 bytes at the end of a line we wrote
_CRC_SUFFIX_LEN = 18
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 22
# Below this a run of lines is checked in the calling thread: a thread costs more than it saves.
_OVERLAP_MIN = 1 << 20


class JournalError(Exception):
    """A journal could not be opened or read at all (missing, not a file, no permission)."""


@dataclass
class ReadResult:
    events: list[Event]
    # Where reading stopped (1-based line, byte offset of that line's start) and why; None if whole.
    stopped_at_line: int | None = None
    stopped_at_offset: int | None = None
    reason: str | None = None
    # True when what stopped the reading is a torn tail (the normal end of a crash), not corruption.
    torn: bool = False
    warnings: list[str] = field(default_factory=list)
    # Byte offset just past each event's line, in step with `events`.
    line_ends: array[int] = field(default_factory=lambda: array("q"))

    @property
    def ok(self) -> bool:
        return self.reason is None

    @property
    def good_bytes(self) -> int:
        """Length of the readable prefix: everything before the line that stopped the reading."""
        return self.line_ends[-1] if self.line_ends else 0

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else 0


@dataclass
class ReadVerdict:
    """What reading a journal found, without its events: how far it is good, and where and why it stopped."""

    lines: int = 0
    last_seq: int = 0
    # Length of the readable prefix: everything before the line that stopped the reading.
    good_bytes: int = 0
    stopped_at_line: int | None = None
    stopped_at_offset: int | None = None
    reason: str | None = None
    torn: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.reason is None


# A run of whole lines: a view into a chunk read from the file, or bytes handed in.
Lines = bytes | memoryview
# Each run of good events, with the bytes of exactly their lines (every one ending in a newline).
EventSink = Callable[[list[Event], Lines], object]


class LineError(Exception):
    """One line cannot be read; the message is the reason a person reads."""


def parse_line(line: bytes, prev_seq: int) -> Event:
    """Decode one whole line (without its newline) that must follow an event with `prev_seq`."""
    if b"\x00" in line:
        raise LineError("it holds NUL bytes (the tail of an interrupted write)")
    if line.startswith(_BOM):
        raise LineError(
            "it starts with a UTF-8 byte-order mark (another program saved this file; Wren never writes one)"
        )
    if b"\r" in line:
        # Wren never writes CR: a line holding one was rewritten by another program (an editor, a
        # CRLF conversion), and appending LF lines after it would leave a file of two styles.
        if line.endswith(b"\r"):
            raise LineError("it ends with CR (\\r\\n): another program rewrote this file; Wren never writes CR")
        raise LineError("it holds a CR byte (\\r): another program rewrote this file; Wren never writes CR")
    crc_ok = _check_crc(line)
    if crc_ok is False:
        raise LineError("its CRC does not match its bytes (the line was changed after it was written)")
    try:
        event: Event = _decoder.decode(line)
    except msgspec.DecodeError as exc:
        event = _decode_other(line, exc)
    except RecursionError:
        raise LineError("its JSON is nested too deeply to read") from None
    if event.seq < 1 and not isinstance(event, UnknownEvent):
        raise LineError("it has no seq")
    if not event.ts:
        raise LineError("it has no ts")
    if event.seq <= prev_seq:
        raise LineError(f"seq {event.seq} does not increase on {prev_seq}")
    return event


def _check_crc(line: bytes) -> bool | None:
    """True or False for a line that carries our CRC suffix, None for one that does not."""
    if len(line) < _CRC_SUFFIX_LEN + 2 or line[-_CRC_SUFFIX_LEN:-10] != _CRC_MARK:
        return None
    try:
        expected = int(line[-10:-2], 16)
    except ValueError:
        return False
    return zlib.crc32(line[:-_CRC_SUFFIX_LEN]) == expected and line.endswith(b'"}')


def _decode_other(line: bytes, exc: msgspec.DecodeError) -> Event:
    try:
        raw = msgspec.json.decode(line)
    except msgspec.DecodeError as bad:
        what = "its bytes are not valid UTF-8" if "UTF-8" in str(bad) else "it is not JSON"
        raise LineError(what) from None
    except RecursionError:
        raise LineError("its JSON is nested too deeply to read") from None
    if not isinstance(raw, dict):
        raise LineError(f"it is JSON but not an object ({_json_kind(raw)})")
    kind = raw.get("type")
    if kind is None:
        raise LineError("it has no type")
    if not isinstance(kind, str):
        raise LineError("its type is not a string")
    if kind in KNOWN_TYPES:
        raise LineError(f"a {kind} event that does not fit format 1: {exc}")
    seq, ts = raw.pop("seq", None), raw.pop("ts", None)
    raw.pop("type")
    raw.pop("crc", None)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise LineError("it has no seq" if seq is None else "its seq is not a positive integer")
    if not isinstance(ts, str):
        raise LineError("it has no ts" if ts is None else "its ts is not a string")
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
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise JournalError(f"{path}: no such journal") from None
    except PermissionError:
        raise JournalError(f"{path}: permission denied") from None
    except OSError as exc:
        if os.path.islink(path):
            raise JournalError(f"{path}: is a symbolic link; journals are opened only directly") from None
        raise JournalError(f"{path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise JournalError(f"{path}: not a regular file")
    return fd


class _Lines:
    """Whole lines in, events out, up to the first line that cannot be read; read_events and Tail share it."""

    def __init__(self, ends: array[int] | None = None) -> None:
        self.ends = ends
        self.warnings: list[str] = []
        self.offset = 0  # just past the last good line
        self.lineno = 0  # good lines so far
        self.prev_seq = 0
        self.reason: str | None = None
        self.bad_line = b""

    @property
    def stopped_at_line(self) -> int | None:
        return None if self.reason is None else self.lineno + 1

    def take(self, whole: Lines, events: list[Event]) -> bool:
        """Read a run of whole lines (`whole` ends with a newline); False once a line cannot be read."""
        if not self._take_fast(whole, events):
            self._take_slow(whole, events)
        return self.reason is None

    def _take_fast(self, whole: Lines, events: list[Event]) -> bool:
        """Every line at once in C loops, when all are ours and clean; False means: go line by line.

        It accepts exactly what `parse_line` accepts on the same lines and nothing else: any doubt
        (a CR, a NUL, a line without our CRC, a seq that is not the next one) hands over to it.
        """
        checked = _check_native(whole, self.offset) if native_lines is not None else _check_python(whole)
        if checked is None:
            return False
        decoded, ends = checked
        n = len(decoded)
        first = self.prev_seq + 1
        if list(map(_SEQ, decoded)) != list(range(first, first + n)) or not all(map(_TS, decoded)):
            return False
        events.extend(decoded)
        if self.ends is not None:
            if isinstance(ends, bytes):
                self.ends.frombytes(ends)
            else:
                running = accumulate(ends, initial=self.offset)
                next(running)  # the offset the run starts at is the previous run's end
                self.ends.extend(running)
        self.offset += len(whole)
        self.lineno += n
        self.prev_seq = first + n - 1
        return True

    def _take_slow(self, whole: Lines, events: list[Event]) -> None:
        whole = bytes(whole)
        pos = 0
        while pos < len(whole):
            nl = whole.index(b"\n", pos)
            line = whole[pos:nl]
            try:
                event = parse_line(line, self.prev_seq)
            except LineError as exc:
                self.reason = f"line {self.lineno + 1}: {exc}"
                self.bad_line = line
                return
            self.lineno += 1
            if self.prev_seq and event.seq != self.prev_seq + 1:
                self.warnings.append(f"line {self.lineno}: seq jumps from {self.prev_seq} to {event.seq}")
            self.prev_seq = event.seq
            events.append(event)
            self.offset += len(line) + 1
            if self.ends is not None:
                self.ends.append(self.offset)
            pos = nl + 1

    def read_file(self, fd: int, sink: EventSink) -> bool:
        """Hand the file's whole good lines from `offset` on to `sink`; True when a partial line is left at its end.

        A line longer than a chunk is not kept piece by piece: its end is found first, then the
        line is read once, so memory holds a chunk and one line, never the file.
        """
        scan = self.offset
        while self.reason is None:
            chunk = os.pread(fd, _CHUNK, scan)
            if not chunk:
                break
            nl = chunk.rfind(b"\n")
            if nl < 0:
                scan += len(chunk)
                continue
            end = scan + nl + 1
            # A view, not a copy: the lines are decoded and checked where they were read.
            whole: Lines = memoryview(chunk)[: nl + 1]
            if scan != self.offset:
                whole = _pread_exactly(fd, end - self.offset, self.offset)
            before, events = self.offset, list[Event]()
            self.take(whole, events)
            if events:
                sink(events, whole[: self.offset - before])
            scan = end
        return self.reason is None and scan > self.offset


# What a fast check hands back: the decoded events, and where their lines end (bytes of native
# int64 file offsets from C, or the line lengths from Python).
_Checked = tuple[list[KnownEvent], "bytes | list[int]"]


def _check_native(whole: Lines, base: int) -> _Checked | None:
    """Decode the lines in this thread while C checks them in another (it lets go of the GIL)."""
    assert native_lines is not None
    checked: list[tuple[int, bytes, bool]] = []

    def check() -> None:
        checked.append(native_lines.check_lines(whole, base))

    worker = None
    if len(whole) >= _OVERLAP_MIN:
        worker = threading.Thread(target=check, name="wren-line-check", daemon=True)
        worker.start()
    else:
        check()
    try:
        decoded: list[KnownEvent] = _decoder.decode_lines(whole)
    except (msgspec.DecodeError, RecursionError):
        return None
    finally:
        if worker is not None:
            worker.join()
    if not checked:
        return None  # the check itself failed (out of memory): the slow path says what it can
    count, ends, every_line = checked[0]
    # Every line is ours and clean, and decode_lines (which skips blank lines) saw each of them.
    if not every_line or count != len(decoded):
        return None
    return decoded, ends


def _check_python(whole: Lines) -> _Checked | None:
    whole = bytes(whole)
    if b"\x00" in whole or b"\r" in whole:
        return None
    lines = whole.splitlines(keepends=True)
    n = len(lines)
    # A line of 1 or 2 bytes more than the suffix checked below cannot decode as an object, so
    # decode_lines refuses every line parse_line would not check for a CRC.
    tails: list[bytes] = list(map(_cut, lines, repeat(_TAIL)))
    expected = _crc_values(b"".join(tails), n)
    if expected is None:
        return None
    try:
        decoded: list[KnownEvent] = _decoder.decode_lines(whole)
    except (msgspec.DecodeError, RecursionError):
        return None
    if len(decoded) != n:
        return None  # decode_lines skips blank lines
    # crc32(A + T) == crc32(T, crc32(A)) and crc32(T, x) is one-to-one in x: so this is crc32(A) == expected
    if list(map(zlib.crc32, lines)) != list(map(zlib.crc32, tails, expected)):
        return None
    return decoded, list(map(len, lines))


# Each tail is ,"crc":"hhhhhhhh"}\n; columns of the joined tails are taken with one strided slice each.
_TAIL_COLUMNS = tuple((k, _CRC_MARK[k : k + 1]) for k in range(8)) + tuple(
    (k, b'"}\n'[k - 16 : k - 15]) for k in range(16, 19)
)
# Lowercase hex digits to their value, anything else to 0xff (uppercase or other forms go line by line).
_NIBBLE = bytes(int(chr(b), 16) if chr(b) in "0123456789abcdef" else 0xFF for b in range(256))


def _crc_values(tails: bytes, n: int) -> list[int] | None:
    """The CRC each of `n` joined line tails carries, or None unless every tail is our exact suffix.

    Works column by column over all lines at once: a line's 8 hex digits become 4 bytes by big-integer
    arithmetic on whole columns (no carries: each byte is hi * 16 + lo <= 255), then one array.
    """
    width = _CRC_SUFFIX_LEN + 1
    if len(tails) != width * n:
        return None  # some line is shorter than the suffix
    for k, byte in _TAIL_COLUMNS:
        if tails[k::width] != byte * n:
            return None
    nibbles = [tails[k::width].translate(_NIBBLE) for k in range(8, 16)]
    if any(b"\xff" in column for column in nibbles):
        return None
    packed = bytearray(4 * n)
    for j in range(4):
        hi, lo = int.from_bytes(nibbles[2 * j], "big"), int.from_bytes(nibbles[2 * j + 1], "big")
        packed[j::4] = ((hi << 4) | lo).to_bytes(n, "big")
    values = array("I", packed)  # 4 bytes on every platform CPython builds for; else the CRCs mismatch: slow path
    if sys.byteorder == "little":
        values.byteswap()
    return values.tolist()


_SEQ = attrgetter("seq")
# operator.getitem, typed for the byte slices it takes here (map() calls it from C)
_cut = cast(Callable[[bytes, slice], bytes], getitem)
_TS = attrgetter("ts")
# The last bytes of a line we wrote: ,"crc":"xxxxxxxx"}\n
_TAIL = slice(-_CRC_SUFFIX_LEN - 1, None)


def _extend(events: list[Event]) -> EventSink:
    return lambda chunk, _lines: events.extend(chunk)


def _pread_exactly(fd: int, length: int, offset: int) -> bytes:
    parts = []
    while length > 0:
        part = os.pread(fd, length, offset)
        if not part:
            break
        parts.append(part)
        length -= len(part)
        offset += len(part)
    return b"".join(parts)


def read_events(path: str | os.PathLike[str]) -> ReadResult:
    """Every event up to the first line that cannot be read, and where and why reading stopped."""
    path = Path(path)
    fd = open_for_reading(path)
    try:
        return _read_fd(fd)
    finally:
        os.close(fd)


def _read_fd(fd: int) -> ReadResult:
    result = ReadResult(events=[])
    events = result.events
    verdict = _scan_fd(fd, _extend(events), result.line_ends)
    result.warnings = verdict.warnings
    if verdict.reason is not None:
        _stop(result, verdict.lines + 1, verdict.good_bytes, verdict.reason, torn=verdict.torn)
    return result


def scan_events(path: str | os.PathLike[str], sink: EventSink) -> ReadVerdict:
    """Read a journal exactly as `read_events` does, but hand each run of good events to `sink` and keep none.

    The verdict (stop line, offset, reason, torn, warnings) is the one `read_events` gives; memory
    holds one chunk of the file at a time, whatever the journal's size.
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
    if lines.reason is not None:
        # NUL bytes to the end of the file are a crash's zero-filled tail, not corruption
        after = lines.offset + len(lines.bad_line) + 1
        torn = b"\x00" in lines.bad_line and _only_nul_after(fd, after)
        _stop(verdict, lines.lineno + 1, lines.offset, lines.reason, torn=torn)
    elif partial:
        _stop(verdict, lines.lineno + 1, lines.offset, "the last line was cut short (no newline at its end)", torn=True)
    return verdict


@dataclass
class HeadAndTail:
    """The first and last events of a journal, read without reading its middle."""

    head: list[Event]
    tail: list[Event]
    size: int


def read_head_and_tail(path: str | os.PathLike[str], window: int = 1 << 16) -> HeadAndTail | None:
    """The whole lines in the first and last `window` bytes, or None when either has a problem.

    None (a line that cannot be read, or a torn end) means: read the whole journal to say why.
    The tail's first line is read with no seq before it, so only its own order is checked.
    """
    fd = open_for_reading(Path(path))
    try:
        size = os.fstat(fd).st_size
        head = os.pread(fd, window, 0)
        head_lines, head_events = _Lines(), list[Event]()
        cut = head.rfind(b"\n") + 1
        if cut == 0 or not head_lines.take(head[:cut], head_events):
            return None
        start = max(size - window, head_lines.offset)
        if start == size:
            return HeadAndTail(head_events, [], size)
        tail = os.pread(fd, size - start, start)
        if not tail.endswith(b"\n"):
            return None
        if start > 0 and os.pread(fd, 1, start - 1) != b"\n":
            tail = tail[tail.find(b"\n") + 1 :]  # the window began inside a line
        tail_events: list[Event] = []
        if tail and not _Lines().take(tail, tail_events):
            return None
        return HeadAndTail(head_events, tail_events, size)
    finally:
        os.close(fd)


def _only_nul_after(fd: int, offset: int) -> bool:
    while True:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            return True
        if chunk.strip(b"\x00\n"):
            return False
        offset += len(chunk)


def _stop(result: ReadResult | ReadVerdict, lineno: int, offset: int, reason: str, *, torn: bool) -> None:
    result.stopped_at_line = lineno
    result.stopped_at_offset = offset
    result.reason = reason
    result.torn = torn


@dataclass
class TailBatch:
    events: list[Event]
    # True when the file shrank or was replaced and reading started over from its beginning.
    restarted: bool = False
    # Set while a line cannot be read; the Tail reads no further past it.
    stopped_at_line: int | None = None
    reason: str | None = None
    # Gaps in seq among this batch's events.
    warnings: list[str] = field(default_factory=list)


class Tail:
    """Incremental reading: each `read()` returns the whole new lines since the last one.

    A partial last line is left for the next read. A file that shrank or whose inode changed is
    read again from the start, and the batch says so. A line that cannot be read stops the Tail
    there; each later read looks at that line again, because a writer reopening the journal
    moves a torn tail aside and appends in its place.
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
        return self._lines.lineno

    @property
    def prev_seq(self) -> int:
        return self._lines.prev_seq

    @property
    def stopped_at_line(self) -> int | None:
        return self._lines.stopped_at_line

    @property
    def reason(self) -> str | None:
        return self._lines.reason

    def read(self) -> TailBatch:
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
            self._lines.reason, self._lines.bad_line = None, b""
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

        if self._lines.reason is not None:
            return self._batch(False, lambda events: None)
        return self._batch(False, take)

    def _batch(self, restarted: bool, fill: Callable[[list[Event]], object]) -> TailBatch:
        batch = TailBatch(events=[], restarted=restarted)
        self._lines.warnings = batch.warnings
        fill(batch.events)
        batch.stopped_at_line, batch.reason = self._lines.stopped_at_line, self._lines.reason
        return batch
