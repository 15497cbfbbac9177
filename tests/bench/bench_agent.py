"""The agent's costs: what journaling every step durably adds to a real run, and what a run costs to start.

A run is the scripted model doing the whole demo task (run the tests, read, edit, rerun) with real tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.bench import BenchRow, best_of, compare
from wren_tui.agent.errors import Ended
from wren_tui.agent.loop import Printer
from wren_tui.agent.session import Settings, make_agent, new_session, run_task
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import ChatMessage
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import journal_paths
from wren_tui.journal.writer import FsyncPolicy

FIX = "run the tests, find the failing case and fix it"


def _fix_run(base: Path, fsync: FsyncPolicy, n: list[int], *, gauge: bool = True) -> None:
    """One whole run; n[0] counts runs, n[1] holds the events the last one wrote."""
    n[0] += 1
    workspace = prepare_workspace(base / f"{fsync}-{n[0]}")
    settings = Settings(
        workspace=workspace,
        folder=workspace / "journals",
        yes=True,
        printer=Printer(io.StringIO()),
        fsync=fsync,
        gauge=gauge,
    )
    ended = asyncio.run(run_task(settings, FIX, None))
    assert ended == Ended(), "the scripted run did not finish"
    n[1] = len(read_events(journal_paths(workspace / "journals")[0]).events)


HISTORY = 20_000


def _interleaved(ours: Callable[[], object], baseline: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The best of `repeat` runs of each, taken in turn, so a change in the machine's load falls on both alike."""
    best = [float("inf"), float("inf")]
    for rep in range(repeat):
        # ABBA: each goes first as often, so what the first run of a pair pays falls on both.
        order = [(0, ours), (1, baseline)] if rep % 2 == 0 else [(1, baseline), (0, ours)]
        for slot, fn in order:
            start = time.perf_counter()
            fn()
            best[slot] = min(best[slot], time.perf_counter() - start)
    return best[0], best[1]


def _long_chat(base: Path, n: list[int], *, gauge: bool) -> None:
    """Twenty question turns (no tool) of the scripted model over a long replayed history, journaled without fsync."""
    n[0] += 1
    workspace = prepare_workspace(base / f"chat-{n[0]}")
    settings = Settings(
        workspace=workspace,
        folder=workspace / "journals",
        yes=True,
        printer=Printer(io.StringIO()),
        fsync="none",
        gauge=gauge,
        snapshots=False,
    )
    history = [
        ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"message {i} " + "x" * 200)
        for i in range(HISTORY)
    ]
    writer = new_session(settings, None)
    # A window the history does not near: the row measures the gauge, not a compaction.
    with writer, _environment("WREN_CONTEXT_WINDOW", "1000000000"):
        agent = make_agent(settings, writer, history)

        async def turns() -> None:
            for _ in range(20):
                agent.say(ChatMessage(role="user", content="what did I ask first?"))
                await agent.turn()

        asyncio.run(turns())


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def _cli(args: list[str], cwd: Path) -> None:
    subprocess.run([sys.executable, *args], cwd=cwd, check=True, capture_output=True, stdin=subprocess.DEVNULL)


def run() -> list[BenchRow]:
    rows: list[BenchRow] = []
    with tempfile.TemporaryDirectory(prefix="wren-bench-agent-") as tmp:
        base, counter = Path(tmp), [0, 0]
        synced = best_of(lambda: _fix_run(base, "event", counter), repeat=5)
        unsynced = best_of(lambda: _fix_run(base, "none", counter), repeat=5)
        rows.append(
            compare(f"demo fix run ({counter[1]} events), fdatasync per event vs none", synced, unsynced, at_most=1.25)
        )
        # The context gauge (each request's size against the window) costs one addition per message.
        gauged, plain = _interleaved(
            lambda: _fix_run(base, "none", counter), lambda: _fix_run(base, "none", counter, gauge=False), repeat=7
        )
        rows.append(compare("demo fix run, context gauge kept vs not (scripted model)", gauged, plain, at_most=1.1))
        turns, bare_turns = _interleaved(
            lambda: _long_chat(base, counter, gauge=True), lambda: _long_chat(base, counter, gauge=False), repeat=5
        )
        what = f"20 turns over a {HISTORY:,}-message history, context gauge kept vs not"
        rows.append(compare(what, turns, bare_turns, at_most=1.1))
        workspace = prepare_workspace(base / "cli")
        started = best_of(lambda: _cli(["-m", "wren_tui", "run", "--dir", str(base / "j"), "hello"], workspace))
        bare = best_of(lambda: _cli(["-c", "pass"], workspace))
        rows.append(compare("`wren run` of a one-reply task vs a bare `python -c pass`", started, bare, at_most=8.0))
    return rows
