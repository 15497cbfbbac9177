"""`wren log`: the events of a session (a journal, or one a fleet mirrored), and where and why reading stopped."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

import msgspec

from ..journal.events import Event, describe, event_type, to_builtins
from ..journal.reader import EventSink, scan_events
from ..journal.store import session_id_of
from ..journal.verdict import ReadVerdict
from ..journal.visible import visible
from . import fleet, foreign
from .console import err, out
from .exits import Exit, Unreadable
from .options import folder_of

Scan = Callable[[EventSink], ReadVerdict]
_json = msgspec.json.Encoder()


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "log",
        parents=[common],
        help="the events of a session, and where and why reading stopped",
        description="Print every readable event of a journal. On a damaged journal, print the "
        "events before the damage, then where reading stopped and why, and exit 4.",
    )
    p.add_argument(
        "session",
        metavar="ID|PATH|nats://SERVER/HOST/ID",
        help="a session id (s-YYYYMMDD-HHMMSS-xxxx), a journal file, or a session mirrored to a fleet's server",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON document for scripts; each event is its journal line as written (crc member included)",
    )
    p.set_defaults(handler=cmd_log)


def stop_line(verdict: ReadVerdict) -> str:
    """The listing's last line when reading stopped: where, why, and what it means (the verdict has a stop)."""
    stop = verdict.stop
    assert stop is not None
    where = f"stopped at line {stop.line} (byte {stop.offset}): {stop.why}"
    if stop.torn:
        return f"{where} [torn tail] (a crash's normal end; resuming the session sets these bytes aside)"
    return f"{where} [corrupt] (nothing after it is read; fork from an earlier point or move the file aside)"


def cmd_log(args: argparse.Namespace) -> Exit:
    local = not fleet.is_remote(args.session)
    if local:
        path = foreign.resolve(folder_of(args), args.session)
        if (fmt := foreign.foreign_format(path)) is not None:
            return foreign.log_foreign(path, fmt, args.json)
        scan: Scan = partial(scan_events, path)
        session_id, where = session_id_of(path), str(path)
    else:
        scan, session_id, where = fleet.remote_log_source(args.session)
    result = _log_json(scan, session_id, where) if args.json else _log_text(scan)
    if result.stop is not None:
        # What could be read is printed; the journal did not end there.
        raise Unreadable(where, result.stop, local=local)
    return Exit.OK


def _log_text(scan: Scan) -> ReadVerdict:
    def show(events: list[Event], _lines: object) -> None:
        sys.stdout.write("".join(f"{e.seq:>6}  {e.ts}  {event_type(e):<10}  {visible(describe(e))}\n" for e in events))

    result = scan(show)
    for warning in result.warnings:
        err(f"warning: {warning}")
    if not result.ok:
        out(stop_line(result))
    return result


def _log_json(scan: Scan, session_id: str, where: str) -> ReadVerdict:
    """One document, streamed: each event is its line as written (with its crc member), never re-encoded."""
    write = sys.stdout.buffer.write
    head = b'{"id":%s,"path":%s,"events":[' % (_json.encode(session_id), _json.encode(where))
    started = False

    def emit(events: list[Event], lines: bytes | memoryview) -> None:
        nonlocal started
        # Nothing is written before the journal opens, so an unreadable one prints only its error.
        write(b"," if started else head)
        write(_events_json(events, bytes(lines)))  # apart, so a megabyte of events is not copied once more
        started = True

    result = scan(emit)
    stop = result.stop
    tail = {
        "stoppedAtLine": None if stop is None else stop.line,
        "stoppedAtOffset": None if stop is None else stop.offset,
        "reason": None if stop is None else str(stop),
        "torn": result.torn,
        "warnings": result.warnings,
    }
    write((b"" if started else head) + b"]," + _json.encode(tail)[1:] + b"\n")
    sys.stdout.flush()
    return result


def _events_json(events: list[Event], lines: bytes) -> bytes:
    """The events as JSON values joined by commas: their lines as written when those are valid UTF-8."""
    if not lines.isascii():
        try:
            lines.decode("utf-8")
        except UnicodeDecodeError:
            # The decoder skips unknown fields unchecked, so a valid line may hold bad bytes there.
            return b",".join(_json.encode(to_builtins(e)) for e in events)
    # A JSON line holds no raw newline, so each newline is exactly a boundary between two events.
    return lines[:-1].replace(b"\n", b",")
