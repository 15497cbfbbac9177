"""`wren keep`: every agent's session files copied into Wren's kept store, incrementally, durably, read-only.

The agents' files are only read (through descriptors opened read-only, never through a link; a database through a
private consistent copy, `foreign.snapshot`), so their bytes and times are as they were. For each file found:

- unchanged (size, mtime_ns and inode as the manifest last recorded them): not opened at all;
- new: copied whole, beside its place (`<name>.wren-part`), hashed as it is copied, made durable, renamed;
- a log (`.jsonl`) that grew, whose kept bytes are still its prefix (the last 4 KiB before the old end compared):
  only the new bytes are appended to the kept copy;
- a log that shrank (truncated) or whose kept bytes changed (rewritten), a document (`.json`) or a database whose
  content changed: a new version. The kept copy is linked into `versions/<n>/<path>` first, the new copy written
  beside and renamed over it; a document or database whose content did not change adds no version (`seen`);
- gone from the agent's folder: recorded as deleted by its agent; the kept copy stays.

A copy counts when its line is in the manifest (`store`), written only once the copy is durable: a kill at any
moment leaves the store as its last whole line says, plus bytes or a copy not yet counted, which the next
`wren keep` puts right (`_settle`) and `wren verify` does not call damage.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from .. import portable
from ..journal.errors import JournalError
from . import store
from .store import FILES, LOCK, MANIFEST, PART, Entry, Manifest, frame, version_path

if TYPE_CHECKING:
    import sqlite3

    from ..foreign.contract import Format

CHUNK = 1 << 20
# How much before a log's old end is compared to tell whether the kept bytes are still its prefix.
TAIL = 4096
# A file or folder changed this recently may change again within its timestamp's tick unseen: it is read again
# next time (what git calls racily clean).
RACY_NS = 2_000_000_000
# How often a document changed while it was copied is copied again before it is left for the next keep.
_ATTEMPTS = 5
# Where a file starts as a Wren journal: Wren's own journals are never kept (they are their own store).
_WREN_LINE = b'{"seq":'

Change = Literal["new", "grown", "rewritten", "truncated", "seen", "unchanged", "deleted"]


class KeepError(JournalError):
    """The store cannot be written, or another `wren keep` holds it (one sentence: the path and what to do)."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def kind_of(rel: str, fmt: Format) -> Literal["log", "document", "database"]:
    """How a file changes: a log is appended to (`.jsonl`), a database is SQLite's, any other is rewritten whole."""
    if rel.endswith(".jsonl"):
        return "log"
    if fmt.export_all is not None and rel.endswith(fmt.folder.suffix):
        return "database"
    return "document"


@dataclass
class Tally:
    """What one keep did for one agent."""

    agent: str
    files: int = 0  # the agent's files looked at
    changes: dict[str, int] = field(default_factory=dict)
    added: int = 0  # bytes written into the store
    problems: list[str] = field(default_factory=list)

    def count(self, change: Change, added: int = 0) -> None:
        self.changes[change] = self.changes.get(change, 0) + 1
        self.added += added

    def line(self, label: str) -> str:
        said = ", ".join(f"{n:,} {what}" for what, n in self.changes.items() if what != "unchanged" and n)
        same = self.changes.get("unchanged", 0)
        parts = [f"{self.files:,} file{'' if self.files == 1 else 's'}"]
        parts.append(said or "nothing new")
        if same and said:
            parts.append(f"{same:,} unchanged")
        if self.added:
            parts.append(f"{self.added:,} bytes kept")
        if self.problems:
            parts.append(f"{len(self.problems)} not kept")
        return f"{label}: " + "; ".join(parts)


