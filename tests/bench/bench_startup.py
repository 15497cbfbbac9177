"""Start-up: `wren --version`, `wren --help` and `wren search --help` against a bare `python -c pass`.

Each is a new process of the same interpreter (the `wren` script beside it when it is installed, else
`python -m wren_tui`), as a user runs it; the four are run in turn, round after round, so the machine's
load falls on each alike, and each figure is the median of its rounds. Each command must succeed and say
what it says (the version's first line, the listing, search's usage). Target: within 2x bare Python (#39).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench import BenchRow, compare
from wren_tui import __version__

ROUNDS = 21


def _wren() -> list[str]:
    script = Path(sys.executable).parent / ("wren.exe" if os.name == "nt" else "wren")
    return [str(script)] if script.exists() else [sys.executable, "-m", "wren_tui"]


def run() -> list[BenchRow]:
    wren = _wren()
    commands: dict[str, list[str]] = {
        "bare": [sys.executable, "-c", "pass"],
        "wren --version": [*wren, "--version"],
        "wren --help": [*wren, "--help"],
        "wren search --help": [*wren, "search", "--help"],
    }
    expected = {
        "wren --version": f"wren {__version__}\n",
        "wren --help": "usage: wren ",
        "wren search --help": "usage: wren search ",
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    state = tempfile.mkdtemp(prefix="wren-bench-startup-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    env["XDG_STATE_HOME"] = state
    try:
        for _ in range(ROUNDS):
            for name, argv in commands.items():
                start = time.perf_counter()
                done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
                times[name].append(time.perf_counter() - start)
                assert done.stdout.startswith(expected.get(name, "")), (name, done.stdout[:200])
    finally:
        shutil.rmtree(state, ignore_errors=True)
    bare = statistics.median(times["bare"])
    return [
        compare(
            f"{name} (median of {ROUNDS}, interleaved) vs python -c pass",
            statistics.median(times[name]),
            bare,
            at_most=2.0,
        )
        for name in commands
        if name != "bare"
    ]
