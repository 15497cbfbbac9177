"""Journal text made safe for an export: every character a terminal would obey shown instead (see journal.visible)."""

from __future__ import annotations

from ..journal.visible import visible, visible_text


def shown(text: str) -> str:
    """`text` with its newlines kept and every control, bidi and format character made a visible placeholder."""
    # The common case (plain text over many lines) costs one replace and one check, both in C.
    return text if text.replace("\n", "").isprintable() else visible_text(text)


def shown_line(text: str) -> str:
    """`text` on one line: newlines too become placeholders."""
    return text if text.isprintable() else visible(text)


def clock(ts: str) -> str:
    """The time of day of a journal ts (09:30:01); anything else in its place shown as `?`, never as markup."""
    moment = ts[11:19]
    return moment if len(moment) == 8 and moment.replace(":", "").isdigit() else "?"


def line_count(text: str) -> int:
    return text.count("\n") + 1 if text else 0
