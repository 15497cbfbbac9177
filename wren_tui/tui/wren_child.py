"""`wren` commands the viewer runs as a child process: what a fork with files and the store's diffs need.

The viewer itself opens no file for writing and starts no other program: a fork with files is the
same `wren fork ... --workspace DIR` a person types, run as `python -m wren_tui`, and what changed
since a point is read by `wren fork --json` and `wren diff-files`, which read the snapshot store.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ChildResult:
    ok: bool
    stdout: str
    said: str  # the command's one sentence when it failed (without its "wren: ")


def run_wren(args: Sequence[str], timeout: float = 120) -> ChildResult:
    """`wren ARGS` as a child of the viewer, by this interpreter; never raises for a failure of the command."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "wren_tui", *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return ChildResult(False, "", f"wren could not be run ({exc})")
    lines = [line.removeprefix("wren: ") for line in done.stderr.splitlines() if line.strip()]
    return ChildResult(done.returncode == 0, done.stdout, " ".join(lines) or f"exit {done.returncode}")
