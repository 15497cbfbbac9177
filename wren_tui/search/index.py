"""Search's index, read: what `wren search` keeps beside the journals, so a search reads no session file.

The index is a SQLite database (`<journals folder>/.index/search.sqlite`) with, for each session
file it has read, every searchable item (another agent's `sources.Item` kept whole; a Wren journal's
as where it is in the journal, `wren.Ref`, read again from there and checked) and an FTS5 table over
their texts and tool names with the trigram tokenizer, which finds any substring of three characters
or more (see docs/search-index.md). It is a cache: `indexer` writes it, this module only reads it (the
viewer loads this one, never the indexer), and any file it does not know as it is now is read as
search always read it.

A file is answered from the index alone when its device, inode, size and modification time are the
ones the index read it at (`fresh`). A file that grew (same inode, no smaller than what was read,
and the bytes just before where the reading ended unchanged) is answered from the index up to there
and read from there on, with the reader's memory the index kept (`tail`). Anything else (not in the
index, replaced, truncated, rewritten) is read whole, as without an index.

The index only narrows: it gives the items whose text (or tool name) holds the query's words two by
two, one pair after the other (`pair_query`, from a second full-text table of each text's adjacent
words), or else its longest literal piece of three characters or more (the trigram table), and
search confirms each on its text as it confirms any item, so its hits are the scan's hits. A
pattern with neither reads the sessions.
"""

import contextlib
import marshal
import os
import re
import signal
import sqlite3
import stat
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote

from ..foreign import own_folder_of
from ..journal.errors import JournalError
from ..journal.store import journals_dir
from ..journal.verdict import Stop
from ..portable import O_BINARY, O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK, open_read_only, pread
from .query import Query
from .rawpass import native
from .sources import Item, Saved

if TYPE_CHECKING:
    from threading import Event, Lock, Thread

    from .stored import Ref

VERSION = 9  # what the tables hold; an index of another version is read by nobody and rebuilt by the indexer
FOLDER = ".index"
NAME = "search.sqlite"
# What SQLite keeps in the database header (`PRAGMA application_id`) of an index Wren made: "Wren" in ASCII. A
# database without it is another program's: never written, never dropped (an index a Wren made before it wrote
# the id is told by its tables, `indexer._made_by_an_older_wren`, and given it; this module reads neither).
APPLICATION_ID = 0x5772656E
# The files SQLite keeps beside a database, each named after it.
SIDE_FILES = ("-wal", "-shm", "-journal")
_HEADER = b"SQLite format 3\x00"
# Feature-tested (Windows has neither; `linked` is what refuses a link there): open never through a link, never
# waiting on a FIFO; and not inherited by a child.
NO_FOLLOW = O_NOFOLLOW | O_CLOEXEC
# Bytes before where a reading ended (and at the file's start) whose checksum says a grown file was only appended to.
CHECKED = 4096
BUSY_MS = 10_000  # how long to wait for a writer that holds the index

# Characters Python's re.IGNORECASE matches with an ASCII letter: the index holds them as that letter
# (SQLite folds ASCII case and its own Unicode cases; these it does not). NUL as a space.
_ODD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u212a": "k", "\u017f": "s", "\x00": " "})
SHORTEST = 3  # the trigram tokenizer finds nothing shorter
# The most of a pattern the index is asked for: characters of the trigram table's needle, word pairs of each of the
# pair table's phrases, and phrases. A piece of what every match holds is still held by every match (the index
# narrows a little less), while a phrase of a pasted paragraph's 2,000 pairs, each in most rows, took FTS5 9 s to
# answer over 40 MB of journals (and 40 pairs 0.2 s).
LONGEST = 64
MOST_PAIRS = 32
MOST_PHRASES = 8
# How long the index may take to give a query's candidates before search reads the files instead (it never
# waits on SQLite longer than this), and how many of SQLite's steps between two looks at the time.
QUERY_SECONDS = 3.0
_STEPS = 20_000


def index_path(folder: Path) -> Path:
    """Where the index of the journals folder `folder` is kept: in it, unless it is another agent's own folder.

    `--dir` may name Claude Code's or Codex's sessions folder (every agent's sessions are searched there);
    Wren writes nothing into another agent's folder, so that folder's index is kept in Wren's state folder
    instead, under a name made from the folder's real path.
    """
    if own_folder_of(folder) is None:
        return folder / FOLDER / NAME
    where = os.path.realpath(folder)
    import hashlib  # only for an agent's own folder: not loaded by every search

    name = hashlib.sha256(os.fsencode(where)).hexdigest()[:16]
    return journals_dir(None).parent / "indexes" / name / NAME


def fts_text(text: str) -> str:
    """A text as the full-text table holds it: the odd cases as ASCII, a NUL as a space, a lone surrogate as ?."""
    if text.isascii():
        return text.replace("\x00", " ") if "\x00" in text else text
    text = text.translate(_ODD)
    try:
        text.encode()
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode()
    return text


def fts_name(name: str | None) -> str:
    """A tool name as the full-text tables hold it: "" for an item with none. No word, as NULL would hold, and
    `sqlite3` binds a str as it is where it looks up an adapter for None (about 0.3 s of CPU over the two tables
    of 2,000 Claude Code sessions, most of whose items name no tool)."""
    return "" if name is None else fts_text(name)


def needle_of(query: Query) -> str | None:
    """The piece of text every match of `query` holds, as the full-text table holds it; None: no such piece."""
    best = ""
    for run in query.runs:
        piece = ""
        for char in run:
            if _indexable(char, query.fold):
                piece += char
                continue
            best = max(best, piece, key=len)
            piece = ""
        best = max(best, piece, key=len)
    return fts_text(best[:LONGEST]) if len(best) >= SHORTEST else None


