"""What the systems Wren runs on do differently, as named operations, each with its fallback.

Nothing else in the package asks `hasattr(os, ...)` or names a call one system lacks: it calls these.
Each fallback is chosen by the feature being there (a name in `os`, `signal`, a module that imports),
not by `sys.platform`, so a system is served by what it has. tests/test_simulated_windows.py runs the
reading commands with Windows' import surface simulated on Linux (tests/simulated_windows/).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from types import FrameType, ModuleType

# ---------------------------------------------------------------------------------------------------
# Windows: what CPython there lacks of POSIX (issue #33, the Windows half)
# ---------------------------------------------------------------------------------------------------

# `open()` flags, 0 where the system has none. What each guards, and how it is kept without it:
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
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
O_BINARY: int = getattr(os, "O_BINARY", 0)


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


# One lock for every descriptor read at an offset without pread: the seek and the read that follows it
# are one step, whatever thread asks.
_positioned = threading.Lock()


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


def _module(name: str) -> ModuleType | None:
    try:
        return __import__(name)
    except ImportError:
        return None


# POSIX file locks and descriptor flags (absent on Windows): the agent's one-writer lock needs them.
fcntl: ModuleType | None = _module("fcntl")


def access_mode(fd: int) -> int | None:
    """How `fd` is open: os.O_RDONLY, os.O_WRONLY or os.O_RDWR; None where the system cannot say (no fcntl).

    Raises:
        OSError: `fd` is not an open descriptor.
    """
    if fcntl is None:
        return None
    return int(fcntl.fcntl(fd, fcntl.F_GETFL)) & _ACCMODE


_ACCMODE: int = getattr(os, "O_ACCMODE", 3)  # 3: O_RDONLY 0, O_WRONLY 1, O_RDWR 2 on every system

# Processes: a fork (a copy of this process, its modules loaded) and process groups (a command and
# all it starts, stopped as one). Windows has neither.
CAN_FORK: bool = hasattr(os, "fork")
# A child given a descriptor by its number (subprocess's pass_fds): POSIX's process creation only.
PASS_FDS: bool = _module("_posixsubprocess") is not None
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

    With setitimer (POSIX), a SIGALRM every interval. Without it (Windows), a timer thread trips a
    signal handler in the main thread through `_thread.interrupt_main`; SIGTERM's handler is used, as
    Windows never delivers a real SIGTERM, and one that came (elsewhere) is passed on to the handler
    that was there. Neither runs outside the main thread, or where someone else's handler is set:
    there it yields False and `tick` never runs.
    """
    timer = getattr(signal, "setitimer", None)
    sig = getattr(signal, "SIGALRM", None) if timer is not None else signal.SIGTERM
    if (
        sig is None
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(sig) not in (signal.SIG_DFL, None)
    ):
        yield False
        return
    ours = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        if timer is None and not ours.is_set():
            _pass_on(sig)  # a real SIGTERM, not a tick
            return
        ours.clear()
        tick()

    previous = signal.signal(sig, handler)
    if timer is not None:
        timer(signal.ITIMER_REAL, interval, interval)
        try:
            yield True
        finally:
            timer(signal.ITIMER_REAL, 0)
            signal.signal(sig, previous)
        return
    import _thread

    done = threading.Event()

    def trip() -> None:
        while not done.wait(interval):
            ours.set()
            _thread.interrupt_main(sig)

    ticker = threading.Thread(target=trip, name="wren-ticks", daemon=True)
    ticker.start()
    try:
        yield True
    finally:
        done.set()
        ticker.join()
        ours.clear()
        signal.signal(sig, previous)


def _pass_on(sig: signal.Signals) -> None:
    signal.signal(sig, signal.SIG_DFL)
    signal.raise_signal(sig)


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
    return (
        f"the agent needs {', '.join(missing)}, which this system does not have: run it in WSL "
        "(Windows Subsystem for Linux); every reading command (watch, ls, log, search, export, fork, diff) works here"
    )
