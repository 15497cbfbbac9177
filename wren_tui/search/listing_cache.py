"""The listing cache of `wren ls --agent`, kept in search's index database: an unchanged file is read no more.

Each row `foreign.listing` made of a file (its start, end, lines, tokens, project, how it ended) is
kept in the index's database with the file's device, inode, size and modification time, and used
again while those are the same; any other file is read as the listing reads it, and its row kept.
Rows of files no longer listed are dropped when the listing is written back. A cache like the
index: deleting it loses nothing, and a listing that cannot open it reads every file. It is opened
through the folder's `folder_index.Index` (`listing_cache`), for writing by `wren ls --agent`, read-only
by the viewer's browser of the agents' sessions.

`wren ls --agent` asks for a page (`newest`): the files are put in order by the start kept of each
(read from the row, nothing more made of it), and only the page's rows are made.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import astuple, fields
from pathlib import Path
from typing import TYPE_CHECKING

from ..foreign.contract import Format
from ..foreign.listing import AgentSession, Keeps, list_agent_sessions, looked_at, marked, remembered
from .index import storable

if TYPE_CHECKING:
    from ..foreign.folders import Listed

_Key = tuple[int, int, int, int]
# Where a kept row (`packed`) holds the session's start.
_STARTED = [field.name for field in fields(AgentSession)].index("started")


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

    def started(self, path: Path, st: os.stat_result) -> tuple[bool, str | None]:
        """Whether a row is kept for `path` as `st` says the file is, and the start it says (no row made)."""
        key = str(path)
        self.asked.add(key)
        kept = self.rows.get(key)
        if kept is None or kept[0] != _key(st):
            return False, None
        start: str | None = marshal.loads(kept[1])[_STARTED]
        return True, start

    def put(self, path: Path, st: os.stat_result, row: AgentSession) -> None:
        key = str(path)
        if not key.isascii() and not storable(key):
            return  # a name that is not UTF-8 cannot be a row (SQLite text): that file is read each time
        self.new[key] = (_key(st), packed(row))

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


def newest(
    places: Sequence[tuple[Listed, Path]],
    skipped: list[str],
    known: ListingCache,
    kept: Keeps,
    limit: int | None = None,
) -> list[AgentSession]:
    """`list_agent_sessions(places, skipped, known, kept=kept)[:limit]`, with only those rows made.

    Each file is put in its place by the start its kept row says (unchanged since it was kept), or by its row,
    read and kept now; then the first `limit` rows alone are made, each as the whole listing makes it ("live"
    said as of now, the store's mark). A database of sessions (OpenCode's) is listed whole, its rows in order
    among the others. The order is the whole listing's: newest first, a session with no start last, equal
    starts in the order the files were found.
    """
    found: list[tuple[Listed, Path]] = []
    exported: list[AgentSession] = []
    for fmt, root in places:
        said: list[str] = []  # each folder's sentences in the order the whole listing says them
        if isinstance(fmt, Format) and fmt.export is not None:  # a Home is an agent whose every file is a session
            exported += list_agent_sessions([(fmt, root)], said, known, kept=kept)
        else:
            found += [(fmt, path) for path in kept.files(fmt, root, said)]
        skipped += said
    stats, held = looked_at(path for _fmt, path in found)
    made: dict[int, AgentSession] = {}
    starts: list[str] = []
    for i, (fmt, path) in enumerate(found):
        st = stats.get(path)
        is_kept, start = (False, None) if st is None else known.started(path, st)
        if not is_kept:
            made[i] = row = remembered(path, fmt, st, held, known)  # read now (and kept)
            start = row.started
        starts.append(start or "")
    # Times are ISO-8601 UTC, so they sort as text; the sort is stable, so equal starts keep the files' order.
    entries: list[tuple[str, int | AgentSession]] = [(start, i) for i, start in enumerate(starts)]
    entries += [(row.started or "", row) for row in exported]
    order = sorted(entries, key=lambda entry: entry[0], reverse=True)[:limit]
    page = []
    for _start, which in order:
        if isinstance(which, AgentSession):
            page.append(which)  # a database's session: its row made and marked with the whole database's
            continue
        fmt, path = found[which]
        row = made.get(which) or remembered(path, fmt, stats[path], held, known)
        page.append(marked(row, kept))
    return page
