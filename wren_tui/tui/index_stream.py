"""The browser's search read from the index as the full-text table gives it, so the first hits show at once.

`Snapshot.load` (what `wren search` does) asks the full-text table for every candidate before the
first session is answered: over 1,000 Wren journals, a phrase of common words takes most of a
second. The viewer wants the first hit within 50 ms, so `StreamedSnapshot` keeps the table's
answer as a cursor, in rowid order, and reads it only as far as the session being answered needs:
a file's candidates are all known once the cursor is past the file's last item. Items are stored
file after file as the indexer read them (newest first, the order search answers in), so the newest
sessions are answered after the first rows of the cursor. A file whose items lie far ahead of the
cursor (indexed again since, as a live session is) is asked for alone, its own rows only, rather
than the cursor read all the way to it.

The candidates of each file are the same as `load` gives (the rows of the same query, in the same
read transaction), so `answer`, and search's hits, are the same: only when they are read changes.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterator
from pathlib import Path

from ..search.index import Answer, Snapshot, phrase
from ..search.query import Query

# A file whose first item is this many items past the cursor is asked for alone (its own rowid range):
# reading the cursor up to it would read every other file's candidates in between first.
LEAP = 5000


class StreamedSnapshot(Snapshot):
    """A `Snapshot` whose candidates are read from the full-text table as the files are answered, in order."""

    def __init__(self, db: sqlite3.Connection, query: Query) -> None:
        super().__init__(db, query)
        self._rows: Iterator[tuple[int, int]] | None = None
        self._at = 0  # the cursor's last rowid: every candidate up to it is in `candidates`
        self._done = False  # the cursor is at its end: every candidate is known
        self._alone: set[int] = set()  # files asked for alone: the cursor's rows of them are left out

    def load(self) -> bool:
        """Open the cursor over the query's candidates; False when the index cannot narrow it or be read."""
        if self.needle is None or (not self.db.in_transaction and not self.begin()):
            return False
        try:
            self._rows = self.db.execute(
                "SELECT i.file, i.id FROM fts JOIN items i ON i.id = fts.rowid WHERE fts MATCH ? ORDER BY fts.rowid",
                (phrase(self.needle),),
            )
        except sqlite3.Error:
            self.close()
            return False
        return True

    def answer(self, path: Path, agent: str) -> Answer | None:
        row = self.rows.get(str(path))
        if row is not None and row[1] == agent and not self._known(row[0]):
            return None  # the index cannot be read on: the file is read as without one
        return super().answer(path, agent)

    def _known(self, file: int) -> bool:
        """Read the candidates of `file` (all of them); False if the index could not be read."""
        if self._done or file in self._alone:
            return True
        try:
            first, last = self.db.execute("SELECT min(id), max(id) FROM items WHERE file = ?", (file,)).fetchone()
            if first is None or last <= self._at:
                return True
            if first > self._at + LEAP:
                self._alone.add(file)
                found = self.db.execute(
                    "SELECT i.id FROM fts JOIN items i ON i.id = fts.rowid"
                    " WHERE fts MATCH ? AND fts.rowid BETWEEN ? AND ? AND i.file = ? ORDER BY fts.rowid",
                    (phrase(self.needle or ""), first, last, file),
                )
                ids = array("q", (ident for (ident,) in found))
                if ids:
                    self.candidates[file] = ids
                return True
            self._read_to(last)
        except sqlite3.Error:
            return False
        return True

    def _read_to(self, last: int) -> None:
        """Read the cursor until it is past `last` (or at its end)."""
        assert self._rows is not None
        for file, ident in self._rows:
            if file not in self._alone:
                ids = self.candidates.get(file)
                if ids is None:
                    ids = self.candidates[file] = array("q")
                ids.append(ident)
            self._at = ident
            if ident >= last:
                return
        self._done = True
