"""kill -9 at every step of a `wren rewind`: each path holds its old bytes or its new ones, never half, and
the next `wren rewind` finishes the rewind.

A child `wren rewind SID SEQ --yes --seq-fd W` reports each step on a pipe once it is done (the
rewind event journaled, then each path deleted or replaced); the parent SIGKILLs it after the first
k of them, for every k until the rewind ends unkilled. After each kill the workspace is compared,
path by path (bytes, exec bit, link target), with the two states the test took itself outside
Wren: the files before the rewind and the files at SEQ. Killed before its event was journaled, the
workspace is untouched. Cut short after it, `wren resume` and `wren chat --resume` refuse (exit 3,
nothing written) and `wren rewind SID --finish` finishes it: exactly the files at SEQ, no temporary
file left. A rewind to the session's last point puts the workspace back for the next kill.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.agent.test_snapshot_forks import State, state_of
from tests.reliability.test_kill_loop import kill_after, wren
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import Rewind
from wren_tui.journal.reader import read_events

TURNS = [
    "run the tests, find the failing case and fix it",
    "run `printf 'one\\ntwo\\n' > notes.txt && rm README.md && ln -s stats/core.py core-link && chmod +x tests/t.sh`",
    "run `mkdir -p deep/er && printf hi > deep/er/f && mv notes.txt deep/notes.txt && rm stats/__init__.py`",
    "run `printf 'x%.0s' $(seq 1 300000) > big.bin && ln -sf deep/er/f out-link`",
]


def rewind_and_kill(workspace: Path, args: list[str], after: int) -> tuple[list[str], int | None]:
    """`wren ARGS --seq-fd W`, SIGKILLed after `after` reported steps; the steps, and its exit status if it ended."""
    data, ended = kill_after(args, workspace, after)
    return data.decode().splitlines(), ended


def without_temps(state: State) -> tuple[State, list[str]]:
    temps = [p for p in state if os.path.basename(p).startswith(".wren-rewind-")]
    return {p: v for p, v in state.items() if p not in temps}, temps


@pytest.mark.slow
def test_kill_9_at_every_step_of_a_rewind_leaves_each_path_old_or_new_and_the_next_rewind_finishes_it(
    tmp_path: Path,
) -> None:
    workspace = prepare_workspace(tmp_path / "ws")
    journals = tmp_path / "journals"
    dir_ = ["--dir", str(journals)]
    (workspace / "tests" / "t.sh").write_text("#!/bin/sh\necho t\n")
    states: list[State] = []
    sid = ""
    for number, task in enumerate(TURNS):
        states.append(state_of(workspace))
        args = ["run", *dir_, "--yes", task] if number == 0 else ["resume", *dir_, "--yes", sid, task]
        proc = wren(args, workspace)
        assert proc.returncode == 0, proc.stderr
        sid = sid or next(journals.glob("*.jsonl")).stem
    end = state_of(workspace)
    journal = journals / f"{sid}.jsonl"
    points = json.loads(wren(["fork", *dir_, sid, "--json"], tmp_path).stdout)
    first, last = points[0]["seq"], points[-1]["seq"]
    target = states[0]
    changing = {p for p in set(target) | set(end) if target.get(p) != end.get(p)}
    assert len(changing) >= 8  # edits, new files, deletions, a rename, links, exec bits, a 300 KB file
    kills = 0
    for after in range(0, 100):
        assert state_of(workspace) == end
        rewinds_before = sum(isinstance(e, Rewind) for e in read_events(journal).events)
        steps, ended = rewind_and_kill(workspace, ["rewind", *dir_, sid, str(first), "--yes"], after)
        context = f"killed after {after} steps ({steps})"
        result = read_events(journal)
        assert result.stop is None or result.torn, f"{context}: {result.stop}"
        journaled = sum(isinstance(e, Rewind) for e in result.events) > rewinds_before
        now, temps = without_temps(state_of(workspace))
        if not journaled:
            assert now == end and not temps, f"{context}: files changed before the rewind was journaled"
        for path in set(now) | changing:
            assert now.get(path) in (end.get(path), target.get(path)), f"{context}: {path} is neither old nor new"
        assert set(now) <= set(end) | set(target), f"{context}: {set(now) - set(end) - set(target)}"
        if ended is not None:
            assert ended == 0 and now == target and not temps, context
            break
        kills += 1
        if journaled and now != target:
            # Resume refuses to go on in a half-rewound workspace, writing nothing; `--finish` finishes it.
            lines = journal.read_bytes()
            resumed = wren(["resume", *dir_, "--yes", sid, "go on"], tmp_path)
            assert resumed.returncode == 3 and "was cut short" in resumed.stderr, f"{context}: {resumed.stderr}"
            assert journal.read_bytes() == lines, context
            chat = wren(["chat", *dir_, "--yes", "--resume", sid], tmp_path)
            assert chat.returncode == 3 and "was cut short" in chat.stderr, f"{context}: {chat.stderr}"
            assert journal.read_bytes() == lines, context
            finished = wren(["rewind", *dir_, sid, "--finish"], tmp_path)
            assert "was cut short: finished it" in finished.stdout, f"{context}: {finished.stdout}{finished.stderr}"
        else:
            # Nothing to finish: the same command again rewinds to the point (the files were left as they were).
            again = wren(["rewind", *dir_, sid, str(first), "--yes"], tmp_path)
            assert again.returncode == 0 and "cut short" not in again.stdout, f"{context}: {again.stderr}"
        assert state_of(workspace) == target, context
        back = wren(["rewind", *dir_, sid, str(last), "--yes"], tmp_path)
        assert back.returncode == 0, f"{context}: {back.stderr}"
    else:
        pytest.fail("the rewind never ended unkilled")
    assert kills >= len(changing)  # a kill after the journal line and after each path
