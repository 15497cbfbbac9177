"""Which sessions branched from which, and where: a session's ancestors and descendants, and a folder's fork tree.

A fork's journal begins with its parent's bytes, so it holds every fork event of its line: the
first is its oldest ancestor's, the last its own. Ancestors are therefore known from the journal
alone, even when their files are gone (they are then shown as missing). Descendants are the
sessions, in the folders looked in, whose own fork event names the session.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import JournalError
from .events import Event, Fork
from .reader import scan_events
from .store import SessionInfo, list_sessions, session_id_of


@dataclass(frozen=True)
class Relative:
    """One session of a lineage. `path` is None when its journal is in none of the folders looked in."""

    id: str
    path: Path | None
    # Where it was forked from its parent (None for a session that is not a fork).
    at_seq: int | None
    # -1 the parent, -2 its parent...; 0 the session itself; 1 a child, 2 a grandchild...
    depth: int

    @property
    def missing(self) -> bool:
        return self.path is None


@dataclass(frozen=True)
class Lineage:
    """Ancestors oldest first, the session, then its descendants depth first (children by fork point)."""

    relatives: list[Relative]

    @property
    def session(self) -> Relative:
        return next(r for r in self.relatives if r.depth == 0)


def fork_events(path: Path) -> list[Fork]:
    """Every fork event of a journal, in order (up to where reading stops)."""
    found: list[Fork] = []

    def take(events: list[Event], _lines: bytes | memoryview) -> None:
        found.extend(e for e in events if type(e) is Fork)

    scan_events(path, take)
    return found


def rows_of(folders: Iterable[Path]) -> dict[str, SessionInfo]:
    """The listing rows of every session in `folders`, by id; the first folder wins a tie."""
    rows: dict[str, SessionInfo] = {}
    for folder in folders:
        try:
            listed = list_sessions(folder)
        except JournalError:
            continue  # a folder that cannot be listed holds no relative we can show
        for row in listed:
            rows.setdefault(row.id, row)
    return rows


def lineage(path: Path, folders: Sequence[Path]) -> Lineage:
    """The lineage of the session at `path`, its relatives looked for in `folders` (and its own folder)."""
    rows = rows_of([path.parent, *folders])
    own = session_id_of(path)
    forks = fork_events(path)
    relatives: list[Relative] = []
    # forks[i] says who the i-th ancestor (from the oldest) forked from, and where.
    for place, event in enumerate(forks):
        ancestor = rows.get(event.from_)
        at = forks[place - 1].at_seq if place else None
        relatives.append(Relative(event.from_, ancestor.path if ancestor else None, at, place - len(forks)))
    relatives.append(Relative(own, path, forks[-1].at_seq if forks else None, 0))
    relatives.extend(descendants(own, rows))
    return Lineage(relatives)


def children_of(rows: dict[str, SessionInfo]) -> dict[str, list[SessionInfo]]:
    """Each session's forks, ordered by fork point, then by id."""
    children: dict[str, list[SessionInfo]] = {}
    for row in rows.values():
        if row.forked_from is not None and row.forked_from != row.id:
            children.setdefault(row.forked_from, []).append(row)
    for kids in children.values():
        kids.sort(key=lambda r: (r.fork_at or 0, r.id))
    return children


def descendants(session: str, rows: dict[str, SessionInfo]) -> list[Relative]:
    """The forks of `session`, their forks and so on, depth first; a cycle in bad data ends the walk."""
    children = children_of(rows)
    found: list[Relative] = []
    seen = {session}

    def walk(parent: str, depth: int) -> None:
        for child in children.get(parent, []):
            if child.id in seen:
                continue
            seen.add(child.id)
            found.append(Relative(child.id, child.path, child.fork_at, depth))
            walk(child.id, depth + 1)

    walk(session, 1)
    return found


@dataclass(frozen=True)
class TreeRow:
    """A session's place in a folder's fork tree: its depth, and whether its parent is missing."""

    id: str
    depth: int
    # A fork whose parent is not in the folder sits at the top, said to be missing.
    parent_missing: bool
    children: int


def fork_tree(rows: Sequence[SessionInfo]) -> list[TreeRow]:
    """Every row once, as a tree: top-level sessions newest first, each followed by its forks (depth first).

    A fork whose parent is not among `rows` is top-level. A cycle (forks naming each other, which
    only bad data can make) is broken where it is found: nothing is lost, nothing repeats.
    """
    by_id = {row.id: row for row in rows}
    children = children_of(by_id)
    tops = [r for r in rows if r.forked_from is None or r.forked_from not in by_id or r.forked_from == r.id]
    order: list[TreeRow] = []
    placed: set[str] = set()

    def place(row: SessionInfo, depth: int, missing: bool) -> None:
        placed.add(row.id)
        kids = [k for k in children.get(row.id, []) if k.id not in placed]
        order.append(TreeRow(row.id, depth, missing, len(kids)))
        for kid in kids:
            if kid.id not in placed:
                place(kid, depth + 1, False)

    for row in sorted(tops, key=lambda r: r.id, reverse=True):
        place(row, 0, row.forked_from is not None and row.forked_from != row.id)
    for row in sorted(rows, key=lambda r: r.id, reverse=True):
        if row.id not in placed:  # in a cycle: shown at the top rather than not at all
            place(row, 0, False)
    return order
