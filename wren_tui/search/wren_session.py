"""A Wren journal as a search source: its path and id, and what its last reading said (a `sources.FileSession`).

Light, as `foreign.py` is for another agent's file: a search the index answers makes one for every journal of the
folder and reads none of them. The reading (the raw pass, the journal's reader, its event types, msgspec) is
`wren`, loaded when a journal is read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..journal.store import session_id_of
from .sources import FileSession, Item, Saved

if TYPE_CHECKING:
    from .query import Query
    from .stored import Located
    from .wren import Reading


class WrenSession(FileSession):
    """A Wren journal file, searched read-only."""

    agent = "wren"

    def __init__(self, path: Path) -> None:
        super().__init__(path, session_id_of(path))
        self._reading: Reading | None = None

    @property
    def located(self) -> Located:
        """Where the item `items` (or `resume`) gave last is in the file: its line's (or its deltas') start, end
        and the CRC-32 of those bytes (what the index keeps of it instead of its text, see `stored.Ref`)."""
        assert self._reading is not None, "asked before an item was given"
        return self._reading.located

    def items(self, query: Query) -> Iterator[Item]:
        return self._read(query, None)

    def resume(self, query: Query, saved: Saved) -> Iterator[Item]:
        return self._read(query, saved)

    def _read(self, query: Query, saved: Saved | None) -> Iterator[Item]:
        from ..journal.reader import open_for_reading  # the reading: only for a journal read, not one the index answers
        from .wren import Reading

        fd = open_for_reading(self._path)
        try:
            reading = self._reading = Reading(fd, query.prefilter)
            if saved is not None:
                reading.restore(saved)
            self._warnings = reading.warnings
            yield from reading.run()
            self._stop = reading.stop
            self._saved = reading.saved
        finally:
            os.close(fd)
