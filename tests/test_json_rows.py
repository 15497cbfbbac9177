"""`wren search --json` writes its rows and its page cursors with the standard library's JSON, not msgspec, and the
bytes are the ones msgspec's encoder wrote, for every string a session can hold.

A warm search loads no msgspec (20 ms of its start): `console.JsonRows` writes a hit, a session (`-l`), a reading
that stopped and the next page's cursor with the standard library's encoder, and switches to msgspec's only past
`FEW_ROWS` rows (a tenth of the time a row, for 82,000 hits); `pages.Cursor` reads a cursor back. msgspec is the
reference here: the same bytes for the C0 controls (the short escapes and `\\u00xx` in lowercase), DEL, C1, the
line and paragraph separators, format characters, non-ASCII and astral characters (as UTF-8, then `escaped_json`
as before); a lone surrogate (a path's undecodable byte, as Python names it), which msgspec refuses, written as its
`\\udcxx` escape (the same value, read back whole); the same cursors taken and refused.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wren_tui.cli.console import FEW_ROWS, JsonRows, Scalar, session_row, utf8_json
from wren_tui.journal.visible import escaped_json
from wren_tui.search.pages import Cursor, PageError

_MSGSPEC = msgspec.json.Encoder()


def json_row(row: dict[str, Scalar]) -> bytes:
    """A row as the standard library's encoder writes it, however many rows were written before."""
    return JsonRows(few=1).encode(row)


# Every character JSON escapes or a terminal obeys, and the non-ASCII a session holds.
HOSTILE = [
    "",
    *(chr(code) for code in range(0x20)),
    '"',
    "\\",
    "/",
    "\x7f",  # DEL: JSON leaves it, `escaped_json` too (it is ASCII)
    "\x80\x85\x9b\x9f",  # C1
    "\u2028\u2029",  # the line and paragraph separators
    "\u00ad\u061c\u200b\u200e\u202e\u2066\ufeff",  # format characters, bidi
    "café 漢字 \u00a0",
    "\U0001f600 \U000e0041 \U0010ffff",  # astral: an emoji, a tag, the last code point
    "\x1b[2J\x1b]0;title\x07 and \r\n\t\b\f mixed with «guillemets» and \\u0041",
]
# What a lone surrogate is: one escaped alone in a session's JSON, or an undecodable byte of a file's name.
SURROGATES = ["\ud800", "\udfff", "x\udc80y", os.fsdecode(b"/tmp/caf\xe9.jsonl")]
INTEGERS = [0, 1, -1, 2**31, 2**63 - 1, -(2**63), 2**64 - 1, 2**70]


def hit_row(text: str, number: int) -> dict[str, Scalar]:
    """A row with the keys and kinds of value of a search's hit, each string `text`."""
    return {
        "type": "hit",
        "agent": text,
        "session": text,
        "path": text,
        "project": None,
        "line": number,
        "offset": number,
        "part": 0,
        "ts": text,
        "role": text,
        "kind": text,
        "tool": None,
        "inToolName": False,
        "snippet": text,
        "matchStart": number,
        "matchEnd": number,
        "kept": text,
        "torn": True,
    }


@pytest.mark.parametrize("text", HOSTILE, ids=repr)
def test_a_row_of_any_string_is_the_bytes_msgspec_wrote(text: str) -> None:
    for number in INTEGERS:
        row = hit_row(text, number)
        assert json_row(row) == _MSGSPEC.encode(row)
        assert escaped_json(json_row(row)) == escaped_json(_MSGSPEC.encode(row))


def test_every_character_but_the_surrogates_is_written_as_msgspec_wrote_it() -> None:
    everything = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000)
    assert json_row({"snippet": everything}) == _MSGSPEC.encode({"snippet": everything})


@pytest.mark.parametrize("text", SURROGATES, ids=repr)
def test_a_lone_surrogate_msgspec_refused_is_written_as_its_escape_and_read_back_whole(text: str) -> None:
    with pytest.raises(UnicodeEncodeError):
        _MSGSPEC.encode({"path": text})
    rows = JsonRows(few=1)
    row: dict[str, Scalar] = {"path": text, "snippet": "café", "line": 3}
    first, past_few = rows.encode(row), rows.encode(row)  # the standard library's, then where msgspec refuses
    assert first == past_few
    first.decode("utf-8")  # UTF-8 throughout: the surrogate is an escape, not a byte UTF-8 cannot hold
    assert json.loads(first) == row
    assert '"snippet":"café"' in first.decode()  # the rest of the row as msgspec writes it
    printed = Cursor(text, 1, 0).text()
    try:
        text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # no name's byte: no page printed it
        with pytest.raises(PageError, match="is not a cursor a page printed"):
            Cursor.of(printed)
    else:  # a name's byte that is not UTF-8: the next page starts at that session
        assert Cursor.of(printed) == Cursor(text, 1, 0)


