"""Search's index, written: each session file read once, then only what was added to it.

`refresh` brings the index up to date with the sessions given: a file it read as it is now is left
alone; a file that grew (`index.grown`) is read from where the last reading ended, with the reader's
memory kept there; any other (new, replaced, truncated, rewritten) is forgotten and read whole. Each
file is one SQLite transaction: its items, its full-text rows, and where its reading ended are
committed together or not at all, so a kill at any moment leaves the index as it was before that
file (and that file is read again next time). Items are written as they are read, a few hundred at a
time: memory does not grow with the size or number of sessions.

The viewer never loads this module; `wren search` and `wren ls` do. Everything here writes only the
index's own folder.
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import os
import sqlite3
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from ..journal.errors import JournalError
from ..portable import open_read_only
from . import index
from .folder_index import IndexRefused, IndexUnavailable
from .index import FILE_COLUMNS, fts_name, fts_text, known_of, pairs_of, stop_blob, stored_of
from .sources import Item, Resumable, SearchSource

if TYPE_CHECKING:
    from .readahead import Readahead
    from .stored import Ref

_BATCH = 256  # items written at a time
_FEW = 64  # up to this many files to bring up to date, the index is asked for each one's row alone

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, id INTEGER NOT NULL UNIQUE, agent TEXT NOT NULL,
    dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
    off INTEGER NOT NULL, head INTEGER NOT NULL, tail INTEGER NOT NULL,
    resumable INTEGER NOT NULL, stop BLOB, warnings BLOB, provisional INTEGER, low INTEGER, high INTEGER
);
CREATE TABLE IF NOT EXISTS states(file INTEGER PRIMARY KEY, state BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS listings(
    path TEXT PRIMARY KEY, dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
    row BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, file INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS items_file ON items(file, id);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    text, name, content='', columnsize=0, detail=none, tokenize='trigram'
);
CREATE VIRTUAL TABLE IF NOT EXISTS pairs USING fts5(
    text, name, content='', columnsize=0, tokenize="ascii tokenchars '_'"
);
"""


def connect_write(path: Path, said: list[str] | None = None) -> sqlite3.Connection:
    """The index at `path`, made if it is not there (and made again if it is of another version, or damaged).

    Only a database Wren made (its `index.APPLICATION_ID`) is ever written or dropped. Another program's
    database found there is moved aside untouched (to `search.sqlite.other-N`, with the files SQLite keeps
    beside it) and a new index made; what was done is added to `said`, a sentence a person reads.

    Raises:
        IndexRefused: the index's folder or file is a symbolic link (never followed), or another
            program's database there could not be moved aside.
        IndexUnavailable: it cannot be made or opened for writing.
    """
    try:
        return _connect(path, said)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError):  # locked, read-only, no space: not the file's fault
            raise IndexUnavailable(f"{path}: {exc}") from None
    if index.kind_at(path) != "ours":  # changed while it was opened: never dropped
        raise IndexUnavailable(f"{path}: not Wren's search index")
    try:  # a damaged index: a cache, so made again
        path.unlink()
        return _connect(path, said)
    except (OSError, sqlite3.Error) as exc:
        raise IndexUnavailable(f"{path}: {exc}") from None


