"""The writer notices its journal changed under it (deleted, moved, replaced, written by another program).

Each change is made by another process, as the agent's own commands would; each is checked with
the path watched (inotify) and without it (the full check at every append).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from wren_tui.journal import _watch
from wren_tui.journal.errors import JournalChanged
from wren_tui.journal.events import ChatMessage, Message
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import JournalWriter

EVENT = Message(message=ChatMessage(role="user", content="hello"))

CHANGES = [
    ("rm j/s.jsonl", "the journal was deleted"),
    ("rm -rf j", "the journal and its folder were deleted"),
    ("echo junk >> j/s.jsonl", "another program appended 5 bytes to the journal"),
    ("truncate -s 10 j/s.jsonl", "another program cut the journal short (10 bytes, this run wrote {size})"),
    ("mv j/s.jsonl j/t.jsonl", "the journal was moved away from its path"),
    ("mv j k", "the journal was moved away from its path"),
    ("mv top moved", "the journal was moved away from its path"),
    ("echo x > j/o && mv j/o j/s.jsonl", "the journal was replaced by another file"),
    ("ln j/s.jsonl j/keep && echo x > j/o && mv j/o j/s.jsonl", "the journal was replaced by another file"),
    ("mkdir j2 && ln -sfn j2 link", "the journal was moved away from its path"),
]
HARMLESS = [
    "ln j/s.jsonl j/also.jsonl",
    "chmod 640 j/s.jsonl",
    "touch j/other.jsonl && mkdir j/sub",
    "cat j/s.jsonl > /dev/null",
    "mv j/s.jsonl j/t.jsonl && mv j/t.jsonl j/s.jsonl",
]


@pytest.fixture(params=["watched", "unwatched"])
def watched(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """With inotify, and as on a system without it (or out of inotify instances)."""
    if request.param == "unwatched":
        monkeypatch.setattr(_watch, "_inotify_calls", lambda: None)
    yield request.param


def _journal(root: Path, shell: str, watched: str) -> tuple[JournalWriter, Path]:
    """A journal with one event; reached through a link when the change retargets it, deeper when it moves a parent."""
    if "link" in shell:
        (root / "j").mkdir()
        os.symlink("j", root / "link")
        path = root / "link" / "s.jsonl"
    elif "top" in shell:
        path = root / "top" / "j" / "s.jsonl"
    else:
        path = root / "j" / "s.jsonl"
    before = _inotify_fds()
    writer = JournalWriter.create(path, fsync="none")
    writer.append(EVENT)
    assert len(_inotify_fds()) == len(before) + (watched == "watched")
    return writer, path


def _inotify_fds() -> list[str]:
    fds = Path("/proc/self/fd")
    return [n for n in os.listdir(fds) if _link(fds / n) == "anon_inode:inotify"]


def _link(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


@pytest.mark.parametrize(("shell", "what"), CHANGES, ids=[c[0] for c in CHANGES])
def test_the_next_append_after_a_change_stops_the_writer_with_what_happened(
    tmp_path: Path, watched: str, shell: str, what: str
) -> None:
    writer, path = _journal(tmp_path, shell, watched)
    what = what.format(size=path.stat().st_size)
    subprocess.run(shell, shell=True, cwd=tmp_path, check=True)
    with pytest.raises(JournalChanged) as caught:
        writer.append(EVENT)
    assert (
        str(caught.value) == f"{path}: {what} while this run was writing it; the run stopped and records nothing more"
    )
    assert writer.changed == str(caught.value)
    with pytest.raises(JournalChanged):  # and for good: nothing is written anywhere after it
        writer.append(EVENT)
    writer.close()
    for kept in (tmp_path / "j" / "t.jsonl", tmp_path / "k" / "s.jsonl", tmp_path / "j" / "keep"):
        if kept.exists():
            assert len(read_events(kept).events) == 1


@pytest.mark.parametrize("shell", HARMLESS)
def test_changes_that_leave_the_journal_whole_at_its_path_do_not_stop_the_writer(
    tmp_path: Path, watched: str, shell: str
) -> None:
    writer, path = _journal(tmp_path, shell, watched)
    subprocess.run(shell, shell=True, cwd=tmp_path, check=True)
    writer.append(EVENT)
    writer.close()
    assert writer.changed is None
    assert [e.seq for e in read_events(path).events] == [1, 2]


def test_a_reopened_journal_is_watched_too(tmp_path: Path, watched: str) -> None:
    path = tmp_path / "s.jsonl"
    JournalWriter.create(path).close()
    with JournalWriter.open(path) as writer:
        writer.append(EVENT)
        with path.open("ab") as other:
            other.write(b"x\n")
        with pytest.raises(JournalChanged, match="appended 2 bytes"):
            writer.append(EVENT)


def test_a_closed_writer_gives_back_its_inotify_descriptor(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for n in range(200):  # more than the usual 128 inotify instances a user may hold
        with JournalWriter.create(tmp_path / f"{n}.jsonl", fsync="none") as writer:
            writer.append(EVENT)
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_writer_opened_unwatched_sets_no_inotify_watch_and_still_sees_the_journal_replaced(tmp_path: Path) -> None:
    path = tmp_path / "j" / "s.jsonl"
    with JournalWriter.create(path, fsync="none") as first:
        first.append(EVENT)
    before = _inotify_fds()
    writer = JournalWriter.open(path, fsync="none", watched=False)  # `wren rewind`: one event, no watch to close
    assert _inotify_fds() == before
    (tmp_path / "j" / "o").write_text("x\n")
    os.replace(tmp_path / "j" / "o", path)
    with pytest.raises(JournalChanged, match="the journal was replaced by another file"):
        writer.append(EVENT)
    writer.close()
