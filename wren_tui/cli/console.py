"""What a command writes: its output on stdout, its one sentence of error on stderr, JSON for scripts."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from ..journal.visible import escaped_json, visible_text

if TYPE_CHECKING:
    import msgspec

# A value of a flat JSON row (`JsonRows`): what a search's hit, session, stop and page are made of.
Scalar = str | int | bool | None
# The rows `JsonRows` writes with the standard library's encoder before msgspec's: a page of hits (or none) loads no
# msgspec, while 82,000 hits of a common phrase are written at msgspec's pace (about a tenth of the standard library's
# time a row) once the 20 ms of loading it are paid back.
FEW_ROWS = 1000


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def err(text: str) -> None:
    """`wren: TEXT` on stderr; a model's command or a server's words may be in it: nothing in it drives the terminal."""
    sys.stderr.write(f"wren: {visible_text(text)}\n")
    sys.stderr.flush()


class JsonRows:
    """Flat rows (strings, integers, booleans, nulls) as lines of JSON in UTF-8, byte for byte as `print_json`'s
    msgspec encoder writes them (tests/test_json_rows.py), before `escaped_json`: the first `few` with the standard
    library's encoder, the rest with msgspec's. A lone surrogate, which msgspec refuses, is written as its escape
    (`utf8_json`)."""

    def __init__(self, few: int = FEW_ROWS) -> None:
        self.few = few
        self.written = 0

    def encode(self, row: Mapping[str, Scalar]) -> bytes:
        self.written += 1
        if self.written <= self.few:
            return utf8_json(stdlib_encoder()(row))
        try:
            return msgspec_encoder().encode(row)
        except UnicodeEncodeError:  # a lone surrogate: written as its escape, as the rows before it
            return utf8_json(stdlib_encoder()(row))


def utf8_json(text: str) -> bytes:
    """JSON text in UTF-8, each lone surrogate in it (a file name's byte that is not UTF-8, as Python decodes it)
    written as its escape (`\\udcff`), which UTF-8 cannot hold: the same JSON value (Python reads the name
    back whole)."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", lambda lone: f"\\u{ord(lone[0]):04x}", text).encode()


@cache
def stdlib_encoder() -> Callable[[object], str]:
    """The standard library's JSON, compact, as msgspec writes it: strings as they are (UTF-8), but the C0 controls,
    the quote and the backslash escaped (`\\b \\f \\n \\r \\t` by their short names, the others as `\\u00xx`)."""
    import json  # about 1 ms: only for a command that writes JSON

    from ..records import fields_of

    return json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=fields_of).encode


@cache
def json_string() -> Callable[[str], str]:
    """A string as `stdlib_encoder` (and so msgspec) writes it in a row: quoted, as it is (UTF-8), the C0 controls,
    the quote and the backslash escaped; a row written from its parts (`session_row`) is that encoder's row."""
    from json.encoder import encode_basestring  # the one `stdlib_encoder` takes (ensure_ascii=False): C's

    return encode_basestring


def session_row(agent: str, session: str, path: str, kept: str | None) -> str:
    """`-l`'s JSON row of a session (its line, before `utf8_json` and `escaped_json`): the text `JsonRows.encode` writes
    of {"type": "session", "agent": ..., "session": ..., "path": ..., "kept": ...}, with no dict, no encoder call and
    no msgspec loaded for each of 2,000 sessions."""
    quoted = json_string()
    said = "null" if kept is None else quoted(kept)
    return (
        f'{{"type":"session","agent":{quoted(agent)},"session":{quoted(session)},"path":{quoted(path)},"kept":{said}}}'
    )


@cache
def msgspec_encoder() -> msgspec.json.Encoder:
    import msgspec  # 20 ms: only where many rows, or what only msgspec writes (Structs, dataclasses), are printed

    from ..records import fields_of  # a record (`journal.verdict.Stop`...) as the dataclass it was

    return msgspec.json.Encoder(enc_hook=fields_of)


def print_json(data: Any) -> None:
    """`data` as one line of JSON: msgspec's bytes, written by the standard library's encoder where it writes the same
    (a list of flat rows, `plain_rows`: `wren ls --json` loads no msgspec), else by msgspec's; a lone surrogate (a
    file name not UTF-8) as its escape, as `utf8_json` writes it."""
    if plain_rows(data):
        encoded = utf8_json(stdlib_encoder()(data))
    else:
        try:
            encoded = msgspec_encoder().encode(data)
        except UnicodeEncodeError:
            encoded = utf8_json(stdlib_encoder()(data))
    sys.stdout.buffer.write(escaped_json(encoded) + b"\n")
    sys.stdout.flush()


def plain_rows(data: Any) -> bool:
    """Whether `data` is a list of flat rows the standard library writes as msgspec does (tests/test_json_rows.py):
    string keys, each value a string, an integer, a boolean, None, or a finite float that Python writes without an
    exponent (1e-05 is `1e-05` to Python and `0.00001` to msgspec; 0.25 is `0.25` to both)."""
    return isinstance(data, list) and all(
        type(row) is dict and all(type(key) is str and _plain(value) for key, value in row.items()) for row in data
    )


def _plain(value: object) -> bool:
    kind = type(value)
    if kind is float:
        text = repr(value)
        return "e" not in text and "n" not in text  # no exponent, not inf or nan
    return value is None or kind is str or kind is int or kind is bool
