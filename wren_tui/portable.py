"""What the systems Wren runs on do differently, as named operations, each with its portable fallback.

Every call that one system has and another lacks is made here and nowhere else: the durable sync of
an append, copying a byte range in the kernel, an anonymous file in memory, the optional `O_*` open
flags, the record lock that tells a reader a journal's writer is alive, a pipe's size, the CPUs a
process may use, and every read of `/proc`. A fallback is chosen by what the running interpreter
has (`getattr` on `os` and `fcntl`), not by the name of the system, so a system that gains a call
uses it. The one exception is the layout of `struct flock`, which is a fact of the C library's ABI
(BSD and macOS order its fields differently from Linux) and has no feature to test.

The constants say which operation runs here (`DURABLE_SYNC`, `LIVENESS`, ...), for `wren --version`
and the docs. This module imports nothing of Wren's, so every layer may use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import struct
import sys
from collections.abc import Callable, Iterator
from typing import Any

try:
    import fcntl as _fcntl
except ImportError:  # a system without POSIX file control (Windows)
    _fcntl_mod: Any = None
else:
    _fcntl_mod = _fcntl

# --- optional open flags: 0 where the system has none, so `flags | O_X` is always valid ----------

O_NOATIME: int = getattr(os, "O_NOATIME", 0)  # Linux: reading does not set the access time (owner only)
O_PATH: int = getattr(os, "O_PATH", 0)
O_DIRECT: int = getattr(os, "O_DIRECT", 0)
O_TMPFILE: int = getattr(os, "O_TMPFILE", 0)
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)

# --- the durable sync of an append -------------------------------------------------------------

_F_FULLFSYNC: int | None = getattr(_fcntl_mod, "F_FULLFSYNC", None)
_fdatasync = getattr(os, "fdatasync", None)

if _F_FULLFSYNC is not None:
    DURABLE_SYNC = "F_FULLFSYNC"
elif _fdatasync is not None:
    DURABLE_SYNC = "fdatasync"
else:
    DURABLE_SYNC = "fsync"


def _full_fsync(fd: int) -> None:
    """macOS: fsync hands the data to the drive, whose cache may still lose it; F_FULLFSYNC flushes that too."""
    try:
        _fcntl_mod.fcntl(fd, _F_FULLFSYNC)
    except OSError as exc:
        if exc.errno == errno.EBADF:
            raise
        os.fsync(fd)  # a filesystem without it (some network and FUSE mounts): the best it has


# The descriptor's data on stable storage before this returns (the call `DURABLE_SYNC` names).
durable_sync: Callable[[int], None] = (
    _full_fsync if _F_FULLFSYNC is not None else _fdatasync if _fdatasync is not None else os.fsync
)


def full_sync(fd: int) -> None:
    """The file's data and metadata on stable storage: F_FULLFSYNC where the system has it, else fsync."""
    if _F_FULLFSYNC is not None:
        _full_fsync(fd)
    else:
        os.fsync(fd)


# --- a byte range from one descriptor to another -------------------------------------------------

_copy_file_range = getattr(os, "copy_file_range", None)
COPY_RANGE = "copy_file_range" if _copy_file_range is not None else "pread/write"
_CHUNK = 1 << 20


def copy_range(src: int, dst: int, start: int, end: int | None = None, dst_offset: int | None = None) -> int:
    """Copy `src`'s bytes [start, end) (to its end when `end` is None) into `dst`; the offset reached in `src`.

    In the kernel where the system can (copy_file_range), else, or for the rest when it refuses these
    two files (another filesystem, an old kernel), through a buffer. `dst` is written at `dst_offset`
    onwards when given, else at its own position (appended, for an O_APPEND descriptor). Fewer bytes
    than asked are copied only when `src` ends sooner.
    """
    offset = start
    if _copy_file_range is not None:
        out = dst_offset
        try:
            while end is None or offset < end:
                want = _CHUNK * 64 if end is None else end - offset
                n = _copy_file_range(src, dst, want, offset, out)
                if n == 0:
                    break
                offset += n
                if out is not None:
                    out += n
            return offset  # all of it, or the source ended
        except OSError:
            pass  # not between these files: the buffered copy goes on from where it stopped
    while end is None or offset < end:
        chunk = os.pread(src, _CHUNK if end is None else min(_CHUNK, end - offset), offset)
        if not chunk:
            break
        view = memoryview(chunk)
        at = None if dst_offset is None else dst_offset + (offset - start)
        while view:
            n = os.write(dst, view) if at is None else os.pwrite(dst, view, at)
            view = view[n:]
            if at is not None:
                at += n
        offset += len(chunk)
    return offset


