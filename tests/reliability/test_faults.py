"""Faults from the disk: short writes, ENOSPC, EIO on write or fsync. Nothing after a partial record, ever."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from tests.journal.helpers import session_events
from wren_tui.journal.errors import JournalUnusable
from wren_tui.journal.events import ChatMessage, Message
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import FileOps, JournalWriter


class FaultyOps(FileOps):
    """Real calls, except the ones a test arms to fail."""

    def __init__(self) -> None:
        self.writes = 0
        self.syncs = 0
        self.short_after: int | None = None  # the next write stores only this many bytes
        self.write_error: int | None = None  # errno for the next write (after any short one)
        self.sync_error: int | None = None
        self.truncate_error: int | None = None
        self.interrupt = False

    def write(self, fd: int, data: bytes) -> int:
        self.writes += 1
        if self.short_after is not None:
            n, self.short_after = self.short_after, None
            return super().write(fd, data[:n])
        if self.interrupt:
            self.interrupt = False
            raise KeyboardInterrupt
        if self.write_error is not None:
            raise OSError(self.write_error, "injected")
        return super().write(fd, data)

    def fdatasync(self, fd: int) -> None:
        self.syncs += 1
        if self.sync_error is not None:
            raise OSError(self.sync_error, "injected")
        super().fdatasync(fd)

    def ftruncate(self, fd: int, length: int) -> None:
        if self.truncate_error is not None:
            raise OSError(self.truncate_error, "injected")
        super().ftruncate(fd, length)


def _started(tmp_path: Path) -> tuple[JournalWriter, FaultyOps, list[Message]]:
    ops = FaultyOps()
    writer = JournalWriter.create(tmp_path / "j.jsonl", ops=ops)
    written = [writer.append(Message(message=ChatMessage(role="user", content=f"event {i}"))) for i in range(3)]
    return writer, ops, written


def _next() -> Message:
    return Message(message=ChatMessage(role="assistant", content="x" * 500))


def test_a_short_write_is_finished_by_the_next_write(tmp_path: Path) -> None:
    writer, ops, written = _started(tmp_path)
    ops.short_after = 10
    event = writer.append(_next())
    writer.close()
    assert read_events(writer.path).events == [*written, event]


@pytest.mark.parametrize(
    ("short", "code"),
    [(None, errno.ENOSPC), (None, errno.EIO), (37, errno.ENOSPC), (37, errno.EIO)],
    ids=["enospc", "eio", "short-then-enospc", "short-then-eio"],
)
def test_a_failed_write_is_cut_back_to_the_last_whole_line_and_the_writer_stops(
    tmp_path: Path, short: int | None, code: int
) -> None:
    writer, ops, written = _started(tmp_path)
    ops.short_after, ops.write_error = short, code
    with pytest.raises(JournalUnusable) as info:
        writer.append(_next())
    message = str(info.value)
    assert str(writer.path) in message and "writing seq 4 failed" in message and "ends at seq 3" in message
    assert read_events(writer.path).ok and read_events(writer.path).events == written
    ops.write_error = None
    with pytest.raises(JournalUnusable):  # even once the disk recovers: this writer is done
        writer.append(_next())
    writer.close()
    with JournalWriter.open(writer.path) as again:  # a new writer continues where the file ends
        assert again.append(_next()).seq == 4


def test_a_partial_line_that_cannot_be_cut_back_stops_the_writer_and_reopening_sets_it_aside(tmp_path: Path) -> None:
    writer, ops, written = _started(tmp_path)
    ops.short_after, ops.write_error, ops.truncate_error = 50, errno.EIO, errno.EIO
    with pytest.raises(JournalUnusable, match="could not be removed"):
        writer.append(_next())
    writer.close()
    result = read_events(writer.path)
    assert result.torn and result.events == written  # nothing after the partial record
    with JournalWriter.open(writer.path) as again:
        assert again.append(_next()).seq == 4
    assert len((tmp_path / "j.jsonl.torn").read_bytes()) == 50


def test_a_failed_fsync_is_never_retried_as_if_it_had_worked(tmp_path: Path) -> None:
    writer, ops, _ = _started(tmp_path)
    ops.sync_error = errno.EIO
    with pytest.raises(JournalUnusable) as info:
        writer.append(_next())
    assert str(writer.path) in str(info.value) and "fsync failed" in str(info.value)
    assert "events after seq 3 may not be on disk" in str(info.value)
    ops.sync_error = None
    syncs, writes = ops.syncs, ops.writes
    with pytest.raises(JournalUnusable):
        writer.append(_next())
    writer.sync()
    writer.close()
    assert (ops.syncs, ops.writes) == (syncs, writes)  # no write and no second fsync after the failure


def test_an_interrupt_during_a_write_leaves_the_journal_whole_and_the_writer_usable(tmp_path: Path) -> None:
    writer, ops, written = _started(tmp_path)
    ops.short_after, ops.interrupt = 25, True
    with pytest.raises(KeyboardInterrupt):
        writer.append(_next())
    assert read_events(writer.path).events == written
    event = writer.append(_next())
    writer.close()
    assert event.seq == 4 and read_events(writer.path).events == [*written, event]


def test_batch_policy_syncs_once_for_many_events(tmp_path: Path) -> None:
    ops = FaultyOps()
    with JournalWriter.create(tmp_path / "j.jsonl", fsync="batch", ops=ops) as writer:
        for event in session_events():
            writer.append(event)
        assert ops.syncs == 0
        writer.sync()
        assert ops.syncs == 1
        writer.sync()
        assert ops.syncs == 1
