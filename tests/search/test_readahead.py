"""Files read ahead by worker processes while the index is written: the same index as read in-process.

A folder of Wren journals (one damaged, one with a torn tail) and other agents' recordings is
indexed twice from nothing: in-process, and with every file new to the index read by the workers
(`WREN_INDEX_READAHEAD_BYTES=0`). The two indexes hold the same rows (each file's reading, its items,
the reader's memory), and searches through either give the scan's hits; so does an index whose
workers were killed as they started (their files read in-process instead).
"""

from __future__ import annotations

import pickle
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.search.test_index_properties import RECORDINGS, WORDS, both
from tests.tui.journals import encode, finished_story, user, write_journal
from wren_tui.search import readahead
from wren_tui.search.index import index_path
from wren_tui.search.query import Query


def folder_of(root: Path) -> Path:
    folder = root / "sessions"
    folder.mkdir()
    for n, recording in enumerate(RECORDINGS):
        shutil.copyfile(recording, folder / f"{n:02d}-{recording.name}")
    for n in range(3):
        write_journal(folder / f"s-20250301-00000{n}-k.jsonl", [*finished_story(), user(f"kestrel number {n}")])
    with (folder / "s-20250301-000001-k.jsonl").open("ab") as out:
        out.write(b'{"seq": 99, "torn')  # a torn tail: reading stops before it
    damaged = folder / "s-20250301-000002-k.jsonl"
    data = damaged.read_bytes()
    damaged.write_bytes(data[:200] + b"X" + data[201:] + encode([user("after the damage")], first_seq=500))
    return folder


def plain(value: object) -> object:
    """A reader's memory as values to compare: its objects' fields, its sets sorted (a set's pickle follows the
    process's string hashing, so the same memory pickled by a worker can differ in bytes)."""
    if isinstance(value, set | frozenset):
        return ("set", sorted((plain(each) for each in value), key=repr))
    if isinstance(value, dict):
        return ("dict", sorted(((plain(k), plain(v)) for k, v in value.items()), key=repr))
    if isinstance(value, list | tuple):
        return (type(value).__name__, [plain(each) for each in value])
    fields = getattr(value, "__dict__", None)
    if fields is not None:
        return (type(value).__qualname__, plain(fields))
    slots = [name for cls in type(value).__mro__ for name in getattr(cls, "__slots__", ())]
    if slots:
        return (type(value).__qualname__, [(name, plain(getattr(value, name, None))) for name in slots])
    return value


def contents(folder: Path) -> dict[str, list[Any]]:
    """What the index holds, file by file (not where: ids and inodes aside)."""
    db = sqlite3.connect(index_path(folder))
    try:
        files = "SELECT path, agent, size, mtime, off, head, tail, resumable, stop, warnings, provisional - min_id"
        return {
            "files": db.execute(
                f"{files} FROM files LEFT JOIN (SELECT file, min(id) AS min_id FROM items GROUP BY file) ON file = id"
                " ORDER BY path"
            ).fetchall(),
            "items": db.execute(
                "SELECT path, data FROM items JOIN files ON file = files.id ORDER BY path, items.id"
            ).fetchall(),
            "states": [
                (path, plain(pickle.loads(state)))
                for path, state in db.execute("SELECT path, state FROM states JOIN files ON file = id ORDER BY path")
            ],
        }
    finally:
        db.close()


def build(
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    ahead: bool,
    kill: bool = False,
    fail: bool = False,
    fork: bool = True,
) -> dict[str, list[Any]]:
    """Index `folder` from nothing (`ahead`: through the workers; `kill`: killed as they start; `fail`: every
    other file's reading failing in its worker after its items were sent; `fork`: workers forked from this
    process, else started anew); its contents, after checking searches through it give the scan's hits."""
    shutil.rmtree(index_path(folder).parent, ignore_errors=True)
    started: list[readahead.Readahead] = []
    real = readahead.Readahead.__init__

    def init(self: readahead.Readahead, jobs: Any, workers: int) -> None:
        real(self, jobs, workers)
        started.append(self)
        if kill:
            for proc in self._procs:
                proc.kill()

    monkeypatch.setattr(readahead.Readahead, "__init__", init)
    frames = readahead.Readahead.frames

    def failing(self: readahead.Readahead, n: int) -> Iterator[readahead.Frame]:
        for frame in frames(self, n):
            yield (readahead.FAIL,) if fail and n % 2 and frame[0] == readahead.END else frame

    monkeypatch.setattr(readahead.Readahead, "frames", failing)
    monkeypatch.setattr(readahead, "forking", lambda: fork)
    monkeypatch.setenv("WREN_INDEX_READAHEAD_BYTES", "0" if ahead else str(1 << 60))
    for n, pattern in enumerate([*WORDS, "kestrel", "after the damage", "Bash"]):
        scanned, indexed = both(folder, Query.of(pattern), update=n == 0)
        assert scanned == indexed, pattern
    assert bool(started) == (ahead and readahead.workers() > 0)
    return contents(folder)


@pytest.mark.skipif(readahead.workers() == 0, reason="one CPU: nothing is read ahead")
@pytest.mark.parametrize("fork", [True, False], ids=["forked", "started anew"])
def test_files_read_ahead_make_the_index_they_make_read_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork: bool
) -> None:
    folder = folder_of(tmp_path)
    alone = build(folder, monkeypatch, ahead=False)
    assert len(alone["files"]) == len(RECORDINGS) + 3 and alone["items"]
    assert build(folder, monkeypatch, ahead=True, fork=fork) == alone


@pytest.mark.skipif(readahead.workers() == 0, reason="one CPU: nothing is read ahead")
@pytest.mark.parametrize("fork", [True, False], ids=["forked", "started anew"])
def test_workers_gone_leave_their_files_to_the_indexer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork: bool
) -> None:
    folder = folder_of(tmp_path)
    alone = build(folder, monkeypatch, ahead=False)
    assert build(folder, monkeypatch, ahead=True, kill=True, fork=fork) == alone


@pytest.mark.skipif(readahead.workers() == 0, reason="one CPU: nothing is read ahead")
def test_a_file_whose_reading_fails_after_its_items_were_written_is_taken_out_and_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = folder_of(tmp_path)
    alone = build(folder, monkeypatch, ahead=False)
    assert build(folder, monkeypatch, ahead=True, fail=True) == alone
