"""What a command writes: its output on stdout, its one sentence of error on stderr, JSON for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from ..journal.visible import escaped_json, visible_text

if TYPE_CHECKING:
    import msgspec

# A value of a flat JSON row (`json_row`): what a search's hit, session, stop and page are made of.
Scalar = str | int | bool | None
# A flat row as compact JSON, as msgspec's encoder writes it for these values (tests/test_json_rows.py): strings as
# they are (UTF-8), but the C0 controls, the quote and the backslash escaped, `\b \f \n \r \t` by their short names,
# the others as `\u00xx` in lowercase; a lone surrogate cannot be written (UnicodeEncodeError), by either.
_row = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def err(text: str) -> None:
    """`wren: TEXT` on stderr; a model's command or a server's words may be in it: nothing in it drives the terminal."""
    sys.stderr.write(f"wren: {visible_text(text)}\n")
    sys.stderr.flush()


def json_row(row: Mapping[str, Scalar]) -> bytes:
    """A row of strings, integers, booleans and nulls as one line of JSON (UTF-8, no newline), without msgspec: the
    bytes `print_json`'s encoder gives it, before `escaped_json`. A warm `wren search` writes its rows so, and loads
    no msgspec (20 ms of a 70 ms start)."""
    return _row(row).encode()


def print_json(data: Any) -> None:
    sys.stdout.buffer.write(escaped_json(_encoder().encode(data)) + b"\n")
    sys.stdout.flush()


@cache
def _encoder() -> msgspec.json.Encoder:
    import msgspec  # only the commands that print what only msgspec writes (Structs, dataclasses)

    return msgspec.json.Encoder()