def _indexable(char: str, fold: bool) -> bool:
    """Whether the index finds every text that matches `char`: a surrogate is never there as itself; ignoring
    case, a non-ASCII letter could match a character the index folds otherwise."""
    if 0xD800 <= ord(char) < 0xE000:
        return False
    if not fold or char.isascii():
        return True
    return char.lower() == char == char.upper() and char.casefold() == char


def phrase(needle: str) -> str:
    """An FTS5 query for the rows whose text holds every trigram of `needle` (each a string in double quotes,
    ANDed): the trigram table keeps no positions (`detail=none`, an eighth of its size with them), so it says
    which rows hold the trigrams, not where; a row holding `needle` holds them all, and search confirms each
    row on its text."""
    grams = dict.fromkeys(needle[at : at + 3] for at in range(max(1, len(needle) - 2)))
    return " AND ".join('"' + gram.replace('"', '""') + '"' for gram in grams)


# A word of the pair table: a run of ASCII letters and digits. Every other character separates words, in a
# text as in a pattern: no other character matches an ASCII letter or digit, even ignoring case, once
# `fts_text` has written the four that do (İ, ı, the Kelvin sign, ſ) as ASCII (tests/search/test_pairs.py).
_WORD = re.compile(r"[A-Za-z0-9]+")


def python_pairs(text: str) -> str:
    """What the pair table holds of a text (`_scan.pairs` in C gives the same): each two adjacent words,
    lowercased, joined by `_`, separated by spaces: `Zero, because the` -> `zero_because because_the`."""
    words = _WORD.findall(text)
    return " ".join(map("_".join, pairwise(words))).lower()


pairs_of: Callable[[str], str] = python_pairs if native is None else native.pairs


def pair_query(query: Query) -> str | None:
    """An FTS5 query of the pair table for the rows whose text can match `query`; None: no pair to ask for.

    In each literal run every match holds, a word with a separator on both sides in the run is a whole
    word in any text that matches, with the same separators around it: so the text's pairs hold the
    run's pairs one after the other. The run's first word may be the end of a longer one (its pair is
    left out), its last word the start of one (its pair is asked for as a prefix): `zero because the
    guard` asks for `because_the the_guard*`. The runs' phrases are asked for together (AND).
    """
    phrases: list[tuple[int, str]] = []
    for run in query.runs:
        text = fts_text(run)
        words = [(found.group(), found.start(), found.end()) for found in _WORD.finditer(text)]
        whole = words if words and words[0][1] > 0 else words[1:]
        if len(whole) < 2:
            continue
        # At most MOST_PAIRS pairs: a word before the cut has a separator after it in the run, so it is whole there.
        kept = whole[: MOST_PAIRS + 1]
        tokens = " ".join(f"{a}_{b}" for (a, _, _), (b, _, _) in pairwise(kept)).lower()
        phrases.append((len(kept), f'"{tokens}"' + ("" if kept[-1][2] < len(text) else " *")))
    longest = sorted(phrases, key=lambda phrase: -phrase[0])[:MOST_PHRASES]  # any of them narrows: the longest do most
    return " AND ".join(phrase for _, phrase in longest) if longest else None


def item_blob(item: Item) -> bytes:
    return marshal.dumps(tuple(item))


def item_of(blob: bytes) -> Item:
    return Item(*marshal.loads(blob))


def stored_of(blob: bytes) -> "Item | Ref":
    """What the items table keeps of an item: the item whole (another agent's), or where it is in its Wren journal."""
    fields = marshal.loads(blob)
    if len(fields) == len(Item._fields):
        return Item(*fields)
    ref: Ref = fields
    return ref


def stop_blob(stop: Stop | None) -> bytes | None:
    return None if stop is None else marshal.dumps((stop.line, stop.offset, stop.why, stop.torn))


def stop_of(blob: bytes | None) -> Stop | None:
    return None if blob is None else Stop(*marshal.loads(blob))


class Known(NamedTuple):
    """What the index knows of one file: how it was when read, how far, and what the reading ended with."""

    id: int
    agent: str
    dev: int
    ino: int
    size: int
    mtime: int
    offset: int
    head: int  # the checksum of its first bytes (up to CHECKED of them, before `offset`)
    tail: int  # the checksum of the CHECKED bytes before `offset`
    resumable: bool  # the reader's memory at `offset` is kept (in the table states), else it is read again whole
    stop: Stop | None
    warnings: tuple[str, ...]
    provisional: int | None  # the first item that depends on bytes past `offset`

    def saved(self, db: sqlite3.Connection) -> Saved | None:
        """Where and how a reading of the file's grown part goes on (read in the transaction `self` was read in)."""
        row = db.execute("SELECT state FROM states WHERE file = ?", (self.id,)).fetchone()
        return None if row is None else Saved(self.offset, row[0])


FILE_COLUMNS = "id, agent, dev, ino, size, mtime, off, head, tail, resumable, stop, warnings, provisional"


def known_of(row: tuple[object, ...]) -> Known:
    ident, agent, dev, ino, size, mtime, offset, head, tail, resumable, stop, warnings, provisional = row
    return Known(
        int(ident),  # type: ignore[call-overload]
        str(agent),
        int(dev),  # type: ignore[call-overload]
        int(ino),  # type: ignore[call-overload]
        int(size),  # type: ignore[call-overload]
        int(mtime),  # type: ignore[call-overload]
        int(offset),  # type: ignore[call-overload]
        int(head),  # type: ignore[call-overload]
        int(tail),  # type: ignore[call-overload]
        bool(resumable),
        stop_of(stop if isinstance(stop, bytes) else None),
        tuple(marshal.loads(warnings)) if isinstance(warnings, bytes) else (),  # NULL: none
        None if provisional is None else int(provisional),  # type: ignore[call-overload]
    )


def fresh(known: Known, st: os.stat_result) -> bool:
    """The file is as the index read it."""
    return (known.dev, known.ino, known.size, known.mtime) == _identity(st)


