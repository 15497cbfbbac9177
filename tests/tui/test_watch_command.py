"""`wren watch` as a command: its exit status."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from tests.tui.journals import SESSION, finished_story, write_journal
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
    args = argparse.Namespace(target=str(path), pick=False, poll=True, dir=None)
    assert cmd_watch(args) != 0
