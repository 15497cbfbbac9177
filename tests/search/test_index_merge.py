"""After a large reading the indexer merges its full-text table into one segment: still the scan's hits."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.search.test_index_properties import RECORDINGS, WORDS, both
from wren_tui.search import indexer
from wren_tui.search.agents import sessions_of
from wren_tui.search.index import index_path
from wren_tui.search.query import Query


def _segments(folder: Path) -> int:
    db = sqlite3.connect(index_path(folder))
    try:
        return int(db.execute("SELECT count(DISTINCT segid) FROM fts_idx").fetchone()[0])
    finally:
        db.close()


@pytest.mark.parametrize("merge_after", [2, 10_000])
def test_a_merged_index_gives_the_scans_hits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, merge_after: int) -> None:
    monkeypatch.setattr(indexer, "MERGE_AFTER", merge_after)
    monkeypatch.setattr(indexer._Batch, "SECONDS", 0.0)  # a transaction (a segment) a file
    for n, recording in enumerate(RECORDINGS):
        shutil.copyfile(recording, tmp_path / f"{n:02d}-{recording.name}")
    for pattern in [*WORDS, "Bash", "README"]:
        scanned, indexed = both(tmp_path, Query.of(pattern), update=True)
        assert scanned == indexed, pattern
    if merge_after == 2:
        assert _segments(tmp_path) == 1
    else:
        assert _segments(tmp_path) > 1  # what a merge changes is there to change


def _automerge(folder: Path) -> list[int]:
    db = sqlite3.connect(index_path(folder))
    try:
        found = []
        for table in ("fts", "pairs"):
            row = db.execute(f"SELECT v FROM {table}_config WHERE k = 'automerge'").fetchone()
            found.append(indexer.AUTOMERGE if row is None else int(row[0]))
        return found
    finally:
        db.close()


def test_a_large_reading_killed_before_its_merge_leaves_an_index_that_merges_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large reading does not merge on the way (it merges once at its end): stopped before its end, the
    files written so far are kept, and the next refresh, however small, lets FTS5 merge again."""
    monkeypatch.setattr(indexer, "MERGE_AFTER", 2)
    monkeypatch.setattr(indexer._Batch, "SECONDS", 0.0)  # a transaction a file: the first ones are committed
    for n, recording in enumerate(RECORDINGS):
        shutil.copyfile(recording, tmp_path / f"{n:02d}-{recording.name}")
    reads = 0
    real = indexer._savepoint

    def killed_at_the_fourth(db: sqlite3.Connection, source: object) -> int:
        nonlocal reads
        reads += 1
        if reads == 4:
            raise KeyboardInterrupt  # what a kill leaves: the transactions before it committed, this one not
        return real(db, source)  # type: ignore[arg-type]

    monkeypatch.setattr(indexer, "_savepoint", killed_at_the_fourth)
    db = indexer.connect_write(index_path(tmp_path))
    try:
        with pytest.raises(KeyboardInterrupt):
            indexer.refresh(db, sessions_of("all", tmp_path, tmp_path))
    finally:
        db.close()
    assert _automerge(tmp_path) == [0, 0]  # off for the reading, which never reached its merge
    assert _segments(tmp_path) > 1  # the files committed before the kill, not merged
    monkeypatch.setattr(indexer, "_savepoint", real)
    monkeypatch.setattr(indexer, "MERGE_AFTER", 10_000)  # the rest is a small reading now
    for pattern in [*WORDS, "Bash"]:
        scanned, indexed = both(tmp_path, Query.of(pattern), update=True)
        assert scanned == indexed, pattern
    assert _automerge(tmp_path) == [indexer.AUTOMERGE, indexer.AUTOMERGE]