def source_key(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _wal_key(path: Path) -> tuple[int, int, int]:
    try:
        return source_key(os.stat(f"{path}-wal", follow_symlinks=False))
    except OSError:
        return (0, 0, 0)


def key_of(path: Path, st: os.stat_result, database: bool) -> tuple[int, ...]:
    """What tells that a file changed without reading it: its size, mtime_ns and inode; a database's WAL's too
    (SQLite writes there alone until a checkpoint)."""
    return source_key(st) + _wal_key(path) if database else source_key(st)


# --- the store's lock ---------------------------------------------------------------------------------


class StoreLock:
    """The one writer of a kept store: an exclusive lock on `<root>/lock`, held until closed (a kill drops it)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            root.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT | portable.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise KeepError(
                f"{root}: {(exc.strerror or str(exc)).lower()}; the kept store cannot be made there "
                f"(set {store.ENV} to a folder you can write)"
            ) from None
        fcntl = portable.fcntl
        if fcntl is None:
            return  # no file locks (Windows): one `wren keep` at a time is the user's to keep
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise KeepError(
                f"{root}: another `wren keep` is writing this store (a --follow?); wait for it or stop it"
            ) from None

    def close(self) -> None:
        os.close(self.fd)


# --- one agent's manifest, appended ----------------------------------------------------------------


class Appender:
    """An agent's manifest opened to append lines; a torn last line (a kill) is cut off first."""

    def __init__(self, folder: Path, manifest: Manifest) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / MANIFEST
        made = not os.path.lexists(path)
        if manifest.torn:
            with open(path, "r+b") as f:
                f.truncate(manifest.size)
                portable.durable_sync(f.fileno())
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | portable.O_CLOEXEC | portable.O_BINARY, 0o600)
        self.size = manifest.size
        self.folder = folder if made else None  # its name made durable with its first lines

    def append(self, records: list[dict[str, Any]]) -> None:
        """The records' lines at the manifest's end, durable before this returns."""
        if not records:
            return
        data = b"".join(frame(r) for r in records)
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]
        portable.durable_sync(self.fd)
        if self.folder is not None:
            portable.fsync_folder(self.folder)
            self.folder = None
        self.size += len(data)

    def close(self) -> None:
        os.close(self.fd)


# --- copying -------------------------------------------------------------------------------------------


def _write_from(src: int, out: int, start: int, at: int, digest: Any, stop: int | None = None) -> int:
    """`src`'s bytes from `start` to its end (to `stop` at most: its size when it was looked at, which spares a
    read that finds the end), written at `out`'s offset `at` and hashed; the bytes copied."""
    copied = 0
    while stop is None or start + copied < stop:
        chunk = portable.pread(src, CHUNK if stop is None else min(CHUNK, stop - start - copied), start + copied)
        if not chunk:
            return copied
        digest.update(chunk)
        view = memoryview(chunk)
        while view:
            view = view[portable.pwrite(out, view, at + copied + (len(chunk) - len(view))) :]
        copied += len(chunk)
    return copied


_made: set[str] = set()  # the folders of the store this process made (or found): not made again


def _open_new(path: Path) -> int:
    folder = os.path.dirname(path)
    if folder not in _made:
        os.makedirs(folder, exist_ok=True)
        _made.add(folder)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | portable.O_CLOEXEC | portable.O_BINARY
    try:
        return os.open(path, flags, 0o600)
    except FileNotFoundError:  # its folder was removed since (a person tidying the store while --follow runs)
        os.makedirs(folder, exist_ok=True)
        return os.open(path, flags, 0o600)


@dataclass
class Copied:
    """A whole copy written beside its place (`part`), not yet durable nor renamed."""

    part: Path
    size: int
    sha256: str
    content: str | None = None  # a database's digest of its pages (its header's counters aside)
    sessions: list[str] | None = None  # a database's sessions (the ids of its `session` table), when it has one


def copy_whole(source: Path, part: Path, *, retry: bool, sync: bool) -> Copied:
    """The file at `source` copied to `part` and hashed; `retry`: copied again (a few times) when it changed while
    it was copied (a document rewritten in place), so the copy is one the agent wrote."""
    for _attempt in range(_ATTEMPTS if retry else 1):
        fd = portable.open_read_only(source)
        try:
            before = os.fstat(fd)
            digest = hashlib.sha256()
            out = _open_new(part)
            try:
                size = _write_from(fd, out, 0, 0, digest, before.st_size)
                if sync:
                    portable.durable_sync(out)
            finally:
                os.close(out)
            after = os.stat(source, follow_symlinks=False)
        finally:
            os.close(fd)
        if not retry or source_key(before) == source_key(after):
            break
        time.sleep(0.01)
    return Copied(part, size, digest.hexdigest())


