"""The index of Wren's journals is smaller than the journals it indexes, and answers as reading them does.

The journals are the bench's (`tests.bench.gen`: the agent's mix of streamed deltas, messages, tool calls and
usage, written by the real JournalWriter), a few hundred kB each; the index is built by `wren search` as a
person runs it. Where its bytes go, and the figures over the bench's 1,000 journals: docs/search-index.md.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.bench.gen import generate_bytes
from tests.conftest import run_wren
from wren_tui.search.index import index_path


def test_the_index_of_wren_journals_is_smaller_than_they_are_and_finds_the_same_hits(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    for seed in range(1, 5):
        generate_bytes(folder / f"s-2025010{seed}-000000-g{seed:03d}.jsonl", 300_000, seed=seed)
    journals = sum(path.stat().st_size for path in folder.glob("*.jsonl"))
    asked = ["guard checks the wrong", "fixture", "ixture expec", "kwargs module package"]
    found = 0
    for pattern in asked:
        indexed = run_wren(["search", pattern, "--dir", str(folder), "--json"], cwd=tmp_path)
        read = run_wren(["search", pattern, "--dir", str(folder), "--json", "--no-index"], cwd=tmp_path)
        assert indexed.returncode == read.returncode, indexed.stderr + read.stderr
        rows = [json.loads(line) for line in indexed.stdout.splitlines()]
        assert rows == [json.loads(line) for line in read.stdout.splitlines()]
        found += len(rows)
    assert found > 100  # the prose holds them: the comparison is of hits, not of two empty lists
    db = sqlite3.connect(index_path(folder))
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the log's pages written into the file, as they will be
    finally:
        db.close()
    index = sum(path.stat().st_size for path in index_path(folder).parent.iterdir())
    # 2.8x while the trigram table kept its positions (detail=full); 1.5x without; 0.7x since a journal's items are
    # kept as where they are in it, not their texts (index version 8; docs/search-index.md).
    assert index < journals, f"the index is {index / journals:.2f}x the journals ({index:,} of {journals:,} bytes)"
