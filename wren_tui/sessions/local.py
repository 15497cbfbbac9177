"""A Wren journal file on this machine, as a session source: read by offset, watched through its folder.

The file is opened once, read-only, and read through that descriptor with `pread` (`portable.pread`), so a journal
that is moved or deleted while it is shown is still read (its name is only asked what became of it).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..forwarding import Forward
from ..journal.commandline import wren_command
from ..journal.errors import JournalError
from ..journal.events import Event
from ..journal.huge_line import CLIP_CHARS, HUGE_LINE
from ..journal.locks import fd_holder, lock_holder
from ..journal.offsets import LineScanner, decode_at, decode_span, tail_span
from ..journal.reader import EventSink, open_for_reading, scan_events
from ..journal.store import session_id_of, write_problem
from ..journal.verdict import ReadVerdict
from ..portable import pread
from . import Arrival, LineReader, Made, Points, Whereabouts

if TYPE_CHECKING:
    from ..journal.forking import Forked
    from .tailing import WatchMode

_HERE = Whereabouts("here")
_ABSENT = Whereabouts("absent")
_REPLACED = Whereabouts("replaced")
_UNKNOWN = Whereabouts("unknown")


class LocalJournal:
    """A Wren journal at `path` (made absolute: the watcher reports absolute paths)."""

    def __init__(self, path: Path, *, watch_mode: WatchMode = "auto", journals: Path | None = None) -> None:
        self._path = Path(os.path.abspath(path))
        self._given = path  # as named: what a command says
        # The journals folder it was found in, if one was named: a fork's files are never written inside it.
        self._journals = journals
        self._session = session_id_of(self._path)
        self.watch_mode = watch_mode
        self._fd: int | None = None
        self._inode: tuple[int, int] | None = None
        # Closes the descriptor when this handle is closed, or dropped unclosed (a worker cancelled before it ran).
        self._closer: weakref.finalize[[int], LocalJournal] | None = None
        # Once it left its name: where it went, asked once (a folder scan), until it is back.
        self._left: Whereabouts | None = None

    session: Forward[str] = Forward("_session")
    id: Forward[str] = Forward("_session")

    @property
    def where(self) -> str:
        """The journal as it was named (made absolute only to be read)."""
        return str(self._given)

    path: Forward[Path] = Forward("_path")

    @property
    def agent(self) -> str | None:
        return None  # Wren's own journal

    @property
    def fork_folder(self) -> Path:
        return self._path.parent  # beside its parent, as `wren fork` writes it

    def fork(self, seq: int) -> Forked:
        from ..journal.forking import fork  # the viewer's one write, loaded when used

        return fork(self._path, seq, folder=self._path.parent)

    # --- `wren fork`: the clean points, or a fork with the files -------------------------------

    no_workspace: str | None = None  # a journal's snapshots hold its files

    def clean_points(self) -> Points:
        """The clean points, each with what changed in the files since (from the session's snapshots); a damaged
        journal's are those before the damage."""
        from ..journal.forking import fork_listing, fork_points
        from ..journal.reader import read_events
        from ..snapshots.forking import changes_or_why  # the snapshot store, loaded when the points are asked for

        path = Path(self._given)
        result = read_events(path)
        points = fork_points(result.events)
        changes, why = changes_or_why(path, result.events, points)
        again = wren_command("fork", self._session, folder=path.parent, tail="SEQ")
        return Points(self._session, path, None, points, fork_listing(points), result.stop, again, changes, why or None)

    def fork_at(self, seq: int, workspace: str | None) -> Made:
        """A new journal beside this one forked at the clean point `seq`, with its files as they were written into
        `workspace` when named (never inside the journals folder, nor its snapshot store).

        NotAForkPoint, WorkspaceRefused, FilesNotForked; JournalError when the fork cannot be written beside it.
        """
        from ..snapshots.forking import fork_with_files

        path = Path(self._given)
        try:
            made = fork_with_files(
                path, seq, workspace or None, journals=() if self._journals is None else (self._journals,)
            )
        except OSError as exc:
            raise JournalError(
                f"{write_problem(path.parent, exc)}, so the fork (written beside {path.name}) was not made; copy "
                "the journal to a folder you can write and fork it there"
            ) from None
        forked = made.forked
        again = None
        if made.workspace is None:
            again = wren_command("fork", forked.parent, str(forked.at_seq), folder=path.parent, tail="--workspace DIR")
        resume = wren_command("resume", forked.id, folder=forked.path.parent)
        return Made(forked, path, resume, None, made.workspace, made.snapshot, made.files_restored, again)

    # --- opening --------------------------------------------------------------------------

    def open(self, *, whole: bool = False) -> bool:
        """Open the journal read-only (`whole` changes nothing: a journal is read by offset, from anywhere)."""
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
        twin = LocalJournal(self._given, watch_mode=self.watch_mode, journals=self._journals)
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

    def scan(self, sink: EventSink, *, every_branch: bool = False, redact: bool = False) -> ReadVerdict:
        """Every event of the journal, in order, to `sink` (as `journal.reader.scan_events`); the verdict after.

        A journal has one branch, and Wren redacted it as it wrote it."""
        return scan_events(self._path, sink)

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

        from .tailing import watch_folder  # watchfiles: loaded only to follow a session

        await watch_folder(self._path.parent, seen, self.watch_mode)
