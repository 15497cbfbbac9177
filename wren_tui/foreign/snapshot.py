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

Nothing is copied that could not be a database: the file must be a regular file with a sound
SQLite header, no bigger than `MAX_BYTES`, and not sparse (a file far longer than the blocks it
has on disk is no database a program wrote, and would fill the private folder with zeros). Its
tables are read from its own first pages (`tables_in_file`, parsed here, never by SQLite) before
anything is copied, so another program's database beside OpenCode's is never copied at all. A copy
SQLite finds damaged is taken again only when the file changed meanwhile: a file damaged as it
stands is refused after one copy. The copy is opened with `trusted_schema=OFF`, `cell_size_check`
and a cap on the length of any value (`VALUE_CAP`). The copies are in a folder named with the
owner's pid (`wren-sqlite-PID-*`); one whose process is dead (killed with -9 while it copied) is
removed by the next process that copies.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sqlite3
import stat
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
# The biggest database copied to be read, and the longest value (a row's text or blob) SQLite may hand back.
MAX_BYTES = 16 << 30
VALUE_CAP = 64 << 20
# A file longer than this whose blocks on disk hold less than a quarter of its length is sparse: refused.
_SPARSE_FROM = 64 << 20
_PREFIX = "wren-sqlite-"
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


class DatabaseCopy:
    """Consistent private copies of the database at `db`, taken again when asked (`query`)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self._dir: Path | None = None
        self._db_key: Key = None
        # What the database and its WAL were when the last copy was taken (None: no copy yet).
        self.taken: tuple[Key, Key] | None = None

    def _folder(self) -> Path:
        if self._dir is None:
            sweep_dead_copies()
            self._dir = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
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
                    check_before_copy(self.db)
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
        """`read` run on a fresh consistent copy; the copy is SQLite's to change, the agent's files never are.

        A copy SQLite finds damaged is taken again only if the files changed since it was taken."""
        lenient = False
        for _attempt in range(_ATTEMPTS):
            copy = self._take()
            try:
                with contextlib.closing(_connect(copy, lenient)) as conn:
                    return read(conn)
            except sqlite3.DataError as exc:
                if "too big" not in str(exc):
                    raise JournalError(f"{self.db}: {exc}") from None
                raise JournalError(
                    f"{self.db}: a value in it is longer than {VALUE_CAP >> 20} MiB, more than Wren reads of a value"
                ) from None
            except sqlite3.DatabaseError as exc:
                if "unsafe use of" in str(exc) and not lenient:
                    # An index of the schema computes a function SQLite does not trust in a schema (Kilo Code
                    # CLI's json_extract indexes): the copy is opened again with such indexes left unparsed
                    # (still read-only; none of its SQL is run, the tables are read without them).
                    lenient = True
                    continue
                if "malformed" not in str(exc) and "not a database" not in str(exc):
                    raise JournalError(f"{self.db}: {exc}") from None
                if self.keys() == self.taken:
                    break  # damaged as it stands: another copy would be the same
                self._db_key = None  # changed since it was copied: take the whole of it again
        raise JournalError(f"{self.db}: SQLite finds it damaged; it is not a database Wren can read")


def _connect(copy: Path, lenient: bool = False) -> sqlite3.Connection:
    """The copy opened read-only, running none of its schema's SQL it need not, each value at most `VALUE_CAP`;
    `lenient`: an entry of its schema SQLite refuses (an index on a function it does not trust there) is left out
    rather than failing every query (`writable_schema` on a read-only connection: nothing can be written)."""
    conn = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
    try:
        conn.execute("pragma trusted_schema = off")  # no function the schema names that has side effects
        conn.execute("pragma cell_size_check = on")  # a damaged page is an error, never read past its end
        if lenient:
            conn.execute("pragma writable_schema = on")
        if hasattr(conn, "setlimit"):  # Python 3.11+
            conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, VALUE_CAP)
    except BaseException:
        conn.close()
        raise
    return conn


def _header_fault(head: bytes) -> str | None:
    """What is wrong with a SQLite file's 100-byte header (None: nothing seen)."""
    if len(head) < 100 or not head.startswith(SQLITE_HEADER):
        return "it has no SQLite header"
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    if page < 512 or page & (page - 1) or head[21:24] != b"\x40\x20\x20" or head[20] > page - 480:
        return "its SQLite header is damaged"
    return None


