"""`wren blame` of a 2,000-line file changed by 200 events, against `git blame` of the same history.

A session's journal names 201 snapshots of a workspace holding the file: the first, then one
after each of 200 commands, each of which rewrote 10 lines, inserted 2 and deleted 1 (a seeded
random choice). The baseline: a scratch git repository with the same 201 versions as commits,
`git blame FILE` (a new process). Ours: the whole `wren blame --json` command (a new process), and
the same inside this process (`wren_tui.cli.main`). Both must give each line the same version.
Every process starts from compiled bytecode, as an installed wren does (pip compiles it).

The floor row is what any blame in Python reading the snapshot store must do, in a new process:
Python's start with the blame command's imports, and one `git cat-file --batch` inflating each of
the 201 versions of the file (what `git blame` reads too; its output not even read). Our command
against it says how much is left to cut (the journal read, the line diffs, the answer written); the
floor against `git blame` says how close to it a Python blame can get.
"""

from __future__ import annotations

import compileall
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import wren_tui
from tests.bench import BenchRow, compare
from wren_tui.cli import main
from wren_tui.journal.events import ChatMessage, Message, RunStart, Snapshot, ToolCall, ToolStart
from wren_tui.journal.writer import JournalWriter
from wren_tui.snapshots.store import STORE, Store

LINES, EVENTS = 2_000, 200
SID = "s-20260101-000000-blam"
REPEAT = 7  # best of 7 a side: the machine it runs on is shared, and best of 3 still moved the ratio by 0.4
# The floor, in a new process: the blame command's imports, then every version of the file read by one cat-file.
_FLOOR = """
import subprocess, sys
import wren_tui.cli, wren_tui.cli.blame, wren_tui.cli.console, wren_tui.cli.exits, wren_tui.agent.errors
import wren_tui.snapshots.blame, wren_tui.journal.reader, wren_tui.snapshots.rewinding, wren_tui.journal.store
subprocess.run(["git", "cat-file", "--batch"], input=sys.stdin.buffer.read(), check=True, stdout=subprocess.DEVNULL)
"""


def _versions() -> list[list[str]]:
    rng = random.Random(35)
    lines = [f"line {i} of the original file\n" for i in range(LINES)]
    found = [list(lines)]
    for event in range(1, EVENTS + 1):
        for _ in range(10):
            at = rng.randrange(len(lines))
            lines[at] = f"line rewritten by event {event} at {at}\n"
        for _ in range(2):
            lines.insert(rng.randrange(len(lines)), f"line inserted by event {event}\n")
        del lines[rng.randrange(len(lines))]
        found.append(list(lines))
    return found


def run() -> list[BenchRow]:
    compileall.compile_dir(Path(wren_tui.__file__).parent, quiet=1)  # as an install leaves it: no module compiled
    versions = _versions()
    with tempfile.TemporaryDirectory(prefix="wren-bench-blame-") as tmp:
        root = Path(tmp)
        ws, journals, scratch = root / "ws", root / "journals", root / "scratch"
        ws.mkdir()
        scratch.mkdir()
        store = Store(journals / STORE)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
        subprocess.run(["git", "init", "-q"], cwd=scratch, env=env, check=True)
        trees: list[str] = []
        with JournalWriter.create(journals / f"{SID}.jsonl", fsync="none") as writer:
            writer.append(RunStart(pid=1, cwd=str(ws), model="scripted", version="bench"))
            writer.append(Message(message=ChatMessage(role="user", content="change it 200 times")))
            for number, lines in enumerate(versions):
                text = "".join(lines)
                (ws / "f.txt").write_text(text)
                (scratch / "f.txt").write_text(text)
                subprocess.run(["git", "add", "f.txt"], cwd=scratch, env=env, check=True)
                subprocess.run(["git", "commit", "-q", "-m", str(number)], cwd=scratch, env=env, check=True)
                call = f"c{number + 1}" if number < EVENTS else None
                trees.append(store.take(ws, SID).id)
                writer.append(Snapshot(id=trees[-1], files=1, changed=1, before=call))
                if call is not None:
                    command = ToolCall(id=call, name="run_command", args='{"command": "edit"}')
                    writer.append(Message(message=ChatMessage(role="assistant", content="", tool_calls=[command])))
                    writer.append(ToolStart(id=call, name="run_command", read_only=False, approval="approved"))
                    writer.append(Message(message=ChatMessage(role="tool", content="ok", tool_call_id=call)))
            writer.append(Message(message=ChatMessage(role="assistant", content="done")))
        args = ["blame", "--dir", str(journals), "--session", SID, str(ws / "f.txt"), "--json"]

        def ours() -> tuple[float, bytes]:
            start = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "wren_tui", *args], check=True, capture_output=True).stdout
            return time.perf_counter() - start, out

        def inside() -> float:
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.TextIOWrapper(io.BytesIO())):
                assert main(args) == 0
            return time.perf_counter() - start

        def git() -> tuple[float, str]:
            start = time.perf_counter()
            out = subprocess.run(
                ["git", "blame", "--line-porcelain", "f.txt"], cwd=scratch, env=env, check=True, capture_output=True
            ).stdout.decode()
            return time.perf_counter() - start, out

        asked = "".join(f"{tree}:f.txt\n" for tree in trees).encode()
        floor_env = {**env, "GIT_DIR": str(store.path)}

        def floor() -> float:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", _FLOOR], input=asked, env=floor_env, check=True)
            return time.perf_counter() - start

        best = [float("inf")] * 4
        for _ in range(REPEAT):
            (t_ours, said), t_inside, (t_git, blamed), t_floor = ours(), inside(), git(), floor()
            best = [min(best[0], t_ours), min(best[1], t_inside), min(best[2], t_git), min(best[3], t_floor)]
        # The same version for every line: git's commit summary is the version's number.
        theirs = [int(line.split(" ", 1)[1]) for line in blamed.splitlines() if line.startswith("summary ")]
        mine = [0 if row["call"] is None else int(row["call"][1:]) for row in json.loads(said)]
        agree = sum(a == b for a, b in zip(mine, theirs, strict=True)) / len(theirs)
        assert agree == 1.0, f"wren blame and git blame agree on {agree:.2%} of the lines only"
    return [
        compare(
            f"wren blame, {LINES:,} lines, {EVENTS} events (the whole command) vs git blame",
            best[0],
            best[2],
            at_most=2.0,
        ),
        compare(
            f"wren blame, {LINES:,} lines, {EVENTS} events, without Python's start vs git blame",
            best[1],
            best[2],
            at_most=2.0,
        ),
        compare(
            f"the floor (Python's start with blame's imports, the {EVENTS + 1} versions read by one cat-file) "
            "vs git blame",
            best[3],
            best[2],
        ),
        compare("wren blame (the whole command) vs that floor", best[0], best[3]),
    ]