def checksums(fd: int, offset: int) -> tuple[int, int]:
    """The checksums of the first bytes and of the bytes just before `offset`."""
    import zlib  # only for a file that grew, and for the indexer: not loaded by a search the index answers

    head = zlib.crc32(pread(fd, min(CHECKED, offset), 0))
    low = max(0, offset - CHECKED)
    return head, zlib.crc32(pread(fd, offset - low, low))


def grown(known: Known, path: str | Path, st: os.stat_result) -> bool:
    """The file is the one the index read, with bytes added after them and none of those it read changed."""
    if not known.resumable or (known.dev, known.ino) != (st.st_dev, st.st_ino) or st.st_size < known.offset:
        return False
    try:
        fd = open_read_only(path)
    except OSError:
        return False
    try:
        return checksums(fd, known.offset) == (known.head, known.tail)
    except OSError:
        return False
    finally:
        os.close(fd)


def linked(path: Path) -> Path | None:
    """The first of the index's folder, its file and SQLite's files beside it that is a symbolic link; None if none.

    The index is never opened through a link: its target (the folder or the file) could be another
    program's database, which SQLite would then write (a `--dir` a repository or a shared folder holds).
    """
    for each in (path.parent, path, *(path.with_name(path.name + side) for side in SIDE_FILES)):
        if os.path.islink(each):
            return each
    return None


def kind_at(path: Path) -> str:
    """What is at the index's place, from its first bytes (never opened by SQLite, never through a link):
    "absent", "link", "empty" (no byte yet), "ours" (a database Wren made), "other" (another program's
    database), "garbage" (not a database: damaged, or anything else), "odd" (not a regular file)."""
    if linked(path) is not None:
        return "link"
    try:
        fd = os.open(path, os.O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_BINARY)
    except FileNotFoundError:
        return "absent"
    except OSError:
        return "odd" if os.path.lexists(path) and not path.is_file() else "garbage"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "odd"
        header = pread(fd, 100, 0)
    except OSError:
        return "garbage"
    finally:
        os.close(fd)
    if not header:
        return "empty"
    if not header.startswith(_HEADER) or len(header) < 72:
        return "garbage"
    return "ours" if int.from_bytes(header[68:72], "big") == APPLICATION_ID else "other"


def connect_read(path: Path) -> sqlite3.Connection | None:
    """The index at `path`, opened read-only; None when there is none (or it is not one this version reads,
    or not Wren's, or reached through a link)."""
    if kind_at(path) != "ours":
        return None
    try:
        # Used by one thread at a time, but not always the one that opened it: -l asks its candidates in a thread of
        # their own while the sessions are listed (`IndexRead.ahead`), and the read goes on in the main thread.
        db = sqlite3.connect(
            f"file:{quote(str(path))}?mode=ro", uri=True, timeout=BUSY_MS / 1000, check_same_thread=False
        )
    except sqlite3.Error:
        return None
    db.isolation_level = None
    try:
        owner = db.execute("PRAGMA application_id").fetchone()
        row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    except sqlite3.Error:
        db.close()
        return None
    if owner is None or owner[0] != APPLICATION_ID or row is None or row[0] != VERSION:
        db.close()
        return None
    return db


class Answer(NamedTuple):
    """What the index says for one file: its candidate items and how far it answers."""

    known: Known
    items: Iterable[Item]
    whole: bool  # fresh: the items are all there is, the stop and warnings the index's
    saved: Saved | None = None  # grown: where the reading of the rest goes on from


