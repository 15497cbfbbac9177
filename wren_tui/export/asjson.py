"""A session as one JSON document: the reader's verdict first, then every event as read.

Each event is its journal line exactly as written (its `crc` member included) when the line is
valid UTF-8, the way `wren log --json` prints them; the verdict comes first, so a damaged journal's
export says where reading stopped before anything else.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ..journal.events import Event, to_builtins
from ..journal.reader import scan_events
from ..journal.store import session_id_of
from ..journal.verdict import Stop
from ..journal.visible import escaped_json
from .atomic import AtomicOutput

_json = msgspec.json.Encoder()


def write_json(path: Path, out: AtomicOutput) -> Stop | None:
    """Write the events to `out`'s body and finish it with the verdict first; where reading stopped."""
    started = False

    def take(events: list[Event], lines: bytes | memoryview) -> None:
        nonlocal started
        out.write_raw((b"," if started else b"") + escaped_json(events_json(events, bytes(lines))))
        started = True

    verdict = scan_events(path, take)
    head = {
        "id": session_id_of(path),
        "path": str(path),
        "stoppedAtLine": None if verdict.stop is None else verdict.stop.line,
        "stoppedAtOffset": None if verdict.stop is None else verdict.stop.offset,
        "reason": None if verdict.stop is None else str(verdict.stop),
        "torn": verdict.torn,
        "warnings": verdict.warnings,
    }
    out.finish(escaped_json(_json.encode(head))[:-1].decode() + ',"events":[', "]}\n")
    return verdict.stop


def events_json(events: list[Event], lines: bytes) -> bytes:
    """The events as JSON values joined by commas: their lines as written when those are valid UTF-8."""
    if not lines.isascii():
        try:
            lines.decode("utf-8")
        except UnicodeDecodeError:
            # The decoder skips unknown fields unchecked, so a valid line may hold bad bytes there.
            return b",".join(_json.encode(to_builtins(e)) for e in events)
    # A JSON line holds no raw newline, so each newline is exactly a boundary between two events.
    return lines[:-1].replace(b"\n", b",")
