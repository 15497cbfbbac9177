"""The viewer on another agent's file rewritten in place (the same file truncated and written again, as `cp` over
it does, or cut shorter): it notices, reads the file again from its start, and shows what a fresh look shows."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from tests.foreign.sessions import copy_session, fixture
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 11, 30, 9, 10, tzinfo=UTC)


def _app(path: Path) -> WrenApp:
    return WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK))


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def _seen(app: WrenApp) -> tuple[int, str | None]:
    """What the screen shows of the session: its events, and where it stopped reading (if it did)."""
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    return screen.timeline.events, None if screen.reader.stopped is None else str(screen.reader.stopped)


async def _fresh(data: bytes, folder: Path) -> tuple[int, str | None]:
    """What a viewer opened on these bytes shows, once it has read them."""
    path = folder / "fresh" / "aaaaaaaa-0000-0000-0000-000000000000.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: _seen(app)[0] > 0, "the fresh reading")
        await pilot.pause()
        return _seen(app)


def _rewrite(path: Path, data: bytes) -> None:
    """Truncate the file and write `data` into it: the same inode, as `cp` over an existing file leaves it."""
    inode = path.stat().st_ino
    with path.open("r+b") as f:
        f.truncate(0)
        f.write(data)
    assert path.stat().st_ino == inode


async def test_a_file_copied_over_in_place_is_read_again_not_taken_for_damage(tmp_path: Path) -> None:
    path = copy_session("claude", "simple", tmp_path / "projects")
    other = fixture("claude", "multi-turn").read_bytes()
    expected = await _fresh(other, tmp_path)
    assert expected[1] is None
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: _seen(app)[0] > 0, "the first session read")
        before = _seen(app)
        assert before[0] != expected[0]
        _rewrite(path, other)
        await wait_for_text(pilot, "hello.py has 3 lines.", timeout=15)
        await wait_for(pilot, lambda: _seen(app) == expected, f"the session read again as a fresh look: {expected}")
        assert "stopped at" not in _status(app)


async def test_a_file_cut_shorter_than_what_was_read_is_read_again(tmp_path: Path) -> None:
    data = fixture("claude", "multi-turn").read_bytes()
    path = copy_session("claude", "multi-turn", tmp_path / "projects")
    cut = data[:20000]  # as `truncate -s 20000` leaves it: fewer lines, the last one cut short
    expected = await _fresh(cut, tmp_path)
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for_text(pilot, "hello.py has 3 lines.")
        assert _seen(app) != expected
        _rewrite(path, cut)
        await wait_for(pilot, lambda: _seen(app) == expected, f"the shorter file read again: {expected}")
        assert "hello.py has 3 lines." not in screen_text(app)


async def test_a_file_cut_and_written_again_longer_than_what_was_read_is_read_again(tmp_path: Path) -> None:
    # Cut to a few lines, then written past where the viewer had read: only the bytes it read tell.
    data = fixture("claude", "multi-turn").read_bytes()
    path = copy_session("claude", "simple", tmp_path / "projects")
    rewritten = data[: data.index(b"\n", 20000) + 1] + b'{"type":"last-prompt","lastPrompt":"x"}\n' * 1000
    assert len(rewritten) > os.path.getsize(path)
    expected = await _fresh(rewritten, tmp_path)
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: _seen(app)[0] > 0, "the first session read")
        _rewrite(path, rewritten)
        await wait_for(pilot, lambda: _seen(app) == expected, f"the rewritten file read again: {expected}")
