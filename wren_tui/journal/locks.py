"""The one-writer rule: an exclusive flock per journal, and who holds it (asked without taking it).

The writer takes the flock, which keeps a second writer out everywhere, and also the writer's mark
(`portable.hold_mark`: a record lock on one byte far past the end), which a reader can ask about
without taking anything. Who holds a journal is read from Linux's lock table (/proc/locks) where
there is one, since it names the writer's pid; elsewhere (macOS, or /proc hidden) the mark is
asked of the file itself. A process answers for its own writers from what it holds.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from .. import portable
from ..portable import fcntl
from .errors import JournalLocked

_held: set[tuple[int, int]] = set()  # (device, inode) of the journals this process writes
portable.after_fork_in_child(_held.clear)  # a child is not their writer, whatever it inherited
# With process-wide record locks (no F_OFD_*), closing any descriptor of the journal drops the mark.
REFRESH_MARK = portable.MARK_PER_PROCESS


def lock(fd: int, path: Path) -> None:
    """Take the journal's write lock (and the writer's mark) on `fd` without waiting.

    Raises:
        JournalLocked: another process holds it (named when the system says which).
        OSError: the system has no such locks (Windows: the agent refuses to start there first).
    """
    if fcntl is None:
        raise OSError(f"{path}: this system has no file locks (fcntl) to keep one writer per journal")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        portable.hold_mark(fd)
    except BlockingIOError:
        raise JournalLocked(path, lock_holder(path) or None) from None
    st = os.fstat(fd)
    _held.add((st.st_dev, st.st_ino))


def release(fd: int) -> None:
    """Before the writer closes `fd`: this process no longer writes that journal."""
    try:
        st = os.fstat(fd)
    except OSError:
        return
    _held.discard((st.st_dev, st.st_ino))


def lock_holder(path: Path, locks: str | None = None) -> int | None:
    """The pid holding the write lock on a journal; 0 if a writer holds it but the system names none; else None.

    Nothing is taken: Linux's lock table is read, or the writer's mark is asked with F_GETLK, so a
    viewer can ask without disturbing a writer. `locks` is the table already read (`read_locks()`),
    when many journals are asked about at once.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None

    def marked() -> int | None:
        try:
            fd = portable.open_read_only(path)
        except OSError:
            return None
        try:
            return portable.mark_holder(fd)
        finally:
            os.close(fd)

    return _holder(st, locks, marked)


def fd_holder(fd: int) -> int | None:
    """`lock_holder` of the journal open at `fd` (a moved or deleted journal may still have its writer)."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return _holder(st, None, lambda: portable.mark_holder(fd))


def _holder(st: os.stat_result, locks: str | None, marked: Callable[[], int | None]) -> int | None:
    """Who holds the lock of the journal `st` is: this process, else as the lock table says (`locks`, else read
    now), else where there is no table as the writer's mark says (`marked`)."""
    if (st.st_dev, st.st_ino) in _held:
        return os.getpid()
    table = read_locks() if locks is None else locks
    return marked() if table is None else _in_table(st, table)


def _in_table(st: os.stat_result, table: str) -> int | None:
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    if dev not in table:
        return None
    for row in table.splitlines():
        parts = row.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; a blocked waiter's row has "->" first
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[3] == "WRITE" and parts[5] == dev:
            try:
                return int(parts[4])
            except ValueError:
                return None
    return None


def read_locks() -> str | None:
    """The system's lock table (Linux's /proc/locks), for `lock_holder` to look many journals up in.

    None where there is none (macOS, Windows, /proc hidden): `lock_holder` then asks each journal.
    """
    try:
        return portable.read_proc("locks")
    except OSError:
        return None


def hold_mark(fd: int) -> None:
    """Take the writer's mark on `fd` again: with process-wide record locks, closing another descriptor drops it."""
    with contextlib.suppress(OSError):  # the flock still keeps one writer; only a reader's liveness is at stake
        portable.hold_mark(fd)
