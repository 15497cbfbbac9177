"""Journal text as data: the one wrap every pane uses (control characters are made visible by journal.visible).

Nothing a journal holds is ever parsed as markup: panes build Segments and Text from these
strings directly, so `[bold]` stays the seven characters it is.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.cells import cell_len

from ..journal.visible import visible, visible_lines

__all__ = ["shorten", "visible", "visible_lines", "width_of", "wrap"]


def width_of(line: str) -> int:
    return len(line) if line.isascii() else cell_len(line)


def wrap(line: str, width: int) -> list[str]:
    """One visible line cut into pieces of at most `width` cells, at spaces where it can."""
    return [line[start:end] for start, end in wrap_spans(line, width)]


def wrap_spans(line: str, width: int, start: int = 0) -> Iterator[tuple[int, int]]:
    """The (start, end) of each piece `wrap` cuts, lazily: a caller that needs ten rows pays for ten.

    A space the line is cut at belongs to no piece. Each row costs its own length, so a line of
    any size is cut in time linear in what is taken.
    """
    width = max(width, 1)
    plain = line.isascii()
    end = len(line)
    while True:
        cut = start + width if plain else _fit_cells(line, width, start)
        if cut >= end:
            yield start, end
            return
        space = line.rfind(" ", start, cut + 1)
        if space > start:
            yield start, space
            start = space + 1
        else:
            yield start, cut
            start = cut


def _fit(line: str, width: int) -> int:
    """How many characters of `line` fit in `width` cells (at least one)."""
    return width if line.isascii() else _fit_cells(line, width, 0)


def _fit_cells(line: str, width: int, start: int) -> int:
    """Where the characters of `line` from `start` that fit in `width` cells end (at least one)."""
    used = 0
    for index in range(start, len(line)):
        used += cell_len(line[index])
        if used > width:
            return max(index, start + 1)
    return len(line)


def shorten(text: str, width: int) -> str:
    """A one-line summary: whitespace collapsed, made visible, cut to `width` cells with an ellipsis."""
    # Whitespace runs aside, no more than this much of a long text can show.
    head = text[: 4 * max(width, 0) + 256]
    flat = visible(" ".join(head.split()))
    if len(head) == len(text) and width_of(flat) <= width:
        return flat
    return flat[: _fit(flat, width - 1)] + "…"
