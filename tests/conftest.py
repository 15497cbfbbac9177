"""Shared fixtures: paths to the reference fixtures and a helper to run the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# Copies kept in the repository (tests/fixtures/SOURCES.md says where each came from): a fresh clone
# has nothing beside it.
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own XDG_STATE_HOME, so a default journals folder never lands in the real home."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    # A user's shell (and CI) does not set it: wren's output is buffered there, and must work so.
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    # Nor this: Python writes __pycache__ folders there, into the workspaces the tests' agents work in.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    yield state


def run_wren(
    args: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`wren ARGS` as a user runs it: a separate process, its own cwd and environment.

    XDG_STATE_HOME is a temporary folder (the test's own, see state_home) unless `env` gives one.
    """
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    if not full_env.get("XDG_STATE_HOME"):
        full_env["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="wren-state-")
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


def descendants(pid: int) -> list[int]:
    """The processes `pid` started, and theirs, as Linux's /proc says now."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat_line = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue  # gone meanwhile
            parent = int(stat_line.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
