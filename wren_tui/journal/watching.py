"""A folder's changes as watchfiles reports them, for whoever follows the sessions in it (the viewer, a fleet's
mirror, `wren otel --follow`, `wren keep --follow`): the folder itself (or below it, when asked), every kind of
change, and an empty set at each wake without one. `folder_changes` is for an asyncio loop,
`folder_changes_blocking` for a plain one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import watchfiles

# With no change the watcher still wakes this often: the first wake proves it is watching (a re-read then catches
# anything written before it started), later ones are a cheap safety net.
WAKE_MS = 250


def _paths(changes: set[tuple[watchfiles.Change, str]]) -> set[Path]:
    return {Path(path) for _change, path in changes}


def _settings(debounce_ms: int, step_ms: int, recursive: bool) -> dict[str, Any]:
    """What every watcher here asks of watchfiles: every kind of change, and a wake at least every WAKE_MS."""
    return {
        "debounce": debounce_ms,
        "step": step_ms,
        "rust_timeout": WAKE_MS,
        "yield_on_timeout": True,
        "recursive": recursive,
        "watch_filter": None,
    }


async def folder_changes(folder: Path, *, debounce_ms: int, step_ms: int) -> AsyncIterator[set[Path]]:
    """The paths changed in `folder`, a set each time watchfiles reports (an empty one: "look again to be sure").

    Raises OSError or RuntimeError where the watcher cannot start (no inotify, too many watches, an unsupported
    filesystem): the caller polls instead.
    """
    async for changes in watchfiles.awatch(folder, **_settings(debounce_ms, step_ms, False)):
        yield _paths(changes)


def folder_changes_blocking(
    *folders: Path, debounce_ms: int, step_ms: int, recursive: bool = False
) -> Iterator[set[Path]]:
    """`folder_changes` for a loop that is not asyncio's, over one folder or several (and what is below them with
    `recursive`): each wait blocks the thread.

    Ctrl+C raises KeyboardInterrupt in the waiting thread. Raises OSError or RuntimeError where the watcher cannot
    start: the caller polls instead.
    """
    for changes in watchfiles.watch(*folders, **_settings(debounce_ms, step_ms, recursive), raise_interrupt=True):
        yield _paths(changes)
