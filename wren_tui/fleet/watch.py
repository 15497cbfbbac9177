"""Knowing when a journals folder changes: watchfiles on the folder, or polling where it cannot run or is not there."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import watchfiles

# The viewer's figures (tui/tailing.py): an append reaches the loop in about 8 ms (p50).
DEBOUNCE_MS = 10
STEP_MS = 5
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
