"""What the viewer's child (`python -m wren_tui.tui.write`, in `__main__.py`) answers: one typed Struct, as JSON.

The viewer imports this (to read the answer back as its type) and `tui/write_child.py` (to ask),
never `__main__`: the child's writing happens in its own process.
"""

from __future__ import annotations

import msgspec


class Failed(msgspec.Struct, frozen=True, tag="failed"):
    """The child's one sentence of why it did not do what was asked."""

    said: str


class ForkMade(msgspec.Struct, frozen=True, tag="forked"):
    """A fork with its files: the new session, its journal, the folder its files went to and how many."""

    id: str
    path: str
    workspace: str
    files_restored: int


class Changes(msgspec.Struct, frozen=True, tag="changes"):
    """How many files changed since each clean point, by seq (None: its files are not in the store)."""

    changed: dict[int, int | None]


class Diff(msgspec.Struct, frozen=True, tag="diff"):
    """The diff of the files at a point to the session's last snapshot (empty: the files are as now)."""

    text: str


Answer = Failed | ForkMade | Changes | Diff