# --- an anonymous file -----------------------------------------------------------------------------

_memfd_create = getattr(os, "memfd_create", None)
MEMORY_FILE = "memfd_create" if _memfd_create is not None else "unlinked temporary file"


def memory_file(name: str = "wren") -> int:
    """A read-write descriptor of a new, empty, private file that is gone when its last descriptor closes.

    memfd_create where the system has it (in memory, no name anywhere); else a file made 0600 in a
    folder of its own (0700) under the temporary folder, both removed at once, so no other user
    could open it even while it had a name.
    """
    if _memfd_create is not None:
        fd: int = _memfd_create(name, getattr(os, "MFD_CLOEXEC", 0))
        return fd
    import tempfile  # here: only a system without memfd needs it, and every command imports this module

    folder = tempfile.mkdtemp(prefix="wren-mem-")
    path = os.path.join(folder, name)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        os.unlink(path)
    finally:
        os.rmdir(folder)
    return fd


# --- /proc ----------------------------------------------------------------------------------------

_proc: str | None = "/proc"


def hide_proc() -> None:
    """From now on this process behaves as on a system without /proc (macOS, Windows): the test hook.

    Every read of /proc goes through `proc_path`, so after this each takes its documented fallback.
    """
    global _proc, LIVENESS
    _proc = None
    LIVENESS = _RECORD_LIVENESS


def proc_path(*parts: str | int) -> str:
    """The path of `/proc/PARTS...`; FileNotFoundError where there is no /proc (or it is hidden)."""
    if _proc is None:
        raise FileNotFoundError(errno.ENOENT, "this system has no /proc", "/proc")
    return "/".join((_proc, *map(str, parts)))


def has_proc() -> bool:
    """Whether /proc (Linux's process table) can be read here."""
    return _proc is not None and os.path.isdir(f"{_proc}/self/fd")


def read_proc(*parts: str | int) -> str:
    """The text of a /proc file (e.g. `read_proc("locks")`); OSError where there is none."""
    with open(proc_path(*parts), encoding="ascii", errors="replace") as text:
        return text.read()


def proc_pids() -> list[str]:
    """The ids of every process /proc lists; OSError where there is no /proc."""
    return [entry.name for entry in os.scandir(proc_path()) if entry.name.isdigit()]


def open_files(pid: str, suffix: str) -> Iterator[tuple[os.stat_result, str]]:
    """The files process `pid` holds open whose path ends with `suffix`: (stat, descriptor number).

    Nothing where there is no /proc, or the process is gone or another user's.
    """
    try:
        folder = proc_path(pid, "fd")
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        link = f"{folder}/{name}"
        try:
            if not os.readlink(link).removesuffix(" (deleted)").endswith(suffix):
                continue
            st = os.stat(link)
        except OSError:
            continue
        yield st, name


def open_flags(pid: str, fd: str) -> int | None:
    """The flags process `pid` opened its descriptor `fd` with (from /proc's fdinfo); None if unknown."""
    try:
        with open(proc_path(pid, "fdinfo", fd), encoding="ascii") as info:
            for row in info:
                if row.startswith("flags:"):
                    return int(row.split()[1], 8)
    except (OSError, ValueError):
        return None
    return None


# --- the writer's mark: a record lock a reader can ask about without taking it -------------------

# One byte far past any journal's end. A writer holds a write lock on it for as long as it writes;
# a reader asks F_(OFD_)GETLK whether it could take it, which takes nothing and disturbs nobody.
MARK_OFFSET = 1 << 62
_F_OFD_SETLK: int | None = getattr(_fcntl_mod, "F_OFD_SETLK", None)
_F_OFD_GETLK: int | None = getattr(_fcntl_mod, "F_OFD_GETLK", None)
_F_SETLK: int | None = getattr(_fcntl_mod, "F_SETLK", None)
_F_GETLK: int | None = getattr(_fcntl_mod, "F_GETLK", None)
_F_WRLCK: int = getattr(_fcntl_mod, "F_WRLCK", 1)
_F_UNLCK: int = getattr(_fcntl_mod, "F_UNLCK", 2)

