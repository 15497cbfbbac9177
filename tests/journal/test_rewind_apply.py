"""A rewind's writes never go through a folder swapped for a link after the plan was made."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from wren_tui.snapshots.rewinding import Plan, apply
from wren_tui.snapshots.store import Store


def test_a_folder_swapped_for_a_link_after_the_plan_is_never_written_or_deleted_through(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "d").mkdir(parents=True)
    (workspace / "d" / "x").write_text("the session's x\n")
    (workspace / "keep.txt").write_text("k\n")
    store = Store(tmp_path / "journals" / ".snapshots")
    tree = store.take(workspace, "s-20260101-000000-abcd").id
    mode, oid = store.files_of(tree)[b"d/x"]
    outside.mkdir()
    (outside / "x").write_text("someone else's x\n")
    (outside / "y").write_text("someone else's y\n")
    plan = Plan(at_seq=2, target=tree, before=tree, restore=[(b"d/x", mode, oid)], delete=[b"d/y"])
    # Between the plan and the writes, the folder becomes a link to a folder outside the workspace.
    shutil.rmtree(workspace / "d")
    os.symlink(outside, workspace / "d")
    problems = apply(store, plan, workspace)
    assert problems == [
        "d/y: not deleted (d is a link now, not followed)",
        "d/x: not restored (d is a link now, not followed)",
    ]
    assert (outside / "x").read_text() == "someone else's x\n" and (outside / "y").read_text() == "someone else's y\n"
    assert sorted(os.listdir(outside)) == ["x", "y"]


def test_two_files_whose_long_names_share_their_start_are_each_restored_with_their_own_bytes(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # Names long enough that the temporary name beside each is cut to 255 characters: the same for both.
    first, second = "n" * 240 + "-first.txt", "n" * 240 + "-second.txt"
    (workspace / first).write_text("the first file as the session left it\n")
    (workspace / second).write_text("the second file as the session left it\n")
    store = Store(tmp_path / "journals" / ".snapshots")
    tree = store.take(workspace, "s-20260101-000000-abcd").id
    files = store.files_of(tree)
    (workspace / first).write_text("changed since\n")
    (workspace / second).write_text("changed since\n")
    restore = [(name.encode(), *files[name.encode()]) for name in (first, second)]
    plan = Plan(at_seq=2, target=tree, before=tree, restore=restore, delete=[])
    assert apply(store, plan, workspace) == []
    assert (workspace / first).read_text() == "the first file as the session left it\n"
    assert (workspace / second).read_text() == "the second file as the session left it\n"
    assert sorted(os.listdir(workspace)) == sorted([first, second])


def test_a_folder_whose_fsync_fails_after_the_restores_is_an_error_not_a_rewind_taken_for_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wren_tui.snapshots import rewinding

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("as the session left it\n")
    store = Store(tmp_path / "journals" / ".snapshots")
    tree = store.take(workspace, "s-20260101-000000-abcd").id
    (workspace / "a.txt").write_text("changed since\n")
    plan = Plan(at_seq=2, target=tree, before=tree, restore=[(b"a.txt", *store.files_of(tree)[b"a.txt"])], delete=[])

    def failing(folder: Path) -> None:
        raise OSError(errno.EIO, "Input/output error", str(folder))

    monkeypatch.setattr(rewinding, "_fsync_folder", failing)
    with pytest.raises(OSError) as raised:
        apply(store, plan, workspace)
    assert raised.value.errno == errno.EIO