def check_before_copy(db: Path) -> None:
    """JournalError, in one sentence, for a file that is no database worth copying: not a regular file, a
    damaged header, bigger than `MAX_BYTES`, or sparse."""
    try:
        st = os.stat(db, follow_symlinks=False)
    except FileNotFoundError:
        raise JournalError(f"{db}: no such database") from None
    except OSError as exc:
        raise JournalError(f"{db}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise JournalError(f"{db}: a link; Wren reads the database itself, never through a link (name its target)")
    if not stat.S_ISREG(st.st_mode):
        raise JournalError(f"{db}: not a regular file, so not a database Wren reads")
    if st.st_size > MAX_BYTES:
        raise JournalError(
            f"{db}: {st.st_size:,} bytes, more than the {MAX_BYTES >> 30} GiB Wren copies to read a database"
        )
    blocks = getattr(st, "st_blocks", None)
    if blocks is not None and st.st_size > _SPARSE_FROM and blocks * 512 * 4 < st.st_size:
        raise JournalError(
            f"{db}: a sparse file ({st.st_size:,} bytes long, {blocks * 512:,} of them on disk), not a database a "
            "program wrote; Wren does not copy it"
        )
    fd = _open_quietly(db)
    try:
        fault = _header_fault(portable.pread(fd, 100, 0))
    finally:
        os.close(fd)
    if fault is not None:
        raise JournalError(f"{db}: {fault}, so it is not a database Wren reads")


def tables_in_file(db: Path) -> set[str] | None:
    """The names of the tables of the database at `db`, read from its own pages (never opened by SQLite, never
    copied); None when they cannot be told from the file alone (its WAL holds changes not merged into it).
    JournalError for a file that is no database (`check_before_copy`), or whose schema pages are damaged."""
    check_before_copy(db)
    wal, _shm = companions(db)
    try:
        pending = os.stat(wal, follow_symlinks=False).st_size > 0
    except OSError:
        pending = False
    if pending:
        return None  # its schema may be newer in the WAL: only a copy of both tells
    fd = _open_quietly(db)
    try:
        return _schema_tables(fd, os.fstat(fd).st_size)
    except (_Damaged, IndexError, ValueError):
        raise JournalError(f"{db}: its schema pages are damaged, so it is not a database Wren reads") from None
    finally:
        os.close(fd)


class _Damaged(Exception):
    pass


# How deep the schema's b-tree may be, and how many of its pages are read, before the file is called damaged.
_SCHEMA_DEPTH = 16
_SCHEMA_PAGES = 4096


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at `at`: its value, and the offset after it."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def _schema_tables(fd: int, size: int) -> set[str]:
    """The `table` rows' names in `sqlite_master` (the b-tree rooted at page 1), walked without recursion."""
    head = portable.pread(fd, 100, 0)
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    usable = page_size - head[20]
    pages = size // page_size
    names: set[str] = set()
    todo, read = [(1, 0)], 0
    while todo:
        number, depth = todo.pop()
        read += 1
        if not 1 <= number <= pages or depth > _SCHEMA_DEPTH or read > _SCHEMA_PAGES:
            raise _Damaged
        page = portable.pread(fd, page_size, (number - 1) * page_size)
        at = 100 if number == 1 else 0
        kind, cells = page[at], int.from_bytes(page[at + 3 : at + 5], "big")
        pointers = at + (12 if kind == 0x05 else 8)
        if kind not in (0x05, 0x0D) or pointers + 2 * cells > usable:
            raise _Damaged
        if kind == 0x05:  # interior: a child per cell, and the right-most one
            todo.append((int.from_bytes(page[at + 8 : at + 12], "big"), depth + 1))
        for cell in range(cells):
            offset = int.from_bytes(page[pointers + 2 * cell : pointers + 2 * cell + 2], "big")
            if not pointers + 2 * cells <= offset < usable:
                raise _Damaged
            if kind == 0x05:
                todo.append((int.from_bytes(page[offset : offset + 4], "big"), depth + 1))
                continue
            name = _table_name(page[:usable], offset, usable)
            if name is not None:
                names.add(name)
    return names


def _table_name(page: bytes, offset: int, usable: int) -> str | None:
    """The name of a `sqlite_master` row that is a table's (None for an index's, a view's, a trigger's)."""
    payload, at = _varint(page, offset)
    _rowid, at = _varint(page, at)
    local = payload
    if payload > usable - 35:  # the rest is on overflow pages; the first columns are in the page
        least = (usable - 12) * 32 // 255 - 23
        local = least + (payload - least) % (usable - 4)
        local = local if local <= usable - 35 else least
    record = page[at : at + local]
    header, cursor = _varint(record, 0)
    types: list[int] = []
    while cursor < header and len(types) < 2:
        kind, cursor = _varint(record, cursor)
        types.append(kind)
    if len(types) < 2 or any(t < 13 or t % 2 == 0 for t in types):
        raise _Damaged  # type and name are text in every schema row
    first = (types[0] - 13) // 2
    second = (types[1] - 13) // 2
    if header + first + second > len(record):
        raise _Damaged
    if record[header : header + first] != b"table":
        return None
    return record[header + first : header + first + second].decode("utf-8", "replace")


def _pid_dead(pid: int) -> bool:
    """Whether no process has the id `pid` (POSIX only: elsewhere signal 0 is no question, so never)."""
    if os.name != "posix":
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # another user's process: alive
    return False


_swept = False


def sweep_dead_copies(folder: str | None = None) -> list[Path]:
    """Remove the private copies left by processes that died while they held them (`wren-sqlite-PID-*` of this
    user whose PID is no process now); once a process, when it first copies. The folders removed."""
    global _swept
    if folder is None:
        if _swept:
            return []
        _swept = True
    where = folder or tempfile.gettempdir()
    removed: list[Path] = []
    me = os.getpid()
    uid = portable.effective_uid()
    try:
        entries = list(os.scandir(where))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(_PREFIX):
            continue
        pid_text = entry.name[len(_PREFIX) :].partition("-")[0]
        if not pid_text.isdigit() or int(pid_text) == me:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or (uid is not None and st.st_uid != uid):
            continue
        if _pid_dead(int(pid_text)):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


@contextlib.contextmanager
def snapshot(db: Path) -> Iterator[DatabaseCopy]:
    snap = DatabaseCopy(db)
    try:
        yield snap
    finally:
        snap.close()


# The last copy taken, kept for the next reader of the same database: recognising a database, naming its
# session and opening it in the viewer read one copy, not one each (copying is what opening a big one costs).
_kept: DatabaseCopy | None = None
_keeping = threading.Lock()


def borrowed(db: Path) -> DatabaseCopy:
    """A snapshot of `db`, the one last `given_back` when it is of the same database (its copy is kept while
    the database is unchanged); the caller owns it until it gives it back, or closes it."""
    global _kept
    with _keeping:
        snap, _kept = _kept, None
    if snap is not None and snap.db == db:
        return snap
    if snap is not None:
        snap.close()
    return DatabaseCopy(db)


def give_back(snap: DatabaseCopy) -> None:
    global _kept
    with _keeping:
        earlier, _kept = _kept, snap
    if earlier is not None and earlier is not snap:
        earlier.close()


_live: weakref.WeakSet[DatabaseCopy] = weakref.WeakSet()


@atexit.register
def _forget() -> None:
    """Every copy still held as the process ends (a viewer's follower, the one kept) is removed."""
    for snap in list(_live):
        snap.close()


@contextlib.contextmanager
def kept(db: Path) -> Iterator[DatabaseCopy]:
    """`snapshot`, through the copy kept for the next reader (`borrowed`, then `give_back`)."""
    snap = borrowed(db)
    try:
        yield snap
    except BaseException:
        snap.close()
        raise
    give_back(snap)
