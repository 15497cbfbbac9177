"""A journals folder's search index as one object: `Index`, what every search and listing opens it through.

The index's protocol lives here, and nowhere above search/: open the database (for writing when the
caller may write it, else read-only), begin a read for a query (`begin`: what the index knows of
each file), list the sessions (the caller's), bring the index up to date with them and read the
query's candidates (`answers`: the files it does not know as they are now given to the indexer, the
files gone forgotten, then a new read begun), and the listing cache of `wren ls --agent` kept in the
same database (`listing_cache`). The commands and the viewer hand it a `Query` and plain values;
they hold no connection, run no SQL and import no sqlite3 (tests/search/test_index_home.py).

The viewer must never load what writes the index (tests/test_layers.py), so the writer is handed
in: `wren search` and `wren ls --agent` give `Index` the module `indexer` (a `Writer`; `wren search` a
stand-in that imports it when first asked, so a warm search, whose read is begun on the index opened
read-only, loads no writer); the viewer gives none, and opens the index read-only.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .index import SIDE_FILES, IndexRead, connect_read, index_path
from .query import Query
from .sources import SearchSource

if TYPE_CHECKING:
    from .listing_cache import ListingCache


def _private(path: Path) -> bool:
    """Whether the index's files (those there) are readable by their owner alone, as the writer leaves them."""
    for name in (str(path), *(f"{path}{side}" for side in SIDE_FILES)):
        try:
            if os.stat(name, follow_symlinks=False).st_mode & 0o077:
                return False
        except FileNotFoundError:
            continue
        except OSError:
            return False
    return True


class IndexUnavailable(Exception):
    """The index cannot be written here (a read-only folder, a full disk): search reads the files instead."""


class IndexRefused(IndexUnavailable):
    """The index's place holds what Wren will not open (a symbolic link): search reads the files, and says why."""


class Writer(Protocol):
    """What writes the index (`search.indexer`, loaded by the commands, never by the viewer)."""

    def connect_write(self, path: Path, said: list[str] | None = None) -> sqlite3.Connection: ...

    def refresh(
        self, db: sqlite3.Connection, sources: Iterable[SearchSource], *, forget: Iterable[str] | None = None
    ) -> int: ...


