"""Exactly once, in order, after any crash: kill -9 of the mirror, a server stopped and started, two mirrors at once.

kill -9 lands 20 times at random moments (WREN_TORTURE=1: 200) while an agent-like writer appends to
two journals, some lines 600 KB; whatever the moment, the stream ends up holding each journal's
lines 1..N once each, in order, byte for byte.
"""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest

from tests.fleet.conftest import NatsServer, lines_in_stream, mirror_process, start_writer, until_mirrored
from tests.reliability.dial import scaled
from tests.waiting import until

KILLS = scaled(20, 200)


@pytest.mark.slow
def test_kill_9_of_the_mirror_at_random_moments_leaves_each_line_once_in_order(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    folder = tmp_path / "journals"
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    writer = start_writer(folder, "--sessions", "2", "--rate", "150", "--big-every", "40")
    log = tmp_path / "mirror.log"
    try:
        for _ in range(KILLS):
            mirror = mirror_process(nats_server, folder, log)
            # A random moment: starting up, comparing with the stream, or in the middle of a batch.
            time.sleep(rng.uniform(0.05, 1.5))
            mirror.kill()
            mirror.wait(30)
    finally:
        summary = writer.finish()
    in_stream = [len(lines_in_stream(nats_server.url, f"wren.j.box.{sid}")) for sid in writer.sessions]
    assert sum(in_stream) > 0, f"seed {seed}: the killed mirrors shipped nothing at all; see {log}"
    final = mirror_process(nats_server, folder, log, "--once")
    assert final.wait(120) == 0, f"seed {seed}: {log.read_text()}"
    for sid in writer.sessions:
        until_mirrored(nats_server.url, f"wren.j.box.{sid}", folder / f"{sid}.jsonl")
    assert summary["events"] > 0


@pytest.mark.slow
def test_a_server_stopped_and_restarted_twice_neither_stops_the_agent_nor_loses_a_line(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    # How much the mirror and the outages slow the agent is a benchmark: `python -m tests.bench outage`.
    folder = tmp_path / "journals"
    log = tmp_path / "mirror.log"
    mirror = mirror_process(nats_server, folder, log)
    try:
        writer = start_writer(folder, "--rate", "100")  # appends until told to stop
        (sid,) = writer.sessions
        subject = f"wren.j.box.{sid}"
        journal = folder / f"{sid}.jsonl"
        until(lambda: bool(lines_in_stream(nats_server.url, subject)), f"the mirror to ship: {log}")
        for outage in range(1, 3):
            nats_server.stop()
            away = _lines(journal)
            # The agent goes on appending while the server is away, and the mirror says it cannot reach it.
            until(lambda a=away: _lines(journal) >= a + 30, "the agent to append during the outage")
            until(lambda n=outage: _said(log, "cannot reach") >= n, f"the mirror to notice outage {outage}")
            nats_server.start()
            until(lambda n=outage: _said(log, "again; catching up") >= n, f"the mirror to catch up ({log})")
        writer.finish()
        until_mirrored(nats_server.url, subject, journal, timeout=60)
    finally:
        mirror.send_signal(signal.SIGTERM)
        status = mirror.wait(30)
    assert status == 128 + signal.SIGTERM, log.read_text()


def _said(log: Path, words: str) -> int:
    return log.read_text().count(words)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


@pytest.mark.slow
def test_two_mirrors_on_one_folder_ship_each_line_once_in_order(nats_server: NatsServer, tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    writer = start_writer(folder, "--sessions", "2", "--rate", "200", "--count", "300", "--big-every", "50")
    first = mirror_process(nats_server, folder, tmp_path / "first.log")
    second = mirror_process(nats_server, folder, tmp_path / "second.log")
    try:
        writer.finish()
        for sid in writer.sessions:
            until_mirrored(nats_server.url, f"wren.j.box.{sid}", folder / f"{sid}.jsonl")
    finally:
        for mirror in (first, second):
            mirror.send_signal(signal.SIGTERM)
            mirror.wait(30)
