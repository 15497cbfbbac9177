"""Start-up: `wren --version`, `wren --help` and `wren search --help` against a bare `python -c pass`.

Each is a new process of the same interpreter (the `wren` script beside it when it is installed, else
`python -m wren_tui`), as a user runs it; the four are run in turn, round after round, so the machine's
load falls on each alike, and each figure is the median of its rounds. Each command must succeed and say
what it says (the version's first line, the listing, search's usage). Target: within 2x bare Python (#39).

An editable install (`pip install -e`, as the Quickstart and CI make) starts every process of its interpreter
with setuptools' finder, which imports pathlib, re, enum and urllib.parse before `pass` runs (about 13 ms here).
So the same commands are timed again as a wheel's user starts them: a virtual environment of this Python whose
site-packages names this checkout and this environment's packages as plain paths (no finder), against that
interpreter's `python -c pass`, beside their floor there: argparse imported and a parser's help printed.
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

from tests.bench import BenchRow, compare, plain_interpreter, wheel_script
from wren_tui import __version__

ROUNDS = 21


def _wren() -> list[str]:
    script = Path(sys.executable).parent / ("wren.exe" if os.name == "nt" else "wren")
    return [str(script)] if script.exists() else [sys.executable, "-m", "wren_tui"]


def _timed(commands: dict[str, list[str]], env: dict[str, str]) -> dict[str, float]:
    """Each command's median wall time over ROUNDS rounds, the commands in turn in each round."""
    expected = {
        "wren --version": f"wren {__version__}\n",
        "wren --help": "usage: wren ",
        "wren search --help": "usage: wren search ",
        "argparse": "usage: wren ",
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(ROUNDS):
        for name, argv in commands.items():
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
            times[name].append(time.perf_counter() - start)
            assert done.stdout.startswith(expected.get(name, "")), (name, done.stdout[:200])
    return {name: statistics.median(each) for name, each in times.items()}


def run() -> list[BenchRow]:
    wren = _wren()
    commands: dict[str, list[str]] = {
        "bare": [sys.executable, "-c", "pass"],
        "wren --version": [*wren, "--version"],
        "wren --help": [*wren, "--help"],
        "wren search --help": [*wren, "search", "--help"],
    }
    state = tempfile.mkdtemp(prefix="wren-bench-startup-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    env["XDG_STATE_HOME"] = state
    try:
        took = _timed(commands, env)
        python = plain_interpreter(Path(state) / "plain")
        script = wheel_script(Path(state))
        helped = "import argparse; argparse.ArgumentParser(prog='wren', description='x' * 200).print_help()"
        plain = _timed(
            {
                "bare": [str(python), "-c", "pass"],
                "wren --version": [str(python), str(script), "--version"],
                "wren --help": [str(python), str(script), "--help"],
                "wren search --help": [str(python), str(script), "search", "--help"],
                "argparse": [str(python), "-c", helped],
            },
            env,
        )
        finder = _timed({"plain": [str(python), "-c", "pass"], "bare": [sys.executable, "-c", "pass"]}, env)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    rows = [
        compare(f"{name} (median of {ROUNDS}, interleaved) vs python -c pass", took[name], took["bare"], at_most=2.0)
        for name in commands
        if name != "bare"
    ]
    finder_row = "python -c pass of this (editable) install vs a plain one: the finder's cost"
    rows.append(compare(finder_row, finder["bare"], finder["plain"]))
    rows += [
        compare(f"{name}, started as a wheel's user starts it (no editable finder), vs its python -c pass",
                plain[name], plain["bare"], at_most=2.0)
        for name in ("wren --version", "wren --help", "wren search --help")
    ]  # fmt: skip
    rows.append(compare("the floor there: argparse imported and a parser's help printed, vs that python -c pass",
                        plain["argparse"], plain["bare"]))  # fmt: skip
    return rows
