"""Journal text as data: the one wrap every pane uses (control characters are made visible by journal.visible).

Nothing a journal holds is ever parsed as markup: panes build Segments and Text from these
strings directly, so `[bold]` stays the seven characters it is.
"""

from __future__ import annotations

from rich.cells import cell_len

from ..journal.visible import visible, visible_lines

__all__ = ["shorten", "visible", "visible_lines", "width_of", "wrap"]


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
