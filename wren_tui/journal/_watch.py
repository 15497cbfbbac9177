"""inotify on a journal's path, read with one poll(0) per append: the cheap half of the writer's journal check.

It only says when to look; `writer.what_changed` decides what happened. Where there is no
inotify (or no instance or watch is left) it always says look, so the check stays whole.
"""

from __future__ import annotations

import functools
import os
import select
import weakref
from collections.abc import Callable

from ..portable import O_CLOEXEC, O_NONBLOCK

_IN_ATTRIB, _IN_MOVE_SELF, _IN_DELETE_SELF, _IN_DONT_FOLLOW = 0x4, 0x800, 0x400, 0x2000000


@functools.cache
def _inotify_calls() -> tuple[Callable[[int], int], Callable[[int, bytes, int], int]] | None:
    """libc's inotify_init1 and inotify_add_watch, looked up once; None where there is no inotify."""
    try:
        import ctypes  # here, not at the top: only a writer needs it, and `wren log` starts faster

        libc = ctypes.CDLL(None, use_errno=True)
        init, add = libc.inotify_init1, libc.inotify_add_watch
    except (ImportError, OSError, AttributeError, TypeError):  # TypeError: CDLL(None) on Windows
        return None
    init.argtypes, init.restype = [ctypes.c_int], ctypes.c_int
    add.argtypes, add.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_int
    return init, add


def always(_timeout: int) -> bool:
    """A poll that always says look: for a path not watched."""
    return True


class PathWatch:
    """Says cheaply whether anything may have happened to a journal's path since the last look.

    inotify on the file (deleted, renamed, relinked) and on every folder and link on the way to it
    (moved, removed). Without inotify (or out of instances or watches) it always says look.
    """

    def __init__(self, path: str, *, watched: bool = True) -> None:
        """`watched` False: no inotify at all, every look says look (a writer of one or two events: closing an
        inotify instance waits for the kernel's grace period, about 14 ms, more than the looks it saves)."""
        self._fd = -1
        # Called with a timeout of 0: the events waiting (a list, empty when none), or True without a watch.
        self.poll: Callable[[int], object] = always
        calls = _inotify_calls() if watched else None
        if calls is None:
            return
        init, add = calls
        fd = init(O_NONBLOCK | O_CLOEXEC)
        if fd < 0:
            return
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)
        watches = [(path, _IN_ATTRIB | _IN_MOVE_SELF | _IN_DELETE_SELF)]
        # Each folder and link as written (a link retargeted), and each folder it resolves to (moved).
        watches += [(p, _IN_MOVE_SELF | _IN_DELETE_SELF | _IN_DONT_FOLLOW) for p in _prefixes(os.path.dirname(path))]
        watches += [(p, _IN_MOVE_SELF | _IN_DELETE_SELF) for p in _prefixes(os.path.realpath(os.path.dirname(path)))]
        if any(add(fd, os.fsencode(p), mask) < 0 for p, mask in watches):
            self.close()  # a path not watched whole is not watched at all: look at every append
            return
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        self.poll = poller.poll

    def drain(self) -> None:
        """Forget what fired: the check that follows sees everything that happened before it."""
        while self._fd >= 0:
            try:
                if not os.read(self._fd, 65536):
                    return
            except BlockingIOError:
                return

    def close(self) -> None:
        if self._fd >= 0:
            self._closer()
            self._fd = -1


def _prefixes(path: str) -> list[str]:
    """/a/b/c -> /a, /a/b, /a/b/c (the root, which cannot move, is left out)."""
    parts = os.path.abspath(path).split(os.sep)[1:]
    return [os.sep + os.sep.join(parts[: n + 1]) for n in range(len(parts)) if parts[n]]
