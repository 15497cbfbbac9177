"""JournalWriter: the one way a line gets into a journal.

One os.write of the whole line on an O_APPEND descriptor, an fdatasync per event by default, an
exclusive flock so there is never a second writer, and no buffered file object anywhere. Before each
line it checks that the journal is still the file it holds, at its path, with only its own bytes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NoReturn, TypeVar

import msgspec

from .. import portable
from ..portable import O_BINARY, O_CLOEXEC, O_NOFOLLOW, pread
from . import _fastpath
from ._watch import PathWatch, always
from .errors import JournalChanged, JournalCorrupt, JournalError, JournalUnusable
from .events import KnownEvent
from .locks import REFRESH_MARK, hold_mark, lock, release
from .reader import EventSink, open_for_reading, scan_events
from .verdict import ReadVerdict

FsyncPolicy = Literal["event", "batch", "none"]
E = TypeVar("E", bound=KnownEvent)

_encoder = msgspec.json.Encoder()
# Bound once: append looks these up per event, and each module attribute lookup costs a little.
_encode, _replace, _lseek, _SEEK_END = _encoder.encode, msgspec.structs.replace, os.lseek, os.SEEK_END
_durable_sync = portable.durable_sync


class FileOps:
    """The system calls the writer and fork make; tests swap in a layer that records or fails."""

    def open(self, path: Path, flags: int, mode: int = 0o600) -> int:
        return os.open(path, flags, mode)

    def write(self, fd: int, data: bytes) -> int:
        return os.write(fd, data)

    def fdatasync(self, fd: int) -> None:
        """The durable sync of an append: fdatasync, or F_FULLFSYNC on macOS (`portable.DURABLE_SYNC`)."""
        _durable_sync(fd)

    def fsync(self, fd: int) -> None:
        """Data and metadata durable (a fork before its rename): fsync, or F_FULLFSYNC on macOS."""
        portable.full_sync(fd)

    def ftruncate(self, fd: int, length: int) -> None:
        os.ftruncate(fd, length)

    def close(self, fd: int) -> None:
        os.close(fd)

    def rename(self, src: Path, dst: Path) -> None:
        os.rename(src, dst)

    def fsync_dir(self, path: Path) -> None:
        portable.fsync_folder(path)  # nothing where a folder cannot be opened (Windows)


_last_second: tuple[int, str] = (-1, "")  # formatting a time costs more than the write it stamps
_last_ms: tuple[int, str] = (-1, "")  # a busy writer stamps many events within one millisecond


def now_ts() -> str:
    """UTC ISO-8601 with milliseconds and Z, as every line's ts."""
    global _last_second, _last_ms
    now_ms = time.time_ns() // 1_000_000
    if _last_ms[0] == now_ms:
        return _last_ms[1]
    second, ms = divmod(now_ms, 1000)
    cached = _last_second
    if cached[0] != second:
        cached = _last_second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    ts = f"{cached[1]}.{ms:03d}Z"
    _last_ms = (now_ms, ts)
    return ts


def encode_line(event: KnownEvent, seq: int, ts: str) -> bytes:
    """The bytes of one journal line: seq, ts, type first, the event's fields, then the CRC."""
    if event.seq or event.ts:
        event = msgspec.structs.replace(event, seq=0, ts="")
    body = _encoder.encode(event)  # unset seq/ts are omitted, so they are not written twice
    return _fastpath.line_builder()(seq, ts.encode("ascii"), body)


def _write_all(ops: FileOps, fd: int, data: bytes) -> None:
    """Write every byte, looping on short writes (a signal or a full pipe can cut one short)."""
    while data:
        n = ops.write(fd, data)
        if n <= 0:
            raise OSError(errno.EIO, "write made no progress")
        data = data[n:]


def _ensure_dir(path: Path, ops: FileOps | None = None) -> None:
    """The journals folder, created 0700 (and its parent fsynced) when it does not exist yet."""
    if path.is_dir():
        return
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    (ops or FileOps()).fsync_dir(path.parent)


