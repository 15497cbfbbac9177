"""git's on-disk formats a small snapshot needs, read and written in this process: no git started.

A snapshot of a workspace of a few files spent most of its time starting git: `git add` then
`git write-tree`, a process each, for a handful of changed files. This module does that work
itself, in the formats git documents (gitformat-index(5) version 2, loose objects), so the store
stays an ordinary git repository that git reads and writes as before:

- the index (the per-session stat cache): read, and written back with the entries' new stat data;
- blobs and trees as loose objects (zlib level 1, as `core.looseCompression` says), each fsynced
  before it is renamed into place, as git does with `core.fsync=loose-object`; one already there is
  read back whole and freshened (its mtime set to now, as git does), or written again if damaged;
- workspace files read through a descriptor (`stored`): opened with O_NOFOLLOW | O_NONBLOCK inside
  their folder's descriptor, checked by fstat against the lstat that chose them, and streamed a chunk
  at a time (hashed and compressed as they are read), so memory is bounded whatever a file's size;
- trees built from the index's sorted paths.

Only what a snapshot writes is here: version 2 and 3 indexes with stage-0 entries and SHA-1 ids.
Anything else (another version, a conflict stage, an index written with split-index) is
`Unreadable`, and the caller hands the snapshot to git.

Racy entries: an entry whose mtime is not older than the index file's (in whole seconds, as git
compares without nanoseconds) may have changed in the same tick after it was hashed, so its
stat data is not trusted and the file is hashed again.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..journal.writer import FileOps
from ..portable import O_BINARY, O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK

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


class Changed(Exception):
    """A file changed (it shrank) while it was being read: read it again."""


class StoreFailed(Exception):
    """Writing an object into the store failed: `error` is the OSError (a full disk, a folder gone)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class _ReadFailed(OSError):
    """Reading the workspace's file failed (as opposed to writing the store)."""


# Files are read and stored in chunks of this size: memory stays bounded whatever a file's size.
CHUNK = 1 << 20
# portable's flags are 0 where the system has none: Windows has no FIFOs, and its links need privileges.
_NOFOLLOW, _NONBLOCK, _CLOEXEC, _BINARY = O_NOFOLLOW, O_NONBLOCK, O_CLOEXEC, O_BINARY
_READ = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | _BINARY
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _CLOEXEC | _BINARY
_PACK_IDS: dict[tuple[str, int, int, int], frozenset[bytes]] = {}  # a pack's index (path, inode, size, mtime): ids


