"""git's on-disk formats a small snapshot needs, read and written in this process: no git started.

A snapshot of a workspace of a few files spent most of its time starting git: `git add` then
`git write-tree`, a process each, for a handful of changed files. This module does that work
itself, in the formats git documents (gitformat-index(5) version 2, loose objects), so the store
stays an ordinary git repository that git reads and writes as before:

- the index (the per-session stat cache): read, and written back with the entries' new stat data;
- blobs and trees as loose objects (zlib level 1, as `core.looseCompression` says), each fsynced
  before it is renamed into place, as git does with `core.fsync=loose-object`;
- trees built from the index's sorted paths.

Only what a snapshot writes is here: version 2 and 3 indexes with stage-0 entries and SHA-1 ids.
Anything else (another version, a conflict stage, an index written with split-index) is
`Unreadable`, and the caller hands the snapshot to git.

Racy entries: an entry whose mtime is not older than the index file's (in whole seconds, as git
compares without nanoseconds) may have changed in the same tick after it was hashed, so its
stat data is not trusted and the file is hashed again.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..portable import O_BINARY, O_CLOEXEC
from .targets import fsync_dir

_HEAD = struct.Struct(">4sII")
# ctime s, ns; mtime s, ns; dev; ino; mode; uid; gid; size; then the object id (20) and flags (2).
_STAT = struct.Struct(">10I")
_FIXED = _STAT.size + 20 + 2  # 62
_EXTENDED = 0x4000
_STAGE = 0x3000
_NAME_MASK = 0x0FFF
_U32 = 0xFFFFFFFF

REGULAR, EXECUTABLE, LINK, TREE = 0o100644, 0o100755, 0o120000, 0o40000


class Unreadable(Exception):
    """An index this module does not read (another version, conflicts, a damaged file): git's to handle."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One index entry: the stat data git keeps (each field cut to 32 bits), the mode and the object id."""

    stat: tuple[int, ...]  # ctime s, ctime ns, mtime s, mtime ns, dev, ino, mode, uid, gid, size
    oid: bytes  # 20 bytes

    @property
    def mode(self) -> int:
        return self.stat[6]


@dataclass(frozen=True, slots=True)
class Index:
    """An index's entries by path and the second its file was last written (for the racy check)."""

    entries: dict[bytes, Entry]
    written: int  # the index file's mtime, whole seconds; -1 when there was no file


def stat_of(st: os.stat_result, mode: int) -> tuple[int, ...]:
    """An lstat result as the index keeps it (git's fill_stat_data)."""
    return (
        int(st.st_ctime) & _U32,
        st.st_ctime_ns % 1_000_000_000,
        int(st.st_mtime) & _U32,
        st.st_mtime_ns % 1_000_000_000,
        st.st_dev & _U32,
        st.st_ino & _U32,
        mode,
        st.st_uid & _U32,
        st.st_gid & _U32,
        st.st_size & _U32,
    )


def mode_of(st: os.stat_result) -> int | None:
    """The mode git records for a path: a link, an executable or a plain file; None for anything else."""
    if stat.S_ISLNK(st.st_mode):
        return LINK
    if stat.S_ISREG(st.st_mode):
        return EXECUTABLE if st.st_mode & stat.S_IXUSR else REGULAR
    return None


def read_index(path: Path) -> Index:
    """The entries of a git index file; an empty index when there is none.

    Raises:
        Unreadable: the file is not a version 2 or 3 index of stage-0 entries, or its checksum is wrong.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
            written = int(os.fstat(f.fileno()).st_mtime)
    except FileNotFoundError:
        return Index({}, -1)
    if len(data) < _HEAD.size + 20 or hashlib.sha1(data[:-20]).digest() != data[-20:]:
        raise Unreadable(f"{path}: not a whole index")
    magic, version, count = _HEAD.unpack_from(data)
    if magic != b"DIRC" or version not in (2, 3):
        raise Unreadable(f"{path}: index version {version}")
    entries: dict[bytes, Entry] = {}
    at = _HEAD.size
    end = len(data) - 20
    for _ in range(count):
        if at + _FIXED > end:
            raise Unreadable(f"{path}: cut short")
        fields = _STAT.unpack_from(data, at)
        oid = data[at + 40 : at + 60]
        (flags,) = struct.unpack_from(">H", data, at + 60)
        if flags & _STAGE:
            raise Unreadable(f"{path}: an entry at a conflict stage")
        start = at + _FIXED + (2 if flags & _EXTENDED else 0)
        stop = data.find(b"\0", start, end)
        if stop < 0:
            raise Unreadable(f"{path}: a path with no end")
        entries[data[start:stop]] = Entry(fields, oid)
        at += (stop - at + 8) & ~7  # the entry padded with 1 to 8 NULs to a multiple of 8
    return Index(entries, written)


def racy(entry: Entry, index: Index) -> bool:
    """The entry's file was changed in the second its index was written: its stat data proves nothing."""
    return entry.stat[2] >= index.written


