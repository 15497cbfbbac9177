"""Append-to-screen latency: another process appends at a steady rate, the viewer is timed per event.

Each delay runs from the writer's append returning to the frame that shows the event. Shared by
bench_viewer (a small journal) and bench_scale (the 1M-event journal).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wren_tui.tui.screens.session import SessionScreen

WRITER = """
import sys, time
from pathlib import Path
from wren_tui.journal.events import ChatMessage, Message
from wren_tui.journal.writer import JournalWriter

count, gap, fsync = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
sys.stdin.readline()  # wait until the reader is ready
with JournalWriter.open(Path(sys.argv[1]), fsync=fsync) as writer:
    due = time.monotonic()
    for n in range(count):
        event = writer.append(Message(message=ChatMessage(role="assistant", content=f"appended {n}")))
        print(event.seq, time.monotonic(), flush=True)
        due += gap
        time.sleep(max(due - time.monotonic(), 0))
"""


def start_writer(path: Path, count: int, rate: float, fsync: str = "event") -> subprocess.Popen[str]:
    """The appending process; it starts when told "go" on its stdin."""
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(count), str(1 / rate), fsync],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def go(writer: subprocess.Popen[str]) -> None:
    assert writer.stdin is not None
    writer.stdin.write("go\n")
    writer.stdin.flush()


def appended_at(out: str) -> dict[int, float]:
    """The writer's report: each seq and the moment its append returned."""
    return {int(seq): float(at) for seq, at in (line.split() for line in out.splitlines())}


def percentiles(delays: list[float]) -> tuple[float, float]:
    ordered = sorted(delays)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1]


def delays(seen: dict[int, float], appended: dict[int, float]) -> list[float]:
    missing = set(appended) - set(seen)
    if missing:
        raise RuntimeError(f"{len(missing)} of {len(appended)} appended events never reached the screen")
    return [seen[seq] - at for seq, at in appended.items()]


def stamp_frames(screen: SessionScreen, seen: dict[int, float]) -> None:
    """From now on, put in `seen` each event's seq and the moment of the first frame that shows it."""
    original = screen.grew

    def grew_and_time(first: int, added: int) -> None:
        original(first, added)
        timeline = screen.timeline
        seqs = [timeline.event(i).seq for i in range(first, len(timeline))]

        # The frame that shows them: after the refresh that follows the conversation pane taking
        # this batch (it hears of it by a message queued before this call).
        def stamp() -> None:
            seen.update(dict.fromkeys(seqs, time.monotonic()))

        screen.conversation.call_later(screen.call_after_refresh, stamp)

    screen.grew = grew_and_time  # type: ignore[method-assign]


Writer = Callable[[Path, int, float], "subprocess.Popen[str]"]


async def screen_latency(
    path: Path, count: int, rate: float, size: tuple[int, int], writer_of: Writer | None = None
) -> list[float]:
    """Open the viewer on `path`, let it index, then time `count` appends made at `rate` per second.

    `writer_of` starts the appending process (default: Wren's writer); it prints each seq it wrote and
    when, and starts on "go".
    """
    from wren_tui.tui.app import WrenApp
    from wren_tui.tui.screens.session import SessionScreen

    seen: dict[int, float] = {}
    app = WrenApp(folder=path.parent, session=path)
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        while screen.reader.indexing is not None or not len(screen.timeline):
            await pilot.pause(0.05)
        stamp_frames(screen, seen)
        writer = (writer_of or start_writer)(path, count, rate)
        assert writer.stdout is not None
        go(writer)
        out = asyncio.create_task(asyncio.to_thread(writer.stdout.read))
        deadline = time.monotonic() + count / rate + 60
        while not out.done() and time.monotonic() < deadline:
            await pilot.pause(0.01)
        appended = appended_at(await out)
        writer.wait(timeout=30)
        while not set(appended) <= set(seen) and time.monotonic() < deadline:
            await pilot.pause(0.01)
    return delays(seen, appended)
