"""A real Arize Phoenix server for the OTLP tests, started once on 127.0.0.1 with its own working folder.

Phoenix comes from the `phoenix` extra (which .ci/run installs); without it these tests skip and say so.
Spans are read back through Phoenix's own client (`arize-phoenix-client`), as a user of Phoenix reads them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO

STARTUP_S = 180.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Phoenix:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def spans(self, session: str | None = None) -> list[dict[str, Any]]:
        """Every span of the default project (or of one session: its gen_ai.conversation.id)."""
        from phoenix.client import Client

        found: list[dict[str, Any]] = list(
            Client(base_url=self.url).spans.get_spans(project_identifier="default", limit=100_000, timeout=30)
        )
        if session is None:
            return found
        return [s for s in found if s["attributes"].get("gen_ai.conversation.id") == session]

    def wait_for_spans(self, session: str, count: int, deadline_s: float = 30.0) -> list[dict[str, Any]]:
        """The session's spans once there are `count` of them (Phoenix inserts what it receives in batches)."""
        deadline = time.monotonic() + deadline_s
        while True:
            spans = self.spans(session)
            if len(spans) >= count or time.monotonic() > deadline:
                return spans
            time.sleep(0.1)


@contextmanager
def running_phoenix(work: Path) -> Iterator[Phoenix]:
    """Phoenix on free loopback ports with `work` as its working folder, stopped when the block ends.

    PhoenixFailed (with the end of its log) when it exits or does not answer within STARTUP_S.
    """
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = work / "phoenix.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.otel.phoenix_server"],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_S
    try:
        while True:
            if process.poll() is not None:
                raise PhoenixFailed(f"Phoenix exited with {process.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise PhoenixFailed(f"Phoenix did not answer within {STARTUP_S:.0f} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.25)
        yield Phoenix(url, process, log)
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


class PhoenixFailed(Exception):
    """Phoenix did not start."""


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    pytest.importorskip("phoenix.server.main", reason="Arize Phoenix is not installed (pip install -e '.[phoenix]')")
    pytest.importorskip("phoenix.client", reason="the Phoenix client is not installed (pip install -e '.[phoenix]')")
    try:
        with running_phoenix(tmp_path_factory.mktemp("phoenix")) as server:
            yield server
    except PhoenixFailed as exc:
        pytest.fail(str(exc))
