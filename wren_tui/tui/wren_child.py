"""`wren ARGS` run as a child of the viewer: the one place it starts the whole CLI (`python -m wren_tui`).

Used for `wren rewind`, whose preview and question are the command's own (cli/rewind.py, not yet a
library call). It is a climb from the viewer to the CLI, listed in tests/test_layers.py (`CLIMBS`);
a fork with files and the snapshot store's reads go through the viewer's own child instead
(`tui/write_child.py`).
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
