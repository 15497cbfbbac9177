"""Lineage: ancestors from a journal's own fork events (a missing one still named), forks across folders, the tree."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.tui.family import FORK, GRANDCHILD, LATE, family
from tests.tui.journals import SESSION
from wren_tui.journal.lineage import fork_tree, lineage
from wren_tui.journal.store import SessionInfo, list_sessions


def _shape(relatives: list) -> list[tuple[str, int, int | None, bool]]:  # type: ignore[type-arg]
    return [(r.id, r.depth, r.at_seq, r.missing) for r in relatives]


def test_a_fork_of_a_fork_knows_its_whole_line_and_the_parent_knows_its_descendants(tmp_path: Path) -> None:
    f = family(tmp_path)
    assert _shape(lineage(f.grandchild, []).relatives) == [
        (SESSION, -2, None, False),
        (FORK, -1, 2, False),
        (GRANDCHILD, 0, 10, False),
    ]
    assert _shape(lineage(f.parent, []).relatives) == [
        (SESSION, 0, None, False),
        (FORK, 1, 2, False),
        (GRANDCHILD, 2, 10, False),
        (LATE, 1, 25, False),
    ]


def test_an_ancestor_whose_journal_is_gone_is_shown_missing_not_an_error(tmp_path: Path) -> None:
    f = family(tmp_path)
    f.parent.unlink()
    relatives = lineage(f.grandchild, []).relatives
    assert _shape(relatives)[0] == (SESSION, -2, None, True)
    assert relatives[0].path is None and relatives[1].path == f.fork


def test_relatives_are_found_in_every_folder_looked_in(tmp_path: Path) -> None:
    f = family(tmp_path / "here")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = Path(shutil.move(f.parent, elsewhere / f.parent.name))
    assert lineage(f.fork, []).relatives[0].missing
    found = lineage(f.fork, [elsewhere]).relatives
    assert found[0].id == SESSION and found[0].path == moved
    # And from the parent's side, its forks in the other folder.
    assert [r.id for r in lineage(moved, [f.folder]).relatives] == [SESSION, FORK, GRANDCHILD, LATE]


def test_the_tree_puts_forks_under_their_parent_and_an_orphan_at_the_top(tmp_path: Path) -> None:
    f = family(tmp_path)
    rows = list_sessions(f.folder)
    tree = fork_tree(rows)
    assert [(t.id, t.depth, t.children) for t in tree] == [
        (SESSION, 0, 2),
        (FORK, 1, 1),
        (GRANDCHILD, 2, 0),
        (LATE, 1, 0),
    ]
    f.parent.unlink()
    tree = fork_tree(list_sessions(f.folder))
    assert [(t.id, t.depth, t.parent_missing) for t in tree] == [
        (LATE, 0, True),
        (FORK, 0, True),
        (GRANDCHILD, 1, False),
    ]


def _row(session: str, parent: str | None) -> SessionInfo:
    return SessionInfo(session, Path(f"{session}.jsonl"), "done", 1, None, None, 0, parent, 1 if parent else None, None)


def test_forks_that_name_each_other_are_each_listed_once() -> None:
    a, b, c = "s-20250101-000000-aaaa", "s-20250101-000000-bbbb", "s-20250101-000000-cccc"
    tree = fork_tree([_row(a, b), _row(b, a), _row(c, c)])
    assert sorted(t.id for t in tree) == [a, b, c]
    assert len(tree) == 3
