"""A real nats-server with JetStream on 127.0.0.1, for the fleet's tests and benchmarks (no pytest here)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

READY_S = 30.0


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
        try:
            self._wait_ready(ports, seen)
        except BaseException:
            self.kill()  # a server that never became ready must not outlive the test
            raise

    def _wait_ready(self, ports: Path, seen: int) -> None:
        assert self.process is not None
        deadline = time.monotonic() + READY_S
        while True:
            text = self.log.read_bytes()[seen:].decode(errors="replace") if self.log.exists() else ""
            # The ports file can come a moment after the log line: wait for both.
            if "Server is ready" in text and (self.port is not None or self._read_port(ports)):
                break
            if self.process.poll() is not None or time.monotonic() > deadline:
                err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                raise RuntimeError(f"nats-server did not become ready in {READY_S:.0f} s: {err}{text[-2000:]}")
            time.sleep(0.02)

    def _read_port(self, ports: Path) -> bool:
        """The port the server picked, from the file it writes (False until it is there and whole)."""
        for found in ports.iterdir():
            try:
                self.port = int(json.loads(found.read_text())["nats"][0].rsplit(":", 1)[1])
                return True
            except (ValueError, KeyError, IndexError):
                return False
        return False

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
