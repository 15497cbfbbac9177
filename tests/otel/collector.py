"""A small OTLP/HTTP collector on 127.0.0.1 for the tests that need no Phoenix: it decodes what it receives
(the protobuf of ExportTraceServiceRequest) and keeps each span whole, times included; or it misbehaves
as it is told (a redirect, an answer dripped a byte a second, an answer of hundreds of megabytes).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HUGE = 300 << 20  # the size of the answer "huge" streams


@dataclass
class Collector:
    url: str
    # "take" (200, spans kept), "redirect" (307 to another port), "drip" (200, then one byte a second),
    # "huge" (200 and HUGE bytes, Content-Length said), "huge-streamed" (200 and HUGE bytes, no length).
    mode: str = "take"
    spans: list[Any] = field(default_factory=list)
    requests: int = 0
    headers: list[dict[str, str]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def named(self, prefix: str) -> list[Any]:
        return [s for s in self.spans if s.name.startswith(prefix)]


def _handler(collector: Collector) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

            body = self.rfile.read(int(self.headers["Content-Length"]))
            collector.requests += 1
            collector.headers.append({k.lower(): v for k, v in self.headers.items()})
            mode = collector.mode
            if mode == "redirect":
                self.send_response(307)
                self.send_header("Location", "http://127.0.0.1:9/v1/traces")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if mode == "take":
                request = ExportTraceServiceRequest.FromString(body)
                collector.spans.extend(s for r in request.resource_spans for ss in r.scope_spans for s in ss.spans)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            if mode != "huge-streamed":
                self.send_header("Content-Length", str(HUGE if mode.startswith("huge") else 100_000))
            self.end_headers()
            try:
                if mode == "drip":
                    while not collector.stop.wait(1.0):
                        self.wfile.write(b"\0")
                        self.wfile.flush()
                else:
                    block = b"\0" * (1 << 20)
                    for _ in range(HUGE >> 20):
                        if collector.stop.is_set():
                            break
                        self.wfile.write(block)
            except OSError:
                pass  # the client hung up: what the test wants
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def running_collector(mode: str = "take") -> Iterator[Collector]:
    collector = Collector("", mode)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(collector))
    server.daemon_threads = True
    collector.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield collector
    finally:
        collector.stop.set()
        server.shutdown()
        server.server_close()


def wait_for(collector: Collector, prefix: str, count: int = 1, deadline_s: float = 60.0) -> list[Any]:
    """The spans whose name starts with `prefix`, once there are `count` (or what there is at the deadline)."""
    deadline = time.monotonic() + deadline_s
    while len(found := collector.named(prefix)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return found