def copy_database(source: Path, part: Path, *, sync: bool) -> Copied:
    """A consistent copy of the SQLite database at `source` with its WAL, as one file (no WAL of its own) at
    `part`: taken from a private copy (`foreign.snapshot`), never by opening the agent's files with SQLite."""
    import sqlite3

    from ..foreign.snapshot import DatabaseCopy

    part.parent.mkdir(parents=True, exist_ok=True)
    for leftover in (part, part.with_name(part.name + "-journal")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()

    sessions: list[str] | None = None

    def backup(conn: sqlite3.Connection) -> None:
        nonlocal sessions
        target = sqlite3.connect(part)
        try:
            conn.backup(target)
            target.execute("pragma journal_mode = delete")
            try:  # OpenCode's schema (Kilo's too): which sessions this version holds, for the readers of the store
                sessions = sorted(str(row[0]) for row in target.execute("select id from session"))
            except sqlite3.Error:
                sessions = None
        finally:
            target.close()

    snap = DatabaseCopy(source)
    try:
        snap.query(backup)
    finally:
        snap.close()
    digest, content = hashlib.sha256(), hashlib.sha256()
    fd = portable.open_read_only(part)
    try:
        offset = 0
        while chunk := portable.pread(fd, CHUNK, offset):
            digest.update(chunk)
            if offset == 0 and len(chunk) >= 100:  # the change counter and its copy: a checkpoint moves them
                chunk = chunk[:24] + bytes(4) + chunk[28:92] + bytes(4) + chunk[96:]
            content.update(chunk)
            offset += len(chunk)
    finally:
        os.close(fd)
    if sync:
        with open(part, "rb+") as f:
            portable.durable_sync(f.fileno())
    return Copied(part, offset, digest.hexdigest(), content.hexdigest(), sessions)


def _same_bytes(a: int, b: int, start: int, stop: int) -> bool:
    return portable.pread(a, stop - start, start) == portable.pread(b, stop - start, start)


# --- one agent -----------------------------------------------------------------------------------------


@dataclass
class Source:
    rel: str
    path: Path
    st: os.stat_result
    key: tuple[int, ...]  # key_of


@dataclass
class Walked:
    """An agent's files found in its folder, its folders' modification times, and the folders it could not list."""

    files: list[Source]
    folders: dict[str, int]
    unreadable: list[str]


def walk(fmt: Format, root: Path, skip: Iterable[Path] = (), start: Path | None = None) -> Walked:
    """The session files of `fmt` below `start` (default: `root`), named by their path from `root`, and what is kept
    with each (`Folder.kept_with`); no link followed."""
    skipping = {os.path.realpath(p) for p in skip}
    files: list[Source] = []
    folders: dict[str, int] = {}
    unreadable: list[str] = []
    seen: set[str] = set()

    def add(path: Path, st: os.stat_result) -> None:
        rel = path.relative_to(root).as_posix()
        if not _utf8(rel):  # a file kept with a session (`kept_with`), named by no UTF-8
            shown = os.fsencode(path).decode("utf-8", "backslashreplace")
            unreadable.append(f"{shown}: its name is not UTF-8, so it cannot be kept (rename it)")
        elif rel not in seen:
            seen.add(rel)
            files.append(Source(rel, path, st, key_of(path, st, kind_of(rel, fmt) == "database")))

    pending = [start or root]
    while pending:
        folder = pending.pop()
        if skipping and os.path.realpath(folder) in skipping:
            continue
        try:
            folders[folder.relative_to(root).as_posix()] = os.stat(folder, follow_symlinks=False).st_mtime_ns
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        except OSError as exc:
            unreadable.append(f"{folder}: {(exc.strerror or str(exc)).lower()}, so its sessions cannot be kept")
            continue
        for entry in entries:
            if not _utf8(entry.name):  # no manifest line (JSON) can name it: said, and the others still kept
                shown = os.fsencode(folder / entry.name).decode("utf-8", "backslashreplace")
                unreadable.append(f"{shown}: its name is not UTF-8, so it cannot be kept (rename it)")
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if fmt.folder.hidden_folders or not entry.name.startswith("."):
                        pending.append(folder / entry.name)
                    continue
                if not entry.name.endswith(fmt.folder.suffix) or not entry.is_file(follow_symlinks=False):
                    continue
                path = folder / entry.name
                if not fmt.folder.is_session_file(path):
                    continue
                add(path, entry.stat(follow_symlinks=False))
                for other in fmt.folder.kept_with(path):
                    with contextlib.suppress(OSError):
                        st = os.stat(other, follow_symlinks=False)
                        if stat.S_ISREG(st.st_mode):
                            add(other, st)
            except OSError:
                continue
    files.sort(key=lambda s: s.rel)
    return Walked(files, folders, unreadable)


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_wren_journal(path: Path) -> bool:
    from ..foreign.base import head_of

    return head_of(path, len(_WREN_LINE)) == _WREN_LINE


class AgentKeeper:
    """Keeps one agent's files: its manifest replayed, its changes found, copied and recorded."""

    def __init__(
        self,
        store_root: Path,
        name: str,
        fmt: Format | None,
        root: Path,
        kinds: dict[str, str] | None = None,
    ) -> None:
        """`fmt` None with `kinds` (each file's `kind_of`): only those files, already kept, are looked at (the
        manifest's lines of them alone are read, and no agent's code is loaded)."""
        self.name, self.fmt, self.root = name, fmt, root
        self.kinds = kinds or {}
        self.folder = store_root / name
        self.files = self.folder / FILES
        self.manifest = store.read_manifest(self.folder, None if fmt is not None else list(self.kinds))
        self.appender: Appender | None = None

    def kind(self, rel: str) -> str:
        known = self.kinds.get(rel)
        if known is not None:
            return known
        assert self.fmt is not None, "a file of no known kind, and no format to tell"
        return kind_of(rel, self.fmt)

    def close(self) -> None:
        if self.appender is not None:
            self.appender.close()
            self.appender = None

    def record(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        if self.appender is None:
            self.appender = Appender(self.folder, self.manifest)
        self.appender.append(records)
        for r in records:
            store._apply(self.manifest.entries, r)

    def _settle(self, entry: Entry) -> Path:
        """The kept copy of `entry` put back as its manifest says, before it changes again: a rewrite a kill cut
        short is undone (its version's link back in place), bytes appended but not counted are cut off."""
        copy = self.files / entry.rel
        if self.manifest.damaged:
            # A damaged line may be the one that counted these bytes or this copy: nothing is undone on what is
            # left of the manifest (it would cut off counted bytes, or put an earlier version back over the latest).
            return copy
        linked = version_path(self.folder, entry.rel, entry.current.number)
        if os.path.lexists(linked):
            try:
                same = os.path.samefile(linked, copy)
            except FileNotFoundError:
                same = False
            if same:
                os.unlink(linked)  # linked, not yet replaced (a rename onto the same file would do nothing)
            else:
                os.replace(linked, copy)  # replaced, not yet recorded: the version the manifest counts goes back
        with contextlib.suppress(FileNotFoundError):
            if os.stat(copy).st_size > entry.current.size:
                os.truncate(copy, entry.current.size)
        return copy

    def keep(
        self,
        walked: Walked,
        tally: Tally,
        *,
        started_ns: int,
        many: bool,
        only: Callable[[str], bool] | None = None,
    ) -> None:
        """Everything that changed among `walked`'s files kept and recorded (`only`: those rels alone)."""
        if self.manifest.damaged:
            number, why = self.manifest.damaged[0]
            tally.problems.append(
                f"{self.folder / MANIFEST}: line {number} is damaged ({why}), so no kept copy is cut back or put "
                "back to what the other lines say; `wren verify` says what is damaged"
            )
        at = now_iso()
        entries = self.manifest.entries
        records: list[dict[str, Any]] = []
        renames: list[tuple[Path, Path]] = []  # (part, place) once the parts are durable
        folders: set[Path] = set()
        present: set[str] = set()
        fresh: list[Source] = []  # new files, copied together (many at once: on threads)
        for source in walked.files:
            if only is not None and not only(source.rel):
                continue
            present.add(source.rel)
            tally.files += 1
            entry = entries.get(source.rel)
            key = source.key
            racy = max(key[1::3]) > started_ns - RACY_NS  # the file's mtime (and its WAL's)
            if entry is not None and entry.src == key and not entry.racy and entry.state != "deleted":
                tally.count("unchanged")
                continue
            if entry is None:
                fresh.append(source)
                continue
            try:
                change = self._one(source, entry, key, racy, at, many, records, renames, folders)
            except (OSError, JournalError) as exc:
                why = str(exc) if isinstance(exc, JournalError) else (exc.strerror or str(exc)).lower()
                tally.problems.append(f"{source.path}: {why}; it was not kept this time (run `wren keep` again)")
                continue
            if change is not None:
                tally.count(change[0], change[1])
        for source, copied in zip(fresh, self._copy_new(fresh, many, started_ns), strict=True):
            if isinstance(copied, BaseException):
                why = (
                    str(copied)
                    if isinstance(copied, JournalError)
                    else (getattr(copied, "strerror", None) or str(copied))
                )
                tally.problems.append(
                    f"{source.path}: {why.lower()}; it was not kept this time (run `wren keep` again)"
                )
                continue
            if copied is None:
                continue  # Wren's own journal
            place = self.files / source.rel
            renames.append((copied.part, place))
            record: dict[str, Any] = {"rel": source.rel, "at": at, "src": list(source.key)}
            if max(source.key[1::3]) > started_ns - RACY_NS:
                record["racy"] = True
            record.update(op="copy", v=1, size=copied.size, sha256=copied.sha256, why="new")
            if copied.content is not None:
                record["content"] = copied.content
            if copied.sessions is not None:
                record["sessions"] = copied.sessions
            records.append(record)
            tally.count("new", copied.size)
        gone_from_unreadable = tuple(p.split(": ", 1)[0] for p in walked.unreadable)
        for rel, entry in entries.items():
            if rel in present or entry.state == "deleted" or (only is not None and not only(rel)):
                continue
            if any(str(self.root / rel).startswith(folder + os.sep) for folder in gone_from_unreadable):
                continue  # in a folder that could not be listed: not seen, not deleted
            if os.path.lexists(self.root / rel):
                continue  # there, but no longer taken for a session (a link now): left as kept
            self._settle(entry)
            records.append({"op": "gone", "rel": rel, "at": at})
            tally.count("deleted")
        if renames or many:
            if many and portable.SYNC_ALL:
                portable.sync_all()  # every part and appended byte durable at once
            for part, place in renames:
                os.replace(part, place)
                folders.add(place.parent)
            if many and portable.SYNC_ALL:
                portable.sync_all()
            else:
                # Each folder's parents too, up to the store's root: a folder this keep made is a new name there.
                top = self.folder.parent
                for folder in sorted({p for f in folders for p in (f, *f.parents) if p == top or top in p.parents}):
                    portable.fsync_folder(folder)
        self.record(records)

    def _one(
        self,
        source: Source,
        entry: Entry | None,
        key: tuple[int, ...],
        racy: bool,
        at: str,
        many: bool,
        records: list[dict[str, Any]],
        renames: list[tuple[Path, Path]],
        folders: set[Path],
    ) -> tuple[Change, int] | None:
        rel, path = source.rel, source.path
        kind = self.kind(rel)
        place = self.files / rel
        part = place.with_name(place.name + PART)
        sync = not (many and portable.SYNC_ALL)
        base: dict[str, Any] = {"rel": rel, "at": at, "src": list(key)}
        if racy:
            base["racy"] = True
        assert entry is not None, "a new file is copied by _copy_new"
        copy = self._settle(entry)
        current = entry.current
        if kind == "log" and entry.state != "deleted":
            grown = self._grow(path, copy, current.size, sync)
            if grown is not None:
                size, digest = grown
                if size == current.size:
                    records.append({**base, "op": "seen"})
                    return "seen", 0
                records.append({**base, "op": "grow", "v": current.number, "from": current.size, "size": size})
                records[-1]["sha256"] = digest
                return "grown", size - current.size
        copied = self._copy(kind, path, part, sync)
        same = (
            copied.content == current.content
            if copied.content is not None
            else (copied.size == current.size and copied.sha256 == current.sha256)
        )
        if same:
            part.unlink()
            records.append({**base, "op": "seen"})
            return "seen", 0
        why: Change = "truncated" if kind == "log" and copied.size < current.size else "rewritten"
        linked = version_path(self.folder, rel, current.number)
        if os.path.lexists(copy):
            linked.parent.mkdir(parents=True, exist_ok=True)
            os.link(copy, linked)  # the version kept before the new copy takes its place
            folders.add(linked.parent)
            if sync:
                portable.fsync_folder(linked.parent)
        renames.append((part, place))
        record = {**base, "op": "copy", "v": current.number + 1, "size": copied.size, "sha256": copied.sha256}
        record["why"] = why
        if copied.content is not None:
            record["content"] = copied.content
        if copied.sessions is not None:
            record["sessions"] = copied.sessions
        records.append(record)
        return why, copied.size

    def _copy_new(self, fresh: list[Source], many: bool, started_ns: int) -> list[Copied | BaseException | None]:
        """Each new file copied beside its place (None: a Wren journal, never kept), or what stopped it."""
        sync = not (many and portable.SYNC_ALL)

        def one(source: Source) -> Copied | BaseException | None:
            kind = self.kind(source.rel)
            if kind == "log" and _is_wren_journal(source.path):
                return None
            place = self.files / source.rel
            try:
                return self._copy(kind, source.path, place.with_name(place.name + PART), sync)
            except (OSError, JournalError) as exc:
                return exc

        # One at a time: on threads, the creations in one folder wait on each other (measured slower, not faster).
        return [one(source) for source in fresh]

    def _copy(self, kind: str, path: Path, part: Path, sync: bool) -> Copied:
        if kind == "database":
            return copy_database(path, part, sync=sync)
        return copy_whole(path, part, retry=kind == "document", sync=sync)

    def _grow(self, path: Path, copy: Path, kept: int, sync: bool) -> tuple[int, str] | None:
        """The agent's log's bytes past `kept` appended to its kept copy: (the kept size now, their sha256);
        None when the kept bytes are no longer its prefix (or it is shorter): a new version, not a growth."""
        fd = portable.open_read_only(path)
        try:
            size = os.fstat(fd).st_size
            if size < kept:
                return None
            try:
                out = os.open(copy, os.O_RDWR | portable.O_CLOEXEC | portable.O_BINARY)
            except FileNotFoundError:
                return None  # the kept copy is lost: copied whole again
            try:
                if os.fstat(out).st_size != kept or not _same_bytes(fd, out, max(0, kept - TAIL), kept):
                    return None
                digest = hashlib.sha256()
                copied = _write_from(fd, out, kept, kept, digest)
                if sync and copied:
                    portable.durable_sync(out)
            finally:
                os.close(out)
        finally:
            os.close(fd)
        return kept + copied, digest.hexdigest()


# --- the whole store -----------------------------------------------------------------------------------


def fingerprint(env: Mapping[str, str], home: Path) -> str:
    """What the agents' folders are found from (the home, the variables naming folders): a cached folder is
    trusted only while this is the same."""
    named = {k: v for k, v in env.items() if k.startswith("XDG_") or k.endswith(("_HOME", "_DIR", "_FILE"))}
    return ascii([str(home), sorted(named.items())])  # ascii: a value that is no UTF-8 (a path's bytes) escaped


@dataclass(frozen=True)
class Asked:
    """What a keep is asked for: the agents named (None: every one with a folder of its own), the folder named with
    --from, the environment and the home folder their folders are found by, and the store's root."""

    names: list[str] | None
    folder: Path | None
    env: Mapping[str, str]
    home: Path
    root: Path


@dataclass
class Planned:
    """One agent a keep looks at: its name, its label, its folder, and where below it to look (None: all of it)."""

    name: str
    label: str
    root: Path
    start: Path | None = None

    def within(self) -> Callable[[str], bool] | None:
        """Whether a kept file is in what this keep looks at (None: every one of the agent's is)."""
        if self.start is None:
            return None
        prefix = self.start.relative_to(self.root).as_posix().rstrip("/") + "/"
        return lambda rel: rel.startswith(prefix)


def plan(asked: Asked) -> tuple[list[Planned], list[str]]:
    """The agents to keep (every format with a folder of its own when `names` is empty) and a sentence for each
    left out (aider: its histories are beside each project, kept only from a folder named with --from, each by its
    whole path, since every project's has the same name).

    Raises:
        KeepError: a folder named for an agent that has its own (its variable names another).
    """
    from ..foreign import FORMATS

    agents: list[Planned] = []
    skipped: list[str] = []
    folder = asked.folder
    for name in asked.names or list(FORMATS):
        fmt = FORMATS[name]
        if folder is not None and fmt.folder.own_folder:
            own = fmt.folder
            variable = f" (set {own.env} to keep another)" if own.env else ""
            where = own.root(asked.env, asked.home)
            raise KeepError(
                f"{folder}: {fmt.label}'s sessions are kept from its own folder, {where}{variable}; "
                "--from is for an agent with no folder of its own (aider)"
            )
        if folder is not None:
            agents.append(Planned(name, fmt.label, Path(folder.anchor), folder))
        elif not fmt.folder.own_folder:
            skipped.append(
                f"{fmt.label}: not kept, since it keeps no folder of its own (its histories are beside each project); "
                f"name one with `wren keep --agent {name} --from FOLDER`"
            )
        else:
            agents.append(Planned(name, fmt.label, fmt.folder.root(asked.env, asked.home)))
    return agents, skipped


def keep(
    asked: Asked, *, say: Callable[[str], None] | None = None, skip: Iterable[Path] = ()
) -> tuple[list[Tally], list[str]]:
    """Keep the agents' files in the store at `asked.root` (its lock held meanwhile): a tally per agent, and a
    sentence for each agent left out."""
    lock = StoreLock(asked.root)
    try:
        return keep_locked(asked, say=say, skip=skip)
    finally:
        lock.close()


def keep_locked(
    asked: Asked, *, say: Callable[[str], None] | None = None, skip: Iterable[Path] = ()
) -> tuple[list[Tally], list[str]]:
    started = time.time_ns()
    root = asked.root
    skip = [*skip, root]
    cache = ScanCache.read(root)
    print_ = fingerprint(asked.env, asked.home)
    key = msgspec.json.encode([asked.names or [], str(asked.folder) if asked.folder else None]).decode()
    planned = cache.plan(key, print_)
    if planned is None:
        planned = plan(asked)
        cache.keep_plan(key, print_, planned)
    agents, skipped = planned
    tallies = []
    for agent in agents:
        tally = Tally(agent.name)
        changed = cache.changed(agent.name, agent.root, root / agent.name) if agent.start is None else None
        if changed is not None:
            # No file came or went (no folder changed): only the files whose times changed are looked at.
            tally.files = cache.count(agent.name)
            if len(changed) < tally.files:
                tally.changes["unchanged"] = tally.files - len(changed)
            if changed:
                kinds = {source.rel: kind for source, kind in changed}
                keeper = AgentKeeper(root, agent.name, None, agent.root, kinds)
                sources = [source for source, _kind in changed]
                looked = Tally(agent.name)
                try:
                    keeper.keep(Walked(sources, {}, []), looked, started_ns=started, many=False)
                finally:
                    keeper.close()
                for what, n in looked.changes.items():
                    tally.changes[what] = tally.changes.get(what, 0) + n
                tally.added += looked.added
                tally.problems.extend(looked.problems)
                cache.update(agent.name, sources, keeper.manifest, started, root / agent.name)
        else:
            from ..foreign import FORMATS

            fmt = FORMATS[agent.name]
            walked = walk(fmt, agent.root, skip, agent.start)
            tally.problems.extend(walked.unreadable)
            keeper = AgentKeeper(root, agent.name, fmt, agent.root)
            try:
                keeper.keep(walked, tally, started_ns=started, many=len(walked.files) > 8, only=agent.within())
            finally:
                keeper.close()
            if agent.start is None:
                cache.remember(agent.name, agent.root, walked, keeper.manifest, started, root / agent.name, fmt)
        tallies.append(tally)
        if say is not None and (tally.files or tally.changes or tally.problems):
            say(tally.line(agent.label))
    none = [a.label for a, t in zip(agents, tallies, strict=True) if not (t.files or t.changes or t.problems)]
    if say is not None and none:
        say(f"no sessions found of {', '.join(none)}")
    cache.write(root)
    return tallies, skipped


# --- what the last keep found, to find nothing new without importing any agent's code ----------------------

SCAN = "scan.json"


def _manifest_size(folder: Path) -> int:
    try:
        return os.stat(folder / MANIFEST).st_size
    except OSError:
        return -1


class ScanCache:
    """What the last `wren keep` saw of each agent's folder (its folders' and files' times), so that the next one
    tells that nothing changed by stat'ing them alone, without loading any agent's code. Only a shortcut: at any
    doubt (a folder or file changed, the manifest written since, a time too recent to trust, the variables naming
    the folders changed) the folder is walked again."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @classmethod
    def read(cls, root: Path) -> ScanCache:
        try:
            data = msgspec.json.decode((root / SCAN).read_bytes())
        except (OSError, ValueError, msgspec.DecodeError):
            data = {}
        return cls(data if isinstance(data, dict) else {})

    def plan(self, key: str, print_: str) -> tuple[list[Planned], list[str]] | None:
        try:
            seen = self.data["plans"][key]
            if seen["fingerprint"] != print_:
                return None
            agents = [Planned(n, label, Path(r), Path(s) if s else None) for n, label, r, s in seen["agents"]]
            return agents, list(seen["skipped"])
        except (KeyError, TypeError, ValueError):
            return None

    def keep_plan(self, key: str, print_: str, planned: tuple[list[Planned], list[str]]) -> None:
        plans = self.data.setdefault("plans", {})
        if not isinstance(plans, dict):
            plans = self.data["plans"] = {}
        agents = [[a.name, a.label, str(a.root), str(a.start) if a.start else None] for a in planned[0]]
        plans[key] = {"fingerprint": print_, "agents": agents, "skipped": planned[1]}

    def count(self, name: str) -> int:
        return len(self.data.get("agents", {}).get(name, {}).get("files", {}))

    def changed(self, name: str, agent_root: Path, store_folder: Path) -> list[tuple[Source, str]] | None:
        """The files whose times changed since the last keep, each with its kind, when no file can have come or
        gone (no folder changed, the manifest is as it was left); None when the folder must be walked."""
        try:
            seen = self.data["agents"][name]
            if seen["root"] != str(agent_root) or seen["manifest"] != _manifest_size(store_folder):
                return None
            base = str(agent_root) + os.sep  # plain strings: a Path made per file costs more than its stat
            stat_ = os.stat
            for rel, mtime in seen["folders"].items():
                if (
                    mtime is None
                    or stat_(base + rel if rel != "." else base, follow_symlinks=False).st_mtime_ns != mtime
                ):
                    return None
            if not seen["folders"] and os.path.lexists(agent_root):
                return None  # it was not there; it is now
            changed = []
            # Each file as one string, "KIND SIZE MTIME_NS INODE" (a database's WAL's three after), or its kind alone
            # when its times were too recent to trust: a dict of strings decodes in a fraction of the lists' time.
            for rel, said in seen["files"].items():
                st = stat_(base + rel, follow_symlinks=False)
                if said == f"log {st.st_size} {st.st_mtime_ns} {st.st_ino}":
                    continue
                kind = said.split(" ", 1)[0]
                path = agent_root / rel
                now = key_of(path, st, kind == "database")
                if said != " ".join([kind, *map(str, now)]):
                    changed.append((Source(rel, path, st, now), kind))
        except (OSError, KeyError, TypeError, ValueError, AttributeError):
            return None
        return changed

    def _file(self, s: Source, manifest: Manifest, trusted: int, kind: str) -> str:
        entry = manifest.entries.get(s.rel)
        recorded = entry is not None and entry.src == s.key and not entry.racy
        return " ".join([kind, *map(str, s.key)]) if recorded and max(s.key[1::3]) < trusted else kind

    def remember(
        self,
        name: str,
        agent_root: Path,
        walked: Walked,
        manifest: Manifest,
        started_ns: int,
        store_folder: Path,
        fmt: Format,
    ) -> None:
        trusted = started_ns - RACY_NS
        files = {s.rel: self._file(s, manifest, trusted, kind_of(s.rel, fmt)) for s in walked.files}
        agents = self.data.setdefault("agents", {})
        if not isinstance(agents, dict):
            agents = self.data["agents"] = {}
        agents[name] = {
            "root": str(agent_root),
            "folders": {rel: (m if m < trusted else None) for rel, m in walked.folders.items()},
            "files": files,
            "manifest": _manifest_size(store_folder),
        }

    def update(self, name: str, sources: list[Source], manifest: Manifest, started_ns: int, store_folder: Path) -> None:
        """After the files `changed` gave were kept: what they are now."""
        seen = self.data["agents"][name]
        for s in sources:
            seen["files"][s.rel] = self._file(s, manifest, started_ns - RACY_NS, seen["files"][s.rel].split(" ", 1)[0])
        seen["manifest"] = _manifest_size(store_folder)

    def write(self, root: Path) -> None:
        part = root / (SCAN + PART)
        try:
            part.write_bytes(msgspec.json.encode(self.data))
            os.replace(part, root / SCAN)
        except (OSError, UnicodeEncodeError):  # UnicodeEncodeError: a folder's path that is no UTF-8
            pass  # only a shortcut: the next keep walks every folder
