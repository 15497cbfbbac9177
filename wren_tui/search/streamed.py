"""The viewer's search read from the index as the full-text table gives it, so the first hits show at once.

`IndexRead.load` (what `wren search` does) asks the full-text table for every candidate before the
first session is answered: over 1,000 Wren journals, a phrase of common words takes most of a
second. The viewer wants the first hit within 50 ms, so `StreamedRead` keeps the table's
answer as a cursor, in rowid order, and reads it only as far as the session being answered needs:
a file's candidates are all known once the cursor is past the file's last item. Items are stored
file after file as the indexer read them (newest first, the order search answers in), so the newest
sessions are answered after the first rows of the cursor. A file whose items lie far ahead of the
cursor (indexed again since, as a live session is) is asked for alone, its own rows only, once the
cursor has been read on for it for a few milliseconds, rather than the cursor read all the way to it.

The candidates of each file are the same as `load` gives (the rows of the same query, in the same
read transaction), so `answer`, and search's hits, are the same: only when they are read changes.

`WarmIndex` keeps the index open on a thread of its own and, at `/`, begins the next search's read
transaction and reads what the index knows of each file while the pattern is typed (`IndexRead.begin`:
over 2,000 files, 7 ms at Enter otherwise). A search started within PREPARED_SECONDS uses it: the
index as it was at `/`. That is as right as a read begun at Enter: a file changed or indexed again
since is not as that read knows it (its device, inode, size and time differ), so it is read from the
file, as a file the index does not know.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sqlite3
import threading
import time
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path

from .folder_index import Index
from .index import Answer, IndexRead, phrase
from .query import Query

# Seconds the cursor is read on for one file; a file it has not passed by then is asked for alone (its own
# rows): reading the cursor up to it would read every other file's candidates in between first.
READ_ON = 0.005
# A read begun at `/` is used by a search started at most this many seconds later; older, the search
# begins its own (a read held open keeps SQLite from folding its log into the index meanwhile).
PREPARED_SECONDS = 30.0


class StreamedRead(IndexRead):
    """A `IndexRead` whose candidates are read from the full-text table as the files are answered, in order."""

    def __init__(self, db: sqlite3.Connection, query: Query) -> None:
        super().__init__(db, query)
        self._rows: Iterator[tuple[int, int]] | None = None
        self._at = 0  # the cursor's last rowid: every candidate up to it is in `candidates`
        self._done = False  # the cursor is at its end: every candidate is known
        self._alone: set[int] = set()  # files asked for alone: the cursor's rows of them are left out
        # What the index is asked, as `IndexRead.load` asks it: the pair table for a pattern of whole words, else
        # the trigram table for its longest literal piece (None: the index cannot narrow this pattern).
        self._asked: tuple[str, str] | None = (
            ("pairs", self.pairs)
            if self.pairs is not None
            else None
            if self.needle is None
            else ("fts", phrase(self.needle))
        )

    def load(self, first: bool = False) -> bool:
        """Open the cursor over the query's candidates; False when the index cannot narrow it or be read (`first` is
        the command's: the viewer streams every hit)."""
        if self._asked is None or (not self.db.in_transaction and not self.begin()):
            return False
        table, asked = self._asked
        try:
            self._rows = self.db.execute(
                f"SELECT i.file, i.id FROM {table} JOIN items i ON i.id = {table}.rowid"
                f" WHERE {table} MATCH ? ORDER BY {table}.rowid",
                (asked,),
            )
        except sqlite3.Error:
            self.close()
            return False
        return True

    def end(self) -> None:
        """End the read transaction, the connection left open for the next search."""
        with contextlib.suppress(sqlite3.Error):
            if self.db.in_transaction:
                self.db.execute("COMMIT")

    def answer(self, path: str | Path, agent: str) -> Answer | None:
        row = self.rows.get(str(path))
        if row is not None and row[1] == agent and not self._known(row[0]):
            return None  # the index cannot be read on: the file is read as without one
        return super().answer(path, agent)

    def _known(self, file: int) -> bool:
        """Read the candidates of `file` (all of them); False if the index could not be read."""
        if self._done or file in self._alone:
            return True
        try:
            (last,) = self.db.execute("SELECT max(id) FROM items WHERE file = ?", (file,)).fetchone()
            if last is None or last <= self._at or self._read_to(last, time.monotonic() + READ_ON):
                return True
            (first,) = self.db.execute("SELECT min(id) FROM items WHERE file = ?", (file,)).fetchone()
            # Far ahead of the cursor (indexed again since, as a live session is): the rest of its rows alone.
            self._alone.add(file)
            assert self._asked is not None
            table, asked = self._asked
            found = self.db.execute(
                f"SELECT i.id FROM {table} JOIN items i ON i.id = {table}.rowid"
                f" WHERE {table} MATCH ? AND {table}.rowid BETWEEN ? AND ? AND i.file = ? ORDER BY {table}.rowid",
                (asked, max(first, self._at + 1), last, file),
            )
            ids = self.candidates.setdefault(file, array("q"))
            ids.extend(ident for (ident,) in found)
        except sqlite3.Error:
            return False
        return True

    def _read_to(self, last: int, until: float) -> bool:
        """Read the cursor until it is past `last` (or at its end); False if that takes past `until`."""
        assert self._rows is not None
        for file, ident in self._rows:
            if file not in self._alone:
                ids = self.candidates.get(file)
                if ids is None:
                    ids = self.candidates[file] = array("q")
                ids.append(ident)
            self._at = ident
            if ident >= last:
                return True
            if time.monotonic() > until:
                return False
        self._done = True
        return True


