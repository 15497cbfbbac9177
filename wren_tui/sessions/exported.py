"""A session its agent does not keep as JSON lines (OpenCode's database, aider's Markdown), read as if it did.

Its format exports it into lines (`wren_tui.foreign.exported`), held in an anonymous in-memory
file that the viewer reads exactly as it reads a session file: `pread` (`portable.pread`) on one descriptor. The
agent's files are watched through their folder (inotify, or polling their stat where it cannot):
when the file, or a database's `-wal`, changes, the session is exported again (from a new private
copy, for a database); lines added after the ones held are appended, so the screen follows them as
it follows a growing file; an export that no longer starts with what is held (a reply aider wrote
on, a row OpenCode removed) makes `look` say "replaced", and the screen reads it again. The
agent's files are never written, locked, renamed or touched.

A big session opens tail first, as a big journal does: its format exports its last lines alone
(`Follower.tail`: OpenCode's last rows by SQL, aider's last blocks from the file's end), numbered
as in the whole export, and the screen shows them; the background index then exports the whole
session (`read_whole`, on its own handle) and the screen adopts it with the index it built
(`adopt_whole`). Until then the handle holds the tail alone (`partial`), and is not refreshed.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..foreign import Format
from ..foreign.contract import Progress
from ..foreign.exported import memory_file
from ..foreign.folders import split_member as split
from ..foreign.live import changed_at
from ..foreign.reader import LineIndex, count_lines
from ..foreign.snapshot import companions
from ..journal.errors import JournalError
from ..journal.offsets import tail_span
from ..journal.store import parse_ts
from ..portable import pread, pwrite
from . import Whereabouts

if TYPE_CHECKING:
    from .tailing import WatchMode

_HERE = Whereabouts("here")
_REPLACED = Whereabouts("replaced")
_DELETED = Whereabouts("deleted")
_TS = re.compile(rb'"ts":"([^"]+)"')
# A session opens tail first when its format finds a place to cut it at least this far from its
# end (its own bytes): about a screenful and more, all the first frame lays out.
TAIL_FIRST = 64 << 10


class _Whole:
    """The whole export, made by the background index for the handle that opened tail first, until adopted."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self.data = b""
        self.index: LineIndex | None = None
        self._closer: weakref.finalize[[int], _Whole] | None = None

    def put(self, fd: int, data: bytes, index: LineIndex) -> None:
        earlier = self.take()  # one nobody adopted
        if earlier is not None:
            os.close(earlier[0])
        self.fd, self.data, self.index = fd, data, index
        self._closer = weakref.finalize(self, os.close, fd)

    def take(self) -> tuple[int, bytes, LineIndex] | None:
        """The export and its index, now the taker's to close; None if none was made."""
        if self.fd is None or self.index is None or self._closer is None:
            return None
        self._closer.detach()
        out = (self.fd, self.data, self.index)
        self.fd, self.data, self.index, self._closer = None, b"", None, None
        return out


