"""The raw pass in C and its Python twin give the same answers on the same bytes, and search the same with either.

The C pass is optional (an install without a compiler has only the twin), so the twin is what
such an install searches with: these tests hold it to the C pass's answers line for line.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest

from tests.search.helpers import resealed
from tests.tui.journals import encode, finished_story, user
from wren_tui.search import rawpass, wren
from wren_tui.search.engine import Hit, search
from wren_tui.search.query import Query
from wren_tui.search.wren_session import WrenSession

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


# Words whose bytes put every kind of candidate at every distance from the pass's 32-byte blocks.
_WORDS = [
    "calc.py",
    "CALC.PY",
    "then",
    "edit",
    "zero",
    "because",
    "the",
    "guard",
    "ſ",
    "İstanbul",
    "ı",
    "\u212a",
    "café",
    "a\\b",
    'say "x"',
    "src/main",
    "Apple",
    "k",
    "\\\\u0041",
    "tab\there",
    "日本語",
    "s",
    "\\u",
    "x" * 40,
]
_REWRITES = [(b"a", b"\\u0061"), (b"/", b"\\/"), (b"c", b"\\u0063"), (b"\\\\", b"\\u005c"), (b"e", b"\\u0065")]


def varied_journal_bytes(lines: int = 6000) -> bytes:
    """User messages of random words, some lines written by another writer's escapes, a few long ones."""
    rng = random.Random(18)
    events = [user(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 30)))) for _ in range(lines)]
    events[100] = user(" ".join(_WORDS) * 200)  # one line much longer than a block
    out = []
    for line in encode(events).splitlines(keepends=True):
        head, content = line.split(b'"content":"', 1)
        content = content[: content.rindex(b',"crc":')]
        old, new = rng.choice(_REWRITES)
        if rng.random() < 0.2:
            content = content.replace(old, new)  # the same text, escaped differently
        body = head + b'"content":"' + content
        out.append(body + b',"crc":"%08x"}\n' % zlib.crc32(body))
    return b"".join(out)


@native
@pytest.mark.parametrize(
    "pattern", ["calc.py then edit", "zero because the guard", "s s", "istanbul", "k", "café", "日本", "Apple", "a/b"]
)
def test_the_c_pass_and_the_python_twin_agree_on_a_varied_journal_of_many_blocks(pattern: str) -> None:
    assert rawpass.native is not None
    data = varied_journal_bytes()
    prefilter = Query.of(pattern).prefilter
    second = data.index(b"\n") + 1
    for start, prev in ((0, 0), (second, 1)):
        args = (data[start:], start, prev, *prefilter)
        found = rawpass.native.scan(*args)
        assert found[0] == data.count(b"\n") - prev  # every line vouched for
        assert found == rawpass.python_scan(*args)
        assert 0 < len(found[4]) // 4 < found[0]  # some lines can match, not all
