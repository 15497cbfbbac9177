"""Helpers for the agent's tests: a fresh demo workspace, and its journals read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import Event, Message, event_type
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import journal_paths


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return prepare_workspace(tmp_path / "ws")


def only_journal(folder: Path) -> Path:
    paths = journal_paths(folder)
    assert len(paths) == 1, f"expected one journal in {folder}, found {paths}"
    return paths[0]


def events_of(path: Path) -> list[Event]:
    result = read_events(path)
    assert result.stop is None, f"{path}: {result.stop}"
    return result.events


def types_of(events: list[Event]) -> list[str]:
    return [event_type(e) for e in events]


def messages_of(events: list[Event]) -> list[Message]:
    return [e for e in events if isinstance(e, Message)]


def journals_of(workspace: Path) -> Path:
    """The journals folder the agent's tests pass as `--dir ../journals`: beside the workspace, outside it."""
    return workspace.parent / "journals"
