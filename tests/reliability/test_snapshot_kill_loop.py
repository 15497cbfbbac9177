"""kill -9 at random moments of a run that snapshots a changing workspace: no journal names a snapshot it lacks.

The model is test_kill_loop.py: a child runs `wren run` and reports each durable seq on a pipe; the
parent SIGKILLs it after a random number of them. The workspace changes under the run (the agent's
edit, and a shell command that writes, renames and deletes files and sets an exec bit and a link).
After each kill every snapshot the journal names is read back whole from the store; then the
session is resumed to its end, and every clean point of it is forked with --workspace and compared,
byte for byte, mode and link, with the state the test itself took outside Wren: the workspace as it
was before the run (the user's point) and as it is at the end (the final answer's point). A point
whose run was killed before its snapshot was taken is refused with a sentence, never restored wrong.
20 kills by default; WREN_KILLS=N for more.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.agent.test_snapshot_forks import state_of
from tests.reliability.test_kill_loop import ENV, check_after_kill, kill_after
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import Message, Snapshot
from wren_tui.journal.reader import read_events
from wren_tui.journal.replay import replay
from wren_tui.journal.store import new_session_id
from wren_tui.snapshots.store import STORE, Store

TASK = "run `mkdir -p out && printf 'a\\n' > out/a && mv README.md out/README && chmod +x out/a && ln -s out/a link`"
KILLS = int(os.environ.get("WREN_KILLS") or 20)
RUN_EVENTS = 14
PACE = "0.02"


def wren(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wren_tui", *args],
        cwd=cwd,
        env=ENV,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_and_kill(workspace: Path, journals: Path, sid: str, after: int) -> list[int]:
    """`wren run TASK` in the workspace (journals outside it), SIGKILLed after `after` reported seqs."""
    args = ["run", "--dir", str(journals), "--yes", "--pace-factor", PACE, "--session-id", sid, TASK]
    return [int(n) for n in kill_after(args, workspace, after)[0].split()]


@pytest.mark.slow
def test_kill_9_never_leaves_a_journal_naming_a_snapshot_the_store_lacks_and_every_point_forks_back(
    tmp_path: Path,
) -> None:
    seed = int(os.environ.get("WREN_KILL_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    tally: Counter[str] = Counter()
    journals = tmp_path / "journals"
    store = Store(journals / STORE)
    for n in range(KILLS):
        workspace = prepare_workspace(tmp_path / f"ws{n}")
        initial = state_of(workspace)
        sid = new_session_id()
        journal = journals / f"{sid}.jsonl"
        after = rng.randint(0, RUN_EVENTS)
        context = f"kill {n + 1}/{KILLS} (seed {seed}, after {after} seqs)"
        reported = run_and_kill(workspace, journals, sid, after)
        events = check_after_kill(journal, reported, context)
        named = [e.id for e in events if isinstance(e, Snapshot) and e.id]
        for tree in named:
            store.check_whole(tree)  # every byte of every object it needs, read back
        tally[f"{len(named)} snapshots named"] += 1
        if not journal.exists() or not any(isinstance(e, Message) for e in events):
            tally["killed before the task was recorded"] += 1
            continue
        resumed = wren(["resume", "--dir", str(journals), "--yes", sid], workspace)
        if resumed.returncode == 3:  # the shell command's outcome is unknown: continue saying so
            resumed = wren(["resume", "--dir", str(journals), "--yes", "--assume-failed", sid], workspace)
        assert resumed.returncode in (0, 1), f"{context}: resume: {resumed.stderr}"
        final = read_events(journal)
        assert final.stop is None, context
        for tree in (e.id for e in final.events if isinstance(e, Snapshot) and e.id):
            store.check_whole(tree)
        end = state_of(workspace)
        messages = {e.seq: e.message for e in final.events if isinstance(e, Message)}
        points = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], tmp_path).stdout)
        if not replay(final.events).messages or not points:
            continue
        for point in points:
            target = tmp_path / f"fork{n}-{point['seq']}"
            forked = wren(
                ["fork", "--dir", str(journals), sid, str(point["seq"]), "--workspace", str(target)], tmp_path
            )
            role = messages[point["seq"]].role
            if forked.returncode != 0:
                # Only a final answer whose run was killed before the turn's snapshot has none; it says so.
                assert role == "assistant", f"{context}: seq {point['seq']}: {forked.stderr}"
                assert "no snapshot was recorded at seq" in forked.stderr, f"{context}: {forked.stderr}"
                assert not target.exists() or not any(target.iterdir())
                tally["a point without its snapshot, refused"] += 1
                continue
            want = initial if role == "user" and point["seq"] == points[0]["seq"] else end
            assert state_of(target) == want, f"{context}: the files at seq {point['seq']} ({role})"
            tally[f"{role} point restored"] += 1
    print(f"\n{KILLS} kills (seed {seed}): {dict(tally)}")
    assert tally["user point restored"] >= KILLS // 2
