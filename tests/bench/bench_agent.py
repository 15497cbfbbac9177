"""The agent's costs: what journaling every step durably adds to a real run, and what a run costs to start.

A run is the scripted model doing the whole demo task (run the tests, read, edit, rerun) with real tools.
"""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.bench import BenchRow, best_of, compare
from wren_tui.agent.errors import Ended
from wren_tui.agent.loop import Printer
from wren_tui.agent.session import Settings, run_task
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import journal_paths
from wren_tui.journal.writer import FsyncPolicy

FIX = "run the tests, find the failing case and fix it"


def _fix_run(base: Path, fsync: FsyncPolicy, n: list[int]) -> None:
    """One whole run; n[0] counts runs, n[1] holds the events the last one wrote."""
    n[0] += 1
    workspace = prepare_workspace(base / f"{fsync}-{n[0]}")
    settings = Settings(
        workspace=workspace, folder=workspace / "journals", yes=True, printer=Printer(io.StringIO()), fsync=fsync
    )
    ended = asyncio.run(run_task(settings, FIX, None))
    assert ended == Ended(), "the scripted run did not finish"
    n[1] = len(read_events(journal_paths(workspace / "journals")[0]).events)


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
        workspace = prepare_workspace(base / "cli")
        started = best_of(lambda: _cli(["-m", "wren_tui", "run", "--dir", str(base / "j"), "hello"], workspace))
        bare = best_of(lambda: _cli(["-c", "pass"], workspace))
        rows.append(compare("`wren run` of a one-reply task vs a bare `python -c pass`", started, bare, at_most=8.0))
    return rows