class Objects:
    """A store's loose objects: written once each, fsynced; `sync()` makes the folders that named them durable.

    An object already present is read back whole (inflated, its id checked) and freshened (its mtime set
    to now, as git does), so prune's age rule never drops what a new snapshot names; a damaged copy is
    written again. `ops` is the seam every write, fsync and rename goes through (tests record them).
    """

    ops: FileOps = FileOps()

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._dirty: set[str] = set()
        self._new_fanout = False
        self._packs: frozenset[bytes] | None = None

    def write(self, kind: bytes, body: bytes) -> bytes:
        """The object's id; it is written (and fsynced) when the store has no whole loose copy of it.

        A copy in a pack is not looked for: a second, loose copy of an object is harmless to git.
        """
        head = b"%s %d\0" % (kind, len(body))
        oid = hashlib.sha1(head + body).digest()
        if self._freshened(oid):
            return oid
        tmp = self._folder(oid.hex()[:2]) / f"tmp_obj_{os.getpid()}_{oid.hex()[:8]}"
        try:
            fd = self.ops.open(tmp, _WRITE, 0o444)
            try:
                self._put(fd, zlib.compress(head + body, 1))
                self.ops.fsync(fd)
            finally:
                self.ops.close(fd)
            self._place(tmp, oid)
        except BaseException as exc:
            tmp.unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise StoreFailed(exc) from exc
            raise
        return oid

    def write_file(self, fd: int, size: int) -> bytes:
        """The blob id of an open file whose fstat said `size` bytes, stored.

        Up to a chunk, the file is read to its end at once (whatever it became since); larger, its first
        `size` bytes are read, hashed and compressed a chunk at a time, never held whole.

        Raises:
            Changed: a file over a chunk ended before `size` bytes (it shrank while it was streamed).
            OSError: it could not be read.
            StoreFailed: the store could not be written.
        """
        if size <= CHUNK:
            data = _read_upto(fd, CHUNK + 1)  # to its end, whatever it became since its fstat
            if len(data) <= CHUNK:
                return self.write(b"blob", data)
            os.lseek(fd, 0, os.SEEK_SET)  # it grew past a chunk while it was read: streamed as it is now
            size = os.fstat(fd).st_size
        head = b"blob %d\0" % size
        digest = hashlib.sha1(head)
        packer = zlib.compressobj(1)
        tmp = self.folder / f"tmp_obj_{os.getpid()}_{os.urandom(6).hex()}"  # its folder: known from its id at the end
        try:
            out = self.ops.open(tmp, _WRITE, 0o444)
            try:
                self._put(out, packer.compress(head))
                left = size
                while left:
                    chunk = _read(fd, min(CHUNK, left))
                    if not chunk:
                        raise Changed(f"it ended {left} bytes before its size")
                    left -= len(chunk)
                    digest.update(chunk)
                    self._put(out, packer.compress(chunk))
                self._put(out, packer.flush())
                self.ops.fsync(out)
            finally:
                self.ops.close(out)
            oid = digest.digest()
            if self._freshened(oid):
                tmp.unlink()
            else:
                self._place(tmp, oid)
        except BaseException as exc:
            tmp.unlink(missing_ok=True)
            if isinstance(exc, OSError) and not isinstance(exc, _ReadFailed):
                raise StoreFailed(exc) from exc
            raise
        return oid

    def has(self, oid: bytes) -> bool:
        """The store holds the object, loose or in a pack (looked up on disk each time, never remembered)."""
        hexid = oid.hex()
        if os.path.lexists(os.path.join(self.folder, hexid[:2], hexid[2:])):
            return True
        if self._packs is None:
            self._packs = _pack_ids(self.folder / "pack")
        return oid in self._packs

    def sync(self) -> None:
        """fsync each folder that gained an object (and `objects/` when it gained a folder).

        Raises:
            StoreFailed: a folder could not be made durable.
        """
        try:
            for name in sorted(self._dirty):
                self.ops.fsync_dir(self.folder / name)
            if self._new_fanout:
                self.ops.fsync_dir(self.folder)
        except OSError as exc:
            raise StoreFailed(exc) from exc
        self._dirty.clear()
        self._new_fanout = False

    def _freshened(self, oid: bytes) -> bool:
        """A whole loose copy is there, and its mtime is now set to now; False when there is none or it is damaged."""
        final = self._final(oid)
        try:
            if not _whole(final, oid):
                return False
            os.utime(final)
        except OSError:
            return False  # missing, unreadable, or not ours to touch: written again
        return True

    def _final(self, oid: bytes) -> Path:
        hexid = oid.hex()
        return self.folder / hexid[:2] / hexid[2:]

    def _folder(self, name: str) -> Path:
        fanout = self.folder / name
        if not fanout.is_dir():
            fanout.mkdir(exist_ok=True)
            self._new_fanout = True
        return fanout

    def _put(self, fd: int, data: bytes) -> None:
        done = 0
        while done < len(data):
            done += self.ops.write(fd, data[done:] if done else data)  # a short write: rare, the rest copied

    def _place(self, tmp: Path, oid: bytes) -> None:
        """Rename a written, fsynced temporary file to the object's name; its folder is fsynced by `sync()`."""
        final = self._folder(oid.hex()[:2]) / oid.hex()[2:]
        self.ops.rename(tmp, final)
        self._dirty.add(final.parent.name)


def _read(fd: int, size: int) -> bytes:
    try:
        return os.read(fd, size)
    except OSError as exc:
        raise _ReadFailed(exc.errno, exc.strerror) from exc


def _read_upto(fd: int, limit: int) -> bytes:
    """The file's bytes to its end, or its first `limit` bytes."""
    parts: list[bytes] = []
    left = limit
    while left:
        chunk = _read(fd, left)
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _whole(path: Path, oid: bytes) -> bool:
    """The loose object at `path` inflates, a chunk at a time, to content whose id is `oid`."""
    digest = hashlib.sha1()
    inflater = zlib.decompressobj()
    with open(path, "rb") as f:
        try:
            while chunk := f.read(CHUNK):
                digest.update(inflater.decompress(chunk, CHUNK))
                while inflater.unconsumed_tail:
                    digest.update(inflater.decompress(inflater.unconsumed_tail, CHUNK))
            digest.update(inflater.flush())
        except zlib.error:
            return False
    return inflater.eof and not inflater.unused_data and digest.digest() == oid


