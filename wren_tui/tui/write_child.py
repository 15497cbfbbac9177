"""The viewer's one way to write: a child process, `python -m wren_tui.tui.write VERB ...`, and what it answers.

The viewer itself opens no file for writing and starts no program that writes: a fork with its
files, and what reading the snapshot store needs (what changed since each point, the diff of a
point's files), run in a child (`tui/write/__main__.py`), which prints one typed answer (a
msgspec Struct of `tui/write/__init__.py`, as JSON) that is read back here as the same type. A
rewind still runs `wren rewind` itself (`tui/wren_child.py`).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import msgspec

from .write import Answer, Changes, Diff, Failed, ForkMade

T = TypeVar("T", ForkMade, Changes, Diff)


def _ask(args: Sequence[str], expected: type[T], timeout: float = 120) -> T | Failed:
    """The child's answer to `args`; a child that could not run, or answered nothing readable, is Failed."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "wren_tui.tui.write", *args],
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Failed(f"wren could not be run ({exc})")
    try:
        answer = msgspec.json.decode(done.stdout, type=Answer)
    except msgspec.DecodeError:
        said = " ".join(line for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip())
        return Failed(said or f"exit {done.returncode}")
    if isinstance(answer, (expected, Failed)):
        return answer
    return Failed(f"the child answered {type(answer).__name__}, not {expected.__name__}")


def fork_with_files(journal: Path, seq: int, target: Path) -> ForkMade | Failed:
    """A fork of `journal` at `seq` with its files written into `target` (`journal.forking.fork_with_files`)."""
    return _ask(["fork", str(journal), str(seq), str(target)], ForkMade)


def files_changed(journal: Path) -> dict[int, int | None]:
    """How many files changed since each clean point; empty when that cannot be read."""
    answer = _ask(["changes", str(journal)], Changes)
    return answer.changed if isinstance(answer, Changes) else {}


def diff_files(journal: Path, seq: int) -> Diff | Failed:
    """The diff of the files at `seq` to the session's last snapshot."""
    return _ask(["diff", str(journal), str(seq)], Diff)
