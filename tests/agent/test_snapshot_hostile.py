"""Hostile workspaces: each odd entry is stored as it is or listed as not covered, never followed, never a crash.

And a full disk under the store stops the call before it runs, with one sentence, the journal readable.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.test_snapshot_forks import state_of
from tests.conftest import run_wren
from wren_tui.journal.events import Error, RunEnd, Snapshot, ToolEnd, ToolStart
from wren_tui.journal.reader import read_events
from wren_tui.snapshots.store import STORE, Store


def _git_init(folder: Path, commit: bool) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="u", GIT_AUTHOR_EMAIL="u@x", GIT_COMMITTER_NAME="u", GIT_COMMITTER_EMAIL="u@x")
    subprocess.run(["git", "init", "-q"], cwd=folder, env=env, check=True)
    if commit:
        subprocess.run(["git", "add", "-A"], cwd=folder, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", "x"], cwd=folder, env=env, check=True)


def test_odd_entries_are_stored_as_they_are_or_listed_and_a_fork_brings_back_the_stored_ones(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("never read into a snapshot\n")
    (workspace / "to-outside").symlink_to(outside / "secret.txt")
    (workspace / "dir-outside").symlink_to(outside)
    (workspace / "dangling").symlink_to(tmp_path / "nothing-here")
    os.mkfifo(workspace / "a-fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(workspace / "a-socket"))
    (workspace / "zero").write_bytes(b"")
    (workspace / "new\nline.txt").write_text("newline in the name\n")
    (workspace / os.fsdecode(b"bad-\xff-utf8.txt")).write_text("invalid UTF-8 in the name\n")
    (workspace / "script.sh").write_text("#!/bin/sh\n")
    (workspace / "script.sh").chmod(0o755)
    nested = workspace / "vendor"
    nested.mkdir()
    (nested / "lib.py").write_text("x = 1\n")
    _git_init(nested, commit=True)
    empty_repo = workspace / "scratch"
    empty_repo.mkdir()
    (empty_repo / "f").write_text("y\n")
    _git_init(empty_repo, commit=False)
    (workspace / ".gitignore").write_text("*.log\nbuild/\n")
    (workspace / "debug.log").write_text("ignored\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_bytes(b"\0" * 10)
    expected = state_of(workspace)

    journals = journals_of(workspace)
    try:
        proc = run_wren(["run", "--yes", "--dir", str(journals), "run `true`"], cwd=workspace, timeout=60)
    finally:
        sock.close()
    assert proc.returncode == 0, proc.stderr
    events = events_of(only_journal(journals))
    snaps = [e for e in events if isinstance(e, Snapshot)]
    assert [s.before is None for s in snaps] == [False, True]
    listed = "\n".join(snaps[-1].not_covered or [])
    for line in (
        "vendor/ (a git repository of its own: not covered)",
        "scratch/ (a git repository of its own: not covered)",
        "a-fifo (a FIFO: not covered)",
        "a-socket (a socket: not covered)",
        "debug.log (ignored by .gitignore: not covered)",
        "build/ (ignored by .gitignore: not covered)",
    ):
        assert line in listed
    assert snaps[-1].not_covered_count == 6
    # Before a call (kept quick) what the snapshot itself met: the repositories; the turn's end lists everything.
    assert snaps[0].not_covered_count == 2

    store = Store(journals / STORE)
    files = store.files_of(snaps[-1].id)
    assert files[b"to-outside"][0] == "120000" and files[b"dir-outside"][0] == "120000"
    assert store.git("cat-file", "blob", files[b"to-outside"][1]) == os.fsencode(outside / "secret.txt")
    assert not any(b"secret" in name for name in files)
    assert files[b"script.sh"][0] == "100755" and files[b"zero"][1] == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert b"new\nline.txt" in files and b"bad-\xff-utf8.txt" in files

    target = tmp_path / "fork"
    point = str(max(e.seq for e in events if isinstance(e, ToolEnd)) + 2)  # the final answer
    proc = run_wren(["fork", "--dir", str(journals), only_journal(journals).stem, point, "--workspace", str(target)],
                    cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    restored = state_of(target)
    not_stored = {"debug.log", "build/out.o", "vendor/lib.py", "scratch/f"}
    assert restored == {k: v for k, v in expected.items() if k not in not_stored and not k.startswith("vendor/.git")}
    assert not (target / "a-fifo").exists() and (target / "dangling").is_symlink()


def test_a_file_that_changes_while_it_is_snapshotted_is_stored_as_one_of_its_states(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for i in range(200):
        (workspace / f"f{i}.txt").write_text(f"{i}\n" * 50)
    growing = workspace / "growing.txt"
    growing.write_bytes(b"")
    stop = threading.Event()

    def write() -> None:
        line = 0
        while not stop.is_set():
            with open(growing, "ab") as f:
                f.write(b"%08d\n" % line)
            line += 1

    writer = threading.Thread(target=write)
    writer.start()
    store = Store(tmp_path / STORE)
    try:
        taken = [store.take(workspace, "s-20260101-000000-abcd") for _ in range(8)]
    finally:
        stop.set()
        writer.join()
    final = growing.read_bytes()
    for snap in taken:
        store.check_whole(snap.id)
        held = store.git("cat-file", "blob", store.files_of(snap.id)[b"growing.txt"][1])
        assert final.startswith(held)  # a prefix: what was there at some moment, never bytes from nowhere
    assert {s.files for s in taken} == {201}


@contextlib.contextmanager
def small_disk(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"a small filesystem cannot be mounted here ({done.stderr.decode().strip()})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def test_a_full_disk_under_the_store_stops_the_call_before_it_runs_with_one_sentence(
    workspace: Path, tmp_path: Path
) -> None:
    journals = journals_of(workspace)
    journals.mkdir()
    with small_disk(tmp_path / "small", "1m") as small:
        (journals / STORE).symlink_to(small)
        (workspace / "big.bin").write_bytes(os.urandom(3 << 20))  # more than the store's disk can take
        proc = run_wren(["run", "--yes", "--dir", str(journals), "run `touch made-by-the-call`"], cwd=workspace)
        assert proc.returncode == 1
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, proc.stderr
        # A small workspace is written in-process, a big one by git: each says what failed.
        said = f"wren: stopped: the workspace could not be snapshotted into {journals / STORE} ("
        assert lines[0].startswith((said + "git add failed: ", said + "writing its objects failed: ")), lines[0]
        assert "out of diskspace" in lines[0].lower() or "no space left" in lines[0].lower()
        assert not (workspace / "made-by-the-call").exists()
        read = read_events(only_journal(journals))
        assert read.stop is None
        assert not any(isinstance(e, ToolStart) for e in read.events)
        assert any(isinstance(e, Error) and "snapshot failed" in e.message for e in read.events)
        assert isinstance(read.events[-1], RunEnd) and read.events[-1].reason == "error"
        assert not any(isinstance(e, Snapshot) and e.id for e in read.events)
