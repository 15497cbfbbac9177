"""The workspace: the demo template, fresh copies of it, and paths confined to a workspace root."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parent / "demo_workspace"
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")


class WorkspaceError(Exception):
    """A workspace cannot be prepared or a path leaves it; the message says what to do."""


def prepare_workspace(dest: Path) -> Path:
    """Write a fresh copy of the demo workspace into `dest` (created if missing, refused if not empty)."""
    dest = Path(dest).expanduser().resolve()
    if not TEMPLATE.is_dir():
        raise WorkspaceError(f"{TEMPLATE}: the demo workspace template is missing; reinstall wren-tui")
    if dest.exists():
        if not dest.is_dir():
            raise WorkspaceError(f"{dest}: exists and is not a folder; choose an empty or new folder")
        if any(dest.iterdir()):
            raise WorkspaceError(f"{dest} is not empty; choose an empty or new folder for the demo workspace")
    shutil.copytree(TEMPLATE, dest, ignore=_SKIP, dirs_exist_ok=True)
    return dest


def confine(root: Path, given: str) -> Path:
    """`given` (relative to `root`, or absolute) resolved; refused when it lands outside `root`."""
    if "\x00" in given:
        raise WorkspaceError(f"the path {given!r} contains a NUL byte")
    root = root.resolve()
    candidate = Path(given).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if resolved != root and root not in resolved.parents:
        raise WorkspaceError(
            f"{given}: resolves to {resolved}, outside the workspace {root}; use a path inside the workspace"
        )
    return resolved


def relative(root: Path, path: Path) -> str:
    """A workspace path as the model and the journal show it: relative, with forward slashes."""
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:
        return str(path)
    return rel.as_posix() or "."


def is_within(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def python_command() -> str:
    """The name a shell in the workspace uses for this interpreter (its folder is put first on PATH)."""
    here = Path(sys.executable).parent
    return "python" if (here / "python").exists() else Path(sys.executable).name