def _connect(path: Path, said: list[str] | None) -> sqlite3.Connection:
    try:
        # 0700, whatever the umask: the index holds every session's text (other agents' too, never redacted).
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        older = _prepare(path, said)
        db = sqlite3.connect(path, timeout=index.BUSY_MS / 1000)
        if index.linked(path) is not None:  # put there since `_prepare` looked: nothing read or written yet
            db.close()
            raise IndexRefused(f"{path}: the search index was replaced by a symbolic link; it was not used")
    except OSError as exc:
        raise IndexUnavailable(f"{path}: {exc}") from None
    except sqlite3.OperationalError as exc:
        raise IndexUnavailable(f"{path}: {exc}") from None
    try:
        db.isolation_level = None
        made = False
        db.execute("BEGIN IMMEDIATE")
        try:
            owner = db.execute("PRAGMA application_id").fetchone()[0]
            if owner != index.APPLICATION_ID:
                tables = set(db.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
                if owner != 0 or (tables and not (older and tables == _tables())):
                    # another program's, put there since `_prepare` looked: left as it is
                    raise IndexRefused(f"{path} is not Wren's search index (another program's database): left unused")
                db.execute(f"PRAGMA application_id={index.APPLICATION_ID}")
            version = _version(db)
            if version != index.VERSION or _orphaned(db):
                if version is not None:  # another version's: dropped, rebuilt from the files
                    # (or this version's, with most of its full-text rows left pointing at no item: `_forget`)
                    for table in ("fts", "pairs", "items", "states", "files", "listings", "meta"):
                        db.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (index.VERSION,))
                made = True
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        if made or (_vacuum(db) != _INCREMENTAL and db.execute("SELECT 1 FROM items LIMIT 1").fetchone() is None):
            _shrunk(db)  # tables just made (or made and left so by a kill): empty, so this costs nothing
        db.execute("PRAGMA journal_mode=WAL")  # readers (the viewer) read on while it is written
        db.execute("PRAGMA synchronous=NORMAL")  # in WAL: a commit is atomic, and waits for no disk
        _private(path)
    except OSError as exc:
        db.close()
        raise IndexUnavailable(f"{path}: {exc}") from None
    except sqlite3.OperationalError as exc:
        db.close()
        raise IndexUnavailable(f"{path}: {exc}") from None
    except BaseException:
        db.close()
        raise
    return db


_INCREMENTAL = 2  # PRAGMA auto_vacuum's value for INCREMENTAL


def _vacuum(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA auto_vacuum").fetchone()[0])


def _shrunk(db: sqlite3.Connection) -> None:
    """The database, its tables just made (empty), made again so it gives back what it frees from now on
    (`reclaim`), and at its size (the pages of the tables an older version's index held, dropped just now).

    SQLite takes `auto_vacuum` only for a database with no page yet, or at a VACUUM; set on a new file it writes
    the file's first page at once, without Wren's application id, where a kill would leave a database Wren
    takes for another program's. Here the id and the tables are written first, in one transaction, and the
    VACUUM (one transaction too) of the empty tables comes after. Left as it is if another process holds the
    index meanwhile (its free pages are then written again first, as SQLite does).
    """
    with contextlib.suppress(sqlite3.OperationalError):
        db.execute(f"PRAGMA auto_vacuum={_INCREMENTAL}")
        db.execute("VACUUM")


# Free pages, as a share of the database's, from which a refresh gives them back to the disk (`reclaim`).
FREE_SHARE = 8


def reclaim(db: sqlite3.Connection) -> None:
    """Give the disk back the pages the index no longer uses, when they are more than 1/FREE_SHARE of them.

    FTS5 merges its segments into new pages and frees the old ones; SQLite keeps freed pages in the file for
    later writes. An index is a cache of the journals at most their size: what it freed is given back (SQLite's
    incremental vacuum moves the last pages into the free ones and cuts the file), in a transaction of its own.
    """
    with contextlib.suppress(sqlite3.OperationalError):  # another process writing: given back another time
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        if free and free * FREE_SHARE > db.execute("PRAGMA page_count").fetchone()[0]:
            db.executescript("PRAGMA incremental_vacuum;")  # stepped to its end (`execute` frees one page)


def _prepare(path: Path, said: list[str] | None) -> bool:
    """Make the index's place one SQLite may open: no link on the way, no other program's database, the
    file made 0600 (SQLite gives its -wal and -shm the database's mode). True: the index there is one an
    older Wren made, before it wrote its application id (`_made_by_an_older_wren`), given it now.

    Raises:
        IndexRefused: a link, or another program's database that cannot be moved aside.
        OSError: the folder cannot be written.
    """
    kind = index.kind_at(path)
    if kind == "link":
        link = index.linked(path)
        raise IndexRefused(
            f"the search index's {'folder' if link == path.parent else 'file'} {link} is a symbolic link, which Wren "
            "does not follow (it could lead to another program's files); the sessions were read instead: remove the "
            "link and the index is made again"
        )
    if kind == "other" and _made_by_an_older_wren(path):
        return True
    if kind == "other":
        aside = _set_aside(path)
        if said is not None:
            said.append(
                f"{path} was not Wren's search index (another program's database, or an index an older Wren made): "
                f"it was moved to {aside} untouched, and a new index made; delete it if it is not yours"
            )
        kind = "absent"
    elif kind in ("garbage", "odd"):  # not a database: Wren's damaged index, or anything else put in its place
        try:
            path.unlink()
        except IsADirectoryError:
            raise IndexRefused(f"the search index {path} is a folder; the sessions were read instead") from None
        except PermissionError as exc:
            raise IndexUnavailable(f"{path}: {exc}") from None
        kind = "absent"
    if kind == "absent":
        with contextlib.suppress(FileExistsError):  # another search made it meanwhile
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | index.NO_FOLLOW, 0o600))
    return False