@settings(max_examples=300, deadline=None)
@given(st.text(), st.integers(min_value=-(2**63), max_value=2**64), st.booleans() | st.none())
def test_any_row_is_msgspecs_bytes_or_refused_by_both(text: str, number: int, flag: bool | None) -> None:
    row: dict[str, Scalar] = {"text": text, "number": number, "flag": flag}
    try:
        expected = _MSGSPEC.encode(row)
    except UnicodeEncodeError:  # a lone surrogate: its escape, the same value
        assert json.loads(json_row(row)) == row
        return
    assert json_row(row) == expected


def _msgspec_cursor_text(path: str, skip: int, shown: int) -> str:
    """The cursor as the page printed it with msgspec."""
    raw = _MSGSPEC.encode([path, skip, shown])
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


@pytest.mark.parametrize("path", [text for text in HOSTILE if text] + ["/home/me/.claude/projects/-work/a b.jsonl"])
def test_a_cursor_is_printed_as_msgspec_printed_it_and_read_back(path: str) -> None:
    for skip, shown in ((0, 0), (5, 5), (2**40, 3)):
        text = Cursor(path, skip, shown).text()
        assert text == _msgspec_cursor_text(path, skip, shown)
        assert Cursor.of(text) == Cursor(path, skip, shown)


# A cursor's JSON that msgspec's decoder (tuple[str, int, int]) took, and what it refused.
TAKEN = [b'["a",1,0]', b' [ "a" , 1 , 0 ] ', b'["a",-0,0]', b'["\\ud83d\\ude00",3,2]', b'["a\\u0000",1,1]']
REFUSED = [
    b'["a",true,0]',
    b'["a",1.0,0]',
    b'["a",1e2,0]',
    b'["a",01,0]',
    b'["a",1,0]x',
    b'["a",1]',
    b'["a",1,0,0]',
    b'{"path":"a"}',
    b"[1,1,0]",
    b"[null,1,0]",
    b'["a",NaN,0]',
    b'["a",Infinity,0]',
    b'["\\ud800",1,0]',
    b'"a"',
    b"",
    b"\xef\xbb\xbf" + b'["a",1,0]',  # a byte order mark
    '["a",1,0]'.encode("utf-16"),
    b'["caf\xe9",1,0]',  # not UTF-8
    b"[" * 5000,
]


def _msgspec_takes(raw: bytes) -> bool:
    try:
        msgspec.json.decode(raw, type=tuple[str, int, int])
    except msgspec.DecodeError:
        return False
    return True


@pytest.mark.parametrize("raw", TAKEN + REFUSED, ids=repr)
def test_a_cursor_is_taken_or_refused_as_msgspec_took_or_refused_it(raw: bytes) -> None:
    text = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    if _msgspec_takes(raw):
        assert raw in TAKEN
        assert Cursor.of(text) == Cursor(*msgspec.json.decode(raw, type=tuple[str, int, int]))
    else:
        assert raw in REFUSED
        with pytest.raises(PageError, match="is not a cursor a page printed"):
            Cursor.of(text)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64) | st.builds(lambda v: json.dumps(v).encode(), st.lists(st.text() | st.integers())))
def test_any_cursor_is_taken_only_where_msgspec_took_it(raw: bytes) -> None:
    text = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    try:
        cursor: Cursor | None = Cursor.of(text)
    except PageError:
        cursor = None
    if _msgspec_takes(raw):
        path, skip, shown = msgspec.json.decode(raw, type=tuple[str, int, int])
        taken = skip >= 0 and shown >= 0 and shown <= skip
        assert cursor == (Cursor(path, skip, shown) if taken else None)
    elif cursor is not None:  # msgspec refused it: only a path with a name's byte that is not UTF-8 is taken
        assert any("\udc80" <= char <= "\udcff" for char in cursor.path)
        cursor.path.encode("utf-8", "surrogateescape")


