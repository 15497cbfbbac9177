"""Helpers for driving the viewer through Pilot: a fixed clock, screen text, bounded waits."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.pilot import Pilot
from textual.strip import Strip

if TYPE_CHECKING:
    from wren_tui.tui.app import WrenApp
    from wren_tui.tui.screens.results import SearchResults

REPO = Path(__file__).resolve().parents[2]


def without_dac_override() -> tuple[str, ...] | None:
    """A command prefix under which permission bits hold (root ignores them), or None if none can be had."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search", "--")
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


class FixedClock:
    """A clock that moves only when a test says so."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def screen_strips(app: App[object]) -> list[Strip]:
    return app.screen._compositor.render_strips()


def screen_text(app: App[object]) -> str:
    """What a person sees on the terminal right now, as plain text."""
    return "\n".join(strip.text for strip in screen_strips(app))


async def wait_for(pilot: Pilot[object], condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Let the app run until `condition` holds; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n--- screen ---\n{screen_text(pilot.app)}")
        await pilot.pause(0.02)


async def wait_for_text(pilot: Pilot[object], text: str, timeout: float = 10.0) -> None:
    await wait_for(pilot, lambda: text in screen_text(pilot.app), f"{text!r} on screen", timeout)


def shown_results(app: App[object]) -> SearchResults | None:
    """The results of the browser's `/` when they are on screen (in place of its table), else None."""
    from wren_tui.tui.screens.session_list import SessionList

    screen = app.screen
    if not isinstance(screen, SessionList) or not screen.results_shown:
        return None
    return screen.results


async def search_every_session(pilot: Pilot[object], app: App[object], text: str) -> SearchResults:
    """`/`, the text and Enter in a browser; the results, in place of its table, once their search has ended."""
    await pilot.press("/")
    await pilot.press(*text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: shown_results(app) is not None, "the results")
    results = shown_results(app)
    assert results is not None
    await wait_for(pilot, lambda: results.done, "the search to end")
    return results


def session_app(path: Path, clock: Callable[[], datetime] | None = None, **options: Any) -> WrenApp:
    """The viewer on one journal (`wren watch PATH`), its clock fixed at now unless a test gives one."""
    from wren_tui.tui.app import WrenApp

    return WrenApp(folder=path.parent, session=path, clock=clock or FixedClock(datetime.now(UTC)), **options)


def folder_app(folder: Path, **options: Any) -> WrenApp:
    """The viewer on a journals folder (`wren watch --dir FOLDER`), its clock fixed at now."""
    from wren_tui.tui.app import WrenApp

    return WrenApp(folder=folder, clock=FixedClock(datetime.now(UTC)), **options)
