"""A session its agent does not keep as JSON lines (OpenCode's database, aider's Markdown), read as if it did.

Its format exports it into lines (`wren_tui.formats.exported`), held in an anonymous in-memory
file that the viewer reads exactly as it reads a session file: `os.pread` on one descriptor. The
agent's files are watched through their folder (inotify, or polling their stat where it cannot):
when the file, or a database's `-wal`, changes, the session is exported again (from a new private
copy, for a database); lines added after the ones held are appended, so the screen follows them as
it follows a growing file; an export that no longer starts with what is held (a reply aider wrote
on, a row OpenCode removed) makes `look` say "replaced", and the screen reads it again. The
agent's files are never written, locked, renamed or touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path

from ...formats import Format
from ...formats.exported import memory_file
from ...formats.opencode import split
from ...formats.snapshot import companions
from ...journal.errors import JournalError
from ...journal.index import tail_span
from ...journal.store import parse_ts
from ..tailing import WatchMode, watch_folder
from . import Whereabouts

_HERE = Whereabouts("here")
_REPLACED = Whereabouts("replaced")
_DELETED = Whereabouts("deleted")
_TS = re.compile(rb'"ts":"([^"]+)"')


class ExportedFile:
    """The session at `path` (a file, or `DB#ID`) in `fmt`, as its exported lines in memory."""

    def __init__(self, path: Path, fmt: Format, *, watch_mode: WatchMode = "auto") -> None:
        assert fmt.export is not None, "only a format that exports its sessions"
        self._path = Path(os.path.abspath(path))
        self._format = fmt
        self._source, self._part = split(self._path)
        self.watch_mode = watch_mode
        self._export = fmt.follower(self._path)
        self._fd: int | None = None
        self._closer: weakref.finalize[[int], ExportedFile] | None = None
        self._data = b""
        self._replaced = False
        self._grew_at = 0.0

    @property
    def path(self) -> Path:
        return self._path

    def fd(self) -> int:
        assert self._fd is not None, "the session is read only once it is open"
        return self._fd

    def open(self) -> bool:
        self.close()
        if not self._source.exists():
            return False  # it may still arrive: the watcher sees it
        data = self._export()
        self._hold(memory_file(data, f"wren-{self._format.name}"), data)
        return True

    def _hold(self, fd: int, data: bytes) -> None:
        self._fd, self._data, self._replaced = fd, data, False
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
        return twin

    def size(self) -> int:
        return os.fstat(self.fd()).st_size

    def tail_span(self, size: int, window: int) -> tuple[int, int]:
        return tail_span(self.fd(), size, window)

    def read(self, start: int, length: int) -> bytes:
        return os.pread(self.fd(), length, start)

    def look(self) -> Whereabouts:
        if self._replaced:
            return _REPLACED
        return _HERE if self._source.exists() else _DELETED

    def changed_at(self) -> float:
        """When the session last changed: its own file's time, or (a database's session) its last record's."""
        when = self._grew_at
        if self._format.export_all is None:
            with contextlib.suppress(OSError):
                when = max(when, os.stat(self._source).st_mtime)
        else:
            last = self._data.rstrip(b"\n").rpartition(b"\n")[2]
            found = _TS.search(last)
            stamp = parse_ts(found[1].decode()) if found else None
            if stamp is not None:
                when = max(when, stamp.timestamp())
        return when

    def refresh(self) -> bool:
        """Export again; True when something changed (lines appended, or the session replaced)."""
        if self._fd is None or self._replaced:
            return False
        new = self._export()
        old = self._data
        if new == old:
            return False
        if new.startswith(old):
            view = memoryview(new)[len(old) :]
            at = len(old)
            while view:
                wrote = os.pwrite(self._fd, view, at)
                view, at = view[wrote:], at + wrote
            self._data = new
        else:
            self._replaced = True
        self._grew_at = time.time()
        return True

    def watched(self) -> set[Path]:
        """The agent's files whose change may change the session: the file, or the database and its WAL."""
        if self._format.export_all is None:
            return {self._source}
        return {self._source, companions(self._source)[0]}

    async def follow(self, changed: Callable[[], Awaitable[None]]) -> None:
        watched = self.watched()

        async def seen(paths: set[Path]) -> None:
            if paths and not paths & watched:
                return
            if await asyncio.to_thread(self._refresh_quietly):
                await changed()

        await watch_folder(self._source.parent, seen, self.watch_mode)

    def _refresh_quietly(self) -> bool:
        try:
            return self.refresh()
        except (JournalError, OSError):
            return False  # unreadable for now (a copy that kept changing): the next change tries again