class IndexRead:
    """One read of the index, for one query: each file's candidates, in one read transaction held to `close`.

    The index is in WAL mode: the transaction sees the index as it was when it began, while another
    process goes on writing it. `begin` reads what the index knows of each file (and `stale` says
    which files it does not know as they are now, for the indexer); `load` reads the query's
    candidates; `answer` says, file by file, what search takes from them.
    """

    def __init__(self, db: sqlite3.Connection, query: Query) -> None:
        self.db = db
        self.query = query
        self.needle = needle_of(query)
        self.pairs = pair_query(query)  # asked for rather than the needle when there is one
        # path: (file id, agent, (dev, ino, size, mtime), read to its end with no warning); the rest of its
        # files row (FILE_COLUMNS) is read when it is needed (a file with candidates, grown, stopped or warned)
        self.rows: dict[str, tuple[int, str, tuple[int, int, int, int], bool]] = {}
        self.stats: dict[str, os.stat_result | None] = {}  # path: how it was when looked at
        self.fresh: set[str] = set()  # paths `stale` found as the index read them
        # file id: its candidates' item ids, in order (8 bytes each: their texts are read file by file)
        self.candidates: dict[int, array[int]] = {}
        self._full: dict[int, tuple[object, ...]] = {}  # file id: its files row (FILE_COLUMNS), if it has candidates
        # file id: its candidates read from its journal and confirmed by `load` (all that match, in order)
        self.confirmed: dict[int, list[Item]] = {}
        self._paths: dict[int, str] | None = None  # file id: path, made when `load` first reads a journal
        self._may_hold = _may_hold(query)
        self._partial = False  # `candidates` holds each file's first only (`load(first=True)`)
        self._first_rows: dict[int, bytes] = {}  # file id: its first candidate's row (`item_blob` or a `wren.Ref`)
        self._matching: tuple[str, str] = ("", "")  # the statement of the candidates' ids, and what it asks for
        self._ahead: _Ahead | None = None  # -l's candidates' ids, being asked in a thread (`ahead`)

    def begin(self) -> bool:
        """Begin the read transaction and read what the index knows of each file; False if it cannot be read."""
        try:
            self.db.execute("BEGIN")
            rows = self.db.execute(
                "SELECT path, id, agent, dev, ino, size, mtime, stop IS NULL AND warnings IS NULL FROM files"
            )
            self.rows = {
                path: (ident, agent, (dev, ino, size, mtime), bool(clean))
                for path, ident, agent, dev, ino, size, mtime, clean in rows
            }
        except sqlite3.Error:
            self.close()
            return False
        return True

    def stale(self, paths: Iterable[tuple[str | Path, os.stat_result | None]]) -> list[str | Path]:
        """Those of `paths` the index does not know as they are now (new, grown, changed; not gone) and could keep
        (not a name of bytes that are not UTF-8); each with how it was when listed, if it was stat'ed then (taken as
        how it is now). A path is given as a source has it: its text (`path_text`: no Path made for each of
        thousands), or a Path."""
        found = []
        fresh, rows, stats = self.fresh, self.rows, self.stats
        for path, looked in paths:
            key = str(path)
            if key in fresh:
                continue  # found as the index read it already (`wren_as_read`), by the same stat
            if looked is None:
                st = self._stat(key)
            else:
                st = stats[key] = looked  # how the listing found it: not stat'ed again
            if st is None:
                continue
            row = rows.get(key)
            if row is not None and row[2] == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
                fresh.add(key)
            elif row is not None or key.isascii() or storable(key):
                found.append(path)
            # else a name of bytes that are not UTF-8, which the index cannot keep (SQLite's text is UTF-8): read
            # from its file, as without an index, and not given to the writer (nothing to write: a search that
            # found one opened the index for writing every time)
        return found

    def wren_as_read(self, path: Path) -> bool:
        """Whether the file at `path` is a Wren journal by what the index read of it, without reading it.

        True when the index read it as a Wren journal to its end with no stop and no warning (every line
        one the journal reader takes as Wren's: `foreign.kind_of` says Wren of such a file) and it is as
        the index read it (device, inode, size, modification time to the nanosecond: `fresh`). Anything
        else (a file the index does not know, read as another agent's, read with a stop, or changed since)
        is looked at as before. A `wren search --dir` over a folder of journals then opens none of them.
        """
        key = str(path)
        row = self.rows.get(key)
        if row is None or row[1] != "wren" or not row[3]:
            return False
        st = self._stat(key)  # kept: `stale` and `answer` take it, so the file is stat'ed once
        if st is None or row[2] != _identity(st):
            return False
        self.fresh.add(key)
        return True

    def gone(self, paths: Iterable[str | Path]) -> list[str]:
        """The files the index knows that are not among `paths` (those listed) and no longer there.

        A file `stale` found as the index read it was there when it was looked at: not gone. When that is every file
        the index knows (a warm search), `paths` are not even gone through.
        """
        unsure = [key for key in self.rows if key not in self.fresh]
        if not unsure:
            return []
        listed = {str(path) for path in paths}
        return [key for key in unsure if key not in listed and not os.path.lexists(key)]

    def _stat(self, key: str) -> os.stat_result | None:
        if key in self.stats:
            return self.stats[key]
        try:
            st: os.stat_result | None = os.stat(key, follow_symlinks=False)
        except OSError:
            st = None
        self.stats[key] = st
        return st

    def load(self, first: bool = False) -> bool:
        """Read the query's candidates; False when the index cannot narrow it (no pair nor needle) or cannot be read.

        `first`: only a file's first hit is wanted (`wren search -l`, no filter): each file's first candidate is
        read, in one statement that gives one row a file, not every candidate with its file (a phrase in every
        turn of 2,000 sessions has 82,000); `answer` reads the rest only for a file whose first does not match.
        """
        statement = self._statement()
        if statement is None:
            return False
        try:
            ahead = self._settled()  # before anything else asks the connection (and sets its progress handler)
        except sqlite3.Error:
            self.close()
            return False
        took = 0.0 if ahead is None else ahead.took
        if not self.db.in_transaction and not self.begin():
            return False
        self._matching = matching, asked = statement
        try:
            # QUERY_SECONDS in all: what the thread asking ahead took of them is not given again.
            with _bounded(self.db, QUERY_SECONDS - took):
                if first:
                    self._partial = True
                    self._firsts(matching, asked, None if ahead is None else ahead.ids)
                    self._files_rows(clean=False)
                    return True
                # Each candidate with its file, in one statement (a phrase in every session has 82,000 of them: asked
                # a few hundred ids at a time, their files took most of a search).
                found = self.db.execute(f"SELECT id, file FROM items WHERE id IN ({matching}) ORDER BY id", (asked,))
                rows = found.fetchall()
                confirming = not self.query.regex and len(rows) <= _CONFIRMED
                held: dict[int, list[tuple[int, bytes]]] = {}  # file: its candidates' ids and rows, in order
                for at in range(0, len(rows), _FETCH * 2):
                    batch = rows[at : at + _FETCH * 2]
                    if not confirming:
                        for ident, file in batch:
                            self._add(file, ident)
                        continue
                    marks = ",".join("?" * len(batch))
                    ids = [ident for ident, _file in batch]
                    for ident, file, data in self.db.execute(
                        f"SELECT id, file, data FROM items WHERE id IN ({marks}) ORDER BY id", ids
                    ):
                        held.setdefault(file, []).append((ident, data))
                budget = _CONFIRMED_BYTES
                for file, candidates in held.items():
                    budget = self._confirm(file, candidates, budget)
                self._files_rows()
        except sqlite3.Error:
            self.close()
            return False
        return True

    def _statement(self) -> tuple[str, str] | None:
        """The statement of the candidates' ids, and what it asks for; None: the index cannot narrow the query."""
        if self.pairs is not None:
            return "SELECT rowid FROM pairs WHERE pairs MATCH ?", self.pairs
        if self.needle is not None:
            return "SELECT rowid FROM fts WHERE fts MATCH ?", phrase(self.needle)
        return None

    def ahead(self) -> None:
        """Ask the index for the candidates' ids now, in a thread of their own, while the caller lists the sessions;
        `load(first=True)` takes them (`wren search -l`: a phrase in every turn of 2,000 sessions has 82,000, about
        8 ms of SQLite's work, as long as the walk of their folders).

        SQLite lets go of Python's lock while it searches, so the search and the walk go on at once, on two
        processors where there are two. Until `load` or `close` has waited for the thread, nothing else asks the
        connection: `stale`, `gone` and `wren_as_read` read only what `begin` read, and the files. Its one statement is
        bounded as `load`'s are (`_bounded`: QUERY_SECONDS, what it took of them not given to `load` again; Ctrl+C,
        which only the main thread receives, interrupts it from there, in `_settled`).
        """
        statement = self._statement()
        if statement is None or self._ahead is not None or not self.db.in_transaction:
            return
        import threading  # only -l loads it

        ahead = _Ahead(threading.Lock(), threading.Event())

        def ask() -> None:
            with ahead.lock:
                if ahead.stopped:
                    ahead.done.set()
                    return  # no longer wanted before it began (a Ctrl+C as it was started): the connection left alone
                ahead.asking = True
            began = time.monotonic()
            try:
                with _bounded(self.db, QUERY_SECONDS):
                    ahead.ids = self._ids(*statement)
            except BaseException as exc:  # said by `_settled`, in the thread that reads the answer
                ahead.error = exc
            finally:
                ahead.took = time.monotonic() - began  # of the index's QUERY_SECONDS: `load` has the rest
                ahead.done.set()  # the connection no longer used here

        ahead.thread = threading.Thread(target=ask, name="wren search: the index's candidates", daemon=True)
        # Kept before it is started: `Thread.start` waits for the thread to run, and a Ctrl+C there leaves it running.
        self._ahead = ahead
        try:
            ahead.thread.start()
        except RuntimeError:  # no thread to be had (a process at its limit of them): `load` asks, as without one
            self._ahead = None
            return
        ahead.started = True

    def _settled(self) -> "_Ahead | None":
        """What `ahead` asked, once its thread has ended (what it raised is raised here; its `ids` None: the thread had
        not begun, and will not, so `load` asks); None: nothing was asked ahead.

        A Ctrl+C while waiting interrupts SQLite's search (`Connection.interrupt`, made for another thread) and is
        raised once the thread has ended, so the connection is never left to a thread still using it (a second
        Ctrl+C meanwhile leaves the thread to `close`, which waits for it again).
        """
        ahead = self._ahead
        if ahead is None:
            return None
        try:
            self._end(ahead, interrupt=False)
        except BaseException:
            self._end(ahead, interrupt=True)
            raise
        if ahead.error is not None:
            raise ahead.error
        return ahead

    def _end(self, ahead: "_Ahead", *, interrupt: bool) -> None:
        """`ahead`'s thread told to leave the connection alone if it has not begun, else (SQLite's search interrupted
        with `interrupt`) waited for; forgotten once nothing of it can use the connection any more."""
        with ahead.lock:
            ahead.stopped = True
            asking = ahead.asking
        if asking and interrupt:
            self.db.interrupt()
        if asking or ahead.started:
            _waited(ahead.done)  # asking: it runs; started: `start` returned (a thread never run is not waited for)
            if ahead.thread is not None:
                # Its last microseconds (done with the connection already): a fork for the indexer's readers
                # (`readahead`) is made only from a process with one thread.
                ahead.thread.join()
        self._ahead = None

    def _firsts(self, matching: str, asked: str, ahead: Sequence[int] | None = None) -> None:
        """Each file's first candidate (`candidates`) and its row (`_first_rows`), for `load(first=True)`.

        The candidates' ids come back as one text (a phrase in every turn of 2,000 sessions has 82,000: a row each
        took Python longer than SQLite's search), and each is given its file by the files' spans of item ids
        (`_spans_of_files`): a file's items are written together, so its first candidate is the first id at or after
        the start of its span. Where two files' spans overlap (a file that grew after another was written), or there
        are few candidates (for the files there are), each candidate's file is read from its row instead, as before.
        Only the first candidates' rows are read, a few hundred at a time.
        """
        found = self._ids(matching, asked) if ahead is None else ahead
        many = len(found) > max(_FEW_CANDIDATES, _PER_FILE * len(self.rows))
        spans = self._spans_of_files() if many else None
        firsts: dict[int, int] = {}  # file: its first candidate
        if spans is not None:
            from bisect import bisect_left  # only for -l's many candidates: not loaded by every search

            for low, high, file in spans:
                at = bisect_left(found, low)
                if at < len(found) and found[at] <= high:
                    firsts[file] = found[at]
        else:
            for at in range(0, len(found), _FETCH * 2):
                batch = found[at : at + _FETCH * 2]
                marks = ",".join("?" * len(batch))
                for ident, file in self.db.execute(f"SELECT id, file FROM items WHERE id IN ({marks})", batch):
                    if file not in firsts or ident < firsts[file]:
                        firsts[file] = ident
        for file, ident in firsts.items():
            self._add(file, ident)  # a candidate with no row (the full-text tables keep a few) reads every candidate
        ids = sorted(firsts.values())
        for at in range(0, len(ids), _FETCH * 2):
            batch = ids[at : at + _FETCH * 2]
            marks = ",".join("?" * len(batch))
            for ident, file, data in self.db.execute(f"SELECT id, file, data FROM items WHERE id IN ({marks})", batch):
                if firsts.get(file) == ident:
                    self._first_rows[file] = data

    def _ids(self, matching: str, asked: str) -> Sequence[int]:
        """The candidates' ids, lowest first, read as one text (SQLite's group_concat): a row each took Python three
        times as long as SQLite's search, and the C helper reads the text in a tenth of the time `int` takes."""
        listed = self.db.execute(f"SELECT group_concat(rowid) FROM ({matching})", (asked,)).fetchone()[0]
        if not listed:
            return []
        packed = None if native is None else native.ids(listed)
        return array("q", packed) if packed is not None else sorted(map(int, listed.split(",")))

    def _spans_of_files(self) -> list[tuple[int, int, int]] | None:
        """Each file's lowest and highest item id (and the file), lowest first; None when two files' spans overlap,
        so that an id within a span is that file's item or no item at all. The files rows keep them (the indexer
        writes a file's row after its items): asked of the items' index, they were 1,400 of the 3,600 pages -l read."""
        spans = sorted(
            (low, high, file)
            for file, low, high in self.db.execute("SELECT id, low, high FROM files WHERE low IS NOT NULL")
        )
        for (_, high, _), (low, _, _) in pairwise(spans):
            if low <= high:
                return None
        return spans

    def _files_rows(self, *, clean: bool = True) -> None:
        """The files rows `answer` needs, a few hundred at a time rather than one query a file (`-l` of a phrase in
        every session asks each of them). Without `clean`, not those of another agent's files read with no stop or
        warning: `answer` answers one from its first candidate's row alone (a Wren journal's is read from the file,
        checked against its files row)."""
        skipped = set(self._full)
        if not clean:
            rows = self.rows.values()
            skipped.update(ident for ident, agent, _seen, read_clean in rows if read_clean and agent != "wren")
        files = array("q", (file for file in self.candidates if file not in skipped))
        for at in range(0, len(files), _FETCH * 2):
            some = files[at : at + _FETCH * 2]
            marks = ",".join("?" * len(some))
            for full in self.db.execute(f"SELECT {FILE_COLUMNS} FROM files WHERE id IN ({marks})", some):
                self._full[full[0]] = full

    def _every(self) -> bool:
        """Every candidate of every file read, where `load(first=True)` read each file's first (once); False: the
        index cannot be read."""
        if not self._partial:
            return True
        matching, asked = self._matching
        try:
            with _bounded(self.db, QUERY_SECONDS):
                rows = self.db.execute(f"SELECT id, file FROM items WHERE id IN ({matching}) ORDER BY id", (asked,))
                self.candidates = {}
                for ident, file in rows:
                    self._add(file, ident)
                self._files_rows()
        except sqlite3.Error:
            return False
        self._partial = False
        return True

    def first_hit(self, path: str | Path, agent: str) -> tuple[Item, int, int, bool] | None:
        """-l's common case, answered from the row `load(first=True)` read: the file at `path` is as the index read it,
        read as `agent`'s to its end with no stop or warning, and its first candidate, kept whole, matches (as search
        matches it: its text, else its tool name). That item and where the match is (start, end, and True when in the
        tool name). None: `answer` says (a file the index does not hold as it is, a journal's, a first candidate that
        is no hit, no candidate at all), so each candidate is matched once, here or by search.
        """
        if not self._partial:
            return None
        key = str(path)
        row = self.rows.get(key)
        if row is None or row[1] != agent or not row[3]:
            return None
        data = self._first_rows.get(row[0])
        if data is None:
            return None
        if key not in self.fresh:
            st = self._stat(key)
            if st is None or row[2] != _identity(st):
                return None
        fields = marshal.loads(data)
        if len(fields) != _ITEM_FIELDS:
            return None  # where it is in its Wren journal (`wren.Ref`): read from the file, by `answer`
        find = self.query.find
        span = find(fields[4])
        if span is not None:
            return Item(*fields), span[0], span[1], False
        name = fields[7]
        if name is not None and (span := find(name)) is not None:
            return Item(*fields), span[0], span[1], True
        return None

    def _hits(self, items: Iterable[Item]) -> list[Item] | None:
        """These items, when one of them matches the query (as search matches it); None: none does."""
        kept = list(items)
        for item in kept:
            if self.query.find(item.text) is not None or (
                item.name is not None and self.query.find(item.name) is not None
            ):
                return kept
        return None

    def _confirm(self, file: int, rows: list[tuple[int, bytes]], budget: int) -> int:
        """Keep those of a file's candidates that match, while `budget` (bytes of them read) lasts; what is left.

        An item kept whole is confirmed on its row; one kept as where it is in its journal (`wren.Ref`) on its
        line, read from the file (one open, the lines near each other read at once), which must be as the index
        read it (the same device, inode, size and time, each line's CRC-32 the one kept): else every candidate
        of the file is left to `answer`, which reads it whole. The items read and matched are kept for `answer`.
        """
        stored = [(ident, data, stored_of(data)) for ident, data in rows]
        refs: list[Ref] = [each for _, _, each in stored if not isinstance(each, Item)]
        spans = self._spans(file, refs) if refs and budget > 0 else None
        read: list[Item | None] = []
        if spans is not None:
            try:
                read = [self._item_at(span, ref) for span, ref in zip(spans, refs, strict=True)]
            except JournalError:  # not the bytes indexed after all: `answer` reads the file whole
                spans = None
            budget -= sum(map(len, spans or ()))
        taken = iter(read)
        kept: list[Item] = []
        for ident, data, each in stored:
            if isinstance(each, Item):
                if budget > 0:
                    budget -= len(data)
                    if not self._matches(data):
                        continue
                self._add(file, ident)
                kept.append(each)
            elif spans is None:
                self._add(file, ident)
            elif (item := next(taken)) is not None:
                self._add(file, ident)
                kept.append(item)
        if spans is not None:
            self.confirmed[file] = kept
        return budget

    def _item_at(self, span: memoryview, ref: "Ref") -> Item | None:
        """The item `ref` points to if it matches the query (its line's bytes tested first, as the raw pass does)."""
        from .stored import PARTIAL, item_at

        # A partial reply's text is its deltas' texts joined: a match may lie across two of its lines.
        if ref[3] != PARTIAL and self._may_hold is not None and not self._may_hold(span):
            return None
        item = item_at(span, ref)
        found = self.query.find(item.text) is not None
        return item if found or (item.name is not None and self.query.find(item.name) is not None) else None

    def _spans(self, file: int, refs: "list[Ref]") -> list[memoryview] | None:
        """The bytes of `refs` in the file `file`, when it is as the index read it; else None."""
        from .stored import stored_spans

        if self._paths is None:
            self._paths = {row[0]: key for key, row in self.rows.items()}
        key = self._paths.get(file)
        if key is None:
            return None
        st = self._stat(key)
        if st is None or self.rows[key][2] != _identity(st):
            return None  # grown or changed: `answer` says what is read
        try:
            fd = open_read_only(key)
        except OSError:
            return None
        try:
            if _identity(os.fstat(fd)) != self.rows[key][2]:
                return None
            return stored_spans(fd, refs)
        except OSError:
            return None
        finally:
            os.close(fd)

    def _add(self, file: int, ident: int) -> None:
        found = self.candidates.get(file)
        if found is None:
            found = self.candidates[file] = array("q")
        found.append(ident)

    def _matches(self, data: bytes) -> bool:
        """Whether the query matches the item's text or tool name (as search confirms it).

        Search confirms each candidate anyway: confirming a few thousand here, read a few hundred at a
        time, spares it reading them file by file, and a file left with none is answered without a look
        (a phrase of common words whose first word may be part of a longer one has candidates in most
        files, and hits in few). A regex is left to search, which gives it its time budget.
        """
        if self._may_hold is not None and not self._may_hold(data):
            return False
        fields = marshal.loads(data)  # item_blob's: the text 5th, the tool name 8th
        text, name = fields[4], fields[7]
        return self.query.find(text) is not None or (name is not None and self.query.find(name) is not None)

    def close(self) -> None:
        """End the read transaction and close the index (the candidates asked `ahead` stopped first)."""
        self.stop_ahead()
        try:
            if self.db.in_transaction:
                self.db.execute("COMMIT")
        except sqlite3.Error:
            pass
        self.db.close()

    def stop_ahead(self) -> None:
        """The candidates asked `ahead` no longer wanted: SQLite's search interrupted, its thread waited for (it
        ends within a step), so the connection can be closed or used again."""
        if self._ahead is not None:
            self._end(self._ahead, interrupt=True)

    def answer(self, path: str | Path, agent: str) -> Answer | None:
        """The index's answer for the file at `path`, read as `agent`'s: None when it must be read whole."""
        key = str(path)
        row = self.rows.get(key)
        if row is None or row[1] != agent:
            return None
        found = self.candidates.get(row[0], _NONE)
        if not found and row[3] and key in self.fresh:
            return _NOTHING  # fresh, no candidate, read to its end: the common case, kept cheap
        st = self._stat(key)  # as `stale` or the listing found it
        if st is None:
            return None
        if not found and row[3] and row[2] == _identity(st):
            return _NOTHING
        if self._partial and row[3] and row[2] == _identity(st):
            data = self._first_rows.get(row[0])
            stored = None if data is None else stored_of(data)
            if isinstance(stored, Item) and self._hits([stored]) is not None:
                return Answer(_CLEAN, [stored], True)  # -l's common case: fresh, read to its end, its first a hit
        full = self._full.get(row[0])
        try:
            if full is None:
                full = self.db.execute(f"SELECT {FILE_COLUMNS} FROM files WHERE id = ?", (row[0],)).fetchone()
        except sqlite3.Error:
            return None
        if full is None:
            return None
        known = known_of(full)
        if self._partial and fresh(known, st):
            data = self._first_rows.get(known.id)
            # its first candidate: most often its first hit (a candidate with no row: the rows of all are read)
            first = self._items(found, path, known, None if data is None else [data])
            if first is None:
                return None
            hits = self._hits(first)
            if hits is not None:
                return Answer(known, hits, True)
        if self._partial:
            if not self._every():  # its first did not match, or it grew: all its candidates are read
                return None
            found = self.candidates.get(row[0], _NONE)
        if fresh(known, st):
            confirmed = self.confirmed.get(known.id)
            items = confirmed if confirmed is not None else self._items(found, path, known)
            return None if items is None else Answer(known, items, True)
        if grown(known, path, st):
            try:
                saved = known.saved(self.db)
            except sqlite3.Error:
                return None
            if saved is None:
                return None
            last = known.provisional
            ids = array("q", (ident for ident in found if last is None or ident < last))
            items = self._items(ids, path, known)
            return None if items is None else Answer(known, items, False, saved)
        return None

    def _items(
        self, ids: "array[int]", path: str | Path, known: Known, rows: list[bytes] | None = None
    ) -> Iterable[Item] | None:
        """The items with these ids, in order; None when the file does not hold what the index read of it. `rows`:
        their rows, read already (`load(first=True)` reads each file's first).

        Another agent's items are kept whole: read a batch at a time as they are given. A Wren journal's are
        kept as where they are in it (`wren.Ref`): their rows are read at once (a few dozen bytes each), the file
        opened once, and every line checked against its CRC-32 before the first item is given.
        """
        if known.agent != "wren":
            return self._blobs(ids) if rows is None else map(item_of, rows)
        try:
            stored = [stored_of(data) for data in (self._blobs(ids, raw=True) if rows is None else rows)]
        except sqlite3.Error:
            return None
        refs: list[Ref] = [each for each in stored if not isinstance(each, Item)]
        if not refs:
            return stored  # type: ignore[return-value]
        from .stored import stored_items

        try:
            fd = open_read_only(path)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            whole = len(refs) == len(stored)  # all of them read from the journal: those that cannot match left out
            may_hold = self._may_hold if whole else None
            read = stored_items(fd, refs, may_hold) if (st.st_dev, st.st_ino) == (known.dev, known.ino) else None
        except (OSError, JournalError):
            read = None
        if read is None or isinstance(read, list):
            os.close(fd)  # read whole, or not at all
        if read is None:
            return None
        if whole:
            return read if isinstance(read, list) else _closing(fd, read)
        return _merged(None if isinstance(read, list) else fd, stored, iter(read))

    def _blobs(self, ids: "array[int]", raw: bool = False) -> Iterator[Any]:
        """The rows of the items with these ids (items, or with `raw` their blobs), in order, read a batch at a time
        (in the snapshot's transaction): a few first, then more each time, so a search that stops at a file's first
        hit (`-l`) reads no more than it shows."""
        at, size = 0, _FIRST_FETCH
        while at < len(ids):
            batch = ids[at : at + size]
            at, size = at + size, min(size * 4, _FETCH)
            marks = ",".join("?" * len(batch))
            for (data,) in self.db.execute(f"SELECT data FROM items WHERE id IN ({marks}) ORDER BY id", tuple(batch)):
                yield data if raw else item_of(data)


