"""The `wren` command lines Wren prints for a person to type next: each works as printed, from where they are.

In the journal layer because the agent, the viewer and the CLI all print them, and none may import the CLI.
"""

from __future__ import annotations

import os
from pathlib import Path

from .store import journals_dir


def wren_command(command: str, *words: str, folder: Path, workspace: Path | None = None, tail: str = "") -> str:
    """`wren COMMAND [--workspace W] [--dir D] WORDS... TAIL`, every word quoted for a POSIX shell.

    --workspace is given when it is not the current folder, and --dir when `folder` is not where the
    command would look by default from here; `tail` is added as it is (a placeholder like "MESSAGE").
    """
    import shlex  # here: a command line is made to be printed, not by every command that may print one

    line = ["wren", command]
    here = Path.cwd()
    if workspace is not None and not _same(workspace, here):
        line += ["--workspace", str(workspace)]
    if not _same(folder, journals_dir(None)):
        line += ["--dir", os.path.abspath(folder)]
    line += words
    return shlex.join(line) + (f" {tail}" if tail else "")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a.absolute() == b.absolute()
