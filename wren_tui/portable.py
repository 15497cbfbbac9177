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

The last section is what Windows lacks of POSIX: a read at an offset (`pread`), the `O_*` flags
(and the behaviour each guards, kept another way), a folder's fsync, a descriptor's access mode,
SIGHUP, a signal timer (`main_thread_ticks`), process groups, and `agent_unsupported`, the one
sentence the agent's commands refuse with there. tests/test_simulated_windows.py runs the reading
commands with Windows' import surface simulated (tests/simulated_windows/sitecustomize.py).
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import os
import signal
import stat
import sys

TYPE_CHECKING = False  # typing's own to the type checker; typing is not imported (`wren --version` runs without it)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import FrameType, ModuleType
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
O_BINARY: int = getattr(os, "O_BINARY", 0)  # Windows' own (see the Windows section below)
O_TEMPORARY: int = getattr(os, "O_TEMPORARY", 0)  # Windows' own: the file is removed when it is closed

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


# Many files' data on stable storage at once: one sync(2) of every filesystem, where it waits for the writes to
# reach the disk (a system with fdatasync and no F_FULLFSYNC: Linux), is far cheaper than a sync per file (2,000
# files: 50 ms, not 5 s). Elsewhere (macOS: its sync only schedules the writes) each file is synced in turn.
_os_sync: Callable[[], None] | None = getattr(os, "sync", None)
SYNC_ALL = "sync" if _os_sync is not None and _fdatasync is not None and _F_FULLFSYNC is None else None


def sync_all() -> None:
    """Every file's written data and every folder's names on stable storage before this returns; only where
    `SYNC_ALL` is set (check it first: elsewhere sync each file with `durable_sync` and each folder with
    `fsync_folder`)."""
    assert _os_sync is not None and SYNC_ALL is not None, "sync(2) does not wait for the disk here"
    _os_sync()


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
        chunk = pread(src, _CHUNK if end is None else min(_CHUNK, end - offset), offset)
        if not chunk:
            break
        view = memoryview(chunk)
        at = None if dst_offset is None else dst_offset + (offset - start)
        while view:
            n = os.write(dst, view) if at is None else pwrite(dst, view, at)
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

    if O_TEMPORARY:
        # Windows: an open file cannot be removed, so the system removes it when it is closed
        # (O_TEMPORARY), from the user's own temporary folder (no other user may open it there).
        path = os.path.join(tempfile.gettempdir(), f"wren-mem-{os.getpid()}-{os.urandom(8).hex()}")
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | O_BINARY | O_TEMPORARY, 0o600)
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

# struct flock: Linux puts the type and whence first; BSD, DragonFly and macOS put the offsets first. The struct
# module is imported where a mark is taken or asked of: not by every command that imports this module.
if sys.platform == "darwin" or "bsd" in sys.platform or sys.platform.startswith("dragonfly"):
    _FLOCK = "qqihh"

    def _pack(kind: int, start: int) -> bytes:
        import struct

        return struct.pack(_FLOCK, start, 1, 0, kind, os.SEEK_SET)

    def _unpack(raw: bytes) -> tuple[int, int]:
        import struct

        _start, _len, pid, kind, _whence = struct.unpack(_FLOCK, raw)
        return kind, pid

else:
    _FLOCK = "hhqqi"

    def _pack(kind: int, start: int) -> bytes:
        import struct

        return struct.pack(_FLOCK, kind, os.SEEK_SET, start, 1, 0)

    def _unpack(raw: bytes) -> tuple[int, int]:
        import struct

        kind, _whence, _start, _len, pid = struct.unpack(_FLOCK, raw)
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


def effective_uid() -> int | None:
    """The process's effective user id; None where the system has none (Windows: files have no owner uid)."""
    geteuid = getattr(os, "geteuid", None)
    return None if geteuid is None else int(geteuid())


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


# ---------------------------------------------------------------------------------------------------
# Windows: what CPython there lacks of POSIX (issue #33, the Windows half)
# ---------------------------------------------------------------------------------------------------