def _closing(fd: int, read: Iterator[Item]) -> Iterator[Item]:
    """The items read from the journal open at `fd`, closed at the end."""
    try:
        yield from read
    finally:
        os.close(fd)


def _merged(fd: int | None, stored: "list[Item | Ref]", read: Iterator[Item]) -> Iterator[Item]:
    """The items kept whole and those read from the journal (open at `fd`, closed at the end), in order."""
    try:
        for each in stored:
            yield each if isinstance(each, Item) else next(read)
    finally:
        if fd is not None:
            os.close(fd)


@contextlib.contextmanager
def _bounded(db: sqlite3.Connection, seconds: float) -> Iterator[None]:
    """SQLite's work inside stopped after `seconds` (sqlite3.OperationalError: interrupted), or at Ctrl+C.

    Python runs a signal's handler only between its own instructions, never inside SQLite: SQLite's
    progress handler, called every _STEPS of its steps, is where both are looked at. In the main thread a
    SIGINT sets a flag there (the default handler's KeyboardInterrupt would be swallowed by the sqlite3
    module), the query is interrupted, and the KeyboardInterrupt is raised once SQLite has returned.
    """
    deadline = time.monotonic() + seconds
    interrupted: list[bool] = []

    def progress() -> int:
        return 1 if interrupted or time.monotonic() > deadline else 0

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        interrupted.append(True)

    catching = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if catching:
        try:
            signal.signal(signal.SIGINT, on_sigint)
        except ValueError:  # not the main thread: Ctrl+C is not this thread's to catch (and `threading` not loaded)
            catching = False
    db.set_progress_handler(progress, _STEPS)
    try:
        yield
    except sqlite3.OperationalError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        db.set_progress_handler(None, 0)
        if catching:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if interrupted:  # came after SQLite's last look
        raise KeyboardInterrupt


