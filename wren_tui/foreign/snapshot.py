"""A private, consistent copy of a SQLite database another program keeps open in WAL mode.

OpenCode keeps every session in one SQLite database in WAL mode (`opencode.db`, `-wal`, `-shm`).
Opening that database with SQLite, even read-only, is not reading it: a connection may run the
WAL's recovery and rewrite `-shm`, update its read marks in `-shm`, and the last connection to
close checkpoints the WAL into the database and deletes `-wal` and `-shm`. `?immutable=1` does
none of that, but then SQLite reads the main file alone: rows still in `-wal` are not seen, and a
checkpoint running meanwhile can hand it half-written pages. So Wren never gives the agent's files
to SQLite. It copies the database and its `-wal` with plain reads into a private folder (never
`-shm`: SQLite rebuilds the index of a WAL it opens without one), checks that neither file changed
while it copied (inode, size, modification and change times, before and after; else it copies
again), and opens its copy. A copy that SQLite still finds damaged is taken again too. The copy of
the database is kept while the agent's file is unchanged: following a live session, only the WAL
is copied again. Reading sets no time on the agent's files either where the kernel allows it
(`O_NOATIME`, the owner's files).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sqlite3
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from .. import portable
from ..journal.errors import JournalError

SQLITE_HEADER = b"SQLite format 3\x00"
# How often a copy is taken again when the files change while they are copied, and the wait between.
_ATTEMPTS = 50
_PAUSE_S = 0.01

Key = tuple[int, int, int, int, int] | None  # inode, size, mtime_ns, ctime_ns, device; None: absent
T = TypeVar("T")


def file_key(path: Path) -> Key:
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev)


def companions(db: Path) -> tuple[Path, Path]:
    """The database's WAL and shared-memory index, beside it."""
    return db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")


def _open_quietly(path: Path) -> int:
    """A read-only descriptor that, where the kernel allows, does not even set the file's access time."""
    if portable.O_NOATIME:
        try:
            return os.open(
                path, os.O_RDONLY | portable.O_CLOEXEC | portable.O_NOFOLLOW | portable.O_NONBLOCK | portable.O_NOATIME
            )
        except PermissionError:
            pass  # O_NOATIME is the owner's: another user's file costs its access time (never its mtime)
    return portable.open_read_only(path)


def _copy(source: Path, target: Path) -> None:
    """The file's bytes into `target`: in the kernel where it can (`copy_file_range`), else by reads and writes."""
    fd = _open_quietly(source)
    try:
        with open(target, "wb") as out:
            portable.copy_range(fd, out.fileno(), 0, None, dst_offset=0)  # to the file's end, however far it grew
    finally:
        os.close(fd)


class Snapshot:
    """Consistent private copies of the database at `db`, taken again when asked (`query`)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self._dir: Path | None = None
        self._db_key: Key = None
        # What the database and its WAL were when the last copy was taken (None: no copy yet).
        self.taken: tuple[Key, Key] | None = None

    def _folder(self) -> Path:
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="wren-sqlite-"))
            _live.add(self)  # removed at exit if still held then
        return self._dir

    def close(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir, self._db_key = None, None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def keys(self) -> tuple[Key, Key]:
        """What the database and its WAL are now (to tell whether they changed since a copy)."""
        wal, _shm = companions(self.db)
        return file_key(self.db), file_key(wal)

    def _take(self) -> Path:
        """A copy of the database and its WAL that were not changed while they were copied."""
        folder = self._folder()
        wal, _shm = companions(self.db)
        copy = folder / "copy.db"
        copy_wal, copy_shm = companions(copy)
        for _attempt in range(_ATTEMPTS):
            db_before, wal_before = self.keys()
            if db_before is None:
                raise JournalError(f"{self.db}: no such database")
            try:
                if db_before != self._db_key or not copy.exists():
                    self._db_key = None
                    _copy(self.db, copy)
                for stale in (copy_wal, copy_shm):
                    with contextlib.suppress(FileNotFoundError):
                        stale.unlink()
                if wal_before is not None:
                    _copy(wal, copy_wal)
            except FileNotFoundError:
                time.sleep(_PAUSE_S)  # the WAL was deleted by a checkpoint meanwhile: take it again
                continue
            except PermissionError:
                raise JournalError(f"{self.db}: permission denied") from None
            except OSError as exc:
                raise JournalError(f"{self.db}: {exc.strerror or exc}") from None
            if self.keys() == (db_before, wal_before):
                self._db_key, self.taken = db_before, (db_before, wal_before)
                return copy
            self._db_key = None
            time.sleep(_PAUSE_S)  # written while copied: the agent is committing, take it again
        raise JournalError(f"{self.db}: it changed every time it was copied ({_ATTEMPTS} times); try again")

    def query(self, read: Callable[[sqlite3.Connection], T]) -> T:
        """`read` run on a fresh consistent copy; the copy is SQLite's to change, the agent's files never are."""
        for _attempt in range(_ATTEMPTS):
            copy = self._take()
            try:
                with contextlib.closing(sqlite3.connect(f"file:{copy}?mode=ro", uri=True)) as conn:
                    return read(conn)
            except sqlite3.DatabaseError as exc:
                if "malformed" not in str(exc) and "not a database" not in str(exc):
                    raise JournalError(f"{self.db}: {exc}") from None
                self._db_key = None  # a copy SQLite found damaged: take the whole of it again
        raise JournalError(f"{self.db}: every copy of it was damaged; it is not a database SQLite can read")


@contextlib.contextmanager
def snapshot(db: Path) -> Iterator[Snapshot]:
    snap = Snapshot(db)
    try:
        yield snap
    finally:
        snap.close()


# The last copy taken, kept for the next reader of the same database: recognising a database, naming its
# session and opening it in the viewer read one copy, not one each (copying is what opening a big one costs).
_kept: Snapshot | None = None
_keeping = threading.Lock()


def borrowed(db: Path) -> Snapshot:
    """A snapshot of `db`, the one last `given_back` when it is of the same database (its copy is kept while
    the database is unchanged); the caller owns it until it gives it back, or closes it."""
    global _kept
    with _keeping:
        snap, _kept = _kept, None
    if snap is not None and snap.db == db:
        return snap
    if snap is not None:
        snap.close()
    return Snapshot(db)


def give_back(snap: Snapshot) -> None:
    global _kept
    with _keeping:
        earlier, _kept = _kept, snap
    if earlier is not None and earlier is not snap:
        earlier.close()


_live: weakref.WeakSet[Snapshot] = weakref.WeakSet()


@atexit.register
def _forget() -> None:
    """Every copy still held as the process ends (a viewer's follower, the one kept) is removed."""
    for snap in list(_live):
        snap.close()


@contextlib.contextmanager
def kept(db: Path) -> Iterator[Snapshot]:
    """`snapshot`, through the copy kept for the next reader (`borrowed`, then `give_back`)."""
    snap = borrowed(db)
    try:
        yield snap
    except BaseException:
        snap.close()
        raise
    give_back(snap)