def write_index(path: Path, entries: dict[bytes, Entry]) -> None:
    """Write `entries` as a version 2 index (sorted by path, no extensions), replacing the file atomically."""
    out = [_HEAD.pack(b"DIRC", 2, len(entries))]
    for name in sorted(entries):
        entry = entries[name]
        body = _STAT.pack(*entry.stat) + entry.oid + struct.pack(">H", min(len(name), _NAME_MASK)) + name
        out.append(body + b"\0" * (8 - len(body) % 8))
    data = b"".join(out)
    data += hashlib.sha1(data).digest()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class Objects:
    """A store's loose objects: written once each, fsynced; `sync()` makes the folders that named them durable."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._dirty: set[str] = set()
        self._new_fanout = False

    def write(self, kind: bytes, body: bytes) -> bytes:
        """The object's id; it is written (and fsynced) when the store has no loose copy of it yet.

        A copy in a pack is not looked for: a second, loose copy of an object is harmless to git.
        """
        head = b"%s %d\0" % (kind, len(body))
        oid = hashlib.sha1(head + body).digest()
        hexid = oid.hex()
        fanout = self.folder / hexid[:2]
        final = fanout / hexid[2:]
        if final.exists():
            return oid
        if not fanout.is_dir():
            fanout.mkdir(exist_ok=True)
            self._new_fanout = True
        tmp = fanout / f"tmp_obj_{os.getpid()}_{hexid[:8]}"
        data = zlib.compress(head + body, 1)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | O_BINARY | O_CLOEXEC, 0o444)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._dirty.add(hexid[:2])
        return oid

    def sync(self) -> None:
        """fsync each folder that gained an object (and `objects/` when it gained a folder)."""
        for name in sorted(self._dirty):
            fsync_dir(self.folder / name)
        if self._new_fanout:
            fsync_dir(self.folder)
        self._dirty.clear()
        self._new_fanout = False


def blob_of(path: bytes, mode: int) -> bytes:
    """A file's content as git stores it: its bytes, or a link's target."""
    if mode == LINK:
        return os.readlink(path)
    with open(path, "rb") as f:
        return f.read()


def write_trees(objects: Objects, entries: dict[bytes, Entry]) -> bytes:
    """Write the trees of `entries` (paths with `/` between folders); the root tree's id."""
    root: dict[bytes, object] = {}
    for name, entry in entries.items():
        *folders, leaf = name.split(b"/")
        node = root
        for folder in folders:
            child = node.setdefault(folder, {})
            if not isinstance(child, dict):  # a file and a folder of one name: the index never holds both
                raise Unreadable(f"{name!r}: a file and a folder of one name")
            node = child
        node[leaf] = entry
    return _write_tree(objects, root)


def _write_tree(objects: Objects, node: dict[bytes, object]) -> bytes:
    rows: list[tuple[bytes, bytes]] = []
    for name, child in node.items():
        if isinstance(child, dict):
            rows.append((name + b"/", b"%o %s\0" % (TREE, name) + _write_tree(objects, child)))
        else:
            assert isinstance(child, Entry)
            rows.append((name, b"%o %s\0" % (child.mode, name) + child.oid))
    rows.sort()  # git's order: a folder sorts as if its name ended in '/'
    return objects.write(b"tree", b"".join(row for _, row in rows))
