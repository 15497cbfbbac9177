"""The fleet: journals mirrored to NATS JetStream, and read back from there, so one viewer sees many machines.

The journal stays the only source of truth. `mirror` is a separate process that ships each
journal's durable, valid lines to a stream, exactly once and in order; `remote` reads them back
through Wren's own reader. The agent never imports this package, and this package imports only
`wren_tui.journal` of Wren's own code (a test checks both).

Everything here needs the `fleet` extra (`nats-py`); importing this package alone does not.
"""

from __future__ import annotations

import os

from ..journal.errors import JournalError


class FleetError(JournalError):
    """The fleet cannot do what was asked (no server, bad reference, unusable stream): the message says what to do."""


def why(exc: BaseException) -> str:
    """What went wrong, in a few words: "connection refused" rather than an OSError's tuple."""
    if isinstance(exc, OSError) and exc.errno:
        return os.strerror(exc.errno).lower()
    return str(exc) or type(exc).__name__
