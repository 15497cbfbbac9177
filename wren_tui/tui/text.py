"""Journal text as data: control characters made visible, and the one wrap every pane uses.

Nothing a journal holds is ever parsed as markup: panes build Segments and Text from these
strings directly, so `[bold]` stays the seven characters it is.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from rich.cells import cell_len

# Bidi embeddings, overrides, isolates and marks: they reorder what a person reads.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_TAB = "    "


@lru_cache(maxsize=512)
def _placeholder(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        # U+2400.. are the printable "control pictures": ESC shows as ␛, BEL as ␇.
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"<U+{code:04X}>"


def _is_hidden(char: str) -> bool:
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F or char in _BIDI:
        return True
    # Format characters (Cf: zero-width joiners and the like) can hide or reorder text too.
    return code > 0x9F and unicodedata.category(char) == "Cf"


def visible(text: str) -> str:
    """One line of journal text with every control, bidi and format character shown as a placeholder."""
    # Every character made visible below is one Python counts as not printable (Cc, Cf).
    if text.isprintable():
        return text
    return "".join(_placeholder(c) if _is_hidden(c) else c for c in text.replace("\t", _TAB))


def visible_lines(text: str) -> list[str]:
    """Journal text split on newlines, each line made visible (a lone CR is shown, not obeyed)."""
    return [visible(line) for line in text.split("\n")]


def width_of(line: str) -> int:
    return len(line) if line.isascii() else cell_len(line)


def wrap(line: str, width: int) -> list[str]:
    """One visible line cut into pieces of at most `width` cells, at spaces where it can."""
    width = max(width, 1)
    if width_of(line) <= width:
        return [line]
    pieces: list[str] = []
    rest = line
    while width_of(rest) > width:
        cut = _fit(rest, width)
        space = rest.rfind(" ", 0, cut + 1)
        if space > 0:
            pieces.append(rest[:space])
            rest = rest[space + 1 :]
        else:
            pieces.append(rest[:cut])
            rest = rest[cut:]
    pieces.append(rest)
    return pieces


def _fit(line: str, width: int) -> int:
    """How many characters of `line` fit in `width` cells (at least one)."""
    if line.isascii():
        return width
    used = 0
    for index, char in enumerate(line):
        used += cell_len(char)
        if used > width:
            return max(index, 1)
    return len(line)


def shorten(text: str, width: int) -> str:
    """A one-line summary: whitespace collapsed, made visible, cut to `width` cells with an ellipsis."""
    flat = visible(" ".join(text.split()))
    if width_of(flat) <= width:
        return flat
    return flat[: _fit(flat, width - 1)] + "…"
