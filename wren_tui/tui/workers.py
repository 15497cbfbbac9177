"""Textual's workers as a `session_reader.Runner`: jobs in threads owned by a screen, their results on its thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.screen import Screen
from textual.worker import get_current_worker

from .session_reader import Cancelled


class ScreenRunner:
    """Runs the reader's jobs as `screen`'s workers; a result that lands once the screen stopped is dropped."""

    def __init__(self, screen: Screen[Any]) -> None:
        self.screen = screen

    def in_thread(self, group: str, job: Callable[[Cancelled], None]) -> None:
        def run() -> None:
            worker = get_current_worker()
            job(lambda: worker.is_cancelled)

        self.screen.run_worker(run, thread=True, exclusive=True, group=group)

    def to_ui(self, call: Callable[[], None]) -> None:
        screen = self.screen

        def if_running() -> None:
            if screen.is_running:  # its widgets go next: nothing is left to tell
                call()

        screen.app.call_from_thread(if_running)

    def soon(self, call: Callable[[], None], delay: float = 0.0) -> None:
        if delay:
            self.screen.set_timer(delay, call)
        else:
            self.screen.call_after_refresh(call)

    def cancel(self, group: str) -> None:
        self.screen.workers.cancel_group(self.screen, group)