# The `open()` flags above that Windows lacks, and Windows' own O_BINARY (0 elsewhere). What each
# guards, and how it is kept without it:
# - O_CLOEXEC: a descriptor not inherited by a child. Python makes every descriptor it opens
#   non-inheritable anyway (PEP 446; O_NOINHERIT on Windows), so nothing is lost where it is 0.
# - O_NONBLOCK: opening a FIFO put where a file was expected does not wait for a writer. Where it is
#   missing (Windows) a folder cannot hold a FIFO (named pipes live in \\.\pipe\), so nothing waits.
# - O_NOFOLLOW: a symbolic link at the path is refused, not followed. Without it, `open_read_only`
#   looks at the name first (lstat) and checks that what it opened is that file (fstat); a create
#   with O_EXCL refuses whatever is already at the name, a link included, so it needs neither.
# - O_DIRECTORY: what is opened is a folder. Only `fsync_folder` opens folders (see there).
# - O_BINARY: Windows' own, and the one that must be there: without it a descriptor is in text mode
#   there, and a read turns CR LF into LF and stops at Ctrl-Z. 0 elsewhere.


def open_read_only(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor of the file at `path`, never through a symbolic link there.

    With O_NOFOLLOW the system refuses the link. Without it (Windows) the name is looked at first, and
    what was opened is checked to be the file that was looked at: a link there, or swapped in between,
    raises OSError(ELOOP) as O_NOFOLLOW would.

    Raises:
        OSError: as `os.open` does; ELOOP for a link.
    """
    if O_NOFOLLOW:
        return os.open(path, os.O_RDONLY | O_BINARY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    before = os.lstat(path)
    if stat.S_ISLNK(before.st_mode):
        raise OSError(errno.ELOOP, "a symbolic link, not followed", os.fspath(path))
    fd = os.open(path, os.O_RDONLY | O_BINARY | O_CLOEXEC | O_NONBLOCK)
    try:
        after = os.fstat(fd)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise OSError(errno.ELOOP, "the name was replaced while it was opened", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def set_mode(fd: int, path: str | os.PathLike[str], mode: int) -> None:
    """Give the file open at `fd` (a new file Wren made at `path`) the permissions `mode`, whatever the umask.

    `os.fchmod` where the system has it (through the descriptor: nothing swapped in at the name is
    touched). Without it (Windows before Python 3.13) `os.chmod` of the name, where it sets or clears
    only the read-only attribute: the file was just made there with O_EXCL, and is Wren's.
    """
    fchmod = getattr(os, "fchmod", None)
    if fchmod is not None:
        fchmod(fd, mode)
    else:
        os.chmod(path, mode)


# One lock for every descriptor read at an offset without pread: the seek and the read that follows it
# are one step, whatever thread asks.
_positioned = _thread.allocate_lock()


def pread(fd: int, length: int, offset: int) -> bytes:
    """Up to `length` bytes of `fd` from `offset`, its file position left alone where it can be.

    `os.pread` where the system has it. Without it (Windows) a seek and a read under one lock: the
    position moves, which nothing in Wren relies on (every read of a shared descriptor comes here).
    """
    if _os_pread is not None:
        return _os_pread(fd, length, offset)
    with _positioned:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, length)


_os_pread: Callable[[int, int, int], bytes] | None = getattr(os, "pread", None)
_os_pwrite: Callable[[int, bytes | memoryview, int], int] | None = getattr(os, "pwrite", None)


def pwrite(fd: int, data: bytes | memoryview, offset: int) -> int:
    """`os.pwrite`, or (Windows) a seek and a write under the lock `pread` takes: for `copy_range` only."""
    if _os_pwrite is not None:
        return _os_pwrite(fd, data, offset)
    with _positioned:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.write(fd, data)


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    """Make the names in `folder` durable (a rename into it, a new file): fsync of the folder.

    Where a folder cannot be opened as a file (Windows: os.open refuses one), nothing: NTFS logs a
    change of name in its own journal, and there is no descriptor of a folder for Python to sync.
    """
    try:
        fd = os.open(folder, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    except PermissionError:
        if O_DIRECTORY:
            raise
        return  # Windows: a folder has no descriptor
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# POSIX file locks and descriptor flags (absent on Windows): the agent's one-writer lock needs them.
fcntl: ModuleType | None = _fcntl_mod


def access_mode(fd: int) -> int | None:
    """How `fd` is open: os.O_RDONLY, os.O_WRONLY or os.O_RDWR; None where the system cannot say (no fcntl).

    Raises:
        OSError: `fd` is not an open descriptor.
    """
    if fcntl is None:
        return None
    return int(fcntl.fcntl(fd, fcntl.F_GETFL)) & _ACCMODE


_ACCMODE: int = getattr(os, "O_ACCMODE", 3)  # 3: O_RDONLY 0, O_WRONLY 1, O_RDWR 2 on every system

# Processes: a child given a descriptor by its number (subprocess's pass_fds; a system that forks
# does, Windows does not), and process groups (a command and all it starts, stopped as one).
PASS_FDS: bool = hasattr(os, "fork")
PROCESS_GROUPS: bool = hasattr(os, "killpg") and hasattr(os, "setsid")

# The signals that stop the agent or a mirror, the cancel recorded: SIGHUP (a closed terminal) only
# where the system has it (not Windows).
SIGHUP: signal.Signals | None = getattr(signal, "SIGHUP", None)
# SIGTERM and SIGHUP: the two that end a chat as Ctrl+C does, whatever it is doing.
END_SIGNALS: tuple[signal.Signals, ...] = tuple(s for s in (signal.SIGTERM, SIGHUP) if s is not None)
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, *END_SIGNALS)
# SIGHUP's number where it exists, for the exit status 128 + N (1 on every system that has it).
SIGHUP_NUMBER: int = int(SIGHUP) if SIGHUP is not None else 1


@contextlib.contextmanager
def main_thread_ticks(interval: float, tick: Callable[[], None]) -> Iterator[bool]:
    """While inside, `tick()` runs in the main thread every `interval` seconds, also inside C code that
    checks for signals (a `re` match does): an exception it raises stops that code. Yields whether it runs.

    A SIGALRM every interval (setitimer). Without setitimer (Windows) nothing can: a timer thread
    needs the GIL, which a `re` match never lets go of, so it yields False and the caller keeps its
    limit another way (search: the `regex` library's own timeout). So too outside the main thread, or
    where someone else's SIGALRM handler is set.
    """
    import threading  # here: only a regex search needs it

    timer = getattr(signal, "setitimer", None)
    sig = getattr(signal, "SIGALRM", None)
    if (
        timer is None
        or sig is None
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(sig) not in (signal.SIG_DFL, None)
    ):
        yield False
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        tick()

    previous = signal.signal(sig, handler)
    timer(signal.ITIMER_REAL, interval, interval)
    try:
        yield True
    finally:
        timer(signal.ITIMER_REAL, 0)
        signal.signal(sig, previous)


def add_signal_handler(loop: Any, sig: int, callback: Callable[..., object], *args: object) -> Callable[[], None]:
    """`loop.add_signal_handler(sig, callback, *args)`: `callback` runs in the event loop when `sig` comes.
    Returns what takes the handler away again.

    Windows' event loops have no add_signal_handler (NotImplementedError): there `signal.signal` hands
    the signal to the loop (call_soon_threadsafe), which is where Ctrl+C and a SIGTERM from Python's
    own `os.kill` arrive; taking it away puts the handler that was there back.
    """
    try:
        loop.add_signal_handler(sig, callback, *args)
    except NotImplementedError:
        previous = signal.signal(sig, lambda _signum, _frame: loop.call_soon_threadsafe(callback, *args))

        def put_back() -> None:
            signal.signal(sig, previous)

        return put_back

    def remove() -> None:
        loop.remove_signal_handler(sig)

    return remove


def folder_read_only(folder: str | os.PathLike[str]) -> bool:
    """Whether the file system holding `folder` is mounted read-only; False where the system cannot say."""
    statvfs = getattr(os, "statvfs", None)
    if statvfs is None:
        return False
    return bool(statvfs(folder).f_flag & getattr(os, "ST_RDONLY", 1))


def agent_unsupported() -> str | None:
    """Why the agent (`wren run`, `chat`, `resume`, `demo`) cannot run here, in one sentence; None if it can.

    The agent needs a POSIX system: its one-writer lock is an flock (fcntl), each command runs in a
    process group of its own so that a stop ends everything it started (killpg), and commands are
    shell lines (/bin/sh). Windows has none of these; WSL (a Linux) has them all.
    """
    missing = [
        what
        for what, there in (
            ("file locks (fcntl)", fcntl is not None),
            ("process groups", PROCESS_GROUPS),
            ("a POSIX shell (/bin/sh)", os.path.exists("/bin/sh")),
        )
        if not there
    ]
    if not missing:
        return None
    needs = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
    return (
        f"the agent (run, chat, resume, demo) needs {needs}, which this system lacks: run it in WSL (Windows "
        "Subsystem for Linux); the reading commands (watch, ls, log, search, export, otel, fork, diff) work here"
    )