def _pack_ids(folder: Path) -> frozenset[bytes]:
    """Every object id in the version-2 pack indexes of `folder`; each index read once per identity."""
    found: set[bytes] = set()
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".idx")]
    except OSError:
        return frozenset()
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
            key = (entry.path, st.st_ino, st.st_size, st.st_mtime_ns)
            ids = _PACK_IDS.get(key)
            if ids is None:
                ids = _PACK_IDS[key] = _read_pack_index(Path(entry.path))
        except OSError:
            continue
        found |= ids
    return frozenset(found)


def _read_pack_index(path: Path) -> frozenset[bytes]:
    data = path.read_bytes()
    start = 8 + 256 * 4  # the header, then the fan-out table whose last word is the count
    if data[:8] != b"\377tOc\0\0\0\2" or len(data) < start:
        return frozenset()  # not a version-2 index: its objects count as absent (written again, loose)
    count = int.from_bytes(data[start - 4 : start], "big")
    return frozenset(data[start + 20 * i : start + 20 * (i + 1)] for i in range(count))


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return stat.S_IFMT(st.st_mode), st.st_dev, st.st_ino


def stored(
    objects: Objects, path: bytes, st: os.stat_result, folder: tuple[int, int] | None = None
) -> tuple[os.stat_result, int, bytes] | None:
    """Store the workspace entry at `path` that `st` (its lstat) chose: (the stat it is stored with, mode, id).

    Never through a link and never blocking: a file is opened with O_NOFOLLOW and O_NONBLOCK, and
    what was opened (fstat of that descriptor) is what is stored. A link swapped in is stored as a
    link; a FIFO, socket, device or folder swapped in is not stored (None, as for a file gone); another
    file swapped in is stored as what it is now. A link's target is read by readlink, which follows nothing.
    `folder` is the (device, inode) its folder had when it was found to be a folder, not a link: the
    entry is opened inside that folder's descriptor only if it is still that folder (a folder on the way
    swapped for a link since is never followed: None).

    Raises:
        OSError: the entry could not be read (FileNotFoundError is None: gone).
        Changed: it kept changing while it was read.
    """
    head, _, name = path.rpartition(b"/")
    try:
        where = _open_folder(head, folder) if folder is not None and _AT else None
    except FileNotFoundError:
        return None
    if where == -1:
        return None
    try:
        return _stored(objects, path if where is None else name, st, where)
    finally:
        if where is not None:
            os.close(where)


_AT = {os.open, os.readlink, os.stat} <= os.supports_dir_fd
_FOLDER = os.O_RDONLY | _NOFOLLOW | O_DIRECTORY | _CLOEXEC


def _open_folder(path: bytes, identity: tuple[int, int]) -> int:
    """A descriptor of the folder at `path` if it is still the folder `identity` names; -1 when it is not."""
    try:
        fd = os.open(path or b".", _FOLDER)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return -1  # a link or a file now: nothing there is read
        raise
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != identity:
        os.close(fd)
        return -1
    return fd


def _stored(
    objects: Objects, path: bytes, st: os.stat_result, at: int | None
) -> tuple[os.stat_result, int, bytes] | None:
    for _ in range(3):
        mode = mode_of(st)
        if mode is None:
            return None
        try:
            if mode == LINK:
                return st, LINK, objects.write(b"blob", os.readlink(path, dir_fd=at))
            fd = os.open(path, _READ, dir_fd=at)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.EINVAL):
                raise
            st = os.lstat(
                path, dir_fd=at
            )  # a link where the file was (ELOOP), a file where the link was (EINVAL): again
            continue
        try:
            now = os.fstat(fd)
            if _identity(now) != _identity(st):
                mode = mode_of(now)  # another entry was swapped in: what it is now decides
                if mode is None:
                    return None
            return now, mode, objects.write_file(fd, now.st_size)
        except Changed:
            st = os.lstat(path, dir_fd=at)
        finally:
            os.close(fd)
    raise Changed("it kept changing while it was read")


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
