"""Waiting on a condition with a deadline, for tests that watch another process (never a fixed sleep).

The Pilot (`tests/tui/conftest.wait_for`), a pty (`tests/agent/tty.Tty.wait_for`) and tmux
(`tests/tmux.Terminal.wait_for`) each have a wait of their own, since each must keep its own loop
turning (the app's messages, the pty's reads, the pane's captures); everything else polls with this.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def until(condition: Callable[[], bool], what: str, timeout: float = 30, step: float = 0.02) -> float:
    """Poll `condition` until it holds; the seconds it took. Fails naming `what` after `timeout` seconds."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"timed out waiting for {what}"
        time.sleep(step)
    return time.monotonic() - started