def _may_hold(query: Query) -> Callable[[bytes | memoryview], bool] | None:
    """A test of an item's blob (`item_blob`) that is False only when neither its text nor its tool name can
    match `query`; None: no such test here (no C helpers, or no piece of text every match holds).

    The raw pass's test of a line's bytes (`Query.prefilter`: the piece every match holds, ASCII case
    ignored when the query ignores case, and the other ways a character of it can be written): marshal
    keeps each string of the item whole, as UTF-8, so a text that matches has the piece in the blob's
    bytes as it has it in a line's. It spares decoding the candidates that only share words with it.
    """
    needle, fold, escapes, extras = query.prefilter
    find = None if native is None else native.find
    if find is None or needle is None or len(extras) >= _MOST_EXTRAS:
        return None
    return lambda data: int(find(data, needle, fold, escapes, extras)) >= 0


_MOST_EXTRAS = 15  # what `_scan.find` takes
_ITEM_FIELDS = len(Item._fields)
_FETCH = 256  # candidates read at a time
_FIRST_FETCH = 4  # a file's first candidates read at once
# Up to this many candidates, or _PER_FILE a file, `load(first=True)` reads each one's file from its row (about 0.7 µs
# a candidate); more, from the files' spans (about 1 µs a file, whatever the candidates).
_FEW_CANDIDATES = 4096
_PER_FILE = 4
# Up to this many candidates of a literal pattern, `load` confirms them, until it has read this many bytes of
# them (a few tens of milliseconds at most before the first hit); the rest are left to search.
_CONFIRMED = 4096
_CONFIRMED_BYTES = 16 << 20
_NONE: "array[int]" = array("q")
_CLEAN = Known(0, "", 0, 0, 0, 0, 0, 0, 0, False, None, (), None)  # what `answer` says of a file read with no stop
_NOTHING = Answer(_CLEAN, (), True)


