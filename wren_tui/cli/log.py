"""`wren log`: the events of a session (a journal, or one a fleet mirrored), and where and why reading stopped."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from ..export.asjson import events_json
from ..foreign.base import Format, Skipped, Translated
from ..foreign.exported import open_lines
from ..foreign.reader import scan as foreign_scan
from ..journal.events import Event, describe, event_type, to_builtins
from ..journal.reader import EventSink, scan_events
from ..journal.store import session_id_of
from ..journal.verdict import ReadVerdict
from ..journal.visible import escaped_json, visible
from . import fleet, foreign
from .console import err, out
from .exits import Exit, ForeignUnreadable, Unreadable
from .options import folder_of

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


def stop_line(verdict: ReadVerdict, meaning: Meaning = JOURNAL) -> str:
    """The listing's last line when reading stopped: where, why, and what it means (the verdict has a stop)."""
    stop = verdict.stop
    assert stop is not None
    where = f"stopped at line {stop.line} (byte {stop.offset}): {stop.why}"
    if stop.torn:
        return f"{where} [torn tail] ({meaning[0]})"
    return f"{where} [corrupt] ({meaning[1]})"


def cmd_log(args: argparse.Namespace) -> Exit:
    local = not fleet.is_remote(args.session)
    if local:
        path = foreign.resolve(folder_of(args), args.session)
        if (fmt := foreign.foreign_format(path)) is not None:
            return _log_foreign(path, fmt, args.json)
        scan: Scan = partial(scan_events, path)
        session_id, where = session_id_of(path), str(path)
    else:
        scan, session_id, where = fleet.remote_log_source(args.session)
    result = _log_json(scan, session_id, where) if args.json else _log_text(scan)
    if result.stop is not None:
        # What could be read is printed; the journal did not end there.
        raise Unreadable(where, result.stop, local=local)
    return Exit.OK


def _log_text(scan: Scan, meaning: Meaning = JOURNAL) -> ReadVerdict:
    def show(events: list[Event], _lines: object) -> None:
        sys.stdout.write("".join(f"{e.seq:>6}  {e.ts}  {event_type(e):<10}  {visible(describe(e))}\n" for e in events))

    result = scan(show)
    for warning in result.warnings:
        err(f"warning: {warning}")
    if not result.ok:
        out(stop_line(result, meaning))
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


def _log_foreign(path: Path, fmt: Format, as_json: bool) -> Exit:
    """`wren log PATH` for another agent's file: its lines as Wren events (seq: the line's number), every branch."""
    skipped = Skipped()

    def scan(sink: EventSink) -> ReadVerdict:
        def take(_lineno: int, line: Translated, data: bytes) -> None:
            if shown := [e for i, e in enumerate(line.events) if i not in line.hidden]:
                sink(shown, data)

        return foreign_scan(fd, fmt, take, skipped=skipped)

    def more() -> dict[str, object]:
        return {"skipped": skipped.as_json(), "unrecorded": fmt.unrecorded}

    fd = open_lines(path, fmt)
    try:
        if as_json:
            result = _log_json(scan, fmt.session_id(path), str(path), fmt.name, _encoded, more)
        else:
            if fmt.unrecorded:
                # What the format never records, said first on stdout as a heading (not an error: nothing is wrong).
                out(f"Note: {fmt.unrecorded}.")
            result = _log_text(scan, FOREIGN)
    finally:
        os.close(fd)
    left_out = skipped.sentence()
    if left_out and not as_json:
        err(f"{path}: {left_out}")
    if result.stop is not None:
        # What could be read is printed; the file did not end there.
        raise ForeignUnreadable(path, result.stop)
    return Exit.OK


def _encoded(events: list[Event], _lines: bytes) -> bytes:
    """Another agent's events, each as Wren would journal it."""
    return b",".join(_json.encode(to_builtins(e)) for e in events)
