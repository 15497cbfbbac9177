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
def test_a_server_stopped_and_restarted_twice_neither_slows_the_agent_nor_loses_a_line(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    alone = start_writer(tmp_path / "alone", "--rate", "100", "--count", "400").finish()
    folder = tmp_path / "journals"
    log = tmp_path / "mirror.log"
    mirror = mirror_process(nats_server, folder, log)
    try:
        writer = start_writer(folder, "--rate", "100", "--count", "400")
        (sid,) = writer.sessions
        subject = f"wren.j.box.{sid}"
        deadline = time.monotonic() + 60
        while not lines_in_stream(nats_server.url, subject):
            assert time.monotonic() < deadline, f"the mirror shipped nothing: {log.read_text()}"
            time.sleep(0.05)
        for _ in range(2):
            nats_server.stop()
            time.sleep(0.7)  # the agent goes on appending while the server is away
            nats_server.start()
            time.sleep(0.5)
        mirrored = writer.finish()
        until_mirrored(nats_server.url, subject, folder / f"{sid}.jsonl", timeout=60)
    finally:
        mirror.send_signal(signal.SIGTERM)
        status = mirror.wait(30)
    ratio = mirrored["elapsed"] / alone["elapsed"]
    assert ratio < 1.2, f"the agent took {ratio:.2f}x as long with the mirror and the outages: {mirrored} vs {alone}"
    said = log.read_text()
    assert status == 128 + signal.SIGTERM, said
    assert "cannot reach" in said and "again; catching up" in said, said


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
