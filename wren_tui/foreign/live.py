"""Whether another agent is writing a session file now: a process holds it open for writing, or it just changed.

Claude Code and pi open the file for each write and close it again, so between two writes only
its modification time tells; Codex keeps it open. Nothing here writes, locks or touches a file:
the process table is read from /proc (`portable`; where there is none, only the times tell), and the
file's times from stat.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .. import portable

if TYPE_CHECKING:
    from .contract import Format

# A file changed this recently is live, whoever wrote it.
RECENT_S = 5.0
# /proc/PID/fdinfo says Linux's flags: its O_ACCMODE, O_WRONLY and O_RDWR (os has no O_ACCMODE on Windows).
_ACCESS = 0o3
_WRITING = (0o1, 0o2)
FileKey = tuple[int, int]  # (device, inode)


def held_for_writing(files: Iterable[FileKey], suffix: str = ".jsonl") -> set[FileKey]:
    """Which of `files` some process has open for writing, from every process's open files in /proc.

    Only descriptors whose target ends with `suffix` are looked at closely (a stat and its flags),
    so one pass over a machine's processes costs a few milliseconds. Where there is no /proc
    (macOS, Windows) none is found, and a session is live only by its recent change.
    """
    wanted = set(files)
    found: set[FileKey] = set()
    if not wanted:
        return found
    try:
        pids = portable.proc_pids()
    except OSError:
        return found
    for pid in pids:
        for st, fd in portable.open_files(pid, suffix):
            key = (st.st_dev, st.st_ino)
            if key in wanted and key not in found and _for_writing(pid, fd):
                found.add(key)
    return found


def _for_writing(pid: str, fd: str) -> bool:
    flags = portable.open_flags(pid, fd)
    return flags is not None and (flags & _ACCESS) in _WRITING


def changed_recently(mtime: float, now: float | None = None) -> bool:
    """Whether a file last changed at `mtime` changed within a few seconds of `now` (else of the clock's time).

    A time further ahead than that (a clock set wrong where it was written) is not recent: such a file would
    otherwise be live for as long as the clocks disagree."""
    return abs((time.time() if now is None else now) - mtime) < RECENT_S


def alive(st: os.stat_result, held: Collection[FileKey] | None = None, now: float | None = None) -> bool:
    """Whether another agent is writing the session file `st` describes: it changed within a few seconds of `now`
    (else of the clock's time), or some process holds it open for writing.

    `held`: the files one look at every process found held for writing (a listing looks once for all its files,
    the viewer keeps its look a moment); without it, that look is made for this file alone.
    """
    if changed_recently(st.st_mtime, now):
        return True
    key = (st.st_dev, st.st_ino)
    return key in (held if held is not None else held_for_writing([key]))


def changed_at(path: Path, fmt: Format) -> float | None:
    """When the session at `path` last changed: its file's time, or the newest of its parts' (`Folder.parts`); None
    when it cannot be stat'ed."""
    try:
        when = os.stat(path).st_mtime
    except OSError:
        return None
    if fmt.folder.parts is not None:
        try:
            with os.scandir(fmt.folder.parts(path)) as entries:
                for entry in entries:
                    try:
                        when = max(when, entry.stat(follow_symlinks=False).st_mtime)
                    except OSError:
                        continue
        except OSError:
            pass
    return when
