"""May Wren put a new file at this path? One answer for every command that writes a file a person named.

Wren writes such a file (an export, a fork, a file the agent writes) under a temporary name and then
renames it into place, so a reader sees the old file or the new one, never half of one. A rename
replaces whatever has the name: a FIFO, a device node or a socket would become a regular file (as
root, `wren export -o /dev/null` would replace the machine's /dev/null), and a link would be replaced
rather than followed. So the name is looked at first without following it (lstat): nothing there,
or a regular file, may be replaced; anything else is refused with one sentence saying what it is.
The check is made again just before the rename, which narrows the time in which a swap could slip
in to that of the rename's own system call.
"""

from __future__ import annotations

import os
import stat

from ..portable import fsync_folder
from .errors import JournalError


class NotReplaceable(JournalError):
    """Something that is not a regular file is where Wren would write (a folder, a FIFO, a device...).

    Attributes:
        shown: The path as the sentence names it.
        kind: What is there, in words ("a FIFO (named pipe)", "a device", ...).
    """

    def __init__(self, shown: str, kind: str, advice: str) -> None:
        super().__init__(f"{shown}: is {kind}, not a regular file; {advice}")
        self.shown, self.kind = shown, kind


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"


def replaceable(
    path: str | os.PathLike[str], *, advice: str, shown: str | None = None, dir_fd: int | None = None
) -> os.stat_result | None:
    """What is at `path` if Wren may replace it (None: nothing is there); NotReplaceable if it may not.

    Args:
        path: The name to write (relative to `dir_fd` when one is given).
        advice: What the sentence ends with: what is replaced, what to do instead.
        shown: The path as the sentence names it (default: `path`).
        dir_fd: A folder `path` is relative to (the agent's workspace writes through one).

    Returns:
        The lstat of the regular file there, or None when nothing is there.

    Raises:
        NotReplaceable: a folder, a link, a FIFO, a socket or a device is there.
        OSError: the name cannot be looked at (no permission on its folder...).
    """
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(st.st_mode):
        raise NotReplaceable(shown if shown is not None else os.fspath(path), kind_of(st.st_mode), advice)
    return st


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """fsync a folder: what makes a new name in it (a rename, a new file) durable, not only the file's bytes.

    Where a folder cannot be opened (Windows), nothing (`portable.fsync_folder` says why).
    """
    fsync_folder(folder)
