"""A line without the crc member Wren's writer ends each line with is where search's reading stops, C pass or not."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.tui.journals import encode, finished_story, user
from wren_tui.search import rawpass, wren
from wren_tui.search.engine import Hit, Searched, search
from wren_tui.search.query import Query
from wren_tui.search.wren_session import WrenSession

# (a line for seq N whose text is FORGED, what the reading says of it)
FORGERIES = {
    "no crc": (lambda body: body + b"}\n", "it has no crc member"),
    "json.dumps spacing": (
        lambda body: body + b', "crc": "%08x"}\n' % zlib.crc32(body),
        "its crc member is not written as Wren writes it",
    ),
    "capitals": (lambda body: body + b',"crc":"%08X"}\n' % zlib.crc32(body), "its crc is not 8 lowercase hex digits"),
}


def forged_journal(path: Path, form: str) -> int:
    """A finished story, then the forged line, then a good one after it; the forged line's number."""
    good = encode(finished_story())
    seq = good.count(b"\n") + 1
    body = (
        b'{"seq":%d,"ts":"2025-03-01T10:00:00.000Z","type":"message","message":{"role":"user","content":"FORGED"}' % seq
    )
    after = encode([user("FORGED too, after it")], first_seq=seq + 1)
    path.write_bytes(good + FORGERIES[form][0](body) + after)
    return seq


@pytest.mark.parametrize("form", FORGERIES)
@pytest.mark.parametrize("twin", [False, True], ids=["c-pass", "python-twin"])
def test_search_never_finds_a_forged_line_and_says_reading_stops_at_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str, twin: bool
) -> None:
    path = tmp_path / "s-20250301-093000-demo.jsonl"
    line = forged_journal(path, form)
    if twin:
        monkeypatch.setattr(wren, "raw_scan", rawpass.python_scan)
    found = list(search([WrenSession(path)], Query.of("FORGED")))
    assert not [f for f in found if isinstance(f, Hit)]
    (searched,) = [f for f in found if isinstance(f, Searched)]
    assert searched.stop is not None and searched.stop.line == line
    assert searched.stop.why.startswith(FORGERIES[form][1])


def test_wren_search_says_where_a_forged_line_stops_the_reading(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    line = forged_journal(folder / "s-20250301-093000-demo.jsonl", "json.dumps spacing")
    result = run_wren(["search", "FORGED", "--dir", str(folder)], cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # no match
    assert "FORGED" not in result.stdout.replace("search FORGED", "")
    assert f"reading stops at line {line} " in result.stdout + result.stderr
    assert "its crc member is not written as Wren writes it" in result.stdout + result.stderr