def _lstat(path: str) -> os.stat_result | None:
    """What is at a path (a link itself, not followed); None when nothing is."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def what_changed(path: str, held: os.stat_result, seen: os.stat_result | None, size: int) -> str | None:
    """What happened to a journal, from the file a writer holds and what is at its path; None: nothing."""
    if seen is None:
        if held.st_nlink == 0:
            folder = os.path.dirname(path) or "."
            return "the journal and its folder were deleted" if not os.path.isdir(folder) else "the journal was deleted"
        return "the journal was moved away from its path"
    if (seen.st_dev, seen.st_ino) != (held.st_dev, held.st_ino):
        return "the journal was replaced by another file"
    if held.st_nlink == 0:
        return "the journal was deleted"
    if held.st_size > size:
        return f"another program appended {held.st_size - size} bytes to the journal"
    if held.st_size < size:
        return f"another program cut the journal short ({held.st_size} bytes, this run wrote {size})"
    return None


class JournalWriter:
    """Appends events to one journal; the only writer of it while it is open (an exclusive flock).

    Made by `create` (a new journal) or `open` (an existing one), used as a context manager or
    closed with `close`. After any failed write or fsync, or once the journal changed under it
    (`changed`), it refuses every later append: what is on disk is never guessed at.
    """

    def __init__(
        self, path: Path, fd: int, last_seq: int, size: int, fsync: FsyncPolicy, ops: FileOps, *, watched: bool = True
    ) -> None:
        self.path = path
        self.last_seq = last_seq
        self._fd: int | None = fd
        self._size = size
        self._fsync = fsync
        self._ops = ops
        self._unusable: str | None = None
        self._changed = False
        self._synced_seq = last_seq
        # The plain system call when nothing is recording or failing writes: one Python call less per event.
        self._write = os.write if type(ops) is FileOps else ops.write
        self._ts, self._ts_bytes = "", b""
        self._line = _fastpath.line_builder()
        # Where open() moved a torn tail aside (<name>.torn, or .torn.N when that is taken), if it did.
        self.torn_aside: Path | None = None
        self._where = os.path.abspath(path)
        self._watch = PathWatch(self._where, watched=watched)
        self._poll = self._watch.poll
        held: os.stat_result | None = os.fstat(fd)
        try:
            seen = _lstat(self._where)
        except OSError:  # a folder on the path no longer searchable: the first append says so
            held = seen = None
        if held is None or seen is None or (seen.st_dev, seen.st_ino) != (held.st_dev, held.st_ino):
            # Changed before the watch was set: the first append's full check says how.
            self._poll = always

    @classmethod
    def create(
        cls, path: str | os.PathLike[str], *, fsync: FsyncPolicy = "event", ops: FileOps | None = None
    ) -> JournalWriter:
        """A new, empty journal (0600, O_EXCL), locked for this writer; its folder is created 0700 if needed.

        Args:
            path: Where the journal goes; nothing may be there yet.
            fsync: "event" (default): each append is durable on return; "batch": only `sync` and
                `close` fsync; "none": never (benchmarks, tests).
            ops: The system calls, for tests that record or fail them.

        Raises:
            JournalError: something is at `path` already, or it cannot be created.
            JournalLocked: another process locked it between its creation and the lock.
            OSError: the folder cannot be made or written (the caller names the folder).
        """
        path, ops = Path(path), ops or FileOps()
        _ensure_dir(path.parent, ops)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY | O_CLOEXEC
        try:
            fd = ops.open(path, flags, 0o600)
        except FileExistsError:
            raise JournalError(f"{path}: a journal with this name already exists") from None
        try:
            lock(fd, path)
        except BaseException:
            ops.close(fd)
            raise
        ops.fsync_dir(path.parent)
        return cls(path, fd, 0, 0, fsync, ops)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        fsync: FsyncPolicy = "event",
        ops: FileOps | None = None,
        on_events: EventSink | None = None,
        check: Callable[[ReadVerdict], object] | None = None,
        watched: bool = True,
    ) -> JournalWriter:
        """An existing journal, to append to: seq continues, a torn tail is moved aside first.

        The journal is read once, under the lock, keeping no events: `on_events` sees each run of
        them as they are validated (a resume replays from it), then `check` sees the verdict before
        anything is written; an exception from either leaves the file untouched and unlocked.

        Args:
            path: The journal.
            fsync, ops: As for `create`.
            on_events: A sink for the events read (see `reader.EventSink`).
            check: Called with the verdict once everything is read, before anything is written.
            watched: False for a writer of an event or two (`wren rewind`): no inotify watch, each append
                checks the path itself (`PathWatch`).

        Returns:
            The writer; `torn_aside` names the file a torn tail was copied to (<name>.torn), if any.

        Raises:
            JournalError: the journal cannot be opened for reading or appending.
            JournalLocked: another process is writing it.
            JournalCorrupt: a line before its end cannot be read (its `stop` says which and why).
            Whatever `on_events` or `check` raise, with the journal left as it was.
        """
        path, ops = Path(path), ops or FileOps()
        os.close(open_for_reading(path))  # the same checks and errors as reading: missing, link, folder
        try:
            fd = ops.open(path, os.O_WRONLY | os.O_APPEND | O_NOFOLLOW | O_BINARY | O_CLOEXEC)
        except PermissionError:
            raise JournalError(f"{path}: permission denied (cannot append)") from None
        locked = False
        try:
            lock(fd, path)
            locked = True
            result = scan_events(path, on_events or _ignore)
            if result.stop is not None and not result.stop.torn:
                raise JournalCorrupt(path, result.stop)
            if check is not None:
                check(result)
            size = result.good_bytes
            aside = None
            if result.torn:
                aside = _set_torn_aside(path, size, ops)
                ops.ftruncate(fd, size)
                ops.fsync(fd)
            if REFRESH_MARK:
                hold_mark(fd)  # the reading above closed a descriptor of the journal: macOS drops the mark then
        except BaseException:
            if locked:
                release(fd)
            ops.close(fd)
            raise
        writer = cls(path, fd, result.last_seq, size, fsync, ops, watched=watched)
        writer.torn_aside = aside
        return writer

    @property
    def changed(self) -> str | None:
        """What happened to the journal under this writer (why it stopped), or None."""
        return self._unusable if self._changed else None

    @property
    def size(self) -> int:
        """Bytes of whole lines in the journal: where the next line will start."""
        return self._size

    def append(self, event: E) -> E:
        """Write one event, stamped with the next seq and the current time.

        One write of the whole line; with fsync "event" it is on disk when this returns.

        Returns:
            The event as written (its seq and ts set).

        Raises:
            JournalChanged: the journal was deleted, moved, replaced or written by another program
                since the last append; this writer stops for good.
            JournalUnusable: the write or its fsync failed (the partial line is removed when it can
                be), or the writer is closed or already stopped.
        """
        if self._fd is None or self._unusable:
            kind = JournalChanged if self._changed else JournalUnusable
            raise kind(self._unusable or f"{self.path}: the journal writer is closed")
        # A poll(0) and an lseek: the full check runs only when the path's watch fired or the size moved.
        if self._poll(0) or _lseek(self._fd, 0, _SEEK_END) != self._size:
            self.verify()
        seq, ts = self.last_seq + 1, now_ts()
        if ts is not self._ts:
            self._ts, self._ts_bytes = ts, ts.encode("ascii")
        body = _encode(_replace(event, seq=0, ts="") if event.seq or event.ts else event)
        line = self._line(seq, self._ts_bytes, body)
        try:
            written = self._write(self._fd, line)
            if written != len(line):
                _write_all(self._ops, self._fd, line[max(written, 0) :])
        except BaseException as exc:
            self._undo_partial(seq, exc)
        self._size += len(line)
        self.last_seq = seq
        if REFRESH_MARK:
            hold_mark(self._fd)  # again: with process-wide record locks, closing any descriptor of the file drops it
        if self._fsync == "event":
            self.sync()
        return _replace(event, seq=seq, ts=ts)

    def verify(self) -> None:
        """Stop for good (JournalChanged) unless the journal at its path is the file held, with only its bytes."""
        if self._fd is None or self._unusable:
            return
        self._watch.drain()  # before looking, so a change during the look fires again
        try:
            what = what_changed(self._where, os.fstat(self._fd), _lstat(self._where), self._size)
        except OSError as exc:
            what = f"the journal's path could no longer be checked ({exc.strerror or exc})"
        if what is None:
            return
        self._unusable = f"{self.path}: {what} while this run was writing it; the run stopped and records nothing more"
        self._changed = True
        raise JournalChanged(self._unusable)

    def sync(self) -> None:
        """Make every appended event durable. A failed fsync is never retried as if it worked."""
        if self._fd is None or self._synced_seq == self.last_seq or self._unusable:
            return
        try:
            self._ops.fdatasync(self._fd)
        except OSError as exc:
            # After a failed fsync the kernel may have dropped the dirty pages: a retry that
            # succeeds proves nothing, so this writer stops for good.
            self._unusable = (
                f"{self.path}: fsync failed ({exc.strerror or exc}); events after seq {self._synced_seq} may not "
                "be on disk and this journal takes no more appends. Check the disk, then read it with `wren log`."
            )
            raise JournalUnusable(self._unusable) from exc
        self._synced_seq = self.last_seq

    def _undo_partial(self, seq: int, exc: BaseException) -> NoReturn:
        """After a failed or interrupted write: cut the file back to its last whole line."""
        assert self._fd is not None
        why = (exc.strerror or str(exc)) if isinstance(exc, OSError) else type(exc).__name__
        try:
            self._ops.ftruncate(self._fd, self._size)
        except OSError as cut:
            self._unusable = (
                f"{self.path}: writing seq {seq} failed ({why}) and the partial line could not be removed "
                f"({cut.strerror or cut}); this journal takes no more appends. Reopening it moves the torn "
                "line aside."
            )
            raise JournalUnusable(self._unusable) from exc
        if not isinstance(exc, OSError):
            raise exc  # an interrupt, not a failing disk: the journal is whole again and still usable
        # The disk said no (full, or an I/O error): later writes could fail halfway too, so stop here.
        self._unusable = (
            f"{self.path}: writing seq {seq} failed ({why}); the partial line was removed, the journal ends "
            f"at seq {seq - 1} and takes no more appends from this writer. Free space or check the disk, "
            "then reopen it."
        )
        raise JournalUnusable(self._unusable) from exc

    def close(self) -> None:
        if self._fd is None:
            return
        try:
            if self._fsync != "none" and not self._unusable:
                self.sync()
        finally:
            release(self._fd)
            self._ops.close(self._fd)
            self._fd = None
            self._watch.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ignore(events: object, lines: object) -> None:
    pass


def _set_torn_aside(path: Path, good: int, ops: FileOps) -> Path:
    """Copy the torn bytes to <name>.torn (kept, never deleted) before they are truncated away; returns that file."""
    fd = open_for_reading(path)
    try:
        torn = pread(fd, os.fstat(fd).st_size - good, good)
    finally:
        os.close(fd)
    for n in range(1000):
        aside = path.with_name(path.name + (".torn" if n == 0 else f".torn.{n}"))
        try:
            out = ops.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY | O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        try:
            _write_all(ops, out, torn)
            ops.fsync(out)
        except BaseException:
            # A full disk: no empty or partial .torn is left to take the name the tail gets once there is room.
            ops.close(out)
            with contextlib.suppress(OSError):
                os.unlink(aside)
            raise
        ops.close(out)
        ops.fsync_dir(path.parent)
        return aside
    raise JournalError(f"{path}: too many .torn files beside it; move them away first")
