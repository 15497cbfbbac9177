"""`wren watch` as a command: its exit status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tui.journals import SESSION, finished_story, write_journal
from wren_tui.cli import parse_args
from wren_tui.cli.watch import cmd_watch
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.session import SessionScreen


def test_watch_exits_non_zero_when_the_viewer_crashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())

    def crash(self: SessionScreen) -> None:
        raise RuntimeError("a bug in the viewer")

    run = WrenApp.run

    def headless(self: WrenApp, **kwargs: Any) -> Any:
        return run(self, headless=True, **kwargs)

    monkeypatch.setattr(SessionScreen, "on_mount", crash)
    monkeypatch.setattr(WrenApp, "run", headless)
    args = parse_args(["watch", str(path), "--poll"])  # as the command line gives them, every option set
    assert cmd_watch(args) != 0
