"""The listing cache of `wren ls --agent`, kept in search's index database: an unchanged file is read no more.

Each row `foreign.listing` made of a file (its start, end, lines, tokens, project, how it ended) is
kept in the index's database with the file's device, inode, size and modification time, and used
again while those are the same; any other file is read as the listing reads it, and its row kept.
Rows of files no longer listed are dropped when the listing is written back. A cache like the
index: deleting it loses nothing, and a listing that cannot open it reads every file. It is opened
through the folder's `folder_index.Index` (`listing_cache`), for writing by `wren ls --agent`, read-only
by the viewer's browser of the agents' sessions.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
from dataclasses import astuple
from pathlib import Path

from ..foreign.listing import AgentSession

_Key = tuple[int, int, int, int]


def _key(st: os.stat_result) -> _Key:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def packed(row: AgentSession) -> bytes:
    """`row` as the `listings` table keeps it (its path as text)."""
    fields = list(astuple(row))
    fields[2] = str(fields[2])
    return marshal.dumps(tuple(fields))


def keep(db: sqlite3.Connection, path: Path, st: os.stat_result, row: AgentSession) -> None:
    """Keep `row`, made of the file at `path` as `st` says it was, for the next `wren ls --agent` (in the
    caller's transaction): the indexer keeps the row of each file it reads, so no listing reads it again."""
    db.execute(
        "INSERT OR REPLACE INTO listings(path, dev, ino, size, mtime, row) VALUES (?, ?, ?, ?, ?, ?)",
        (str(path), *_key(st), packed(row)),
    )


class ListingCache:
    """`foreign.listing.Summaries` in the index's database (table `listings`), read at once, written at `save`
    (with `writable`: the database was opened for writing). Raises sqlite3.Error: it cannot be read."""

    def __init__(self, db: sqlite3.Connection, *, writable: bool) -> None:
        self.db = db
        self.writable = writable
        self.rows: dict[str, tuple[_Key, bytes]] = {}
        for path, dev, ino, size, mtime, row in db.execute("SELECT path, dev, ino, size, mtime, row FROM listings"):
            self.rows[path] = ((dev, ino, size, mtime), row)
        self.new: dict[str, tuple[_Key, bytes]] = {}
        self.asked: set[str] = set()

    def get(self, path: Path, st: os.stat_result) -> AgentSession | None:
        key = str(path)
        self.asked.add(key)
        kept = self.rows.get(key)
        if kept is None or kept[0] != _key(st):
            return None
        fields = list(marshal.loads(kept[1]))
        fields[2] = path
        return AgentSession(*fields)

    def put(self, path: Path, st: os.stat_result, row: AgentSession) -> None:
        self.new[str(path)] = (_key(st), packed(row))

    def save(self, places: list[Path]) -> None:
        """Write the rows read this time; drop those of files under `places` not listed. A cache: if it cannot be
        written, the listing is still right, and the next one reads these files again."""
        with contextlib.suppress(sqlite3.Error):
            self._save(places)

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def _save(self, places: list[Path]) -> None:
        if not self.writable:
            return
        gone = [
            path
            for path in self.rows
            if path not in self.asked and any(path.startswith(f"{root}{os.sep}") for root in map(str, places))
        ]
        if not self.new and not gone:
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany(
                "INSERT OR REPLACE INTO listings(path, dev, ino, size, mtime, row) VALUES (?, ?, ?, ?, ?, ?)",
                [(path, *key, row) for path, (key, row) in self.new.items()],
            )
            self.db.executemany("DELETE FROM listings WHERE path = ?", [(path,) for path in gone])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
