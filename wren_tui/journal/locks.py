"""The one-writer rule: an exclusive flock per journal, and who holds it (read without taking it)."""

from __future__ import annotations

import os
from pathlib import Path

from ..portable import fcntl
from .errors import JournalLocked


def lock(fd: int, path: Path) -> None:
    """Take the journal's write lock on `fd` without waiting.

    Raises:
        JournalLocked: another process holds it (named when /proc/locks says which).
        OSError: the system has no such locks (Windows: the agent refuses to start there first).
    """
    if fcntl is None:
        raise OSError(f"{path}: this system has no file locks (fcntl) to keep one writer per journal")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise JournalLocked(path, lock_holder(path)) from None


def lock_holder(path: Path, locks: str | None = None) -> int | None:
    """The pid holding the write lock on a journal, read from /proc/locks; None if nobody does.

    Reading /proc/locks takes no lock itself, so a viewer can ask without disturbing a writer.
    `locks` is that table already read (`read_locks()`), when many journals are asked about at once.
    """
    try:
        st = os.stat(path)
        table = read_locks() if locks is None else locks
    except OSError:
        return None
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


def read_locks() -> str:
    """The system's lock table (/proc/locks), for `lock_holder` to look many journals up in.

    Raises:
        OSError: there is no /proc/locks here.
    """
    with open("/proc/locks", encoding="ascii", errors="replace") as table:
        return table.read()
