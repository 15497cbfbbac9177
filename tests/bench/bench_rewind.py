"""`wren rewind` of a 10,000-file workspace where 10 files changed, against `git checkout` of the same change.

A session's journal names two snapshots of the workspace, before and after 10 of its files changed
(10,000 files of 2 KB). Ours: the whole `wren rewind --yes` command (a new process: its snapshot of
the workspace, the plan, the rewind event, the 10 files written and fsynced), to the point before
the change and back to the end, turn about. The baseline: the same workspace as a scratch git
repository with the two states as commits, `git checkout -q` of one then the other (a new process
each; git's default settings, no fsync). Both are checked to leave the same files. A second row
runs the same command inside this process (`wren_tui.cli.main`): the rewind without Python's start
and imports, which no Python command can beat a C program at.

The floor row is what any rewind in Python that keeps the safety rule must do, measured the same way
(a new process each time): Python's start with the rewind command's imports, one lstat of each of
the 10,000 files (how files changed by someone else are seen; by `find`, in C as git walks), and
the 10 files written beside themselves, fsynced and renamed over, their 10 folders fsynced. Our
command against it says how much is left to cut; the floor against `git checkout` says how close to
2x a Python rewind can get.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench import BenchRow, compare
from wren_tui.cli import main
from wren_tui.journal.events import ChatMessage, Message, RunStart, Snapshot
from wren_tui.journal.writer import JournalWriter
from wren_tui.snapshots.store import STORE, Store

FILES, SIZE, CHANGED = 10_000, 2_000, 10
SID = "s-20260101-000000-rwnd"
REPEAT = 5


def _workspace(ws: Path) -> None:
    for d in range(FILES // 100):
        folder = ws / f"pkg{d:02d}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"mod{f:02d}.py").write_bytes(os.urandom(SIZE // 2).hex().encode())


def _change(ws: Path) -> None:
    for i in range(CHANGED):
        with open(ws / f"pkg{i * 7:02d}" / "mod13.py", "ab") as f:
            f.write(b"# changed by the session\n")


def _state(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in ws.rglob("*.py")}


# The floor, in a new process: the rewind command's imports, one lstat a file, the safety rule's writes and fsyncs.
_FLOOR = """
import os, subprocess, sys, threading
import wren_tui.cli, wren_tui.cli.rewind
ws = sys.argv[1]
# One lstat a file, in C as git's own walk is (-newer stats each; nothing is newer than the workspace's folder).
subprocess.run(["find", ws, "-newer", ws, "-name", "*.none"], check=True, stdout=subprocess.DEVNULL)
def beside(name):
    path = os.path.join(ws, name)
    with open(path, "rb") as f:
        data = f.read()
    fd = os.open(path + ".floor", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.fsync(fd)
    os.close(fd)
    return path
def fsync_folder(folder):
    fd = os.open(folder, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
def at_once(work, items):  # as the rewind does: the fsyncs at once, then the renames, then the folders'
    threads = [threading.Thread(target=work, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
at_once(beside, sys.argv[2:])
for name in sys.argv[2:]:
    os.replace(os.path.join(ws, name) + ".floor", os.path.join(ws, name))
at_once(fsync_folder, {os.path.dirname(os.path.join(ws, n)) for n in sys.argv[2:]})
"""


def _git(env: dict[str, str], *args: str) -> str:
    return subprocess.run(["git", *args], env=env, check=True, capture_output=True, text=True).stdout.strip()


def run() -> list[BenchRow]:
    with tempfile.TemporaryDirectory(prefix="wren-bench-rewind-") as tmp:
        root = Path(tmp)
        ws, journals = root / "ws", root / "journals"
        _workspace(ws)
        store = Store(journals / STORE)
        before = store.take(ws, SID).id
        scratch = root / "scratch"
        subprocess.run(["cp", "-a", str(ws), str(scratch)], check=True)
        _change(ws)
        after = store.take(ws, SID).id
        with JournalWriter.create(journals / f"{SID}.jsonl", fsync="none") as writer:
            writer.append(RunStart(pid=1, cwd=str(ws), model="scripted", version="bench"))
            writer.append(Message(message=ChatMessage(role="user", content="change ten files")))  # 2
            writer.append(Snapshot(id=before, files=FILES, changed=0))
            writer.append(Message(message=ChatMessage(role="assistant", content="about to")))  # 4
            writer.append(Snapshot(id=after, files=FILES, changed=CHANGED))
            writer.append(Message(message=ChatMessage(role="user", content="thanks")))  # 6
        end_state = _state(ws)

        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_DIR=str(root / "scratch.git"), GIT_WORK_TREE=str(scratch), GIT_AUTHOR_NAME="b")
        env.update(GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
        _git(env, "init", "-q")
        _git(env, "add", "-A")
        _git(env, "commit", "-q", "-m", "before")
        first = _git(env, "rev-parse", "HEAD")
        _change(scratch)
        _git(env, "commit", "-q", "-am", "after")
        last = _git(env, "rev-parse", "HEAD")

        def rewind(seq: str) -> float:
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "wren_tui", "rewind", "--dir", str(journals), SID, seq, "--yes"],
                check=True,
                capture_output=True,
            )
            return time.perf_counter() - start

        def checkout(commit: str) -> float:
            start = time.perf_counter()
            subprocess.run(["git", "checkout", "-q", commit], env=env, check=True, capture_output=True)
            return time.perf_counter() - start

        def in_process(seq: str) -> float:
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["rewind", "--dir", str(journals), SID, seq, "--yes"]) == 0
            return time.perf_counter() - start

        changed = [f"pkg{i * 7:02d}/mod13.py" for i in range(CHANGED)]

        def floor() -> float:  # rewrites the changed files with their own bytes: the workspace stays as it is
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", _FLOOR, str(ws), *changed], check=True, capture_output=True)
            return time.perf_counter() - start

        ours = base = inside = least = float("inf")
        for _ in range(REPEAT):
            least = min(least, floor())
            inside = min(inside, in_process("2"), in_process("6"))
            ours = min(ours, rewind("2"))
            base = min(base, checkout(first))
            assert _state(ws) == _state(scratch) != end_state, "not the same files"
            ours = min(ours, rewind("6"))
            base = min(base, checkout(last))
            assert _state(ws) == _state(scratch) == end_state, "not the same files"
    return [
        compare(
            f"wren rewind of {FILES:,} files, {CHANGED} changed (the whole command) vs git checkout",
            ours,
            base,
            at_most=2.0,
        ),
        compare(
            f"wren rewind of {FILES:,} files, {CHANGED} changed, without Python's start vs git checkout",
            inside,
            base,
            at_most=2.0,
        ),
        compare(
            f"the floor (Python's start with the rewind's imports, an lstat of each of {FILES:,} files, "
            f"{CHANGED} files and their folders fsynced) vs git checkout",
            least,
            base,
        ),
        compare("wren rewind (the whole command) vs that floor", ours, least),
    ]