# struct flock: Linux puts the type and whence first; BSD and macOS put the offsets first.
if sys.platform == "darwin" or "bsd" in sys.platform:
    _FLOCK = struct.Struct("qqihh")

    def _pack(kind: int, start: int) -> bytes:
        return _FLOCK.pack(start, 1, 0, kind, os.SEEK_SET)

    def _unpack(raw: bytes) -> tuple[int, int]:
        _start, _len, pid, kind, _whence = _FLOCK.unpack(raw)
        return kind, pid

else:
    _FLOCK = struct.Struct("hhqqi")

    def _pack(kind: int, start: int) -> bytes:
        return _FLOCK.pack(kind, os.SEEK_SET, start, 1, 0)

    def _unpack(raw: bytes) -> tuple[int, int]:
        kind, _whence, _start, _len, pid = _FLOCK.unpack(raw)
        return kind, pid


def _record_calls() -> tuple[int, int, str] | None:
    """(set, get, name): lock records of the open file where the system has them, else of the process."""
    if _F_OFD_SETLK is not None and _F_OFD_GETLK is not None:
        return _F_OFD_SETLK, _F_OFD_GETLK, "F_OFD_GETLK"
    if _F_SETLK is not None and _F_GETLK is not None:
        return _F_SETLK, _F_GETLK, "F_GETLK"
    return None


_RECORD = _record_calls()
_RECORD_LIVENESS = "none" if _RECORD is None else _RECORD[2]
# Process-wide record locks (no F_OFD_*): the process loses its mark when it closes any descriptor of the file.
MARK_PER_PROCESS = _RECORD is not None and _RECORD[2] == "F_GETLK"
# How `wren ls` and the viewer tell a journal's writer is alive: Linux's lock table where there is
# one (it names the writer's pid), else the writer's mark asked of the file.
LIVENESS = "/proc/locks" if os.path.isfile("/proc/locks") else _RECORD_LIVENESS


def hold_mark(fd: int) -> None:
    """Take the writer's mark on the journal open at `fd`, without waiting; BlockingIOError if another holds it.

    Held until the descriptor is closed. On a system with only process-wide record locks (macOS),
    the process also loses it when it closes any other descriptor of the same file: call again
    after that (it is cheap, and taking a mark already held is no error).
    """
    if _RECORD is None:
        return
    try:
        _fcntl_mod.fcntl(fd, _RECORD[0], _pack(_F_WRLCK, MARK_OFFSET))
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            raise BlockingIOError(exc.errno, "another process holds the journal's writer mark") from None
        if exc.errno not in (errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP):
            raise
        # a filesystem without record locks: the flock still keeps one writer; only liveness is lost


def mark_holder(fd: int) -> int | None:
    """Whether some writer holds the mark on the file open at `fd`: its pid, 0 if alive but unnamed, or None.

    Asks without taking anything (F_OFD_GETLK or F_GETLK). Only another open file's (or, with
    process-wide locks, another process's) mark is seen: a process knows its own writers.
    """
    if _RECORD is None:
        return None
    try:
        raw = _fcntl_mod.fcntl(fd, _RECORD[1], _pack(_F_WRLCK, MARK_OFFSET))
    except OSError:
        return None
    kind, pid = _unpack(raw)
    if kind == _F_UNLCK:
        return None
    return pid if pid > 0 else 0


# --- processes and pipes ------------------------------------------------------------------------

HAS_FORK = hasattr(os, "fork")


def after_fork_in_child(fn: Callable[[], object]) -> None:
    """Call `fn` in every child this process forks (nothing where the system cannot fork: Windows)."""
    register = getattr(os, "register_at_fork", None)
    if register is not None:
        register(after_in_child=fn)


HAS_PREADV = hasattr(os, "preadv")
_F_SETPIPE_SZ: int | None = getattr(_fcntl_mod, "F_SETPIPE_SZ", None)


def usable_cpus() -> int:
    """How many CPUs this process may run on (its affinity where the system says, else all of them)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        try:
            return len(affinity(0))
        except OSError:
            pass
    return os.cpu_count() or 1


def widen_pipe(fd: int, size: int) -> None:
    """Ask for a pipe of `size` bytes (Linux: F_SETPIPE_SZ); elsewhere, or past the limit, it stays as it is."""
    if _F_SETPIPE_SZ is None:
        return
    with contextlib.suppress(OSError):
        _fcntl_mod.fcntl(fd, _F_SETPIPE_SZ, size)
