"""A Wren journal file on this machine, as a session source: read by offset, watched through its folder.

The file is opened once, read-only, and read through that descriptor with `pread` (`portable.pread`), so a journal
that is moved or deleted while it is shown is still read (its name is only asked what became of it).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path

from ...journal.errors import JournalError
from ...journal.events import Event
from ...journal.forking import Forked, fork
from ...journal.locks import fd_holder, lock_holder
from ...journal.offsets import LineScanner, decode_at, decode_span, tail_span
from ...journal.reader import open_for_reading
from ...journal.store import session_id_of
from ...portable import pread
from ..tailing import WatchMode, watch_folder
from ..timeline import CLIP_CHARS
from . import Arrival, LineReader, Whereabouts

# A line longer than this is decoded by a child process: decoding it holds the GIL ~2 ms a megabyte.
HUGE_LINE = 8 << 20

_HERE = Whereabouts("here")
_ABSENT = Whereabouts("absent")
_REPLACED = Whereabouts("replaced")
_UNKNOWN = Whereabouts("unknown")


class LocalJournal:
    """A Wren journal at `path` (made absolute: the watcher reports absolute paths)."""

    def __init__(self, path: Path, *, watch_mode: WatchMode = "auto") -> None:
        self._path = Path(os.path.abspath(path))
        self._session = session_id_of(self._path)
        self.watch_mode = watch_mode
        self._fd: int | None = None
        self._inode: tuple[int, int] | None = None
        # Closes the descriptor when this handle is closed, or dropped unclosed (a worker cancelled before it ran).
        self._closer: weakref.finalize[[int], LocalJournal] | None = None
        # Once it left its name: where it went, asked once (a folder scan), until it is back.
        self._left: Whereabouts | None = None

    @property
    def session(self) -> str:
        return self._session

    @property
    def path(self) -> Path:
        return self._path

    @property
    def agent(self) -> str | None:
        return None  # Wren's own journal

    @property
    def fork_folder(self) -> Path:
        return self._path.parent  # beside its parent, as `wren fork` writes it

    def fork(self, seq: int) -> Forked:
        return fork(self._path, seq, folder=self._path.parent)

    # --- opening --------------------------------------------------------------------------

    def open(self) -> bool:
        self.close()
        try:
            fd = open_for_reading(self._path)
        except JournalError:
            if os.path.lexists(self._path):
                raise
            return False  # it may still arrive: the watcher sees it
        st = os.fstat(fd)
        self._hold(fd, (st.st_dev, st.st_ino))
        return True

    def _hold(self, fd: int, inode: tuple[int, int] | None) -> None:
        self._fd, self._inode = fd, inode
        self._closer = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        if self._closer is not None:
            self._closer()
        self._fd, self._inode, self._left, self._closer = None, None, None, None

    def share(self) -> LocalJournal:
        twin = LocalJournal(self._path, watch_mode=self.watch_mode)
        twin._hold(os.dup(self._opened()), self._inode)
        return twin

    def fd(self) -> int:
        """The descriptor the open journal is read through (for a source that reads this file its own way)."""
        return self._opened()

    def _opened(self) -> int:
        assert self._fd is not None, "the journal is read only once it is open"
        return self._fd

    # --- reading --------------------------------------------------------------------------

    def size(self) -> int:
        return os.fstat(self._opened()).st_size

    def tail_span(self, size: int, window: int) -> tuple[int, int]:
        return tail_span(self._opened(), size, window)

    def lines(self, start: int = 0, *, worker: bool = False) -> LineScanner:
        return LineScanner(self._path, self._opened(), start, elsewhere=(HUGE_LINE, CLIP_CHARS) if worker else None)

    def lines_after(self, done: LineReader, *, worker: bool = False, retry: bool = False) -> LineScanner:
        assert isinstance(done, LineScanner), "a local journal reads on only from its own readers"
        scanner = LineScanner(
            self._path,
            self._opened(),
            done.offset,
            first_line=done.lineno,
            after_seq=done.prev_seq,
            elsewhere=(HUGE_LINE, CLIP_CHARS) if worker else None,
        )
        # A bad line ends the journal there, whoever read it.
        scanner.stop = None if retry else done.stop
        scanner.scanned = done.scanned
        return scanner

    def read(self, start: int, length: int) -> bytes:
        return pread(self._opened(), length, start)

    def decode(self, start: int, end: int, part: int = 0) -> Event:
        assert part == 0, "a Wren journal's line holds one event"
        return decode_at(self._opened(), start, end)

    def decode_span(self, start: int, end: int) -> list[Event]:
        return decode_span(self._opened(), start, end)

    # --- the writer and the name ----------------------------------------------------------

    def writer_alive(self) -> bool:
        # Asked of the open file, not the name: a moved or deleted journal may still have its writer.
        fd = self._fd
        return (lock_holder(self._path) if fd is None else fd_holder(fd)) is not None

    def arrival(self) -> Arrival | None:
        return None  # a file is read as it is

    def look(self) -> Whereabouts:
        try:
            st: os.stat_result | None = os.stat(self._path)
        except FileNotFoundError:
            st = None
        except OSError:
            return _UNKNOWN
        if self._fd is None:
            return _ABSENT if st is None else _REPLACED  # created since, or still unreadable
        if st is not None:
            if (st.st_dev, st.st_ino) != self._inode:
                return _REPLACED
            self._left = None
            return _HERE
        if self._left is None:
            if os.fstat(self._fd).st_nlink == 0:
                self._left = Whereabouts("deleted")
            else:
                self._left = Whereabouts("moved", self._new_name())
        return self._left

    def _new_name(self) -> str | None:
        """The name the journal now has in its folder, if it was moved within it."""
        try:
            with os.scandir(self._path.parent) as entries:
                for entry in entries:
                    st = entry.stat(follow_symlinks=False)
                    if (st.st_dev, st.st_ino) == self._inode:
                        return entry.name
        except OSError:
            return None
        return None

    async def follow(self, changed: Callable[[], Awaitable[None]]) -> None:
        async def seen(paths: set[Path]) -> None:
            # An empty set means "look to be sure"; otherwise only changes to this journal matter
            # (any change, once it has left its name: its new name is not known to the watcher).
            if not paths or self._path in paths or self._left is not None:
                await changed()

        await watch_folder(self._path.parent, seen, self.watch_mode)
