"""kill -9 at random moments of a scripted run, then resume: nothing reported is lost, nothing is guessed.

A child runs `wren run` on a fresh demo workspace and writes each seq to a pipe once it is durable.
The parent kills it (SIGKILL) after a random number of reported seqs, then checks that the journal
reads to a prefix with at most a torn tail, that every reported seq is in it, and that `wren resume`
either continues to the end or refuses with exit 3 naming the call, never running a side-effecting
call a second time. 50 kills by default; WREN_TORTURE=1 makes it 1000 (or WREN_KILLS=N).
"""

from __future__ import annotations

import os
import random
import select
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import Event, Message, RunEnd, ToolStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.replay import replay
from wren_tui.journal.store import new_session_id

FIX = "run the tests, find the failing case and fix it"
KILLS = int(os.environ.get("WREN_KILLS") or (1000 if os.environ.get("WREN_TORTURE") else 50))
# Events in one whole run of FIX; kills are spread over all of them, and over startup (0).
RUN_EVENTS = 32
PACE = "0.02"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}


@dataclass
class Tally:
    outcomes: Counter[str] = field(default_factory=Counter)
    killed_at: set[int] = field(default_factory=set)


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


def kill_after(args: list[str], cwd: Path, after: int) -> tuple[bytes, int | None]:
    """`wren ARGS --seq-fd W` in `cwd`, SIGKILLed once it reported `after` lines on W (or when it ended).

    Every line it reported (what it wrote before it died is still in the pipe), and its exit status if it
    ended on its own before the chosen moment (None: killed there).
    """
    read_end, write_end = os.pipe()
    child = subprocess.Popen(
        [sys.executable, "-m", "wren_tui", *args, "--seq-fd", str(write_end)],
        cwd=cwd,
        env=ENV,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(write_end,),
    )
    os.close(write_end)
    data = b""
    deadline = time.monotonic() + 60
    try:
        while data.count(b"\n") < after:
            ready, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, "the child reported nothing for 60 s"
            chunk = os.read(read_end, 4096)
            if not chunk:
                break  # it ended before the chosen moment
            data += chunk
        ended = data.count(b"\n") < after
        if not ended:
            child.kill()
        child.wait(30)  # a child that closed its end of the pipe is exiting: its own status, not a kill's
        while chunk := os.read(read_end, 4096):
            data += chunk
    finally:
        child.kill()
        child.wait(30)
        os.close(read_end)
    return data, (child.returncode if ended else None)


def run_and_kill(workspace: Path, sid: str, after: int) -> list[int]:
    """Start the run, SIGKILL it once `after` seqs were reported (or when it ends); every reported seq."""
    args = ["run", "--dir", "journals", "--yes", "--pace-factor", PACE, "--session-id", sid, FIX]
    return [int(n) for n in kill_after(args, workspace, after)[0].split()]


def side_effect_starts(events: list[Event]) -> Counter[str]:
    return Counter(e.id for e in events if isinstance(e, ToolStart) and not e.read_only and e.approval != "denied")


def check_after_kill(journal: Path, reported: list[int], context: str) -> list[Event]:
    if not journal.exists():
        assert reported == [], f"{context}: seqs {reported} were reported but there is no journal"
        return []
    result = read_events(journal)
    assert result.stop is None or result.torn, f"{context}: the journal is corrupt: {result.stop}"
    seqs = [e.seq for e in result.events]
    assert seqs == list(range(1, len(seqs) + 1)), f"{context}: seqs are not contiguous: {seqs}"
    missing = sorted(set(reported) - set(seqs))
    assert not missing, f"{context}: reported as appended but not in the journal: {missing}"
    return result.events


def check_resume(workspace: Path, journal: Path, events: list[Event], context: str, tally: Tally) -> None:
    uncertain = replay(events).uncertain_calls
    before = journal.read_bytes()
    resumed = wren(["resume", "--dir", "journals", "--yes"], workspace)
    if uncertain:
        assert resumed.returncode == 3, f"{context}: expected a refusal, got {resumed.returncode}: {resumed.stderr}"
        for open_call in uncertain:
            assert open_call.call.id in resumed.stderr and open_call.call.name in resumed.stderr, context
        assert journal.read_bytes() == before, f"{context}: a refused resume wrote to the journal"
        tally.outcomes["refused (exit 3)"] += 1
        resumed = wren(["resume", "--dir", "journals", "--yes", "--assume-failed"], workspace)
        assert resumed.returncode == 0, f"{context}: --assume-failed: {resumed.stderr}"
    else:
        assert resumed.returncode == 0, f"{context}: resume failed: {resumed.stderr}"
    after = read_events(journal)
    assert after.stop is None, f"{context}: after resume: {after.stop}"
    assert after.events[: len(events)] == events, f"{context}: resume changed what was already written"
    twice = {i: n for i, n in side_effect_starts(after.events).items() if n > 1}
    assert not twice, f"{context}: side-effecting calls started twice: {twice}"
    added = after.events[len(events) :]
    if added:
        assert isinstance(added[-1], RunEnd) and added[-1].reason == "done", f"{context}: resume did not finish"
        tally.outcomes["continued to the end" if not uncertain else "settled and finished"] += 1
    else:
        last = replay(events).messages[-1:]
        complete = not last or (last[0].role == "assistant" and not last[0].tool_calls)
        assert complete, f"{context}: resume wrote nothing though the conversation was not complete"
        tally.outcomes["already complete"] += 1
    if any(isinstance(e, Message) for e in after.events):
        tests = subprocess.run([sys.executable, "-m", "unittest"], cwd=workspace, capture_output=True, timeout=60)
        assert tests.returncode == 0, f"{context}: after resume the demo tests still fail"


@pytest.mark.slow
def test_kill_9_at_random_moments_loses_no_reported_event_and_resume_never_guesses(tmp_path: Path) -> None:
    seed = int(os.environ.get("WREN_KILL_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    tally = Tally()
    for n in range(KILLS):
        workspace = prepare_workspace(tmp_path / f"ws{n}")
        sid = new_session_id()
        journal = workspace / "journals" / f"{sid}.jsonl"
        after = rng.randint(0, RUN_EVENTS)
        context = f"kill {n + 1}/{KILLS} (seed {seed}, after {after} seqs)"
        reported = run_and_kill(workspace, sid, after)
        events = check_after_kill(journal, reported, context)
        tally.killed_at.add(len(events))
        if journal.exists():
            check_resume(workspace, journal, events, context, tally)
        else:
            tally.outcomes["killed before the journal existed"] += 1
    print(f"\n{KILLS} kills (seed {seed}): {dict(tally.outcomes)}; journals cut at {len(tally.killed_at)} lengths")
    assert len(tally.killed_at) >= min(KILLS, 10) // 2, f"kills did not spread over the run: {tally.killed_at}"
