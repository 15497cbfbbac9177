"""The raw pass in C and its Python twin give the same answers on the same bytes, and search the same with either.

The C pass is optional (an install without a compiler has only the twin), so the twin is what
such an install searches with: these tests hold it to the C pass's answers line for line.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from tests.search.helpers import resealed
from tests.tui.journals import encode, finished_story, user
from wren_tui.search import rawpass, wren
from wren_tui.search.engine import Hit, search
from wren_tui.search.query import Query
from wren_tui.search.wren import WrenSession

native = pytest.mark.skipif(rawpass.native is None, reason="the C pass was not built in this install")

PATTERNS = ["pytest", "ZeroDivisionError", "zerodivisionerror", "Apple", "café", '"', "k", r"\d+ passed", "src/main"]


def journal_bytes() -> bytes:
    """A finished story, a line another writer escaped differently, a damaged line, and lines after it."""
    data = encode(finished_story())
    extra = encode([user("Apple café at src/main.py"), user("after")], first_seq=27).splitlines(keepends=True)
    odd = resealed(resealed(extra[0], b"Apple", b"\\u0041pple"), b"src/main", b"src\\/main")
    bad = extra[1][:-4] + b'0"}\n' if extra[1][-4:-3] != b"0" else extra[1][:-4] + b'1"}\n'
    return data + odd + bad + encode([user("never read")], first_seq=29)


@native
@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_c_pass_and_the_python_twin_agree_on_every_line(pattern: str) -> None:
    assert rawpass.native is not None
    data = journal_bytes()
    regex = pattern.startswith("\\")
    prefilter = Query.of(pattern, regex=regex).prefilter
    for start in (0, data.index(b"\n") + 1):  # from the file's start, and from its second line
        prev = 0 if start == 0 else 1
        args = (data[start:], start, prev, *prefilter)
        assert rawpass.native.scan(*args) == rawpass.python_scan(*args)


@native
def test_the_c_crc_is_zlibs_on_every_length_and_alignment() -> None:
    assert rawpass.native is not None
    data = bytes(range(256)) * 3
    for offset in range(0, 17):
        for length in [*range(0, 130), 255, 511, 512, 513, 700]:
            piece = data[offset : offset + length]
            assert rawpass.native.crc32(piece) == zlib.crc32(piece), (offset, length)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_search_finds_the_same_with_the_python_twin(
    pattern: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s-20250301-093000-demo.jsonl"
    path.write_bytes(journal_bytes())
    query = Query.of(pattern, regex=pattern.startswith("\\"))

    def found() -> list[tuple[int, str, int, int]]:
        return [
            (f.item.seq, f.item.kind, f.start, f.end) for f in search([WrenSession(path)], query) if isinstance(f, Hit)
        ]

    with_c = found()
    monkeypatch.setattr(wren, "raw_scan", rawpass.python_scan)
    assert found() == with_c
    assert all(seq < 28 for seq, *_ in with_c)  # nothing from the damaged line on


def test_every_line_can_be_a_candidate_and_the_same_lines_match() -> None:
    # A pattern with no fragment a writer leaves as it is: every line goes to the decoder.
    query = Query.of('"')
    assert query.prefilter[0] is None
    assert Query.of("apple").line_may_match(b'{"text":"\\u0041PPLE"}')
    assert not Query.of("apple").line_may_match(b'{"text":"pear"}')
