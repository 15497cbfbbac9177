"""The index's word-pair table: what it holds of a text, what a pattern asks of it, and that its hits are the scan's.

A pattern whose inner words are whole words is asked of the pair table (each two adjacent words of
every text), not of the trigram table: the tests here pin the word boundaries that makes safe (a
first word that may be the end of a longer one, a last that may be the start of one, punctuation,
case, characters beyond ASCII) against a scan of the same journals.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.journal.strategies import encode
from tests.search.test_index_properties import both
from tests.tui.journals import assistant, user
from wren_tui.journal.events import ToolCall
from wren_tui.search import index
from wren_tui.search.index import IndexRead, fts_text, index_path, pair_query, python_pairs
from wren_tui.search.indexer import connect_write
from wren_tui.search.query import Query
from wren_tui.search.rawpass import native

ASCII_WORD = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def test_pairs_are_each_two_adjacent_words_lowercased() -> None:
    assert python_pairs("Zero, because the guard_Fix é9x ") == "zero_because because_the the_guard guard_fix fix_9x"
    assert python_pairs("one") == python_pairs("") == python_pairs(" ,; ") == ""


@pytest.mark.skipif(native is None, reason="the C pass is not built in this install")
@settings(max_examples=500)
@given(st.text() | st.text(alphabet=" _-.,éK\u212a\u017fAbZz09\n\t", max_size=60))
def test_the_c_pairs_are_the_python_pairs(text: str) -> None:
    assert native is not None
    assert native.pairs(text) == python_pairs(text)


@pytest.mark.skipif(native is None, reason="the C pass is not built in this install")
@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(["\ud800", "\udfff", "a", "B", "9", " ", "é", "\U0001f600", "_"]), max_size=40))
def test_a_text_utf8_cannot_hold_gives_the_python_pairs(text: str) -> None:
    """The C pairs read the text as UTF-8 (the limited API's way to its characters); a lone surrogate, which
    UTF-8 cannot hold, sends it to the code points instead, with the same answer."""
    assert native is not None
    assert native.pairs(text) == python_pairs(text)


def test_no_character_but_the_four_fts_text_writes_as_ascii_matches_an_ascii_letter_or_digit() -> None:
    """Why the pair table may take every other character as a separator, in a text as in a pattern."""
    others = "".join(chr(code) for code in range(0x80, sys.maxunicode + 1) if not 0xD800 <= code < 0xE000)
    odd = set()
    for char in ASCII_WORD:
        for found in re.findall(re.escape(char), others, re.IGNORECASE):
            assert fts_text(found).isascii() and fts_text(found).isalnum(), (char, found)
            odd.add(found)
    assert odd == {"\u0130", "\u0131", "\u212a", "\u017f"}  # İ, ı, the Kelvin sign, ſ: the test looks


@pytest.mark.parametrize(
    ("pattern", "asked"),
    [
        ("zero because the guard", '"because_the the_guard" *'),
        (" zero because ", '"zero_because"'),
        ("Zero, Because: the", '"because_the" *'),
        ("read_file(x)", '"file_x"'),
        ("zero because", None),
        ("because", None),
        (" because ", None),
        ("é because the é", '"because_the"'),
    ],
)
def test_a_pattern_asks_for_its_whole_words_pairs(pattern: str, asked: str | None) -> None:
    assert pair_query(Query.of(pattern)) == asked


def test_a_regex_asks_for_each_literal_runs_pairs() -> None:
    assert pair_query(Query.of(r"\d+ zero because the guard\w* and (x y z)+", regex=True)) == (
        '"zero_because because_the the_guard" * AND "y_z" *'
    )
    assert pair_query(Query.of(r"zero (because )?the guard", regex=True)) is None


TEXTS = [
    "the test suite fails on divide by zero because the guard checks the wrong operand",
    "xzero because the guardian said so",
    "ZERO BECAUSE THE GUARD",
    "zero becau\u017fe the guard",  # ſ: an s, ignoring case
    "zero because  the guard",  # two spaces: not the phrase
    "zero because\nthe guard",
    "zero_because the_guard",
    "zero-because, the guard.",
    "café because the guard",
    "zero because the",
    "because the guard zero",
    "K-9 because \u212a-9 because k-9",  # the Kelvin sign is a k, ignoring case
]
PATTERNS = [
    "zero because the guard",
    "ero because the gua",
    " because the guard",
    "because the guard ",
    "Zero because the guard",
    "ZERO BECAUSE THE GUARD",
    "because the",
    "because  the",
    "zero because\nthe",
    "zero_because the_",
    "-because, the",
    "é because the guard",
    "É because the",
    "k-9 because k",
    "K-9 because",
    "9 because k-9",
    "\u212a-9 because k",
]


def journals(folder: Path, texts: list[str]) -> None:
    """One journal per text: the text as a user's message, a reply, and a tool call's name."""
    for number, text in enumerate(texts):
        events = [user(text), assistant(text.upper(), ToolCall(id="c1", name=text, args="{}"))]
        (folder / f"s-20260101-0000{number:02d}-x.jsonl").write_bytes(encode(events))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_pair_tables_hits_are_the_scans(pattern: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        journals(folder, TEXTS)
        query = Query.of(pattern)
        scanned, indexed = both(folder, query, update=True)
        assert indexed == scanned
        db = connect_write(index_path(folder))
        try:
            snapshot = IndexRead(db, query)
            if pair_query(query) is not None:
                assert snapshot.load() and snapshot.pairs is not None  # answered by the pair table
        finally:
            db.close()


words = st.sampled_from(["zero", "Because", "the", "GUARD", "k9", "\u212a", "caf\u00e9", "\u017f", "x", "_"])
separators = st.sampled_from([" ", "  ", ", ", "-", "\n", "é", "(", ""])


@st.composite
def sentences(draw: st.DrawFn) -> str:
    parts = [draw(separators)]
    for _ in range(draw(st.integers(1, 6))):
        parts += [draw(words), draw(separators)]
    return "".join(parts)


@settings(max_examples=25, deadline=None)
@given(texts=st.lists(sentences(), min_size=1, max_size=5), data=st.data())
def test_random_sentences_give_the_scans_hits(texts: list[str], data: st.DataObject) -> None:
    """Words and separators drawn from a few, cut anywhere: partial first and last words, case, non-ASCII."""
    text = data.draw(st.sampled_from(texts))
    start = data.draw(st.integers(0, len(text) - 1))
    pattern = text[start : start + data.draw(st.integers(1, 30))]
    if data.draw(st.booleans()):
        pattern = pattern.swapcase()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        journals(folder, texts)
        scanned, indexed = both(folder, Query.of(pattern), update=True)
        assert indexed == scanned, pattern


@settings(max_examples=400)
@given(
    text=st.text(alphabet="abcKkSsſ\u212a\u0130\u0131iI é.\n", max_size=40) | st.text(max_size=40),
    pattern=st.text(alphabet="abcKkSsſ\u212a\u0130\u0131iI é.\n", min_size=1, max_size=4),
)
def test_a_literal_is_found_where_its_regex_finds_it(text: str, pattern: str) -> None:
    """`Query.find` looks for a literal with str.find (in an ASCII text when ignoring case): the regex's match."""
    query = Query.of(pattern)
    for written in (text, text.upper()):
        match = query.compiled.search(written)
        assert query.find(written) == (None if match is None else match.span())


@pytest.mark.parametrize(("most", "budget"), [(4096, 1), (1, 16 << 20)])
def test_candidates_the_index_does_not_confirm_are_confirmed_by_search(
    monkeypatch: pytest.MonkeyPatch, most: int, budget: int
) -> None:
    """Past its budget of bytes, or with too many candidates, the index leaves them to search: the same hits."""
    monkeypatch.setattr(index, "_CONFIRMED", most)
    monkeypatch.setattr(index, "_CONFIRMED_BYTES", budget)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        journals(folder, TEXTS)
        for pattern in ("zero because the guard", "because the guard", "ero because the gua"):
            query = Query.of(pattern)
            scanned, indexed = both(folder, query, update=True)
            assert indexed == scanned, pattern
        db = connect_write(index_path(folder))
        try:
            snapshot = IndexRead(db, Query.of("yzero because the guard"))  # candidates, none a match
            assert snapshot.load() and snapshot.candidates  # left to search, not confirmed away
        finally:
            db.close()
