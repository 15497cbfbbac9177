"""A small workspace's snapshot is written in this process (snapshots/gitfiles.py), not by `git add`.

What it writes must be exactly what git writes: for random workspaces changed step by step (new,
edited, deleted and renamed files, executables, links, files turned into folders and back, names
with spaces and bytes that are not UTF-8, .gitignore rules), each snapshot's tree is the tree
`git add -A && git write-tree` gives for the same files, `git fsck` finds the store whole, and git
itself reads the index this process wrote (`git diff-files` finds nothing changed).
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wren_tui.snapshots import gitfiles
from wren_tui.snapshots.store import BULK, IN_PROCESS, Store

NAMES = [b"a", b"b.txt", b"with space", b"caf\xc3\xa9", b"raw\xff", b"x.pyc", b"a-b", b"a.b"]
FOLDERS = [b"", b"a", b"src", b"src/deep", b"a b"]
CONTENT = [b"", b"one\n", b"two\n", b"a longer line of text\n" * 40, b"\0binary\x80"]

Step = tuple[str, int, int, int]
steps = st.lists(
    st.tuples(
        st.sampled_from(["write", "delete", "chmod", "link", "folder", "ignore"]),
        st.integers(0, len(FOLDERS) - 1),
        st.integers(0, len(NAMES) - 1),
        st.integers(0, len(CONTENT) - 1),
    ),
    min_size=1,
    max_size=12,
)


def _apply(ws: Path, step: Step) -> None:
    kind, folder, name, content = step
    where = os.path.join(os.fsencode(ws), FOLDERS[folder])
    path = os.path.join(where, NAMES[name])
    if kind == "ignore":
        (ws / ".gitignore").write_bytes(b"*.pyc\n" if content % 2 else b"")
        return
    if os.path.lexists(where) and not os.path.isdir(where):
        os.unlink(where)  # a file where a folder is wanted: the folder replaces it
    os.makedirs(where, exist_ok=True)
    if kind == "delete" or kind == "folder":
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
        if kind == "folder":  # the file becomes a folder holding one
            os.makedirs(path)
            with open(os.path.join(path, b"inner"), "wb") as f:
                f.write(CONTENT[content])
        return
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    if kind == "link":
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(CONTENT[content][:20].replace(b"\0", b"") or b"target", path)
    elif kind == "chmod" and os.path.isfile(path) and not os.path.islink(path):
        os.chmod(path, os.stat(path).st_mode ^ stat.S_IXUSR)
    else:
        if os.path.islink(path):
            os.unlink(path)
        with open(path, "wb") as f:
            f.write(CONTENT[content])


def _git_tree(store: Store, ws: Path, index: Path) -> str:
    """What git itself makes of the workspace: `git add -A` then `git write-tree`, on an index of its own."""
    store.git("add", "-A", "--", ".", work_tree=ws, index=index)
    return store.git("write-tree", work_tree=ws, index=index).decode().strip()


def git_commands(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, the git command of each process the store starts (its first word), in order."""
    ran: list[str] = []
    real = Store.git

    def counted(self: Store, *args: str, **kw: object) -> bytes:
        ran.append(args[0])
        return real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "git", counted)
    return ran


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=steps, later=st.lists(steps, min_size=1, max_size=4))
def test_a_snapshot_taken_in_process_is_the_tree_git_writes(
    tmp_path_factory: pytest.TempPathFactory, first: list[Step], later: list[list[Step]]
) -> None:
    root = tmp_path_factory.mktemp("gitfiles")
    ws = root / "ws"
    ws.mkdir()
    store = Store(root / "store")
    for batch in [first, *later]:
        for step in batch:
            _apply(ws, step)
        taken = store.take(ws, "s-1")
        assert taken.id == _git_tree(store, ws, root / "git-index")
        index = store.index_for("s-1", ws)
        # git reads the index written here: every entry's stat data matches the file (nothing to refresh).
        assert store.git("diff-files", "--name-only", "-z", work_tree=ws, index=index) == b""
        assert taken.files == len(gitfiles.read_index(index).entries)
    store.git("fsck", "--strict", "--no-dangling")


def test_a_small_workspace_is_snapshotted_without_starting_git_add(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print(1)\n")
    store = Store(tmp_path / "store")
    store.take(ws, "s-1")  # the store made, its git checked
    ran = git_commands(monkeypatch)
    (ws / "src" / "a.py").write_text("print(2)\n")
    taken = store.take(ws, "s-1")
    assert ran == ["ls-files"]  # the new paths (for what git must be kept away from); no add, no write-tree
    assert taken.changed == 1
    assert store.git("cat-file", "-p", f"{taken.id}:src/a.py") == b"print(2)\n"


def test_a_file_changed_in_the_second_its_index_was_written_is_read_again(tmp_path: Path) -> None:
    """The racy case: a same-size edit whose stat data the index cannot tell apart from what it holds."""
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "f.txt"
    target.write_bytes(b"before\n")
    store = Store(tmp_path / "store")
    first = store.take(ws, "s-1")
    index = store.index_for("s-1", ws)
    target.write_bytes(b"after!\n")  # the same size
    # As if the edit had fallen in the same tick as the hashing: the index holds the file's stat data now.
    known = gitfiles.read_index(index)
    st_now = os.lstat(target)
    entry = known.entries[b"f.txt"]
    gitfiles.write_index(index, {b"f.txt": gitfiles.Entry(gitfiles.stat_of(st_now, entry.mode), entry.oid)})
    # Written in the second the file was changed: racy, so the file is read again.
    os.utime(index, ns=(st_now.st_mtime_ns, st_now.st_mtime_ns))
    again = Store(store.path).take(ws, "s-1")
    assert again.id != first.id and again.changed == 1
    # And a later index is believed: the stat cache is what keeps a snapshot from reading every file.
    target.write_bytes(b"later!\n")
    st_now = os.lstat(target)
    entry = gitfiles.read_index(index).entries[b"f.txt"]
    gitfiles.write_index(index, {b"f.txt": gitfiles.Entry(gitfiles.stat_of(st_now, entry.mode), entry.oid)})
    os.utime(index, ns=(st_now.st_mtime_ns + 5 * 10**9,) * 2)
    believed = Store(store.path).take(ws, "s-1")
    assert believed.id == again.id and believed.changed == 0


def test_a_workspace_past_the_in_process_limit_goes_through_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(BULK):  # as many new files as make git write one pack
        (ws / f"f{n}").write_text(str(n))
    store = Store(tmp_path / "store")
    ran = git_commands(monkeypatch)
    taken = store.take(ws, "s-1")
    assert "add" in ran and "write-tree" in ran
    assert taken.id == _git_tree(store, ws, tmp_path / "git-index")
    assert any((store.path / "objects" / "pack").glob("*.pack"))  # the first snapshot's files as one pack
    monkeypatch.setattr("wren_tui.snapshots.store.IN_PROCESS", 10)
    assert IN_PROCESS > 10
    ran.clear()
    (ws / "f0").write_text("changed")
    assert store.take(ws, "s-1").changed == 1
    assert "add" in ran  # 64 entries, over the limit: git's stat loop
