"""The fleet against a real nats-server on loopback: mirror throughput, and tail latency to a remote reader.

Throughput: `wren mirror` ships a 100,000-event journal (the agent's mix, about 400 bytes an
event), against the obvious alternative, one acknowledged publish per line (measured on the
first 10,000 lines, as a rate). Tail latency: another process appends 100 events a second, each
fdatasynced, with `wren mirror` following the folder in its own process. First the readers alone:
the delay from the append returning to (a) a local reader getting the line the way `wren watch`
does (folder notifications, then `Tail.read`) and (b) a remote reader getting it from the stream
(an ordered consumer), measured together. Then the screens: the same appends watched at once by
the local `wren watch ID` and by `wren watch nats://SERVER/HOST/ID`, each in a process of its own,
each delay running to the frame that shows the event (the clock is the machine's monotonic one,
the same in every process). Skipped when the fleet extra is not installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench import BenchRow, absolute, compare, fmt, speedup
from tests.bench.gen import generate
from tests.bench.latency import appended_at, delays, go, percentiles, start_writer
from tests.fleet.server import NatsServer, server_binary

REPO = Path(__file__).resolve().parents[2]
EVENTS = 100_000
BASELINE_LINES = 10_000
LATENCY_EVENTS = 1_000
RATE = 100.0


def run() -> list[BenchRow]:
    binary = server_binary()
    try:
        import nats  # noqa: F401
    except ImportError:
        binary = None
    if binary is None:
        return [BenchRow("fleet", "-", "-", None, "-", "skipped: the fleet extra is not installed")]
    with tempfile.TemporaryDirectory(dir=os.environ.get("WREN_BENCH_DIR")) as tmp:
        root = Path(tmp)
        server = NatsServer(binary, root / "nats")
        server.start()
        try:
            return _throughput(server, root) + _latency(server, root) + _screens(server, root)
        finally:
            server.kill()


# --- throughput ---------------------------------------------------------------------------------


def _throughput(server: NatsServer, root: Path) -> list[BenchRow]:
    from wren_tui.fleet.mirror import Mirror, MirrorOptions

    folder = root / "big"
    path = generate(folder / "s-20260101-000000-big0.jsonl", EVENTS)
    lines = path.read_bytes().splitlines(keepends=True)
    megabytes = path.stat().st_size / 1e6

    def mirror_once(host: str) -> float:
        said: list[str] = []
        options = MirrorOptions(folder=folder, server=server.url, host=host)
        start = time.perf_counter()
        status = asyncio.run(Mirror(options, said.append).run(asyncio.Event(), once=True))
        elapsed = time.perf_counter() - start
        assert status == 0, said
        return elapsed

    ours = min(mirror_once(f"bench{n}") for n in range(2))  # a fresh subject each time
    per_line = asyncio.run(_publish_each(server.url, lines[:BASELINE_LINES])) * EVENTS / BASELINE_LINES
    rate = EVENTS / ours
    return [
        absolute(
            f"mirror a {EVENTS:,}-event journal ({megabytes:.0f} MB) to JetStream, atomic batches: events/s",
            rate,
            unit="events/s",
            at_least=40_000,
        ),
        speedup(
            f"the same vs one acknowledged publish per line (rate of the first {BASELINE_LINES:,}, scaled)",
            ours,
            per_line,
        ),
    ]


async def _publish_each(url: str, lines: list[bytes]) -> float:
    """The obvious way: publish each line and wait for its ack before the next (the order then holds)."""
    import nats

    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        start = time.perf_counter()
        for n, line in enumerate(lines, 1):
            await js.publish("wren.j.baseline.s-20260101-000000-base", line, headers={"Nats-Msg-Id": f"b.{n}"})
        return time.perf_counter() - start
    finally:
        await nc.close()


# --- tail latency -------------------------------------------------------------------------------


def _latency(server: NatsServer, root: Path) -> list[BenchRow]:
    from wren_tui.journal.writer import JournalWriter

    folder = root / "live"
    path = folder / "s-20260101-000000-live.jsonl"
    JournalWriter.create(path).close()
    log = root / "mirror.log"
    with open(log, "wb") as err:
        mirror = subprocess.Popen(
            [sys.executable, "-m", "wren_tui", "mirror", "--url", server.url, "--dir", str(folder), "--host", "bench"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        local, remote = asyncio.run(_both(server.url, path))
    finally:
        mirror.send_signal(signal.SIGTERM)
        mirror.wait(30)
    local_p50, local_p95 = percentiles(local)
    remote_p50, remote_p95 = percentiles(remote)
    return [
        compare(
            f"tail latency p95, append to a remote reader (mirror + stream), {RATE:.0f} events/s, "
            f"vs the local reader as wren watch reads (p50 {fmt(remote_p50, 's')} vs {fmt(local_p50, 's')})",
            remote_p95,
            local_p95,
            at_most=1.5,
        )
    ]


async def _both(url: str, path: Path) -> tuple[list[float], list[float]]:
    """Start the local and the remote reader, then the appends; each reader's delays, in seconds."""
    from wren_tui.fleet.remote import Fleet
    from wren_tui.journal.reader import Tail
    from wren_tui.sessions.tailing import watch_folder

    local_seen: dict[int, float] = {}
    remote_seen: dict[int, float] = {}
    tail = Tail(path)

    watching = asyncio.Event()

    async def on_change(_paths: set[Path]) -> None:
        watching.set()
        batch = tail.read()
        now = time.monotonic()
        local_seen.update(dict.fromkeys((e.seq for e in batch.events), now))

    async def remote_reader(fleet: Fleet, ready: asyncio.Event) -> None:
        async for chunk in fleet.read("bench", path.stem, follow=True):
            now = time.monotonic()
            ready.set()
            remote_seen.update(dict.fromkeys((e.seq for e in chunk.events), now))
            if len(remote_seen) >= LATENCY_EVENTS:
                return

    async with await Fleet.connect(url) as fleet:
        ready = asyncio.Event()
        remote = asyncio.create_task(remote_reader(fleet, ready))
        local = asyncio.create_task(watch_folder(path.parent, on_change))
        await asyncio.wait_for(ready.wait(), 60)  # the mirror made the stream; the reader is live
        await asyncio.wait_for(watching.wait(), 60)  # the folder watcher woke once: it is watching
        writer = start_writer(path, LATENCY_EVENTS, RATE)
        assert writer.stdout is not None
        go(writer)
        out = await asyncio.to_thread(writer.stdout.read)
        writer.wait(timeout=30)
        appended = appended_at(out)
        deadline = time.monotonic() + 60
        while (len(local_seen) < len(appended) or not remote.done()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        local.cancel()
        remote.cancel()
    return delays(local_seen, appended), delays(remote_seen, appended)


# --- tail latency to the screen: the remote viewer against the local one --------------------------

SCREEN_EVENTS = 1_000

# One viewer, local (a journal's path) or remote (nats://SERVER/HOST/ID), timing each event to its
# frame: "ready" once it shows the session, then, told the last seq on stdin, the stamps as JSON.
_VIEWER = r"""
import asyncio, json, sys, time
from pathlib import Path
from tests.bench.latency import stamp_frames
from wren_tui.tui.screens.session import SessionScreen

async def main() -> None:
    target, forks = sys.argv[1], Path(sys.argv[2])
    seen: dict[int, float] = {}
    if target.startswith("nats://"):
        from wren_tui.fleet.names import parse_ref
        from wren_tui.fleet.remote import Fleet
        from wren_tui.tui.fleet_app import FleetApp
        ref = parse_ref(target)
        fleet = await Fleet.connect(ref.server, reconnect=True)
        app = FleetApp(ref, fleet, fork_folder=forks)
    else:
        from wren_tui.tui.app import WrenApp
        path = Path(target)
        app = WrenApp(folder=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        while not isinstance(app.screen, SessionScreen) or not len(app.screen.timeline):
            await pilot.pause(0.02)
        screen = app.screen
        while screen.reader.indexing is not None or screen.writer_alive is None:
            await pilot.pause(0.02)
        stamp_frames(screen, seen)
        print("ready", flush=True)
        last = int(await asyncio.to_thread(sys.stdin.readline))
        deadline = time.monotonic() + 60
        while last not in seen and time.monotonic() < deadline:
            await pilot.pause(0.01)
    print(json.dumps(seen), flush=True)

asyncio.run(main())
"""


def _screens(server: NatsServer, root: Path) -> list[BenchRow]:
    from wren_tui.journal.events import ChatMessage, Message
    from wren_tui.journal.writer import JournalWriter

    folder = root / "screens"
    path = folder / "s-20260101-000000-scrn.jsonl"
    with JournalWriter.create(path) as writer:
        writer.append(Message(message=ChatMessage(role="user", content="watched from here and from afar")))
    with open(root / "mirror-screens.log", "wb") as err:
        mirror = subprocess.Popen(
            [sys.executable, "-m", "wren_tui", "mirror", "--url", server.url, "--dir", str(folder), "--host", "far"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    viewers: list[subprocess.Popen[str]] = []
    try:
        for target in (str(path), f"{server.url}/far/{path.stem}"):
            viewers.append(
                subprocess.Popen(
                    [sys.executable, "-c", _VIEWER, target, str(root / "forks")],
                    cwd=REPO,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        for viewer in viewers:
            assert viewer.stdout is not None
            said = viewer.stdout.readline()
            if said.strip() != "ready":
                raise RuntimeError(f"a viewer did not open the session: {said!r}")
        writer = start_writer(path, SCREEN_EVENTS, RATE)
        assert writer.stdout is not None
        go(writer)
        out, _ = writer.communicate(timeout=SCREEN_EVENTS / RATE + 60)
        appended = appended_at(out)
        last = max(appended)
        seen: list[dict[int, float]] = []
        for viewer in viewers:
            report, _ = viewer.communicate(f"{last}\n", timeout=120)
            seen.append({int(seq): at for seq, at in json.loads(report.splitlines()[-1]).items()})
    finally:
        for viewer in viewers:
            if viewer.poll() is None:
                viewer.kill()
            viewer.wait(30)
        mirror.send_signal(signal.SIGTERM)
        mirror.wait(30)
    local_p50, local_p95 = percentiles(delays(seen[0], appended))
    remote_p50, remote_p95 = percentiles(delays(seen[1], appended))
    return [
        compare(
            f"tail latency p95, append to the screen of wren watch nats:// ({SCREEN_EVENTS:,} events at "
            f"{RATE:.0f}/s) vs the local wren watch on the same appends (p50 {fmt(remote_p50, 's')} vs "
            f"{fmt(local_p50, 's')})",
            remote_p95,
            local_p95,
            at_most=1.5,
        )
    ]
