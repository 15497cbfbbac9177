"""Which agents' sessions search can read, and where each keeps them.

One line per agent in `AGENTS`: its name, and the function that lists its sessions, newest first,
as search sources. Wren's are the journals of the journals folder; another agent's reader adds its
line here, and `wren search --agent` and the viewer's search offer it with no other change.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..journal.store import journal_paths
from .sources import SearchSource
from .wren import WrenSession

Lister = Callable[[Path], list[SearchSource]]


def wren_sessions(folder: Path) -> list[SearchSource]:
    """The journals of `folder`, newest first (none when it does not exist)."""
    return [WrenSession(path) for path in journal_paths(folder)]


AGENTS: dict[str, Lister] = {"wren": wren_sessions}


def sessions_of(agent: str, folder: Path) -> list[SearchSource]:
    """The sessions of `agent` ("all": every agent's), newest first; Wren's read from `folder`."""
    if agent != "all":
        return AGENTS[agent](folder)
    found = [source for lister in AGENTS.values() for source in lister(folder)]
    return sorted(found, key=_newest, reverse=True)


def _newest(source: SearchSource) -> float:
    try:
        return source.path.stat().st_mtime
    except OSError:
        return 0.0
