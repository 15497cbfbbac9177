"""After a large reading the indexer merges its full-text table into one segment: still the scan's hits."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.search.test_index_properties import RECORDINGS, WORDS, both
from wren_tui.search import indexer
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
