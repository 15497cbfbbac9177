"""What a snapshot event names is whole, and what a fork of it restores is the files at that point.

Every `wren` here is a subprocess, as a person runs it:
- a command that removes the store's loose objects (and its packs) mid-run: the turn's last snapshot
  still names a tree the store holds whole, and a fork from the turn's end restores its files;
- the not-covered count is whole past the 50 paths an event lists;
- `fork --workspace` of a fork restores the parent's files at that point, not an edit made in the
  first fork's folder afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.test_snapshot_forks import state_of, wren
from wren_tui.journal.events import Snapshot
from wren_tui.snapshots.store import IN_PROCESS, LISTED, STORE, Store


@pytest.mark.parametrize(
    ("extra", "removed"),
    [(0, "objects/??"), (IN_PROCESS + 10, "objects/?? objects/pack")],
    ids=["in process", "through git"],
)
def test_a_command_that_removes_the_stores_objects_leaves_the_turns_snapshot_whole_and_forkable(
    workspace: Path, tmp_path: Path, extra: int, removed: str
) -> None:
    for n in range(extra):  # past the in-process limit: git's path, its first snapshot one pack
        (workspace / f"data{n}.txt").write_text(f"{n}\n")
    journals = journals_of(workspace)
    store = journals / STORE
    gone = " ".join(f"{store}/{glob}" for glob in removed.split())
    wren(["run", "--yes", "--dir", str(journals), f"run `rm -rf {gone}`"], cwd=workspace)
    expected = state_of(workspace)
    events = events_of(only_journal(journals))
    snaps = [e for e in events if isinstance(e, Snapshot)]
    assert [s.before is None for s in snaps] == [False, True]
    assert snaps[-1].id == snaps[0].id  # the command changed no file of the workspace
    Store(store).check_whole(snaps[-1].id)  # every object it names, every byte

    target = tmp_path / "fork"
    sid = only_journal(journals).stem
    point = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], cwd=tmp_path))[-1]["seq"]  # the answer
    wren(["fork", "--dir", str(journals), sid, str(point), "--workspace", str(target)], cwd=tmp_path)
    assert state_of(target) == expected


def test_the_not_covered_count_is_whole_past_the_paths_listed(workspace: Path) -> None:
    (workspace / ".gitignore").write_text("*.log\n__pycache__/\n")
    for n in range(120):
        (workspace / f"ignored-{n:03}.log").write_text("ignored\n")
    journals = journals_of(workspace)
    wren(["run", "--yes", "--dir", str(journals), "run `true`"], cwd=workspace)
    end = [e for e in events_of(only_journal(journals)) if isinstance(e, Snapshot)][-1]
    assert end.before is None
    assert end.not_covered is not None and len(end.not_covered) == LISTED
    assert end.not_covered_count == 120
    shown = wren(["log", "--dir", str(journals), only_journal(journals).stem], cwd=workspace)
    assert "120 not covered" in shown


def test_a_fork_with_files_of_a_fork_restores_the_parents_files_not_a_later_edit_in_the_first_fork(
    workspace: Path, tmp_path: Path
) -> None:
    journals = journals_of(workspace)
    dir_ = ["--dir", str(journals)]
    wren(["run", "--yes", *dir_, "run the tests, find the failing case and fix it"], cwd=workspace)
    parent = only_journal(journals).stem
    expected = state_of(workspace)
    point = json.loads(wren(["fork", *dir_, parent, "--json"], cwd=tmp_path))[-1]["seq"]  # the final answer

    first = tmp_path / "w1"
    child = json.loads(wren(["fork", *dir_, parent, str(point), "--workspace", str(first), "--json"], tmp_path))["id"]
    assert state_of(first) == expected
    edited = first / "stats" / "core.py"
    edited.write_text(edited.read_text() + "# an edit made in the first fork, after it\n")
    wren(["resume", "--yes", *dir_, child, "run `true`"], cwd=tmp_path)  # a call: a snapshot of w1 with the edit

    second = tmp_path / "w2"
    wren(["fork", *dir_, child, str(point), "--workspace", str(second)], cwd=tmp_path)
    assert state_of(second) == expected