Job = Callable[[], None]


class WarmIndex:
    """A thread that keeps a folder's index (`folder_index.Index`, read-only) open for a viewer's searches, and
    runs each on it.

    `warm` (the browser calls it at `/`) opens the index, reads the full-text table's layout and begins
    the next search's read (what the index knows of each file) before the pattern is typed, so Enter
    pays none of it; `cool` (the box closed) ends that read. The connection stays open between
    searches (SQLite keeps the pages it read), reopened if the index file was replaced. A search
    (`run`) is a job on the thread: it takes its read with `snapshot` (None when there is no index it
    can read) and must end it; searches run one after another on this one thread, which SQLite's
    connection requires.
    """

    def __init__(self, folder: Path | None) -> None:
        self.index = None if folder is None else Index(folder)
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._db: sqlite3.Connection | None = None
        self._opened: tuple[int, int] | None = None  # the index file's (device, inode) when opened
        # The read begun at `/` (its transaction open on the connection): when, and what it read of each file.
        self._prepared: tuple[float, dict[str, tuple[int, str, tuple[int, int, int, int], bool]]] | None = None

    def warm(self) -> None:
        self.run(self._prepare)

    def cool(self) -> None:
        self.run(self._end_prepared)

    def run(self, job: Job) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="search-index", daemon=True)
            self._thread.start()
        self._jobs.put(job)

    def close(self) -> None:
        if self._thread is not None:
            self._jobs.put(None)
            self._thread = None

    def snapshot(self, query: Query) -> StreamedRead | None:
        """On the thread: the index read for `query`, in the read begun at `/` if recent; None: read the files."""
        db = self._connection()
        prepared, self._prepared = self._prepared, None
        if db is None:
            return None
        snapshot = StreamedRead(db, query)
        if prepared is not None and db.in_transaction:
            if time.monotonic() - prepared[0] <= PREPARED_SECONDS:
                snapshot.rows = prepared[1]
            else:
                snapshot.end()  # too old: `load` begins a read of its own
        if snapshot.load():
            return snapshot
        snapshot.end()
        return None

    def _prepare(self) -> None:
        self._end_prepared()
        db = self._db
        if db is None:
            return
        snapshot = IndexRead(db, _ANY)
        if snapshot.begin():
            self._prepared = (time.monotonic(), snapshot.rows)

    def _end_prepared(self) -> None:
        db = self._connection()
        self._prepared = None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                if db.in_transaction:
                    db.execute("COMMIT")

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()
        if self.index is not None:
            self.index.close()

    def _connection(self) -> sqlite3.Connection | None:
        if self.index is None:
            return None
        try:
            st = os.stat(self.index.path)
        except OSError:
            st = None
        now = None if st is None else (st.st_dev, st.st_ino)
        if self._db is not None:
            try:
                # Open, as it was left: no transaction but the read begun at `/`.
                if now == self._opened and (self._prepared is not None or not self._db.in_transaction):
                    self._db.execute("SELECT 1")  # closed (a snapshot closes it when the index cannot be read)?
                    return self._db
            except sqlite3.Error:
                pass
            self.index.close()
            self._db = None
            self._prepared = None
        if now is None:
            return None
        self._db = self.index.connect()
        self._opened = now
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):  # its layout read: the first search's cursor opens faster
                self._db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (phrase("\x01\x01\x01"),)).fetchall()
        return self._db


# The query a read begun before the pattern is known is made with (it reads no candidate).
_ANY = Query.of("any")
