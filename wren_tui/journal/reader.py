"""Reading a journal: every whole, valid line up to the first one that is not, and why it stopped.

A torn last line is the normal shape of a crash: it ends the journal. A bad line in the middle is
corruption: it ends the journal too, and is reported as such. Nothing is ever skipped or repaired.
"""

from __future__ import annotations

import os
import stat
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from .events import KNOWN_TYPES, Event, KnownEvent, UnknownEvent

_decoder = msgspec.json.Decoder(KnownEvent)
_raw_decoder = msgspec.json.Decoder(dict)
_CRC_MARK = b',"crc":"'
# ,"crc":"xxxxxxxx"}  -> 8 + 8 + 2 bytes at the end of a line we wrote
_CRC_SUFFIX_LEN = 18
_CHUNK = 1 << 20


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


class LineError(Exception):
    """One line cannot be read; the message is the reason a person reads."""


def parse_line(line: bytes, prev_seq: int) -> Event:
    """Decode one whole line (without its newline) that must follow an event with `prev_seq`."""
    if b"\x00" in line:
        raise LineError("it holds NUL bytes (the tail of an interrupted write)")
    if line.endswith(b"\r"):
        line = line[:-1]
    crc_ok = _check_crc(line)
    if crc_ok is False:
        raise LineError("its CRC does not match its bytes (the line was changed after it was written)")
    try:
        event: Event = _decoder.decode(line)
    except msgspec.DecodeError as exc:
        event = _decode_other(line, exc)
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
        raw = _raw_decoder.decode(line)
    except msgspec.DecodeError:
        raise LineError("it is not a JSON object") from None
    kind = raw.get("type")
    if kind is None:
        raise LineError("it has no type") from None
    if not isinstance(kind, str):
        raise LineError("its type is not a string") from None
    if kind in KNOWN_TYPES:
        raise LineError(f"a {kind} event that does not fit format 1: {exc}") from None
    seq, ts = raw.pop("seq", None), raw.pop("ts", None)
    raw.pop("type")
    raw.pop("crc", None)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise LineError("it has no seq")
    if not isinstance(ts, str):
        raise LineError("it has no ts")
    return UnknownEvent(seq=seq, ts=ts, type=kind, fields=raw)


def open_for_reading(path: Path) -> int:
    """A read-only descriptor on a journal, or a JournalError that says what is wrong."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
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


def _segments(fd: int, start: int = 0) -> Iterator[tuple[bytes, int, bool]]:
    """(line without newline, offset of its start, has newline), streamed in large chunks."""
    offset = start
    rest = b""
    while True:
        chunk = os.pread(fd, _CHUNK, offset + len(rest))
        if not chunk:
            break
        buf = rest + chunk if rest else chunk
        pos = 0
        while True:
            nl = buf.find(b"\n", pos)
            if nl < 0:
                break
            yield buf[pos:nl], offset + pos, True
            pos = nl + 1
        offset += pos
        rest = buf[pos:]
    if rest:
        yield rest, offset, False


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
    events, ends = result.events, result.line_ends
    prev_seq = 0
    for lineno, (line, offset, whole) in enumerate(_segments(fd), start=1):
        if not whole:
            _stop(result, lineno, offset, "the last line was cut short (no newline at its end)", torn=True)
            return result
        try:
            event = parse_line(line, prev_seq)
        except LineError as exc:
            torn = b"\x00" in line and _only_nul_after(fd, offset + len(line) + 1)
            _stop(result, lineno, offset, f"line {lineno}: {exc}", torn=torn)
            return result
        if prev_seq and event.seq != prev_seq + 1:
            result.warnings.append(f"line {lineno}: seq jumps from {prev_seq} to {event.seq}")
        prev_seq = event.seq
        events.append(event)
        ends.append(offset + len(line) + 1)
    return result


def _only_nul_after(fd: int, offset: int) -> bool:
    while True:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            return True
        if chunk.strip(b"\x00\n"):
            return False
        offset += len(chunk)


def _stop(result: ReadResult, lineno: int, offset: int, reason: str, *, torn: bool) -> None:
    result.stopped_at_line = lineno
    result.stopped_at_offset = offset
    result.reason = reason
    result.torn = torn


@dataclass
class TailBatch:
    events: list[Event]
    # True when the file shrank or was replaced and reading started over from its beginning.
    restarted: bool = False
    # Set once a line cannot be read; the Tail reads no further past it.
    stopped_at_line: int | None = None
    reason: str | None = None


class Tail:
    """Incremental reading: each `read()` returns the whole new lines since the last one.

    A partial last line is kept for later. A file that shrank or whose inode changed is read
    again from the start, and the batch says so.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.offset = 0
        self.lineno = 0
        self.prev_seq = 0
        self.stopped_at_line: int | None = None
        self.reason: str | None = None
        self._inode: tuple[int, int] | None = None
        self._partial = b""

    def _reset(self) -> None:
        self.offset = self.lineno = self.prev_seq = 0
        self.stopped_at_line = None
        self.reason = None
        self._partial = b""

    def read(self) -> TailBatch:
        try:
            fd = open_for_reading(self.path)
        except JournalError:
            return TailBatch(events=[])
        try:
            st = os.fstat(fd)
            restarted = False
            inode = (st.st_dev, st.st_ino)
            if self._inode is not None and (inode != self._inode or st.st_size < self.offset + len(self._partial)):
                self._reset()
                restarted = True
            self._inode = inode
            batch = TailBatch(events=[], restarted=restarted)
            if self.reason is None:
                self._read_new(fd, batch)
            batch.stopped_at_line, batch.reason = self.stopped_at_line, self.reason
            return batch
        finally:
            os.close(fd)

    def feed(self, data: bytes) -> TailBatch:
        """Read lines from bytes handed in directly (the same rules as `read`)."""
        batch = TailBatch(events=[])
        if self.reason is None:
            self._take(self._partial + data, batch)
        batch.stopped_at_line, batch.reason = self.stopped_at_line, self.reason
        return batch

    def _read_new(self, fd: int, batch: TailBatch) -> None:
        start = self.offset + len(self._partial)
        while self.reason is None:
            chunk = os.pread(fd, _CHUNK, start)
            if not chunk:
                return
            start += len(chunk)
            self._take(self._partial + chunk, batch)

    def _take(self, buf: bytes, batch: TailBatch) -> None:
        pos = 0
        while True:
            nl = buf.find(b"\n", pos)
            if nl < 0:
                break
            line = buf[pos:nl]
            self.lineno += 1
            try:
                event = parse_line(line, self.prev_seq)
            except LineError as exc:
                self.stopped_at_line = self.lineno
                self.reason = f"line {self.lineno}: {exc}"
                self._partial = b""
                return
            self.prev_seq = event.seq
            batch.events.append(event)
            pos = nl + 1
            self.offset += len(line) + 1
        self._partial = buf[pos:]
