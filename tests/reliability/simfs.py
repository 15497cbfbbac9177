"""A recording file layer and the crash states it implies: what a power cut could leave on disk.

`RecordingOps` does every system call for real and logs it. `crash_state` replays the log up to a
point and decides, for everything not yet made durable, what survived: a write applied, torn at a
byte, zero-filled or dropped; a create or rename whose folder was not fsynced, kept or lost.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from wren_tui.journal.writer import FileOps


@dataclass(frozen=True)
class Op:
    kind: str  # create, write, truncate, sync, rename, sync_dir
    path: Path
    data: bytes = b""
    offset: int = 0
    dst: Path | None = None


class RecordingOps(FileOps):
    """FileOps that performs each call and appends it to `log` (reads are not recorded: they change nothing)."""

    def __init__(self) -> None:
        self.log: list[Op] = []
        self._paths: dict[int, Path] = {}

    def open(self, path: Path, flags: int, mode: int = 0o600) -> int:
        existed = path.exists()
        fd = super().open(path, flags, mode)
        self._paths[fd] = path
        if not existed and flags & os.O_CREAT:
            self.log.append(Op("create", path))
        return fd

    def write(self, fd: int, data: bytes) -> int:
        offset = os.fstat(fd).st_size  # every file here is O_APPEND
        n = super().write(fd, data)
        self.log.append(Op("write", self._paths[fd], bytes(data[:n]), offset))
        return n

    def fdatasync(self, fd: int) -> None:
        super().fdatasync(fd)
        self.log.append(Op("sync", self._paths[fd]))

    def fsync(self, fd: int) -> None:
        super().fsync(fd)
        self.log.append(Op("sync", self._paths[fd]))

    def ftruncate(self, fd: int, length: int) -> None:
        super().ftruncate(fd, length)
        self.log.append(Op("truncate", self._paths[fd], offset=length))

    def close(self, fd: int) -> None:
        super().close(fd)
        self._paths.pop(fd, None)

    def rename(self, src: Path, dst: Path) -> None:
        super().rename(src, dst)
        self.log.append(Op("rename", src, dst=dst))

    def fsync_dir(self, path: Path) -> None:
        super().fsync_dir(path)
        self.log.append(Op("sync_dir", path))


@dataclass
class _File:
    synced: bytes = b""
    pending: list[Op] = field(default_factory=list)


def crash_state(log: list[Op], upto: int, rng: random.Random | None, *, keep_all: bool = False) -> dict[Path, bytes]:
    """The files on disk after power is cut once `log[:upto]` has happened.

    With `rng` None the outcome is one extreme: everything unsynced kept (`keep_all`) or lost.
    Otherwise each unsynced write is, at random, applied, zero-filled, torn at a byte or dropped
    (the last two end that file's survivors), and a random prefix of the unsynced folder changes holds.
    A folder's fsync makes durable the changes of names in that folder only (a create in it, a rename
    into it): a file renamed into a folder that is never fsynced can be lost whatever else was synced.
    """
    files: dict[int, _File] = {}
    names: dict[Path, int] = {}  # what the process sees
    visible: dict[Path, int] = {}  # what survives for sure: the changes a folder fsync covered
    name_ops: list[tuple[str, Path, Path | None, int]] = []  # folder changes no fsync of their folder covered yet
    for op in log[:upto]:
        if op.kind == "create":
            files[len(files)] = _File()
            names[op.path] = len(files) - 1
            name_ops.append(("create", op.path, None, names[op.path]))
        elif op.kind in ("write", "truncate"):
            files[names[op.path]].pending.append(op)
        elif op.kind == "sync":
            f = files[names[op.path]]
            f.synced, f.pending = _apply(f.synced, f.pending), []
        elif op.kind == "rename":
            assert op.dst is not None
            names[op.dst] = names.pop(op.path)
            name_ops.append(("rename", op.path, op.dst, names[op.dst]))
        elif op.kind == "sync_dir":
            covered = [c for c in name_ops if (c[2] or c[1]).parent == op.path]
            name_ops = [c for c in name_ops if (c[2] or c[1]).parent != op.path]
            _replay(visible, covered)
    kept_changes = len(name_ops) if keep_all else 0 if rng is None else rng.randint(0, len(name_ops))
    _replay(visible, name_ops[:kept_changes])
    return {path: _survivor(files[ident], rng, keep_all) for path, ident in visible.items()}


def _replay(visible: dict[Path, int], changes: list[tuple[str, Path, Path | None, int]]) -> None:
    for kind, src, dst, ident in changes:
        if kind == "create":
            visible[src] = ident
        else:
            visible.pop(src, None)
            assert dst is not None
            visible[dst] = ident


def _apply(content: bytes, ops: list[Op]) -> bytes:
    for op in ops:
        content = _one(content, op, op.data)
    return content


def _one(content: bytes, op: Op, data: bytes) -> bytes:
    if op.kind == "truncate":
        return content[: op.offset]
    return content[: op.offset].ljust(op.offset, b"\x00") + data + content[op.offset + len(data) :]


def _survivor(f: _File, rng: random.Random | None, keep_all: bool) -> bytes:
    if rng is None:
        return _apply(f.synced, f.pending) if keep_all else f.synced
    content = f.synced
    for op in f.pending:
        fate = rng.choice(("applied", "zeroed", "torn", "dropped")) if op.kind == "write" else "applied"
        if fate == "applied":
            content = _one(content, op, op.data)
        elif fate == "zeroed":
            content = _one(content, op, b"\x00" * len(op.data))
        elif fate == "torn":
            return _one(content, op, op.data[: rng.randint(0, len(op.data))])
        else:
            return content
    return content