def test_rows_past_the_few_are_written_by_msgspec_with_the_same_bytes() -> None:
    rows = JsonRows(few=len(HOSTILE) // 2)
    for text in HOSTILE * 2:
        row = hit_row(text, 7)
        assert rows.encode(row) == _MSGSPEC.encode(row)
    assert rows.written == 2 * len(HOSTILE) and FEW_ROWS >= 100


def test_msgspecs_encoder_is_made_only_past_the_few_rows() -> None:
    code = (
        "from wren_tui.cli.console import JsonRows, msgspec_encoder\nrows = JsonRows(few=3)\n"
        "for n in range(4):\n"
        "    rows.encode({'type': 'hit', 'n': n})\n"
        "    print(msgspec_encoder.cache_info().currsize)"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert ran.stdout.split() == ["0", "0", "0", "1"]


# Floats a listing row holds (a duration in seconds, from microseconds up), and those Python writes otherwise.
FLOATS = [0.0, -0.0, 0.1, 0.25, 1.5, 12.345678, 0.000123, 3600.0, 86399.999999, 1e15, 123456789.123]
ODD_FLOATS = [1e-05, 2.5e-05, 5e-07, 1e16, 1.5e300, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("number", FLOATS + ODD_FLOATS, ids=repr)
def test_a_list_of_rows_is_printed_as_msgspec_printed_it_whatever_its_floats(
    number: float, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    from wren_tui.cli.console import plain_rows, print_json

    rows = [{"id": text, "durationS": number, "lines": 3, "exact": True, "kept": None} for text in HOSTILE[30:]]
    assert plain_rows(rows) == (number in FLOATS)  # the standard library's only where it writes msgspec's bytes
    print_json(rows)
    assert capsysbinary.readouterr().out == escaped_json(_MSGSPEC.encode(rows)) + b"\n"


@given(
    st.lists(st.dictionaries(st.text(max_size=8), st.floats() | st.integers() | st.text() | st.booleans() | st.none()))
)
@settings(max_examples=300, deadline=None)
def test_any_list_of_flat_rows_is_msgspecs_bytes_or_refused_by_both(rows: list[dict[str, object]]) -> None:
    from wren_tui.cli.console import plain_rows, stdlib_encoder

    if not plain_rows(rows):
        return  # written by msgspec itself
    try:
        theirs: bytes | None = _MSGSPEC.encode(rows)
    except UnicodeEncodeError:
        theirs = None
    try:
        ours: bytes | None = stdlib_encoder()(rows).encode()
    except UnicodeEncodeError:
        ours = None
    assert ours == theirs


def test_a_page_of_ls_agent_json_loads_no_msgspec_to_print(tmp_path: Path) -> None:
    """The rows of `wren ls --agent --json` (strings, integers, booleans, None, a duration) written without msgspec."""
    code = (
        "import sys; from wren_tui.cli.console import print_json; "
        "print_json([{'agent': 'claude', 'id': 'x', 'lines': 3, 'exact': True, 'durationS': 12.5, 'kept': None}]); "
        "sys.stderr.write(str('msgspec' in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=tmp_path, check=True)
    assert done.stdout == b'[{"agent":"claude","id":"x","lines":3,"exact":true,"durationS":12.5,"kept":null}]\n'
    assert done.stderr == b"False"


def _session_rows(rows: JsonRows, sessions: list[tuple[str, str, str, str | None]]) -> bytes:
    """-l's rows of these sessions as the row encoder writes them, a row at a time."""
    out = b""
    for agent, session, path, kept in sessions:
        row: dict[str, Scalar] = {"type": "session", "agent": agent, "session": session, "path": path, "kept": kept}
        out += escaped_json(rows.encode(row)) + b"\n"
    return out


_STRINGS = st.sampled_from(HOSTILE + SURROGATES) | st.text()


@settings(max_examples=200, deadline=None)
@given(
    sessions=st.lists(st.tuples(_STRINGS, _STRINGS, _STRINGS, st.none() | _STRINGS), max_size=6),
    few=st.sampled_from([0, 2, FEW_ROWS]),
)
def test_the_rows_of_a_page_of_sessions_written_at_once_are_the_row_encoders_bytes(
    sessions: list[tuple[str, str, str, str | None]], few: int
) -> None:
    """-l --json writes its sessions' rows from their parts (`session_row`), a page of them made bytes at once: the
    bytes the row encoder wrote a row at a time, by the standard library's encoder or msgspec's, for any string."""
    written = "".join(f"{session_row(*session)}\n" for session in sessions)
    assert escaped_json(utf8_json(written)) == _session_rows(JsonRows(few=few), sessions)
