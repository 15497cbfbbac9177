"""Watching a journal leaves it exactly as it was: same bytes, same mtime, no write descriptor."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from tests.tui.conftest import FixedClock, wait_for_text
from tests.tui.journals import SESSION, story, write_journal
from wren_tui.tui.app import WrenApp


def _write_fds_on(path: Path) -> list[str]:
    """Descriptors of this process open on `path` for writing (from /proc/self/fdinfo flags)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != str(path):
                continue
            flags = int(Path(f"/proc/self/fdinfo/{fd}").read_text().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError, ValueError):
            continue
        if flags & (os.O_WRONLY | os.O_RDWR):
            found.append(fd)
    return found


async def test_watching_leaves_the_journal_bytes_and_mtime_unchanged(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", story())
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    before_bytes, before = path.read_bytes(), os.stat(path)
    app = WrenApp(folder=tmp_path, session=path, clock=FixedClock(datetime.now(UTC)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, "outcome unknown")
        # Every key that reads: search, raw view, errors, tools, fold, fork picker (declined).
        await pilot.press("home", "e", "t", "enter", "r", "escape", "/", *"mean", "enter", "escape")
        await pilot.press("p", "escape", "f", "l", "question_mark")
        await pilot.pause()
        assert _write_fds_on(path) == []
    after = os.stat(path)
    assert path.read_bytes() == before_bytes
    assert after.st_mtime_ns == before.st_mtime_ns
    assert after.st_size == before.st_size
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
