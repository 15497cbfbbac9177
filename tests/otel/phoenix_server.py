"""Arize Phoenix for the tests, on loopback only: `python -m tests.otel.phoenix_server` with PHOENIX_* set.

Phoenix binds its HTTP server to PHOENIX_HOST, but its gRPC collector to every address ("[::]" in
its code, whatever the settings). The tests send OTLP over HTTP only, and a test server listens on
127.0.0.1 alone, so the gRPC listener is moved there before Phoenix starts; nothing else is changed.
"""

from __future__ import annotations

import sys
from typing import Any

import grpc.aio

_server = grpc.aio.server


def _loopback_server(*args: Any, **kwargs: Any) -> Any:
    server = _server(*args, **kwargs)
    add = server.add_insecure_port
    server.add_insecure_port = lambda address: add(address.replace("[::]", "127.0.0.1"))
    return server


grpc.aio.server = _loopback_server

if __name__ == "__main__":
    from phoenix.server.main import main

    sys.argv = ["phoenix", "serve"]
    sys.exit(main())
