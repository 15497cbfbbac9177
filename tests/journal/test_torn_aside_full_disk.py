"""A torn tail that cannot be set aside (a full disk) leaves no empty .torn file, and the journal as it was."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.journal.helpers import write_journal
from wren_tui.journal.writer import FileOps, JournalWriter

TORN = b'{"seq":14,"ts":"2026-01-01T00:00:00.000Z","type":"mes'


class FullDisk(FileOps):
    """Writes to a .torn file fail as a full disk's do, until `room` is set."""

    def __init__(self) -> None:
        self.room = False
        self.torn_fds: set[int] = set()

    def open(self, path: Path, flags: int, mode: int = 0o600) -> int:
        fd = super().open(path, flags, mode)
        if ".torn" in Path(path).name:
            self.torn_fds.add(fd)
        return fd

    def write(self, fd: int, data: bytes) -> int:
        if fd in self.torn_fds and not self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().write(fd, data)


def test_a_torn_tail_that_cannot_be_set_aside_leaves_no_empty_torn_file(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    before = path.read_bytes() + TORN
    path.write_bytes(before)
    ops = FullDisk()
    with pytest.raises(OSError, match="No space left"):
        JournalWriter.open(path, ops=ops)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.jsonl"]
    # Once there is room, the tail goes to .torn itself, not to .torn.1 beside an empty one.
    ops.room = True
    JournalWriter.open(path, ops=ops).close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.jsonl", "j.jsonl.torn"]
    assert (tmp_path / "j.jsonl.torn").read_bytes() == TORN