def _waited(done: "Event") -> None:
    """Until the thread asking ahead says it is `done` with the connection, a tenth of a second at a time: a wait with
    no timeout is one a Ctrl+C cannot cut short on Windows (nor, anywhere, Python's own interrupt,
    `_thread.interrupt_main`), where between two it is taken at once. The wait ends as the thread's use does.

    Not `Thread.join`: Python 3.11's, cut short by a KeyboardInterrupt, takes a thread still running for ended (it
    releases the thread's own lock), and a second wait would then return while SQLite still runs in it."""
    while not done.wait(0.1):
        pass


def storable(text: str) -> bool:
    """Whether `text` (a file's path) can be kept as SQLite text, UTF-8: not a name of bytes that are not UTF-8 (a
    lone surrogate). The index and the listing's store keep no such file: it is read from itself every time."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Ahead:
    """The candidates' ids `IndexRead.ahead` asks for in a thread: the thread, and what it got or raised.

    `lock` orders the thread's beginning and its end being asked for: the thread asks SQLite only if it is not
    `stopped` first (`asking`), and what stops it waits for it only then, or once `start` has returned (`started`).
    """

    __slots__ = ("asking", "done", "error", "ids", "lock", "started", "stopped", "thread", "took")

    def __init__(self, lock: "Lock", done: "Event") -> None:
        self.lock = lock
        self.done = done  # set by the thread once it no longer uses the connection (or will not)
        self.thread: Thread | None = None
        self.started = False
        self.asking = False
        self.stopped = False
        self.ids: Sequence[int] | None = None
        self.error: BaseException | None = None
        self.took = 0.0  # seconds the question kept SQLite busy


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns
