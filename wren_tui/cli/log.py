"""`wren log`: the events of a session (a journal, or one a fleet mirrored), and where and why reading stopped."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from contextlib import closing
from functools import partial
from typing import TYPE_CHECKING, Any

import msgspec

from ..export.asjson import events_json
from ..journal.events import Event, describe, event_type, to_builtins
from ..journal.reader import EventSink
from ..journal.verdict import ReadVerdict, Stop
from ..journal.visible import escaped_json, visible
from .console import err, out
from .exits import Exit, ForeignUnreadable, Unreadable

if TYPE_CHECKING:
    from ..sessions.foreign import ForeignFile

Scan = Callable[[EventSink], ReadVerdict]
_json = msgspec.json.Encoder()


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, json_option

    p = command_parser(
        sub,
        "log",
        cmd_log,
        "Print every readable event of a journal. On a damaged journal, print the "
        "events before the damage, then where reading stopped and why, and exit 4.",
        common,
    )
    p.add_argument(
        "session",
        metavar="ID|PATH|nats://SERVER/HOST/ID",
        help="a session id (s-YYYYMMDD-HHMMSS-xxxx), a journal file, or a session mirrored to a fleet's server",
    )
    json_option(p, "one JSON document for scripts; each event is its journal line as written (crc member included)")


# What a stop means, (torn tail, corrupt): in a Wren journal, and in another agent's file (never changed).
Meaning = tuple[str, str]
JOURNAL: Meaning = (
    "a crash's normal end; resuming the session sets these bytes aside",
    "nothing after it is read; fork from an earlier point or move the file aside",
)
FOREIGN: Meaning = (
    "its writer may still be writing it; another agent's file is never changed",
    "nothing after it is read; fork from an earlier point",
)


def stop_line(stop: Stop, meaning: Meaning = JOURNAL) -> str:
    """The listing's last line when reading stopped: where, why, and what it means."""
    where = f"stopped at line {stop.line} (byte {stop.offset}): {stop.why}"
    if stop.torn:
        return f"{where} [torn tail] ({meaning[0]})"
    return f"{where} [corrupt] ({meaning[1]})"


def cmd_log(args: argparse.Namespace) -> Exit:
    from ..sessions.opening import FleetSession, open_session

    source = open_session(args.session, args.dir, say=err)
    with closing(source):
        if source.agent is not None:
            from ..sessions.foreign import ForeignFile  # another agent's reader, loaded for its session alone

            assert isinstance(source, ForeignFile)
            return _log_foreign(source, args.json)
        scan: Scan = source.scan
        result = _log_json(scan, source.id, source.where) if args.json else _log_text(scan)
    if result.stop is not None:
        # What could be read is printed; the journal did not end there.
        raise Unreadable(source.where, result.stop, local=not isinstance(source, FleetSession))
    return Exit.OK


def _log_text(scan: Scan, meaning: Meaning = JOURNAL) -> ReadVerdict:
    def show(events: list[Event], _lines: object) -> None:
        sys.stdout.write("".join(f"{e.seq:>6}  {e.ts}  {event_type(e):<10}  {visible(describe(e))}\n" for e in events))

    result = scan(show)
    for warning in result.warnings:
        err(f"warning: {warning}")
    if result.stop is not None:
        out(stop_line(result.stop, meaning))
    return result


def _log_json(
    scan: Scan,
    session_id: str,
    where: str,
    agent: str | None = None,
    encode: Callable[[list[Event], bytes], bytes] | None = None,
    more: Callable[[], dict[str, object]] = dict,
) -> ReadVerdict:
    """One document, streamed: each event is its line as written (with its crc member), never re-encoded.

    Another agent's file says its `agent`, has its events encoded anew (`encode`: they have no Wren
    line) and `more` members after the verdict's.
    """
    raw = sys.stdout.buffer.write

    def write(data: bytes) -> None:
        raw(escaped_json(data))  # a C1 control, a bidi override in a text: written as \\uXXXX, never raw

    named = b"" if agent is None else b'"agent":%s,' % _json.encode(agent)
    head = b'{"id":%s,"path":%s,%b"events":[' % (_json.encode(session_id), _json.encode(where), named)
    started = False

    def emit(events: list[Event], lines: bytes | memoryview) -> None:
        nonlocal started
        # Nothing is written before the journal opens, so an unreadable one prints only its error.
        write(b"," if started else head)
        # Apart, so a megabyte of events is not copied once more.
        write(events_json(events, bytes(lines)) if encode is None else encode(events, bytes(lines)))
        started = True

    result = scan(emit)
    stop = result.stop
    tail = {
        "stoppedAtLine": None if stop is None else stop.line,
        "stoppedAtOffset": None if stop is None else stop.offset,
        "reason": None if stop is None else str(stop),
        "torn": result.torn,
        "warnings": result.warnings,
        **more(),
    }
    write((b"" if started else head) + b"]," + _json.encode(tail)[1:] + b"\n")
    sys.stdout.flush()
    return result


# --- wren log PATH (another agent's file) -----------------------------------------------------------


def _log_foreign(source: ForeignFile, as_json: bool) -> Exit:
    """`wren log PATH` for another agent's file: its lines as Wren events (seq: the line's number), every branch."""
    fmt = source.format
    scan: Scan = partial(source.scan, every_branch=True)

    def more() -> dict[str, object]:
        return {"skipped": source.skipped.as_json(), "unrecorded": fmt.unrecorded}

    if as_json:
        result = _log_json(scan, source.id, source.where, fmt.name, _encoded, more)
    else:
        if fmt.unrecorded:
            # What the format never records, said first on stdout as a heading (not an error: nothing is wrong).
            out(f"Note: {fmt.unrecorded}.")
        result = _log_text(scan, FOREIGN)
    left_out = source.skipped.sentence()
    if left_out and not as_json:
        err(f"{source.where}: {left_out}")
    if result.stop is not None:
        # What could be read is printed; the file did not end there.
        raise ForeignUnreadable(source.where, result.stop)
    return Exit.OK


def _encoded(events: list[Event], _lines: bytes) -> bytes:
    """Another agent's events, each as Wren would journal it."""
    return b",".join(_json.encode(to_builtins(e)) for e in events)
