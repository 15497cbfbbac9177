"""A big OpenCode or aider session opens tail first, through Pilot: the first frame shows the session's last lines,
numbered as in the whole session, with "indexing" in the status line; once the background index has exported and read
the whole session, the screen holds exactly what opening it whole gives: the same items, state, fork points and search
hits. The agent's files keep every byte and time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bench.bench_opencode_aider import big_history, big_session
from tests.foreign.sessions import AN_HOUR, age
from tests.foreign.test_opencode import edit, fingerprint
from tests.tui.conftest import screen_text, wait_for
from tests.tui.test_opencode_aider import CLOCK, _app, _status
from wren_tui.journal.events import Event
from wren_tui.search.query import Query
from wren_tui.sessions import exported
from wren_tui.sessions.foreign import ForeignFile
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.search import find_all

SIZE = 3 << 20


def _opencode(folder: Path) -> Path:
    folder.mkdir()
    db = big_session(folder / "opencode.db", SIZE)
    edit(db, "delete from event where seq > (select max(seq) - 16 from event)")  # its last call: running, no result
    return db


def _aider(folder: Path) -> Path:
    path = big_history(folder / ".aider.chat.history.md", SIZE)
    with path.open("ab") as out:
        out.write(b"#### a prompt aider never answered\n")
    age(path, AN_HOUR)
    return path


def _files(path: Path) -> dict[str, tuple[bytes, int] | None]:
    return fingerprint(path) if path.suffix == ".db" else {"md": (path.read_bytes(), path.stat().st_mtime_ns)}


@pytest.fixture
def held_whole(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The background index's whole export waits for this: the first frame is looked at before it is in place."""
    go = threading.Event()
    read_whole = exported.ExportedFile.read_whole

    def held(self: exported.ExportedFile, index: Any = None, progress: Any = None) -> None:
        if index is not None:  # the background index's (fork points read the whole on their own handle)
            assert go.wait(30), "the test never let the whole export go"
        read_whole(self, index, progress)

    monkeypatch.setattr(exported.ExportedFile, "read_whole", held)
    yield go
    go.set()


def _items(screen: SessionScreen) -> list[Event]:
    return [screen.timeline.event(position) for position in range(len(screen.timeline))]


def _hits(screen: SessionScreen, query: str) -> list[int]:
    found = find_all(
        screen.timeline,
        screen.source,
        Query.of(query),
        0,
        len(screen.timeline),
        progress=lambda _d: None,
        cancelled=lambda: False,
    )
    assert found is not None
    return list(found)


async def _whole_read(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Event], str, list[Any], list[int]]:
    """What the screen holds once it read the session exported whole (as before tail-first opening)."""
    with monkeypatch.context() as patch:
        patch.setattr(exported, "TAIL_FIRST", 1 << 40)  # never a tail: the whole export, then its index
        app = _app(path)
        async with app.run_test(size=(140, 40)) as pilot:
            screen = app.screen
            assert isinstance(screen, SessionScreen) and isinstance(screen.source, ForeignFile)
            assert not screen.source.partial
            await wait_for(pilot, lambda: screen.reader.indexing is None, "the whole index", timeout=120)
            points = screen.source.share().fork_points()
            return _items(screen), _status(app), points, _hits(screen, "lines")


@pytest.mark.parametrize("make", [_opencode, _aider], ids=["opencode", "aider"])
async def test_a_big_session_paints_its_tail_first_and_ends_as_a_whole_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held_whole: threading.Event, make: Any
) -> None:
    path = make(tmp_path / "agent")
    before = _files(path)
    whole, whole_status, whole_points, whole_hits = await _whole_read(path, monkeypatch)
    assert len(whole) > 1000 and whole_hits

    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen) and isinstance(screen.source, ForeignFile)
        await pilot.pause()
        # The first frame: the tail alone, numbered as in the whole session, while the rest is indexed.
        assert screen.source.partial and screen.reader.indexing is not None
        early = _items(screen)
        assert 0 < len(early) < len(whole) // 10
        assert early == whole[-len(early) :]
        assert f"#{early[-1].seq} " in screen_text(app)
        assert "indexing" in _status(app)
        # Fork points need the whole session: read by their own handle, they are already the whole read's.
        assert screen.source.share().fork_points() == whole_points

        held_whole.set()
        await wait_for(pilot, lambda: screen.reader.indexing is None, "the whole index in place", timeout=120)
        assert not screen.source.partial
        assert _items(screen) == whole
        assert _status(app) == whole_status
        assert screen.source.share().fork_points() == whole_points
        assert _hits(screen, "lines") == whole_hits
    assert _files(path) == before
    assert CLOCK  # the same fixed clock for both reads: the status lines compare
