"""Forking: a new session from a clean point of a parent, by a byte-prefix copy; the parent untouched."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from .. import portable
from ..portable import O_BINARY, O_CLOEXEC, O_NOFOLLOW, pread
from . import _fastpath
from .calls import CallTracker
from .errors import JournalError
from .events import Compaction, Event, Fork, KnownEvent
from .reader import _Lines, open_for_reading, read_events, scan_events
from .store import SUFFIX, is_session_id, new_session_id, session_id_of
from .targets import replaceable
from .verdict import Stop
from .writer import FileOps, _ensure_dir, _write_all, encode_line, now_ts

_PREVIEW = 60


@dataclass(frozen=True)
class ForkPoint:
    seq: int
    role: str
    preview: str
    # The seq of the compaction just before this point (set on the first point after one): a fork from
    # here on rebuilds its summary, a fork before it the full messages.
    compaction: int = 0

    def __str__(self) -> str:
        return f"{self.seq}  {self.role}: {self.preview}{_compacted(self)}"


def _compacted(point: ForkPoint) -> str:
    return f"  · after the compaction at seq {point.compaction}" if point.compaction else ""


@dataclass(frozen=True)
class Forked:
    id: str
    path: Path
    parent: str
    at_seq: int


def fork_listing(points: list[ForkPoint]) -> list[str]:
    """One line per point, the seqs right-aligned so the roles line up past seq 9."""
    width = max((len(str(p.seq)) for p in points), default=1)
    return [f"{p.seq:>{width}}  {p.role}: {p.preview}{_compacted(p)}" for p in points]


class NotAForkPoint(JournalError):
    """A fork was asked for at a seq that is not a clean point.

    Attributes:
        seq: The seq asked for.
        points: The clean points there are (up to where the journal can be read).
        stop: Where reading the journal stops and why, when it does (a seq past it has no point).
        last_seq: The seq of the last line that could be read (0: none).
    """

    def __init__(
        self, path: Path, seq: int, points: list[ForkPoint], stop: Stop | None = None, last_seq: int = 0
    ) -> None:
        listing = (
            "\n".join(f"  {line}" for line in fork_listing(points)) or "  (none: the journal has no clean point yet)"
        )
        super().__init__(
            f"{path}: seq {seq} is not a clean fork point (only after a user message, or an assistant "
            f"message with no tool calls, with no tool call open). Valid points:\n{listing}"
        )
        self.path, self.seq, self.points, self.stop, self.last_seq = path, seq, points, stop, last_seq

    @property
    def past_stop(self) -> bool:
        """The seq asked for lies past where reading stops: it is not in what can be read at all."""
        return self.stop is not None and self.seq > self.last_seq


def preview(text: str, width: int = _PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def fork_points(events: Iterable[Event]) -> list[ForkPoint]:
    """The clean points of a journal's events, where a fork may start (see `calls.CallTracker.is_clean_point`).

    Args:
        events: The journal's events, in order (a list or any iterable: nothing is kept).

    Returns:
        One point per user message or tool-free assistant message with no call open, in order.
    """
    seen: list[int] = []

    def watched(events: Iterable[Event]) -> Iterator[Event]:
        for event in events:
            if type(event) is Compaction:
                seen.append(event.seq)
            yield event

    points: list[ForkPoint] = []
    marked = 0
    for m in CallTracker(states=False).clean_points(watched(events)):
        compaction = seen[-1] if seen and seen[-1] != marked else 0
        marked = seen[-1] if seen else 0
        points.append(ForkPoint(m.seq, m.message.role, preview(m.message.content), compaction))
    return points


def fresh_journal(folder: Path) -> tuple[str, Path, Path]:
    """A new session id whose journal name nothing holds in `folder` (not even a link), with the two paths.

    Returns:
        The id, the journal's path, and the temporary name it is written under first.
    """
    while True:
        new_id = new_session_id()
        final = folder / f"{new_id}{SUFFIX}"
        if not os.path.lexists(final):
            return new_id, final, folder / f".{new_id}{SUFFIX}.tmp"


def put_in_place(tmp: Path, final: Path, ops: FileOps) -> None:
    """Give a written, fsynced new journal its name, then fsync the folder; a fork never replaces anything.

    What is at the name is looked at first (`targets.replaceable`): anything that came to be there
    since the name was chosen is left as it is, and the new journal removed.

    Raises:
        NotReplaceable, JournalError: something is at `final` now.
    """
    try:
        if replaceable(final, advice="a fork never replaces anything; nothing was written") is not None:
            raise JournalError(f"{final}: a file of that name appeared while the fork was written; nothing was written")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    ops.rename(tmp, final)
    ops.fsync_dir(final.parent)


def fork(
    parent: str | os.PathLike[str],
    seq: int,
    *,
    folder: Path | None = None,
    ops: FileOps | None = None,
    new_id: str | None = None,
    workspace: str | None = None,
    snapshot: str | None = None,
) -> Forked:
    """Copy the parent's bytes through the line of `seq` into a new journal and record the fork.

    The copy goes to a temporary name, is fsynced, then renamed and the folder fsynced, so a crash
    leaves either no fork or a whole one. Seq numbers are kept; the parent is only read. The
    prefix is copied as the reading checks it, in a second thread, so the copy and its write-back
    to disk overlap the reading instead of following it.

    Args:
        parent: The journal to fork.
        seq: A clean point of it (`fork_points`): the new journal ends with that event, then a
            `fork` event.
        folder: Where the new journal goes (the parent's folder by default).
        new_id: The new session's id (a new one by default).
        workspace: The folder the fork's files were written to, recorded in its fork event.
        snapshot: The snapshot of the files at `seq`, recorded in its fork event.

    Returns:
        The new session's id and path, the parent's id and the seq.

    Raises:
        NotAForkPoint: `seq` is not a clean point (or is past where the parent can be read); it
            lists the points there are.
        JournalError: the parent cannot be read, or shrank while it was copied.
        OSError: the new journal cannot be written (the caller names the folder).
    """
    parent, ops = Path(parent), ops or FileOps()
    folder = folder or parent.parent
    parent_id = session_id_of(parent)
    src = open_for_reading(parent)
    try:
        if new_id is None:
            new_id, final, tmp = fresh_journal(folder)
        else:
            final = folder / f"{new_id}{SUFFIX}"
            tmp = folder / f".{new_id}{SUFFIX}.tmp"
        with _new_journal(tmp, final, ops) as out:
            copier = _Copier(src, out, ops)
            try:
                sure, prefix_len = _scanned_line_end(src, seq, copier.copy_to)
                if not sure:
                    prefix_len = _clean_line_end(parent, seq, copier.copy_to)
            finally:
                copied = copier.stop()
            if prefix_len is None:
                read = read_events(parent)
                raise NotAForkPoint(parent, seq, fork_points(read.events), read.stop, read.last_seq)
            _copy_range(src, out, copied, prefix_len, ops)
            marker = Fork(from_=parent_id, at_seq=seq, workspace=workspace, snapshot=snapshot)
            _write_all(ops, out, encode_line(marker, seq + 1, now_ts()))
    finally:
        os.close(src)
    return Forked(new_id, final, parent_id, seq)


@contextlib.contextmanager
def _new_journal(tmp: Path, final: Path, ops: FileOps) -> Iterator[int]:
    """A new journal written at `tmp`: fsynced, closed and put in place at `final` when the block ends, closed
    and removed when it raises; so a crash or an error leaves either no fork or a whole one."""
    out = ops.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY | O_CLOEXEC, 0o600)
    try:
        yield out
        ops.fsync(out)
    except BaseException:
        ops.close(out)
        tmp.unlink(missing_ok=True)
        raise
    ops.close(out)
    put_in_place(tmp, final, ops)


def fork_from_lines(
    lines: Iterable[bytes | memoryview], seq: int, *, parent: str, folder: Path, ops: FileOps | None = None
) -> Forked:
    """A new journal from a parent held elsewhere (read over the network): its lines through `seq`, then a fork event.

    The same fork as `fork`, from bytes instead of a file: each line is checked as the reader checks
    a line of a file, `seq` must be a clean point, and the new journal is written to a temporary
    name, fsynced, renamed and the folder fsynced, so a crash leaves either no fork or a whole one.

    Args:
        lines: The parent's bytes from its first line on, in pieces that each end with a newline
            (read until the fork line; what comes after it is never asked for).
        seq: A clean point of the parent: the new journal ends with that event, then a `fork` event.
        parent: The parent's session id, recorded in the fork event.
        folder: Where the new journal goes (made, 0700, if it is not there).

    Returns:
        The new session's id and path, the parent's id and the seq.

    Raises:
        NotAForkPoint: `seq` is not a clean point (or is past where the lines can be read); it lists
            the points there are.
        JournalError: `parent` is not a session id, or a piece does not end with a newline.
        OSError: the new journal cannot be written (the caller names the folder).
    """
    if not is_session_id(parent):
        raise JournalError(f"{parent!r} is not a session id (expected s-YYYYMMDD-HHMMSS-xxxx)")
    ops = ops or FileOps()
    _ensure_dir(folder, ops)
    new_id, final, tmp = fresh_journal(folder)
    with _new_journal(tmp, final, ops) as out:
        found = _write_prefix(lines, seq, out, ops, parent)
        if isinstance(found, NotAForkPoint):
            raise found
        _write_all(ops, out, encode_line(Fork(from_=parent, at_seq=seq), seq + 1, now_ts()))
    return Forked(new_id, final, parent, seq)


def _write_prefix(
    pieces: Iterable[bytes | memoryview], seq: int, out: int, ops: FileOps, parent: str
) -> NotAForkPoint | None:
    """Check the pieces' lines and write them to `out` through the line of `seq`; why not, if it is no clean point.

    On a refusal the rest is read on (nothing more written) for the clean points it lists.
    """
    checked = _Lines()
    calls = CallTracker(states=False)
    points: list[ForkPoint] = []
    refused = False
    for piece in pieces:
        data = bytes(piece)
        if not data:
            continue
        if not data.endswith(b"\n"):
            raise JournalError("a piece of the parent's lines does not end with a newline")
        events: list[Event] = []
        start = checked.offset
        checked.take(data, events)
        end = 0  # in this piece: just past the line of the event looked at
        for event in events:
            end = data.index(b"\n", end) + 1
            if calls.is_clean_point(event):
                points.append(ForkPoint(event.seq, event.message.role, preview(event.message.content)))
                if event.seq == seq and not refused:
                    _write_all(ops, out, data[:end])
                    return None
            calls.add(event)
            refused = refused or event.seq >= seq
        if not refused:
            _write_all(ops, out, data[: checked.offset - start])
        if checked.stop is not None:
            break
    return NotAForkPoint(Path(parent), seq, points, checked.stop)


class _Copier:
    """Copies the prefix that has been read and checked so far, in a thread of its own.

    Only with the real FileOps (a recording one in tests gets the plain copy after the reading).
    Every so often it also fdatasyncs, so the disk writes while the reading goes on and the last
    fsync has little left to do. stop() waits for it and says how far it copied.
    """

    _SYNC_EVERY = 32 << 20

    def __init__(self, src: int, dst: int, ops: FileOps) -> None:
        self._src, self._dst, self._ops = src, dst, ops
        self._wanted = self._copied = self._synced = 0
        self._stopping = False
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        if type(ops) is FileOps:
            self._thread = threading.Thread(target=self._run, name="wren-fork-copy", daemon=True)
            self._thread.start()

    def copy_to(self, offset: int) -> None:
        if self._thread is not None:
            with self._cond:
                self._wanted = offset
                self._cond.notify()

    def stop(self) -> int:
        if self._thread is None:
            return 0
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._copied

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    while self._wanted <= self._copied and not self._stopping:
                        self._cond.wait()
                    wanted, stopping = self._wanted, self._stopping
                if stopping:
                    return  # what is left is copied by the caller, which knows where the prefix ends
                _copy_range(self._src, self._dst, self._copied, wanted, self._ops)
                self._copied = wanted
                if self._copied - self._synced >= self._SYNC_EVERY:
                    portable.durable_sync(self._dst)
                    self._synced = self._copied
        except BaseException as exc:  # handed to the caller by stop()
            self._error = exc


_decoder = msgspec.json.Decoder(KnownEvent)
_SCAN_CHUNK = 1 << 20  # small enough that the C check finds the bytes preadv left in the cache


def _scanned_line_end(src: int, seq: int, checked_to: Callable[[int], object]) -> tuple[bool, int | None]:
    """`_clean_line_end` at the speed of the C line check, when it can be sure; (False, None) when it cannot.

    Every line through `seq`'s is checked as the reader's C check does (our CRC, no NUL or CR) and
    must start as the writer starts a line, with the seq after the one before. Of the lines that
    touch tool calls, `scan_calls` reads the ids a plain message asks for or answers and hands the
    rest (and the line of `seq`) to be decoded; no other line is decoded. At any other line (a gap
    in seq, damage, a line no Wren writes) it is not sure: `_clean_line_end` reads the journal again
    and says what the reader says.
    """
    scan = getattr(_fastpath.native_lines, "scan_calls", None)
    if scan is None or not portable.HAS_PREADV:
        return False, None
    calls = CallTracker(states=False)
    buf = bytearray(_SCAN_CHUNK)
    view = memoryview(buf)
    offset = have = prev = 0
    while True:
        if have == len(buf):  # a line longer than the buffer: room for it (memory holds one line, as reading does)
            view.release()
            buf += bytes(len(buf))
            view = memoryview(buf)
        got = os.preadv(src, [view[have:]], offset + have)
        if got == 0:
            return False, None  # the journal ends (or stops in a partial line) before the line of seq
        have += got
        try:
            end, prev, marks, lines, reached = scan(view[:have], prev, seq)
            decoded: list[KnownEvent] = _decoder.decode_lines(lines)
        except (ValueError, RecursionError):  # msgspec.DecodeError, or an id that is not UTF-8
            return False, None
        if len(decoded) != marks.count(None):
            return False, None
        if buf.find(b'"type":"rewind"', 0, end) >= 0:
            return False, None  # a rewind up to here changes which calls are open; the scan reads no such line
        if reached:
            last = decoded.pop()
            marks.pop()
        events = iter(decoded)
        calls.follow_ids([next(events) if mark is None else mark for mark in marks])
        if reached:
            return True, offset + end if last.seq == seq and calls.is_clean_point(last) else None
        if buf.find(b"\n", end, have) >= 0:
            return False, None  # the check stopped at a whole line: the reader says why
        rest = bytes(view[end:have])
        view[: len(rest)] = rest
        offset, have = offset + end, len(rest)
        if end:
            checked_to(offset)


class _Reached(Exception):
    """The fork line has been read and checked: nothing after it can change the fork."""


def _clean_line_end(parent: Path, seq: int, checked_to: Callable[[int], object] | None = None) -> int | None:
    """Where the line of `seq` ends, if it reads cleanly and is a clean point; None if not.

    The journal is streamed and no event is kept: only the calls still open and the bytes read.
    `checked_to` hears how far the journal has been read and found good, before `seq` is reached.
    """
    calls = CallTracker(states=False)  # only whether a call is open decides a clean point
    offset = 0
    found: list[int] = []

    def take(events: list[Event], lines: bytes | memoryview) -> None:
        nonlocal offset
        if events[-1].seq < seq:
            calls.feed(events)  # the whole run comes before the fork line
            offset += len(lines)
            if checked_to is not None:
                checked_to(offset)
            return
        for i, event in enumerate(events):  # the fork line is in this run: it raises _Reached
            if event.seq >= seq:
                if event.seq == seq and calls.is_clean_point(event):
                    found.append(_line_end(bytes(lines), i) + offset)
                raise _Reached
            calls.add(event)

    with contextlib.suppress(_Reached):
        scan_events(parent, take)
    return found[0] if found else None


def _line_end(lines: bytes, index: int) -> int:
    """Just past the newline of line `index` (from 0) in a run of whole lines."""
    end = -1
    for _ in range(index + 1):
        end = lines.index(b"\n", end + 1)
    return end + 1


def _copy_range(src: int, dst: int, start: int, end: int, ops: FileOps) -> None:
    """Append the parent's bytes [start, end) to dst: in the kernel where it can, else through a buffer."""
    if type(ops) is FileOps:
        if portable.copy_range(src, dst, start, end) < end:
            raise JournalError("the parent journal shrank while it was being forked")
        return
    copied = start
    while copied < end:
        chunk = pread(src, min(1 << 20, end - copied), copied)
        if not chunk:
            raise JournalError("the parent journal shrank while it was being forked")
        _write_all(ops, dst, chunk)
        copied += len(chunk)
