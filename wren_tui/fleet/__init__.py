"""The fleet: journals mirrored to NATS JetStream, and read back from there, so one viewer sees many machines.

The journal stays the only source of truth. `mirror` is a separate process that ships each
journal's durable, valid lines to a stream, exactly once and in order; `remote` reads them back
through Wren's own reader. The agent never imports this package, and this package imports only
`wren_tui.journal` of Wren's own code (a test checks both).

Everything here needs the `fleet` extra (`nats-py`); importing this package alone does not.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from ..journal.errors import JournalError


class FleetError(JournalError):
    """The fleet cannot do what was asked (no server, bad reference, unusable stream): the message says what to do."""


@contextmanager
def needing_nats() -> Iterator[None]:
    """Around an import of a module that needs nats-py: its absence becomes a FleetError that says how to install it
    (any other missing module is left as it is)."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("nats"):
            raise
        raise FleetError(
            "the fleet needs nats-py, which is not installed: pip install 'wren-tui[fleet]' (it brings nats-server too)"
        ) from None


def why(exc: BaseException, server: str | None = None) -> str:
    """What went wrong, in a few words: "connection refused" rather than an OSError's tuple, "cannot resolve
    HOST" (the host of `server`) rather than the resolver's "unknown error -2"."""
    if isinstance(exc, socket.gaierror):
        host = _host_of(server)
        said = (exc.strerror or "no such name").lower()
        return f"cannot resolve {host}: {said}" if host else f"cannot resolve the server's name: {said}"
    if isinstance(exc, OSError) and exc.errno:
        return os.strerror(exc.errno).lower()
    return str(exc) or type(exc).__name__


def _host_of(server: str | None) -> str | None:
    if server is None:
        return None
    try:
        return urlsplit(server).hostname
    except ValueError:
        return None
