"""Workspace snapshots in a run: journaled before each call with side effects and at each turn's end.

Every `wren` here is a subprocess, as a person runs it. The store is read back with git itself.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.conftest import run_wren
from wren_tui.agent.snapshotting import NO_SNAPSHOTS
from wren_tui.journal.events import Error, Message, RunEnd, Snapshot, ToolEnd, ToolStart
from wren_tui.snapshots.store import STORE, Store

FIX = "run the tests, find the failing case and fix it"


def run(workspace: Path, *extra: str, env: dict[str, str] | None = None, task: str = FIX) -> Path:
    journals = journals_of(workspace)
    proc = run_wren(["run", "--yes", "--dir", str(journals), *extra, task], cwd=workspace, env=env)
    assert proc.returncode == 0, proc.stderr
    return only_journal(journals)


def test_a_run_snapshots_before_each_call_with_side_effects_and_at_the_end_of_its_turn(workspace: Path) -> None:
    journal = run(workspace)
    events = events_of(journal)
    starts = [(i, e) for i, e in enumerate(events) if isinstance(e, ToolStart)]
    assert any(not e.read_only for _, e in starts) and any(e.read_only for _, e in starts)
    for i, start in starts:
        before = events[i - 1]
        if start.read_only:
            assert not isinstance(before, Snapshot), "a read-only call is not snapshotted"
        else:
            # Right before its tool_start: the objects were durable before this line was written.
            assert isinstance(before, Snapshot) and before.before == start.id and before.id
    last_message = max(i for i, e in enumerate(events) if isinstance(e, Message))
    ending = [e for e in events[last_message:] if isinstance(e, Snapshot)]
    assert len(ending) == 1 and ending[0].before is None
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "done"

    store = Store(journal.parent / STORE)
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o700
    snaps = [e for e in events if isinstance(e, Snapshot)]
    for snap in snaps:
        store.check_whole(snap.id)
    # The edit between the snapshots is what changed: the first holds the bug, the last the fix.
    first, last = snaps[0], snaps[-1]
    assert first.changed == first.files > 0
    assert store.changed_between(first.id, last.id) == [b"stats/core.py"]
    assert last.changed == 0  # nothing changed between the last call's snapshot and the turn's end
    files = store.files_of(last.id)
    # Every file but what the workspace's .gitignore leaves out (the tests' __pycache__), which is listed.
    kept = [p for p in _files(workspace) if "__pycache__" not in p.parts]
    assert set(files) == {p.relative_to(workspace).as_posix().encode() for p in kept}
    if len(kept) < len(_files(workspace)):
        assert "stats/__pycache__/ (ignored by .gitignore: not covered)" in (last.not_covered or [])
    blob = files[b"stats/core.py"][1]
    assert store.git("cat-file", "blob", blob) == (workspace / "stats" / "core.py").read_bytes()


def test_no_snapshots_turns_them_off_and_the_journal_says_so(workspace: Path) -> None:
    journal = run(workspace, "--no-snapshots")
    snaps = [e for e in events_of(journal) if isinstance(e, Snapshot)]
    assert len(snaps) == 1 and not snaps[0].id
    assert snaps[0].off == NO_SNAPSHOTS and "--no-snapshots" in NO_SNAPSHOTS
    assert not (journal.parent / STORE).exists()


def test_without_git_snapshots_are_off_with_one_sentence_and_the_run_goes_on(workspace: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    journal = run(workspace, env={"PATH": str(bare)})
    snaps = [e for e in events_of(journal) if isinstance(e, Snapshot)]
    assert [s.off for s in snaps] == [
        "snapshots are off: the git program was not found on PATH (Wren keeps workspace snapshots with git); "
        "a fork of this run restores the conversation only"
    ]
    assert not (journal.parent / STORE).exists()


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="u", GIT_AUTHOR_EMAIL="u@x", GIT_COMMITTER_NAME="u", GIT_COMMITTER_EMAIL="u@x")
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _tree_state(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every path under folder -> (digest of its bytes or link, mode, mtime in ns)."""
    found: dict[str, tuple[str, int, int]] = {}
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            path = Path(root, name)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                digest = os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                digest = ""
            found[str(path.relative_to(folder))] = (digest, st.st_mode, st.st_mtime_ns)
    return found


def test_the_users_own_git_is_never_touched_even_with_git_variables_set(workspace: Path, tmp_path: Path) -> None:
    _git(workspace, "init", "-q")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-qm", "first")
    (workspace / "README").write_text("stashed\n")
    _git(workspace, "add", "README")
    _git(workspace, "stash", "-q")
    hooks = workspace / ".git" / "hooks"
    for hook in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\necho ran >> {tmp_path / 'hook-ran'}\n")
        (hooks / hook).chmod(0o755)
    (workspace / "new.txt").write_text("untracked\n")
    before = _tree_state(workspace / ".git")
    status = _git(workspace, "status", "--porcelain")
    # A person's shell pointing git at their repository must not lead the snapshots there.
    env = {
        "GIT_DIR": str(workspace / ".git"),
        "GIT_WORK_TREE": str(workspace),
        "GIT_INDEX_FILE": str(workspace / ".git" / "index"),
        "GIT_OBJECT_DIRECTORY": str(workspace / ".git" / "objects"),
    }
    journal = run(workspace, env=env)
    assert _tree_state(workspace / ".git") == before
    assert not (tmp_path / "hook-ran").exists()
    # The only change git sees is the agent's fix: its index and stash are as they were.
    assert set(_git(workspace, "status", "--porcelain").splitlines()) == {*status.splitlines(), " M stats/core.py"}
    assert _git(workspace, "stash", "list").count("\n") == 1
    snaps = [e for e in events_of(journal) if isinstance(e, Snapshot)]
    files = Store(journal.parent / STORE).files_of(snaps[-1].id)
    assert b"new.txt" in files and not any(name.split(b"/")[0] == b".git" for name in files)


def test_a_snapshot_that_cannot_be_taken_stops_the_call_before_it_runs(workspace: Path) -> None:
    journals = journals_of(workspace)
    journals.mkdir()
    # The store cannot be made: a file where its folder would be.
    (journals / STORE).write_text("not a folder\n")
    proc = run_wren(["run", "--yes", "--dir", str(journals), "run `touch made-by-the-call`"], cwd=workspace, env=None)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"wren: stopped: the workspace could not be snapshotted into {journals / STORE} ("
    )
    assert not (workspace / "made-by-the-call").exists()
    events = events_of(only_journal(journals))
    assert not any(isinstance(e, ToolStart) for e in events)
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert len(ends) == 1 and ends[0].ok is False
    assert any(isinstance(e, Error) and e.message.startswith("snapshot failed: ") for e in events)
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "error"


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if (p.is_file() or p.is_symlink()) and ".git" not in p.parts]


def test_journals_inside_the_workspace_are_never_part_of_its_snapshots(workspace: Path) -> None:
    proc = run_wren(["run", "--yes", "--dir", "journals", FIX], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    journal = only_journal(workspace / "journals")
    snaps = [e for e in events_of(journal) if isinstance(e, Snapshot)]
    store = Store(journal.parent / STORE)
    for snap in snaps:
        assert not any(name.startswith(b"journals") for name in store.files_of(snap.id))
    listed = snaps[-1].not_covered or []
    assert "journals/ (Wren's journals: not covered)" in listed
    assert all(e == "journals/ (Wren's journals: not covered)" or "ignored by .gitignore" in e for e in listed)
