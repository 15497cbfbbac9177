"""What a mirror and two server outages cost the agent: its append time with them, against the same appends alone.

The agent is tests/fleet/writer.py (JournalWriter, an fdatasync an event, 100 events a second, 400
events); `wren mirror` follows its folder in a process of its own while nats-server is stopped and
started twice. The ratio of the two elapsed times is the agent's slowdown; the test of the same
outages (tests/fleet/test_crashes.py) checks behaviour only: appends go on, nothing is lost.
Skipped when the fleet extra is not installed.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

from tests.bench import BenchRow, compare
from tests.fleet.server import NatsServer, server_binary

COUNT = "400"


def run() -> list[BenchRow]:
    binary = server_binary()
    try:
        import nats  # noqa: F401
    except ImportError:
        binary = None
    if binary is None:
        return [BenchRow("outage", "-", "-", None, "-", "skipped: the fleet extra is not installed")]
    from tests.fleet.conftest import mirror_process, start_writer

    with tempfile.TemporaryDirectory(dir=os.environ.get("WREN_BENCH_DIR")) as tmp:
        root = Path(tmp)
        alone = start_writer(root / "alone", "--rate", "100", "--count", COUNT).finish()
        server = NatsServer(binary, root / "nats")
        server.start()
        mirror = mirror_process(server, root / "journals", root / "mirror.log")
        try:
            writer = start_writer(root / "journals", "--rate", "100", "--count", COUNT)
            for _ in range(2):
                time.sleep(0.5)  # a benchmark's schedule: the outages fall inside the 4 s of appends
                server.stop()
                time.sleep(0.7)
                server.start()
            mirrored = writer.finish()
        finally:
            mirror.send_signal(signal.SIGTERM)
            mirror.wait(30)
            server.kill()
    return [
        compare(
            f"the agent's {COUNT} appends with a mirror and two server outages vs alone (elapsed)",
            mirrored["elapsed"],
            alone["elapsed"],
            at_most=1.2,
        )
    ]
