"""Shared fixtures: paths to the reference fixtures and a helper to run the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Copies kept in the repository (tests/fixtures/SOURCES.md says where each came from): a fresh clone
# has nothing beside it.
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run_wren(
    args: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`wren ARGS` as a user runs it: a separate process, its own cwd and environment."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "wren_tui", *args],
        cwd=cwd,
        env=full_env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
