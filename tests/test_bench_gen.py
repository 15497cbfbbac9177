"""The benchmark data generator: journals the real writer wrote, remade when the generator changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench import gen
from wren_tui.journal.reader import read_events


def test_generated_journals_read_whole_and_a_stale_one_is_made_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "data"
    assert gen.main([str(folder), "--sizes", "10k"]) == 0
    path = folder / "bench-10k.jsonl"
    result = read_events(path)
    assert result.ok and len(result.events) == 10_000
    assert gen.is_current(path)
    # A file from an older generator: the same events under another version stamp.
    old = path.read_bytes().replace(gen.GEN_VERSION.encode(), b"bench", 1)
    path.write_bytes(old)
    assert not gen.is_current(path)
    assert gen.main([str(folder), "--sizes", "10k"]) == 0
    assert "older generator; making it again" in capsys.readouterr().err
    assert gen.is_current(path) and read_events(path).ok
    assert gen.main([str(folder), "--sizes", "10k"]) == 0
    assert "is current; keeping it" in capsys.readouterr().err
