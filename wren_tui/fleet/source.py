"""A local journal's lines that may be shipped: whole, valid by Wren's own reader, and durable.

Durable: the bytes are read first, then this process's own read-only descriptor is fdatasynced,
so every byte read is on disk before any of it leaves the machine. Valid: the lines come from the
one scanner (`journal.lines`) and `journal.offsets.CheckedLines` checks each exactly as `read_events`
does, so reading stops at the line the reader stops at; a torn tail (no newline yet) is never read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .. import portable
from ..journal.events import Event
from ..journal.lines import Lines
from ..journal.offsets import CheckedLines
from ..journal.reader import open_for_reading
from ..journal.verdict import Stop
from . import FleetError

READ_SIZE = 4 << 20


class SourceChanged(FleetError):
    """The journal was replaced, shrank, or changed after a bad line: read it again from its start."""


@dataclass(frozen=True)
class Line:
    event: Event
    data: bytes  # the line's exact bytes, newline included
    end: int  # the file offset just past it


class DurableLines:
    """The whole, valid, durable lines of one journal, read forward from its start.

    The journal is opened for each read and closed again, so a mirror of thousands of journals
    holds no descriptor between reads; a different file under the name is noticed by its inode.
    """

    def __init__(self, path: Path, read_size: int = READ_SIZE) -> None:
        self.path = path
        self.read_size = read_size
        self._inode: tuple[int, int] | None = None
        self._lines = CheckedLines()  # each line checked exactly as `read_events` checks it
        self.offset = 0  # just past the last line handed out
        self.stop: Stop | None = None  # the line reading stopped at, and why; None while it goes on
        self._stopped_at: tuple[int, int] | None = None  # (size, mtime_ns) when it stopped

    def read(self) -> list[Line]:
        """The next run of new lines (empty when there is none yet); SourceChanged when the file changed under them."""
        fd = open_for_reading(self.path)
        try:
            return self._read(fd)
        finally:
            os.close(fd)

    def _read(self, fd: int) -> list[Line]:
        st = os.fstat(fd)
        inode, size, mtime = (st.st_dev, st.st_ino), st.st_size, st.st_mtime_ns
        if self._inode is None:
            self._inode = inode
        elif inode != self._inode:
            raise SourceChanged(f"{self.path}: the journal was replaced by another file")
        if size < self.offset:
            raise SourceChanged(f"{self.path}: the journal shrank below the {self.offset} bytes already read")
        if self.stop is not None:
            if self._stopped_at == (size, mtime):
                return []
            # A writer reopening the journal sets a torn line aside and appends in its place.
            raise SourceChanged(f"{self.path}: the journal changed after the line reading stopped at")
        scan = Lines(fd, self.offset, size=self.read_size)
        run = next(iter(scan), None)  # the next run of whole lines; a torn tail (no newline yet) is never read
        if run is None:
            return []
        portable.durable_sync(fd)  # what was read is on disk before any of it is shipped
        whole = scan.read(run)
        checked = self._lines.chunk(whole)
        base = self.offset
        lines = [
            Line(event, bytes(whole[start - base : end - base]), end)
            for event, start, end in zip(checked.events, checked.starts, checked.ends, strict=True)
        ]
        self.offset = self._lines.offset
        if self._lines.stop is not None:
            self.stop = self._lines.stop
            self._stopped_at = (size, mtime)
        return lines