class ExportedFile:
    """The session at `path` (a file, or `DB#ID`) in `fmt`, as its exported lines in memory."""

    def __init__(self, path: Path, fmt: Format, *, watch_mode: WatchMode = "auto") -> None:
        assert fmt.export is not None, "only a format that exports its sessions"
        self._path = Path(os.path.abspath(path))
        self._format = fmt
        self._source, self._part = split(self._path)
        self.watch_mode = watch_mode
        self._export = fmt.follower(self._path)
        # Its handles share the export (a database's private copy): one export at a time.
        self._exporting = threading.Lock()
        self._fd: int | None = None
        self._closer: weakref.finalize[[int], ExportedFile] | None = None
        self._data = b""
        self._replaced = False
        self._grew_at = 0.0
        # Opened tail first: how many lines of the whole export come before those held; None: the whole is held.
        self._before: int | None = None
        self._whole = _Whole()

    @property
    def path(self) -> Path:
        return self._path

    def fd(self) -> int:
        assert self._fd is not None, "the session is read only once it is open"
        return self._fd

    def open(self, *, whole: bool = False) -> bool:
        """Export the session and hold its lines; a big one's last lines alone, unless `whole` (a command reads it
        through). False when there is nothing there yet."""
        self.close()
        if not self._source.exists():
            return False  # it may still arrive: the watcher sees it
        with self._exporting:
            tail = None if whole else self._export.tail(TAIL_FIRST)
        if tail is not None:
            self._hold(memory_file(tail.lines, f"wren-{self._format.name}-tail"), tail.lines)
            self._before, self._whole = tail.before, _Whole()
            return True
        with self._exporting:
            data = self._export()
        self._hold(memory_file(data, f"wren-{self._format.name}"), data)
        return True

    @property
    def partial(self) -> bool:
        """Opened tail first, and the whole export not read yet."""
        return self._before is not None

    def lines_before(self, start: int) -> int:
        """How many lines of the whole export come before byte `start` of what is held."""
        return (self._before or 0) + count_lines(self.fd(), start)

    def read_whole(self, index: LineIndex | None = None, progress: Progress | None = None) -> None:
        """Export the whole session and hold it in place of the tail (a worker's handle: it takes a while).

        With `index` (the background index's), it is also left for the handle that opened the session
        to adopt, with that index, once the index is built."""
        with self._exporting:
            data = self._export(progress)
        fd = memory_file(data, f"wren-{self._format.name}")
        if index is not None:
            self._whole.put(os.dup(fd), data, index)
        self.close()
        self._hold(fd, data)

    def adopt_whole(self) -> LineIndex | None:
        """Hold the whole export the background index read (`read_whole`), in place of the tail; its index."""
        whole = self._whole.take()
        if whole is None:
            return None
        fd, data, index = whole
        self.close()
        self._hold(fd, data)
        return index

    def _hold(self, fd: int, data: bytes) -> None:
        self._fd, self._data, self._replaced, self._before = fd, data, False, None
        self._closer = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        if self._closer is not None:
            self._closer()
        self._fd, self._closer = None, None

    def share(self) -> ExportedFile:
        twin = ExportedFile.__new__(ExportedFile)
        twin.__dict__.update(self.__dict__)
        twin._closer = None
        twin._hold(os.dup(self.fd()), self._data)
        twin._before = self._before  # the same lines: the tail alone, or the whole
        return twin

    def size(self) -> int:
        return os.fstat(self.fd()).st_size

    def tail_span(self, size: int, window: int) -> tuple[int, int]:
        return tail_span(self.fd(), size, window)

    def read(self, start: int, length: int) -> bytes:
        return pread(self.fd(), length, start)

    def look(self) -> Whereabouts:
        if self._replaced:
            return _REPLACED
        return _HERE if self._source.exists() else _DELETED

    def changed_at(self) -> float:
        """When the session last changed: its own file's time, or (a database's session) its last record's."""
        when = self._grew_at
        if self._format.export_all is None:
            when = max(when, changed_at(self._source, self._format) or 0.0)
        else:
            last = self._data.rstrip(b"\n").rpartition(b"\n")[2]
            found = _TS.search(last)
            stamp = parse_ts(found[1].decode()) if found else None
            if stamp is not None:
                when = max(when, stamp.timestamp())
        return when

    def refresh(self) -> bool:
        """Export again; True when something changed (lines appended, or the session replaced)."""
        if self._fd is None or self._replaced or self._before is not None:
            return False  # the tail alone: the whole export, once adopted, is refreshed at the next wake
        with self._exporting:
            new = self._export()
        old = self._data
        if new == old:
            return False
        if new.startswith(old):
            view = memoryview(new)[len(old) :]
            at = len(old)
            while view:
                wrote = pwrite(self._fd, view, at)
                view, at = view[wrote:], at + wrote
            self._data = new
        else:
            self._replaced = True
        self._grew_at = time.time()
        return True

    def watched(self) -> set[Path]:
        """The agent's files whose change may change the session: the file, or the database and its WAL."""
        if self._format.folder.parts is not None:
            return {self._source, self._format.folder.parts(self._source)}
        if self._format.export_all is None:
            return {self._source}
        return {self._source, companions(self._source)[0]}

    async def follow(self, changed: Callable[[], Awaitable[None]]) -> None:
        watched = self.watched()
        # A session spread over a folder's files (Folder.parts): any change in that folder.
        parts = self._format.folder.parts
        folder = parts(self._source) if parts is not None else self._source.parent

        async def seen(paths: set[Path]) -> None:
            if paths and not paths & watched and not any(p.parent == folder for p in paths):
                return
            if await asyncio.to_thread(self._refresh_quietly):
                await changed()

        from .tailing import watch_folder  # watchfiles: loaded only to follow a session

        await watch_folder(folder, seen, self.watch_mode)

    def _refresh_quietly(self) -> bool:
        try:
            return self.refresh()
        except (JournalError, OSError):
            return False  # unreadable for now (a copy that kept changing): the next change tries again
