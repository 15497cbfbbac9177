"""Knowing when a journals folder changes: watchfiles on the folder, or polling where it cannot run or is not there."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import watchfiles

# Shorter than the viewer's 10 and 5 ms: an append reaches the mirror in about 2 ms (p50, measured),
# and a folder written without pause wakes it every 5 ms.
DEBOUNCE_MS = 5
STEP_MS = 1
# With no change the watcher still wakes this often, a cheap safety net.
WAKE_MS = 250
POLL_S = 0.1

OnChange = Callable[[set[Path]], Awaitable[None]]


async def watch_folder(folder: Path, on_change: OnChange, *, poll: bool = False) -> None:
    """Call `on_change(paths)` after each change in `folder` (an empty set: "look again to be sure"), forever."""
    while True:
        if not poll and folder.is_dir():
            try:
                async for changes in watchfiles.awatch(
                    folder,
                    debounce=DEBOUNCE_MS,
                    step=STEP_MS,
                    rust_timeout=WAKE_MS,
                    yield_on_timeout=True,
                    recursive=False,
                    watch_filter=None,
                ):
                    await on_change({Path(path) for _change, path in changes})
            except (OSError, RuntimeError):
                poll = True  # no inotify, too many watches, an unsupported filesystem
        await on_change(set())
        await asyncio.sleep(POLL_S)