class Index:
    """The search index of the journals folder `folder`; with `writer`, opened for writing and kept up to date.

    `said` gathers what a person should be told (a database that was not Wren's moved aside, an index
    that could not be brought up to date), one sentence each, for the caller to print as warnings.
    Nothing here raises for an index that cannot be used: a search then reads the files.
    """

    def __init__(self, folder: Path, *, writer: Writer | None = None) -> None:
        self.folder = folder
        self.path = index_path(folder)
        self.writer = writer
        self.said: list[str] = []
        self._db: sqlite3.Connection | None = None
        self._writable = False
        self._read: IndexRead | None = None
        # The read was begun on the index opened read-only (`_read_first`): opened for writing if a file is stale.
        self._read_only_first = False

    def _open(self, *, or_read: bool = True) -> sqlite3.Connection | None:
        """The database, opened for writing where there is a writer and it can be, else (`or_read`) read-only;
        None: there is none to use."""
        if self._db is not None:
            return self._db
        if self.writer is not None:
            try:
                self._db, self._writable = self.writer.connect_write(self.path, self.said), True
            except IndexRefused as exc:
                self.said.append(str(exc))
                return None
            except IndexUnavailable:
                if not or_read:
                    return None
        if self._db is None:
            self._db, self._writable = connect_read(self.path), False
        return self._db

    def connect(self) -> sqlite3.Connection | None:
        """The database, opened (read-only without a writer) and kept open until `close`; None: none to use.
        For a reader of search/ that keeps a connection of its own (`streamed.WarmIndex`)."""
        return self._open()

    def begin(self, query: Query, *, first: bool = False) -> IndexRead | None:
        """Open the index and begin a read for `query`, what it knows of each file read; None: read the files.

        A folder that does not exist yet gets no index; one where the index cannot be written is read
        from an index already there (as far as it is up to date, the rest read from the files). `first` (-l, as
        `answers` will be asked): the candidates are asked of an index opened read-only at once, in a thread, while
        the caller lists the sessions (`IndexRead.ahead`; one opened for writing is about to be written).
        """
        if not self.folder.is_dir():
            return None
        read = self._read_first(query) if self._db is None and self.writer is not None else None
        if read is None:
            read = self._read_anew(query)
            if read is None:
                return None
        self._read = read
        if first and not self._writable:
            read.ahead()
        return read

    def _read_anew(self, query: Query) -> IndexRead | None:
        """A read begun on the index opened as ever (`_open`: for writing where it can be); None: read the files."""
        db = self._open()
        if db is None:
            return None
        read = IndexRead(db, query)
        if not read.begin():
            self._db = None  # the read closed it
            return None
        return read

    def _read_first(self, query: Query) -> IndexRead | None:
        """A read begun on the index opened read-only, when it is Wren's and of this version; None: open it as ever.

        A warm search (every file as the index holds it) writes nothing: it neither opens the index for writing nor
        loads the writer; `answers` opens it so (`writer.connect_write`, which makes, repairs or moves aside what it
        finds) only when a file is stale or gone.
        """
        if not _private(self.path):
            return None  # an older Wren's index readable by all: made private by the writer's open
        db = connect_read(self.path)
        if db is None:
            return None
        read = IndexRead(db, query)
        if not read.begin():
            return None  # the read closed it
        self._db, self._writable, self._read_only_first = db, False, True
        return read

    def answers(self, sources: list[SearchSource], *, first: bool = False) -> IndexRead | None:
        """The read `begin` began, brought up to date with `sources` and with its query's candidates; None: read
        the files (the index is then closed). `first`: only each file's first hit is wanted (`IndexRead.load`).

        Only the sessions the index does not know as they are now are given to the writer, and the files it
        knows that are gone are forgotten; then a new read is begun, on the index as it is now.
        """
        read = self._read
        if read is None or self._db is None:
            return None
        stale, gone = _changed(read, sources)
        if (stale or gone) and self._read_only_first:
            # Opened read-only for a warm search, and there is something to write: opened as ever, read again.
            self._read_only_first = False
            query = read.query
            self.close()
            read = self._read_anew(query)
            if read is None:
                return None
            self._read = read
            stale, gone = _changed(read, sources)
        if (stale or gone) and self._writable and self.writer is not None:
            db = self._db
            db.execute("COMMIT")  # the read transaction ends; the writer writes; a new one begins
            try:
                self.writer.refresh(db, [source for source in sources if source.path_text in stale], forget=gone)
            except sqlite3.Error as exc:
                self.said.append(
                    f"the search index {self.path} could not be brought up to date ({exc}); the files were read"
                )
                self._db = self._read = None
                db.close()
                return None
            read = self._read = IndexRead(self._db, read.query)
            if not read.begin():
                self._db = self._read = None
                return None
        if read.load(first):
            return read
        self.close()
        return None

    def listing_cache(self) -> ListingCache | None:
        """The rows `wren ls --agent` kept of the other agents' files, read; None: there is no cache to use.

        With a writer, the cache is made if need be and written back by `ListingCache.save` (an index that
        cannot be written: no cache, every file read); without, it is opened read-only (the viewer reads
        what a listing kept, and never writes it).
        """
        from .listing_cache import ListingCache  # only the listings load it

        if not self.folder.is_dir():
            return None
        db = self._open(or_read=self.writer is None)
        if db is None:
            return None
        try:
            return ListingCache(db, writable=self._writable)
        except sqlite3.Error:
            self.close()
            return None

    def close(self) -> None:
        """End any read, and close the database (the object may open it again)."""
        db, self._db, read, self._read = self._db, None, self._read, None
        if read is not None:
            read.stop_ahead()  # its thread ends before the connection it uses is closed
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                if db.in_transaction:
                    db.execute("COMMIT")
                db.close()


def _changed(read: IndexRead, sources: list[SearchSource]) -> tuple[set[str | Path], list[str]]:
    """The sessions the index does not hold as they are now, and the files it holds that are gone. By each path's
    text: the index keys its files by it, and a source makes its Path only when asked."""
    stale = set(read.stale((source.path_text, getattr(source, "looked", None)) for source in sources))
    return stale, read.gone(source.path_text for source in sources)
