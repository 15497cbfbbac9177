"""A folder of every agent's sessions (`--dir`), walked without any agent's reader: what each file in it is.

`wren ls --agent all --dir`, `wren search --dir` and the viewer's folder of every agent's sessions walk it here. The
formats' suffixes are the registry's (`Registry.suffix`), so the walk imports no format's module: one is imported
for a file its suffix names, and what recognises a file by its first bytes (`kinds.kind_of`) for a file read. A
search whose index recalls each journal as Wren's (`index.IndexRead.wren_as_read`) reads none and imports neither.

Only the standard library, the registry and `folders` are imported here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from . import FORMATS, WREN
from .folders import walk

if TYPE_CHECKING:
    from .contract import Format
    from .kinds import Kind

# How a file of JSON lines is named: a Wren journal, or a session of most agents.
JSONL = ".jsonl"


def every_session(
    folder: Path,
    skipped: list[str] | None = None,
    known: dict[Path, Format] | None = None,
    recall: Callable[[Path], Kind | None] | None = None,
) -> list[tuple[Kind, Path]]:
    """Every file below `folder` that may be a session, whatever its agent, with what it is by its content
    (`kind_of`): every .jsonl file (a format's, a Wren journal, or unknown: never guessed at), and every file a
    format that is not JSON lines claims (a database, Markdown). The folder of `wren ls --agent all --dir`,
    `wren search --dir` and `wren watch --agent all --dir`: one walk of it, no link followed.

    A Wren journal is one directly in `folder` (Wren keeps its journals in one folder, not nested).
    Args:
        skipped: as for `session_files`.
        known: the format of each file found before (kept by a caller that lists again): not read again.
        recall: what a caller can tell a .jsonl file is without reading it (search: a file its index read
            as a Wren journal and holds as it is now), else None: its first bytes are read.
    """
    # The formats that are not JSON lines, in the registry's order, each with its suffix (no module imported).
    others = [(name, suffix) for name in FORMATS if (suffix := FORMATS.suffix(name)) != JSONL]
    suffixes = (JSONL, *(suffix for _name, suffix in others))
    found: list[tuple[Kind, Path]] = []
    for path, _entry, hidden, top in walk(folder, skipped, True, suffixes):
        kind: Kind | None = None if known is None else known.get(path)
        if path.name.endswith(JSONL):
            kind = kind or (recall and recall(path)) or _kind_of(path)
            if kind == WREN and not top:
                continue
            if not isinstance(kind, str) and kind.folder.suffix != JSONL and not path.name.endswith(kind.folder.suffix):
                continue  # a part of a session its own file names (a Vibe journal segment beside its meta.json)
        elif kind is None:
            named = [FORMATS[name] for name, suffix in others if path.name.endswith(suffix)]  # their modules, now
            claimants = [f for f in named if (f.folder.hidden_folders or not hidden) and f.folder.is_session_file(path)]
            kind = _kind_of(path) if claimants else None
            if kind not in claimants:
                continue
        if kind is None:
            continue
        if known is not None and not isinstance(kind, str):
            known[path] = kind
        found.append((kind, path))
    return found


def _kind_of(path: Path) -> Kind:
    """What the file at `path` is by its first bytes (`kinds.kind_of`: the formats' kinds, imported now)."""
    from .kinds import kind_of

    return kind_of(path)