def _made_by_an_older_wren(path: Path) -> bool:
    """Whether the database at `path`, without Wren's application id, is an index a Wren made before it wrote
    one: it holds exactly this version's tables, each as this version writes it (SQLite keeps the statement as
    written). Read with SQLite told the file is immutable: no lock taken, no -shm made, nothing written.
    Another program's database never holds these statements; a copy of them holds nothing but an index.
    """
    try:
        db = sqlite3.connect(f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return False
    try:
        found = set(db.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    except sqlite3.Error:
        return False
    finally:
        db.close()
    return found == _tables()


@functools.cache
def _tables() -> set[tuple[str, str, str]]:
    """What an index of this version holds in `sqlite_master` (its tables, FTS5's own, the index on items)."""
    db = sqlite3.connect(":memory:")
    try:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        return set(db.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    finally:
        db.close()


def _set_aside(path: Path) -> Path:
    """Move another program's database at `path` (and the files SQLite keeps beside it) to a free name beside it,
    never over anything; the name it now has.

    Raises:
        IndexRefused: it could not be moved.
    """
    for n in range(1, 1000):
        aside = path.with_name(f"{path.name}.other-{n}")
        if any(os.path.lexists(f"{aside}{side}") for side in ("", *index.SIDE_FILES)):
            continue
        try:
            # Fails if the name was taken meanwhile: nothing overwritten. The name itself, never what it may lead to.
            os.link(path, aside, **({"follow_symlinks": False} if os.link in os.supports_follow_symlinks else {}))
        except FileExistsError:
            continue
        except OSError as exc:
            raise IndexRefused(
                f"{path} is not Wren's search index (another program's database) and could not be moved aside "
                f"({(exc.strerror or str(exc)).lower()}); it was left as it is and the sessions were read instead"
            ) from None
        for side in index.SIDE_FILES:
            with contextlib.suppress(FileNotFoundError):
                os.rename(f"{path}{side}", f"{aside}{side}")
        path.unlink()
        return aside
    raise IndexRefused(f"{path} is not Wren's search index, and 999 others are beside it already; it was left as it is")


def _private(path: Path) -> None:
    """The index's files readable by their owner only (an index an older Wren made 0644 too)."""
    for name in (str(path), *(f"{path}{side}" for side in index.SIDE_FILES)):
        try:
            st = os.stat(name, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_mode & 0o077:
            os.chmod(name, 0o600)  # a regular file as just looked at (`_prepare` refused any link here)


def _version(db: sqlite3.Connection) -> object:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    except sqlite3.OperationalError:
        return None  # no meta table: a new index
    return None if row is None else row[0]


def refresh(db: sqlite3.Connection, sources: Iterable[SearchSource], *, forget: Iterable[str] | None = None) -> int:
    """Bring the index up to date with `sources`; how many files were read. Forget the files at `forget`
    (None: every file the index knows that is not among `sources` and no longer there).

    `wren search` asks a `IndexRead` which sessions are stale (and which are gone) first, and gives only
    those. Files are written a few at a time in one transaction (each file whole or not at all),
    committed every half second or so: a kill loses at most that, never makes the index wrong. A
    file that cannot be opened is left out (search reads it, and says why). Raises sqlite3.Error.
    """
    from . import readahead  # the workers and the readers: only for a search with files to read, not every search

    read = 0
    # A file whose name is not UTF-8 cannot be a row (its path is SQLite text): search reads it whole, each time.
    sources = [source for source in sources if index.storable(source.path_text)]
    if forget is None or len(sources) > _FEW:
        known = {row[0]: row[1:] for row in db.execute("SELECT path, id, dev, ino, size, mtime FROM files")}
    else:
        known = {}
        for source in sources:
            row = db.execute("SELECT path, id, dev, ino, size, mtime FROM files WHERE path = ?", (str(source.path),))
            known.update((found[0], found[1:]) for found in row)
    if forget is None:
        seen = {str(source.path) for source in sources}
        forget = [key for key in known if key not in seen and not os.path.lexists(key)]
    todo: list[tuple[SearchSource, int | None]] = []  # each file to read, and its place among those read ahead
    ahead: list[tuple[str, str]] = []
    ahead_bytes = 0
    for source in sources:
        try:
            st = os.stat(source.path, follow_symlinks=False)
        except OSError:
            continue
        was = known.get(str(source.path))
        if was is not None and was[1:] == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
            continue
        job = readahead.job_of(source) if was is None else None  # new to the index: read whole
        todo.append((source, None if job is None else len(ahead)))
        if job is not None:
            ahead.append(job)
            ahead_bytes += st.st_size
    workers = min(readahead.workers(), len(ahead))
    reader = readahead.Readahead(ahead, workers) if workers > 0 and ahead_bytes >= readahead.ahead_bytes() else None
    batch = _Batch(db)
    merged = len(todo) >= MERGE_AFTER  # merged into one segment at the end: no merging on the way
    cached = 0  # SQLite's page cache as it was before a large reading (put back after it)
    if merged:
        cached = int(db.execute("PRAGMA cache_size").fetchone()[0])
        # The pages a large reading writes again and again (FTS5's segments, the tables' inner pages) copied
        # into the database once every 64 MB of log rather than every 4 MB: a fifth less of the writer's time.
        db.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
        # And kept in memory meanwhile rather than read back from the log: SQLite's own 2 MB cache read 390 MB
        # back while 2,000 Claude Code sessions were written, 64 MB read 110 MB (a bound, whatever the corpus).
        db.execute(f"PRAGMA cache_size=-{CACHE_KB}")
    try:
        if todo:
            batch.open()
            _merging(db, not merged)
        for source, place in todo:
            batch.open()
            done = _savepoint(db, source) if reader is None or place is None else _taken(db, source, reader, place)
            if done:
                _listed(db, source)
            read += done
            batch.maybe_commit()
        for key in forget:
            row = db.execute("SELECT id FROM files WHERE path = ?", (key,)).fetchone()
            if row is not None:
                batch.open()
                _forget(db, int(row[0]))
                db.execute("DELETE FROM files WHERE id = ?", (row[0],))
                db.execute("DELETE FROM states WHERE file = ?", (row[0],))
        batch.commit()
        if merged:
            # FTS5 keeps what each transaction wrote as a segment of its own (merged a few at a time): a query
            # reads every segment's list of each trigram. One segment after a large reading: a warm search over
            # 1,000 Wren journals asked its phrase in 490 ms instead of 800 ms. Merging only here, not on the
            # way too, saved about a quarter of the writer's time (2,000 Claude Code sessions: 4.8 to 3.4 s CPU).
            batch.open()
            db.execute("INSERT INTO fts(fts) VALUES('optimize')")
            db.execute("INSERT INTO pairs(pairs) VALUES('optimize')")
            _merging(db, True)
            batch.commit()
        if todo or forget:
            reclaim(db)
    except BaseException:
        batch.rollback()
        raise
    finally:
        if reader is not None:
            reader.close()
        if merged:
            with contextlib.suppress(sqlite3.Error):  # never in the way of what the reading raised
                db.execute("PRAGMA wal_autocheckpoint=1000")  # SQLite's own, for what follows on this connection
                db.execute(f"PRAGMA cache_size={cached}")
    return read


def _listed(db: sqlite3.Connection, source: SearchSource) -> None:
    """Keep `wren ls --agent`'s row of another agent's file just read (its head and tail read again, a few
    kB), so the listing after a build reads none of them (docs/search-index.md, "wren ls --agent")."""
    listing = getattr(source, "listing", None)  # a ForeignSession's (Wren's journals are listed otherwise)
    if listing is None:
        return
    try:
        st = os.stat(source.path)
    except OSError:
        return
    row = listing()
    if row is not None:
        from .listing_cache import keep  # the other agents' listing: loaded only when one of their files is read

        keep(db, source.path, st, row)


MERGE_AFTER = 200  # files to read in one refresh from which the full-text tables are merged into one segment
CHECKPOINT_PAGES = 16384  # pages of write-ahead log (4 kB each) a large reading lets grow between checkpoints
CACHE_KB = 65536  # the pages a large reading keeps in memory (SQLite's cache_size, in kB)
AUTOMERGE = 4  # FTS5's own: segments of a level merged once there are this many (0: none but in a crisis)


def _merging(db: sqlite3.Connection, on: bool) -> None:
    """Let FTS5 merge segments as it writes (`on`), or not: a large reading merges once at its end instead.

    The setting is kept in the tables themselves: a reading killed before its end leaves it off, and the
    next refresh turns it on again (FTS5's crisis merge, at 16 segments of a level, bounds them meanwhile).
    """
    want = AUTOMERGE if on else 0
    for table in ("fts", "pairs"):
        row = db.execute(f"SELECT v FROM {table}_config WHERE k = 'automerge'").fetchone()
        if (AUTOMERGE if row is None else row[0]) != want:
            db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('automerge', ?)", (want,))


class _Batch:
    """One write transaction over several files, committed when it has run long enough."""

    SECONDS = 0.5

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.began: float | None = None

    def open(self) -> None:
        if self.began is None:
            self.db.execute("BEGIN IMMEDIATE")
            self.began = time.monotonic()

    def maybe_commit(self) -> None:
        if self.began is not None and time.monotonic() - self.began >= self.SECONDS:
            self.commit()

    def commit(self) -> None:
        if self.began is not None:
            self.db.execute("COMMIT")
            self.began = None

    def rollback(self) -> None:
        if self.began is not None:
            self.began = None
            self.db.execute("ROLLBACK")


def update(db: sqlite3.Connection, source: SearchSource) -> int:
    """Read what the index lacks of one file, in a transaction of its own; 1 if it was read, 0 if left as it was."""
    batch = _Batch(db)
    batch.open()
    try:
        read = _savepoint(db, source)  # one file: never the MERGE_AFTER a refresh merges after
        batch.commit()
    except BaseException:
        batch.rollback()
        raise
    return read


def _savepoint(db: sqlite3.Connection, source: SearchSource) -> int:
    """`_read` of one file, undone whole if it fails."""
    db.execute("SAVEPOINT file")
    try:
        read = _read(db, source)
    except JournalError:
        read = 0
        db.execute("ROLLBACK TO file")
    except BaseException:
        db.execute("ROLLBACK TO file")
        db.execute("RELEASE file")
        raise
    db.execute("RELEASE file")
    return read


def _taken(db: sqlite3.Connection, source: SearchSource, reader: Readahead, place: int) -> int:
    """Write one file new to the index from what a worker read of it (inside the batch's transaction); 1 if it
    was read, 0 if left out (as `_savepoint` would leave it).

    No savepoint: FTS5 writes its pending rows out as a segment of their own at every savepoint (a
    segment a file, merged again and again: a third more of the full-text table's time). A file whose
    reading fails after some of its items were written has them taken out again (`_forget`); a kill
    loses the whole transaction, as before.
    """
    from . import readahead

    frames = reader.frames(place)
    key = str(source.path)
    if db.execute("SELECT 1 FROM files WHERE path = ?", (key,)).fetchone() is not None:
        for _frame in frames:  # another process indexed it meanwhile: what `_read` does with a known file
            pass
        return _savepoint(db, source)
    ident = _next(db, "files")
    first = item = _next(db, "items")
    rows: list[tuple[int, int, bytes]] = []
    texts: list[tuple[int, str, str]] = []
    ending: readahead.Frame = (readahead.FAIL,)
    for frame in frames:
        if frame[0] != readahead.ROWS:
            ending = frame
            break
        for blob, text, name in frame[1]:
            rows.append((item, ident, blob))
            texts.append((item, text, name))
            item += 1
        _flush(db, rows, texts)
    if ending[0] == readahead.SKIP:  # it could not be opened (nothing of it written)
        return 0
    if ending[0] != readahead.END:
        _forget(db, ident, first, key)  # what was written of it
        for _frame in frames:
            pass
        # a JournalError: left out, as `_savepoint` leaves it; anything else: read here, to see what it raises
        return 0 if ending[0] == readahead.BAD else _savepoint(db, source)
    _, identity, offset, state, provisional, head, tail, stop, warnings = ending
    dev, ino, size, mtime = identity
    db.execute(
        "INSERT INTO files(path, id, agent, dev, ino, size, mtime, off, head, tail, resumable, stop, "
        "warnings, provisional, low, high) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            key,
            ident,
            source.agent,
            dev,
            ino,
            size,
            mtime,
            offset,
            head,
            tail,
            state is not None,
            stop,
            warnings,
            item - provisional if provisional else None,
            *((first, item - 1) if item > first else (None, None)),  # its items' ids: those just written
        ),
    )
    if state is not None:
        db.execute("INSERT OR REPLACE INTO states(file, state) VALUES (?, ?)", (ident, state))
    return 1


def _read(db: sqlite3.Connection, source: SearchSource) -> int:
    """Read what the index lacks of one file (inside a transaction); 1 if it was read, 0 if left as it was."""
    from .readahead import EVERYTHING, blobs

    if not isinstance(source, Resumable):
        return 0
    key = str(source.path)
    row = db.execute(f"SELECT {FILE_COLUMNS} FROM files WHERE path = ?", (key,)).fetchone()
    was = None if row is None else known_of(row)
    try:
        fd = open_read_only(source.path)
    except OSError:
        return 0
    try:
        st = os.fstat(fd)
        if was is not None and index.fresh(was, st):  # another process read it meanwhile
            return 0
        same = was is not None and was.agent == source.agent and index.grown(was, source.path, st)
        saved = was.saved(db) if same and was is not None else None
        ident = was.id if was is not None else _next(db, "files")
        if was is not None and saved is None:
            _forget(db, was.id)  # read again whole
        elif was is not None and was.provisional is not None:
            _forget(db, was.id, was.provisional)  # the items the grown part is read again for
        first = _next(db, "items")
        items = source.resume(EVERYTHING, saved) if saved is not None else source.items(EVERYTHING)
        last = _write(db, ident, first, blobs(source, items))
        done = source.saved
        if done is None:  # a reader that cannot say where it ended: kept as read whole, read again whole
            offset, state, provisional = 0, None, None
        else:
            offset, state = done.offset, done.state
            provisional = last - done.provisional if done.provisional else None
        head, tail = index.checksums(fd, offset)
    finally:
        os.close(fd)
    warnings = marshal.dumps(list(source.warnings)) if source.warnings else None
    low, high = _span(db, ident)
    db.execute(
        "INSERT OR REPLACE INTO files(path, id, agent, dev, ino, size, mtime, off, head, tail, resumable, stop, "
        "warnings, provisional, low, high) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            key,
            ident,
            source.agent,
            st.st_dev,
            st.st_ino,
            st.st_size,
            st.st_mtime_ns,
            offset,
            head,
            tail,
            state is not None,
            stop_blob(source.stop),
            warnings,
            provisional,
            low,
            high,
        ),
    )
    if state is None:
        db.execute("DELETE FROM states WHERE file = ?", (ident,))
    else:
        db.execute("INSERT OR REPLACE INTO states(file, state) VALUES (?, ?)", (ident, state))
    return 1


def _span(db: sqlite3.Connection, file: int) -> tuple[int | None, int | None]:
    """The lowest and highest id of a file's items (None, None: it has none), as its files row keeps them: `-l`
    finds each file's first candidate by them (`IndexRead._spans_of_files`)."""
    low = db.execute("SELECT min(id) FROM items WHERE file = ?", (file,)).fetchone()[0]
    high = db.execute("SELECT max(id) FROM items WHERE file = ?", (file,)).fetchone()[0]
    return low, high


def _next(db: sqlite3.Connection, table: str) -> int:
    """The id after the highest given (an item's id is never given again: `_forget`)."""
    row = db.execute(f"SELECT max(id) FROM {table}").fetchone()
    highest = int(row[0] or 0)
    return max(highest, _meta_int(db, "top")) + 1 if table == "items" else highest + 1


def _write(db: sqlite3.Connection, file: int, first: int, items: Iterable[tuple[Item, bytes]]) -> int:
    """Write `items` (each with its row's blob) from id `first` on, a batch at a time; the id after the last."""
    ident = first
    rows: list[tuple[int, int, bytes]] = []
    texts: list[tuple[int, str, str]] = []
    for item, blob in items:
        rows.append((ident, file, blob))
        texts.append((ident, fts_text(item.text), fts_name(item.name)))
        ident += 1
        if len(rows) >= _BATCH:
            _flush(db, rows, texts)
    _flush(db, rows, texts)
    return ident


def _flush(db: sqlite3.Connection, rows: list[tuple[int, int, bytes]], texts: list[tuple[int, str, str]]) -> None:
    if rows:
        db.executemany("INSERT INTO items(id, file, data) VALUES (?, ?, ?)", rows)
        db.executemany("INSERT INTO fts(rowid, text, name) VALUES (?, ?, ?)", texts)
        db.executemany("INSERT INTO pairs(rowid, text, name) VALUES (?, ?, ?)", map(_pairs, texts))
        rows.clear()
        texts.clear()


def _pairs(row: tuple[int, str, str]) -> tuple[int, str, str]:
    """A full-text row (id, text, name) as the pair table holds it."""
    ident, text, name = row
    return ident, pairs_of(text), pairs_of(name) if name else ""


def _forget(db: sqlite3.Connection, file: int, lowest: int = 0, path: str | None = None) -> None:
    """Take a file's items out of the index (those from id `lowest` on); `path`: the file's, if the files table
    does not hold it yet.

    The full-text tables keep no text (`content=''`): a row is taken out by giving its text again. An item kept
    whole has it; a Wren journal's item is read again from its line, when the file still holds the bytes it was
    indexed from (its CRC-32). Where it does not (the file is gone, truncated, replaced), the item's rows stay
    in the full-text tables, pointing at no item (a candidate found there is dropped with the items table's
    row gone): `orphans` counts them, ids are never given again (`top`), and once they are most of the
    index it is made again (`_orphaned`).
    """
    if path is None:
        row = db.execute("SELECT path FROM files WHERE id = ?", (file,)).fetchone()
        path = None if row is None else str(row[0])
    fd: int | None = None
    lost, top = 0, 0
    rows = db.execute("SELECT id, data FROM items WHERE file = ? AND id >= ? ORDER BY id", (file, lowest))
    try:
        while batch := rows.fetchmany(_BATCH):
            deleting = []
            refs: list[tuple[int, Ref]] = []
            for ident, data in batch:
                each = stored_of(data)
                if isinstance(each, Item):
                    deleting.append((ident, fts_text(each.text), fts_name(each.name)))
                else:
                    refs.append((ident, each))
            if refs and fd is None and path is not None:
                fd = _opened(path)
            for ident, item in _read_back(fd, refs):
                if item is None:
                    lost, top = lost + 1, max(top, ident)
                else:
                    deleting.append((ident, fts_text(item.text), fts_name(item.name)))
            db.executemany("INSERT INTO fts(fts, rowid, text, name) VALUES ('delete', ?, ?, ?)", deleting)
            db.executemany(
                "INSERT INTO pairs(pairs, rowid, text, name) VALUES ('delete', ?, ?, ?)", map(_pairs, deleting)
            )
    finally:
        if fd is not None and fd >= 0:
            os.close(fd)
    db.execute("DELETE FROM items WHERE file = ? AND id >= ?", (file, lowest))
    if lost:
        db.execute("INSERT OR REPLACE INTO meta VALUES ('orphans', ?)", (_meta_int(db, "orphans") + lost,))
        db.execute("INSERT OR REPLACE INTO meta VALUES ('top', ?)", (max(top, _meta_int(db, "top")),))


def stored_items(db: sqlite3.Connection) -> Iterator[tuple[int, Item]]:
    """Every item the index holds, with its id, file after file (a journal's read again from it; one whose bytes
    are no longer those indexed is left out)."""
    for file, path in db.execute("SELECT id, path FROM files ORDER BY id").fetchall():
        fd = _opened(path)
        try:
            rows = db.execute("SELECT id, data FROM items WHERE file = ? ORDER BY id", (file,))
            while batch := rows.fetchmany(_BATCH):
                refs: list[tuple[int, Ref]] = []
                for ident, data in batch:
                    each = stored_of(data)
                    if isinstance(each, Item):
                        yield ident, each
                    else:
                        refs.append((ident, each))
                yield from ((ident, item) for ident, item in _read_back(fd, refs) if item is not None)
        finally:
            if fd >= 0:
                os.close(fd)


def _opened(path: str) -> int:
    """A descriptor on the file at `path`, or -1 when it cannot be opened (gone)."""
    try:
        return open_read_only(Path(path))
    except OSError:
        return -1


def _read_back(fd: int | None, refs: list[tuple[int, Ref]]) -> list[tuple[int, Item | None]]:
    """Each of `refs` with its item read again from the journal open at `fd`; None for one whose bytes are
    not those indexed (or with no file)."""
    from .stored import item_at, stored_spans

    if not refs:
        return []
    if fd is None or fd < 0:
        return [(ident, None) for ident, _ in refs]
    try:
        spans = stored_spans(fd, [ref for _, ref in refs])
    except OSError:
        spans = None
    if spans is None and len(refs) > 1:  # some of them changed: each alone
        return [found for each in refs for found in _read_back(fd, [each])]
    if spans is None:
        return [(refs[0][0], None)]
    found: list[tuple[int, Item | None]] = []
    for (ident, ref), span in zip(refs, spans, strict=True):
        try:
            found.append((ident, item_at(span, ref)))
        except JournalError:
            found.append((ident, None))
    return found


def _meta_int(db: sqlite3.Connection, key: str) -> int:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return 0 if row is None else int(row[0])


ORPHANS = 10_000  # items left in the full-text tables (`_forget`) from which the index may be made again


def _orphaned(db: sqlite3.Connection) -> bool:
    """Whether the full-text tables' rows that point at no item are more than half of all the ids given out."""
    orphans = _meta_int(db, "orphans")
    return orphans >= ORPHANS and orphans * 2 > _next(db, "items")
