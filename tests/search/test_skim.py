"""Skimming another agent's file gives exactly the hits and stops of translating it whole.

`search.foreign.Skim` lets a file go untranslated when its bytes cannot hold the query's word. For
random sessions (Claude Code lines whose texts are random and written with random JSON escapes: a
character as itself, as \\u0041 or \\u00E9, / as \\/, a newline as \\n or \\u000a; some tool
results kept as a JSON object the translator encodes again; damaged lines, huge numbers, torn
tails) and random queries (a piece of a text, its case changed, or a word a translator writes
itself), the skimmed search and the whole reading give the same outcome. Then the recordings of the
skimmed formats, for the words of the property tests of the index.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.search.test_index_properties import WORDS, outcome
from wren_tui.foreign import FORMATS
from wren_tui.search.engine import search
from wren_tui.search.foreign import ForeignSession
from wren_tui.search.query import BadPattern, Query
from wren_tui.search.skim import SKIMMED, Skim
from wren_tui.search.sources import Item

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"
_FOLDERS = {"claude": "claude-code", "codex": "codex", "copilot": "copilot-cli"}


class Whole(ForeignSession):
    """The same session, always translated line by line (no skim)."""

    def items(self, query: Query) -> Iterator[Item]:
        return self._read(None)


def encode(value: object, rnd: random.Random) -> str:
    """`value` as JSON, each character of each string written one of the ways a JSON writer may write it."""
    if isinstance(value, str):
        return '"' + "".join(_char(char, rnd) for char in value) + '"'
    if isinstance(value, dict):
        space = rnd.choice(["", " "])
        return "{" + f",{space}".join(f"{encode(k, rnd)}:{space}{encode(v, rnd)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(encode(v, rnd) for v in value) + "]"
    return json.dumps(value)


_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\b": "\\b", "\f": "\\f", "\r": "\\r", "/": "\\/"}


def _char(char: str, rnd: random.Random) -> str:
    code = ord(char)
    ways = []
    if char not in '"\\' and code >= 0x20:
        ways.append(char)
    if char in _SHORT:
        ways.append(_SHORT[char])
    if code < 0x10000:
        ways += [f"\\u{code:04x}", f"\\u{code:04X}"]
    else:
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        ways.append(f"\\u{high:04x}\\u{low:04x}")
    return rnd.choice(ways)


ALPHABET = [*'abcdefhlortuxAEHLRT  .:-_0123456789\n\t\b\f"\\/{}[]', "é", "É", "€", "😀", "İ", "ı", "ſ", "K", "\x1b"]
texts = st.one_of(
    st.text(st.sampled_from(ALPHABET), max_size=24),
    st.lists(st.sampled_from(["heliotrope", "ledger", "image", "null", "true", "tfoo", "u001b", "é"]), max_size=4).map(
        " ".join
    ),
)


def _line(kind: int, text: str, n: int) -> dict[str, object]:
    base: dict[str, object] = {"uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None, "sessionId": "s"}
    base["timestamp"] = f"2026-11-30T09:00:{n % 60:02d}.000Z"
    if kind == 0:
        return {**base, "type": "user", "message": {"role": "user", "content": text}}
    if kind == 1:
        blocks = [
            {"type": "text", "text": text},
            {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"c": text}},
        ]
        usage = {"input_tokens": n, "output_tokens": 1}
        return {
            **base,
            "type": "assistant",
            "message": {"role": "assistant", "id": f"m{n}", "content": blocks, "usage": usage},
        }
    if kind == 2:  # a result kept as an object: the translator encodes it again
        result = [{"type": "tool_result", "tool_use_id": f"t{n - 1}", "content": {"out": text, "n": [1, 2.5]}}]
        return {**base, "type": "user", "message": {"role": "user", "content": result}}
    if kind == 3:
        result = [{"type": "tool_result", "tool_use_id": f"t{n - 1}", "content": [{"type": "text", "text": text}]}]
        return {**base, "type": "user", "message": {"role": "user", "content": result}}
    return {**base, "type": "system", "subtype": "api_error", "level": "error", "content": text}


# A damaged line now and then: reading stops there, skimmed or not.
DAMAGE = [b"", b"not json", b"[1, 2]", b'{"a": 1}{"b": 2}', b'{"type":"user","n":1e400}', b"\xff\xfe{}", b"   "]


@st.composite
def sessions(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    rnd = draw(st.randoms(use_true_random=False))
    lines, said = [], []
    for n in range(draw(st.integers(1, 8))):
        if draw(st.integers(0, 20)) == 0:
            lines.append(draw(st.sampled_from(DAMAGE)))
            continue
        text = draw(texts)
        said.append(text)
        lines.append(encode(_line(draw(st.integers(0, 4)), text, n), rnd).encode())
    data = b"\n".join(lines) + b"\n"
    if draw(st.booleans()) and draw(st.integers(0, 4)) == 0:
        data += b'{"type":"user","message":{"content":"torn'  # a last line without its newline
    return data, said


@st.composite
def queries(draw: st.DrawFn, said: list[str]) -> Query:
    choice = draw(st.integers(0, 3))
    if said and choice < 2:
        text = draw(st.sampled_from(said))
        start = draw(st.integers(0, len(text)))
        pattern = text[start : draw(st.integers(start, len(text)))]
        if choice == 1:
            pattern = pattern.upper() if draw(st.booleans()) else pattern.swapcase()
    elif choice == 2:
        pattern = draw(st.sampled_from(["heliotrope", "Heliotrope Ledger", "image", "null", "tfoo", "bfoo", "u001b"]))
    else:
        pattern = draw(texts)
    try:
        return Query.of(pattern or "x")
    except BadPattern:
        return Query.of("x")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_skimmed_claude_session_gives_the_whole_readings_hits(tmp_path: Path, data: st.DataObject) -> None:
    content, said = data.draw(sessions())
    query = data.draw(queries(said))
    path = tmp_path / "session.jsonl"
    path.write_bytes(content)
    fmt = FORMATS["claude"]
    skimmed = outcome(list(search([ForeignSession(path, fmt)], query)))
    whole = outcome(list(search([Whole(path, fmt)], query)))
    assert skimmed == whole, (query.pattern, content)


@pytest.mark.parametrize("name", sorted(SKIMMED))
def test_the_recordings_of_skimmed_formats_give_the_same_hits(name: str) -> None:
    fmt = FORMATS[name]
    paths = sorted((FIXTURES / _FOLDERS[name]).glob("*.jsonl"))
    assert paths
    for pattern in [*WORDS, "heliotrope", "Bash", "README", "exit", "uv run"]:
        query = Query.of(pattern)
        skimmed = outcome(list(search([ForeignSession(path, fmt) for path in paths], query)))
        whole = outcome(list(search([Whole(path, fmt) for path in paths], query)))
        assert skimmed == whole, pattern


def _skim(content: bytes, pattern: str, tmp_path: Path) -> tuple[int, int] | None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    skim = Skim.of(Query.of(pattern), FORMATS["claude"])
    assert skim is not None
    fd = os.open(path, os.O_RDONLY)
    try:
        return skim.file(fd)
    finally:
        os.close(fd)


def test_a_file_without_the_word_is_not_translated_and_one_with_it_or_a_doubt_is(tmp_path: Path) -> None:
    line = json.dumps(_line(0, "a ledger of dates", 0)).encode() + b"\n"
    assert _skim(line * 3, "heliotrope ledger", tmp_path) == (3, len(line) * 3)
    assert _skim(line * 3 + b'{"torn', "heliotrope", tmp_path) == (3, len(line) * 3)
    assert _skim(line + line.replace(b"dates", b"HELIOTROPE"), "heliotrope", tmp_path) is None
    assert _skim(line + line.replace(b"dates", b"heliotrop\\u0065"), "heliotrope", tmp_path) is None
    assert _skim(line + b"\n" + line, "heliotrope", tmp_path) is None  # a blank line stops the reading
    assert _skim(line + b'{"n": 2e308}\n', "heliotrope", tmp_path) is None  # too large for a float
    assert _skim(line + b'{"n": "a\\u000ab"}\n', "heliotrope", tmp_path) is None  # written \n when encoded again
    assert _skim(line + b'{"n": "\xff"}\n', "heliotrope", tmp_path) is None  # not UTF-8
    coloured = b'{"n": "\\u001b[1m"}\n' * 40  # an escape msgspec writes the same way
    assert _skim(line + coloured, "heliotrope", tmp_path) == (41, len(line) + len(coloured))


def test_a_word_the_translator_writes_itself_is_not_skimmed() -> None:
    claude = FORMATS["claude"]
    assert Skim.of(Query.of("image"), claude) is None  # "[image]" stands for a picture
    assert Skim.of(Query.of("redacted"), claude) is None
    assert Skim.of(Query.of("null"), claude) is None  # JSON encoded again
    assert Skim.of(Query.of("heliotrope"), claude) is not None
    assert Skim.of(Query.of("heliotrope"), FORMATS["pi"]) is None  # not a skimmed format
    assert Skim.of(Query.of(r"\d+", regex=True), claude) is None  # no word


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                b"{",
                b"}",
                b":",
                b",",
                b"[",
                b" ",
                b"\n",
                b"-",
                b".",
                b"e",
                b"E",
                b"+",
                b"1",
                b"0",
                b"9",
                b"3",
                b"x",
                b"\\u000a",
                b"\\u001b",
                b"\\u001B",
                b"\xc3\xa9",
                b"\xff",
                b"\xed\xa0\x80",
                b'"',
                b"\t",
            ]
        ),
        max_size=80,
    ).map(b"".join)
)
def test_the_doubts_are_found_alike_in_c_and_in_python(data: bytes) -> None:
    from wren_tui.search import skim as foreign

    if foreign.native is None:
        pytest.skip("the C pass is not built here")
    lines, doubt = foreign.native.plain(data)
    assert doubt >= 0 or lines == data.count(b"\n")
    python = (
        foreign._CONTROL.search(data) is not None
        or foreign._BLANK.search(data) is not None
        or any(foreign._huge(match) for match in foreign._HUGE.finditer(data))
    )
    try:
        data.decode()
    except UnicodeDecodeError:
        python = True
    assert (doubt >= 0) == python
