"""The viewer at scale: first paint and peak RSS on a 100k-event journal; append-to-screen latency;
how fast keys are answered while a 50 MB message is read.

First paint and RSS are measured in a fresh process (interpreter start to the first frame with the
conversation drawn), against the same measure on a 10-event journal in the same run. Latency is
from another process's append returning to the frame that shows the event, against the bare
watcher (awatch + Tail, no UI) seeing the same appends. Key latency is from a key press to the
frame after it, pressed from the first frame on (so while the 50 MB line is read, decoded and
clipped), against the same presses on a 10-event journal.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench import BenchRow, absolute, compare, fmt
from tests.bench.gen import generate
from tests.bench.latency import appended_at, delays, go, percentiles, screen_latency, start_writer
from wren_tui.journal.events import ChatMessage, Message
from wren_tui.journal.writer import JournalWriter

APPENDS = 200
APPEND_RATE = 100  # events per second

_PAINT = r"""
import re, sys, time, asyncio
from pathlib import Path
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.conversation import ConversationView

async def main() -> None:
    path = Path(sys.argv[1])
    app = WrenApp(folder=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.screen.query_one(ConversationView)
        painted: list[float] = []
        while view.virtual_size.height == 0:
            await pilot.pause(0.001)
        # The next frame after the conversation has rows is the first one that shows them.
        app.call_after_refresh(lambda: painted.append(time.monotonic()))
        while not painted:
            await pilot.pause(0.001)
        print(f"painted {painted[0]}", flush=True)
        # VmHWM, not ru_maxrss: on Linux ru_maxrss keeps the parent's peak across fork and exec.
        peak = re.search(r"VmHWM:\s+(\d+) kB", open("/proc/self/status").read())
        print(f"rss {int(peak.group(1)) * 1024}", flush=True)

asyncio.run(main())
"""


_KEYS = r"""
import asyncio, json, sys, time
from pathlib import Path
from textual import events
from wren_tui.tui.app import WrenApp
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine

async def main() -> None:
    path, presses, shown = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    app = WrenApp(folder=path.parent, session=path, watch_mode="poll")
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.screen.query_one(StatusLine)
        view = app.screen.query_one(ConversationView)
        delays, reading = [], []
        first: list[float] = []  # presses start once the first frame is out (it is not a key's to wait for)
        app.call_after_refresh(lambda: first.append(time.monotonic()))
        while not first:
            await asyncio.sleep(0.0002)
        for _ in range(presses):
            reading.append(any(word in str(status.render()) for word in ("indexing", "reading")))
            following = view.follow
            # As the terminal driver hands a key over: f turns follow off or on, the status line says so.
            key = events.Key("f", "f")
            key.set_sender(app)
            pressed = time.monotonic()
            app._driver.send_message(key)
            while view.follow == following:
                await asyncio.sleep(0.0002)
            framed: list[float] = []
            app.call_after_refresh(lambda: framed.append(time.monotonic()))
            while not framed:
                await asyncio.sleep(0.0002)
            delays.append(framed[0] - pressed)
            await asyncio.sleep(0.005)
        # The message drawn (folded: following shows its end) before the figures count.
        while shown not in "\n".join(s.text for s in app.screen._compositor.render_strips()):
            await pilot.pause(0.01)
        print(json.dumps({"delays": delays, "reading": reading}), flush=True)

asyncio.run(main())
"""
KEY_PRESSES = 200
HUGE_MB = 50
_OPENING = "The start of a fifty megabyte message"


def _keys(path: Path, shown: str) -> tuple[list[float], list[float]]:
    """Key-to-frame delays of presses made from the first frame on: those while reading, and the others."""
    out = subprocess.run(
        [sys.executable, "-c", _KEYS, str(path), str(KEY_PRESSES), shown],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    report = json.loads(out.splitlines()[-1])
    pairs = list(zip(report["delays"], report["reading"], strict=True))
    return [d for d, busy in pairs if busy], [d for d, busy in pairs if not busy]


def _huge_message(path: Path, megabytes: int) -> Path:
    """A short session, then one assistant reply of `megabytes` MB on a single line, through the real writer."""
    generate(path, 10)
    with JournalWriter.open(path, fsync="none") as writer:
        reply = f"{_OPENING} " + "lorem ipsum " * ((megabytes << 20) // 12)
        writer.append(Message(message=ChatMessage(role="assistant", content=reply)))
    return path


def _first_paint(path: Path) -> tuple[float, float]:
    """Seconds from process start to the first frame, and peak RSS in bytes."""
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", _PAINT, str(path)], capture_output=True, text=True, check=True, timeout=300
    ).stdout
    fields = dict(line.split(" ", 1) for line in out.splitlines())
    return float(fields["painted"]) - start, float(fields["rss"])


async def _watcher_latency(path: Path) -> tuple[float, float]:
    from wren_tui.journal.reader import Tail
    from wren_tui.sessions.tailing import watch_folder

    tail = Tail(path)
    tail.read()
    seen: dict[int, float] = {}
    started = asyncio.Event()

    async def changed(_paths: set[Path]) -> None:
        started.set()
        now = time.monotonic()
        seen.update(dict.fromkeys((e.seq for e in tail.read().events), now))

    task = asyncio.create_task(watch_folder(path.parent, changed))
    await started.wait()
    writer = start_writer(path, APPENDS, APPEND_RATE)
    go(writer)
    out, _ = await asyncio.to_thread(writer.communicate, timeout=120)
    appended = appended_at(out)
    deadline = time.monotonic() + 10
    while len(seen) < len(appended) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    task.cancel()
    return percentiles(delays(seen, appended))


def run() -> list[BenchRow]:
    with tempfile.TemporaryDirectory(prefix="wren-bench-viewer-") as tmp:
        folder = Path(tmp)
        big = generate(folder / "s-20250101-000000-big1.jsonl", 100_000)
        size = f"{big.stat().st_size / 1e6:.0f} MB"
        small = generate(folder / "s-20250101-000000-sml1.jsonl", 10)
        _first_paint(small)  # warm the interpreter's file cache for both runs
        small_paint, small_rss = _first_paint(small)
        big_paint, big_rss = _first_paint(big)
        live = folder / "live"
        live.mkdir()
        watched = generate(live / "s-20250101-000000-liv1.jsonl", 20)
        viewer_p50, viewer_p95 = percentiles(asyncio.run(screen_latency(watched, APPENDS, APPEND_RATE, (120, 40))))
        bare = folder / "bare"
        bare.mkdir()
        bare_path = generate(bare / "s-20250101-000000-bar1.jsonl", 20)
        watcher_p50, watcher_p95 = asyncio.run(_watcher_latency(bare_path))
        huge = _huge_message(folder / "s-20250101-000000-hug1.jsonl", HUGE_MB)
        huge_size = f"{huge.stat().st_size / 1e6:.0f} MB"
        while_reading, after_reading = _keys(huge, "more characters · Enter to expand")
        _, small_delays = _keys(small, "#10 ")
    huge_delays = while_reading + after_reading
    reading_p50, reading_p95 = percentiles(while_reading) if while_reading else (float("nan"), float("nan"))
    _, huge_p95 = percentiles(huge_delays)
    small_p50, small_p95 = percentiles(small_delays)
    mb = 1024 * 1024
    return [
        absolute(f"viewer: first paint, 100k-event journal ({size}), process start", big_paint, at_most=1.0),
        compare("viewer: first paint, 100k events vs 10 events", big_paint, small_paint),
        absolute("viewer: peak RSS, 100k-event journal", big_rss / mb, unit="MB", at_most=200),
        compare("viewer: peak RSS, 100k events vs 10 events", big_rss / mb, small_rss / mb, unit="MB"),
        absolute(f"viewer: append-to-screen p50 ({APPENDS} appends)", viewer_p50),
        absolute(f"viewer: append-to-screen p95 ({APPENDS} appends)", viewer_p95, at_most=0.1),
        compare("viewer p95 vs bare watcher p95 (awatch + Tail, no UI)", viewer_p95, watcher_p95),
        BenchRow("bare watcher p50 / p95", fmt(watcher_p50, "s"), fmt(watcher_p95, "s"), None, "-", "-"),
        absolute(
            f"viewer: key to frame p95 while a {huge_size} message is read ({len(while_reading)} presses)",
            reading_p95,
            at_most=0.1,
        ),
        absolute(
            "viewer: key to frame, the slowest press while it is read", max(while_reading, default=0), at_most=0.1
        ),
        compare("viewer: key to frame p50 while it is read vs 10 events", reading_p50, small_p50),
        compare(f"viewer: key to frame p95, {huge_size} message open vs 10 events", huge_p95, small_p95),
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
    os._exit(0)
