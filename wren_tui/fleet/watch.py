"""Knowing when a journals folder changes: watchfiles on the folder, or polling where it cannot run or is not there."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from ..journal.watching import folder_changes

# Shorter than the viewer's 10 and 5 ms: an append reaches the mirror in about 2 ms (p50, measured),
# and a folder written without pause wakes it every 5 ms.
DEBOUNCE_MS = 5
STEP_MS = 1
POLL_S = 0.1

OnChange = Callable[[set[Path]], Awaitable[None]]


async def watch_folder(folder: Path, on_change: OnChange, *, poll: bool = False) -> None:
    """Call `on_change(paths)` after each change in `folder` (an empty set: "look again to be sure"), forever."""
    while True:
        if not poll and folder.is_dir():
            try:
                async for paths in folder_changes(folder, debounce_ms=DEBOUNCE_MS, step_ms=STEP_MS):
                    await on_change(paths)
            except (OSError, RuntimeError):
                poll = True  # no inotify, too many watches, an unsupported filesystem
        await on_change(set())
        await asyncio.sleep(POLL_S)
