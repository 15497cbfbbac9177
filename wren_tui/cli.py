"""The `wren` command: parsing, dispatch, and the journal commands (log, ls, fork).

Exit statuses: 0 ok, 1 error, 2 bad usage, 3 resume refused (an outcome is unknown),
4 journal unreadable past a line, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from . import __version__
from .journal.events import Event, Message, describe, event_type, to_builtins
from .journal.fork import NotAForkPoint, fork, fork_points
from .journal.reader import EventSink, JournalError, Lines, ReadResult, ReadVerdict, read_events, scan_events
from .journal.store import SessionInfo, journals_dir, list_sessions, resolve, session_id_of
from .journal.visible import visible

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REFUSED, EXIT_UNREADABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130

Handler = Callable[[argparse.Namespace], int]
_json = msgspec.json.Encoder()


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def err(text: str) -> None:
    sys.stderr.write(f"wren: {text}\n")


def print_json(data: Any) -> None:
    sys.stdout.buffer.write(_json.encode(data) + b"\n")
    sys.stdout.flush()


def folder_of(args: argparse.Namespace) -> Path:
    return journals_dir(getattr(args, "dir", None))


# --- wren log -------------------------------------------------------------------------------


def summarize(event: Event) -> str:
    """One line a person can scan: what happened at this seq."""
    if isinstance(event, Message):
        msg = event.message
        text = " ".join(msg.content.split())
        if len(text) > 100:
            text = text[:97] + "..."
        calls = "".join(f" -> {c.name}({c.args})" for c in msg.toolCalls or ())
        return f"{msg.role}: {text!r}{calls}"
    return describe(event)


def stop_sentence(result: ReadResult | ReadVerdict) -> str:
    """Where and why reading stopped, and what a person can do about it."""
    line = result.stopped_at_line
    reason = (result.reason or "").removeprefix(f"line {line}: ")
    where = f"stopped at line {line} (byte {result.stopped_at_offset}): {reason}"
    if result.torn:
        return f"{where} [torn tail] (a crash's normal end; resuming the session sets these bytes aside)"
    return f"{where} [corrupt] (nothing after it is read; fork from an earlier point or move the file aside)"


def cmd_log(args: argparse.Namespace) -> int:
    if _is_fleet_ref(args.session):
        scan, session_id, where = _fleet_log_source(args.session)
    else:
        path = resolve(folder_of(args), args.session)
        scan, session_id, where = partial(scan_events, path), session_id_of(path), str(path)
    result = _log_json(scan, session_id, where) if args.json else _log_text(scan)
    return EXIT_OK if result.reason is None else EXIT_UNREADABLE


def _log_text(scan: Callable[[EventSink], ReadVerdict]) -> ReadVerdict:
    def show(events: list[Event], _lines: Lines) -> None:
        sys.stdout.write("".join(f"{e.seq:>6}  {e.ts}  {event_type(e):<10}  {visible(summarize(e))}\n" for e in events))

    result = scan(show)
    for warning in result.warnings:
        err(f"warning: {warning}")
    if result.reason is not None:
        out(stop_sentence(result))
    return result


def _log_json(scan: Callable[[EventSink], ReadVerdict], session_id: str, where: str) -> ReadVerdict:
    """One document, streamed: each event is its line as written (with its crc member), never re-encoded."""
    write = sys.stdout.buffer.write
    head = b'{"id":%s,"path":%s,"events":[' % (_json.encode(session_id), _json.encode(where))
    started = False

    def emit(events: list[Event], lines: Lines) -> None:
        nonlocal started
        # Nothing is written before the journal opens, so an unreadable one prints only its error.
        write(b"," if started else head)
        write(_events_json(events, bytes(lines)))  # apart, so a megabyte of events is not copied once more
        started = True

    result = scan(emit)
    tail = {
        "stoppedAtLine": result.stopped_at_line,
        "stoppedAtOffset": result.stopped_at_offset,
        "reason": result.reason,
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


# --- wren ls --------------------------------------------------------------------------------


def _row(info: SessionInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "path": str(info.path),
        "state": info.state,
        "events": info.events,
        "started": info.started,
        "lastTs": info.last_ts,
        "durationS": info.duration_s,
        "tokens": info.tokens,
        "forkedFrom": info.forked_from,
        "forkAt": info.fork_at,
        "reason": info.reason,
        "exact": info.exact,
    }


def cmd_ls(args: argparse.Namespace) -> int:
    if args.server is not None:
        return _fleet_ls(args.server, args.json)
    folder = folder_of(args)
    sessions = list_sessions(folder)
    if args.json:
        print_json([_row(s) for s in sessions])
        return EXIT_OK
    if not sessions:
        out(f"no sessions in {folder}")
        return EXIT_OK
    out(f"{'ID':<24}  {'STARTED':<24}  {'EVENTS':>6}  {'DURATION':>8}  {'TOKENS':>7}  {'STATE':<15}  FORKED FROM")
    for s in sessions:
        dur = f"{s.duration_s:.1f}s" if s.duration_s is not None else "-"
        origin = f"{s.forked_from}@{s.fork_at}" if s.forked_from else ""
        tokens = str(s.tokens) if s.exact else f"~{s.tokens}"  # a big journal is summed from its head and tail
        out(
            visible(
                f"{s.id:<24}  {s.started or '-':<24}  {s.events:>6}  {dur:>8}  {tokens:>7}  {s.state:<15}  {origin}"
            )
        )
    return EXIT_OK


# --- wren fork ------------------------------------------------------------------------------


def cmd_fork(args: argparse.Namespace) -> int:
    path = resolve(folder_of(args), args.session)
    if args.seq is None:
        result = read_events(path)
        points = fork_points(result.events)
        if args.json:
            print_json([{"seq": p.seq, "role": p.role, "preview": p.preview} for p in points])
        elif not points:
            out(f"{session_id_of(path)} has no clean fork point yet")
        else:
            out(f"Clean fork points of {session_id_of(path)} (fork with `wren fork {session_id_of(path)} SEQ`):")
            for p in points:
                out(f"  {visible(str(p))}")
        if result.reason is not None and not args.json:
            out(stop_sentence(result))
        return EXIT_OK
    forked = fork(path, args.seq, folder=path.parent)
    if args.json:
        print_json({"id": forked.id, "path": str(forked.path), "from": forked.parent, "atSeq": forked.at_seq})
    else:
        out(f"forked {forked.parent} at seq {forked.at_seq} -> {forked.id}")
        out(f"continue it with: wren resume {forked.id}")
    return EXIT_OK


# --- parser ---------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dir", metavar="DIR", help="journals folder (default: $WREN_DIR, else ./journals)")
    parser = argparse.ArgumentParser(
        prog="wren",
        description="A coding agent that survives being killed, and a viewer that only watches it. "
        "Every step is appended to a journal (JSON Lines) before anything else changes.",
        epilog="exit status: 0 ok, 1 error, 2 bad usage, 3 resume refused (outcome unknown), "
        "4 journal unreadable past a line, 130 interrupted",
    )
    parser.add_argument("--version", action="version", version=f"wren {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

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

    p = sub.add_parser(
        "ls",
        parents=[common],
        help="sessions, newest first, with their state",
        description="List the journals in the journals folder, newest first, with state "
        "(live, done, interrupted, outcome unknown, torn tail, corrupt), events, duration, tokens.",
    )
    p.add_argument(
        "server",
        metavar="nats://SERVER[/HOST]",
        nargs="?",
        help="list the sessions mirrored to a fleet's server (every host's, or one host's) instead",
    )
    p.add_argument("--json", action="store_true", help="a JSON array for scripts")
    p.set_defaults(handler=cmd_ls)

    p = sub.add_parser(
        "fork",
        parents=[common],
        help="list clean fork points, or fork a new session at SEQ",
        description="Without SEQ, list the clean points of a session. With SEQ, copy the "
        "journal up to that event into a new session (the parent stays byte-identical).",
    )
    p.add_argument("session", metavar="ID|PATH", help="a session id (s-YYYYMMDD-HHMMSS-xxxx) or a journal file")
    p.add_argument(
        "seq",
        metavar="SEQ",
        type=int,
        nargs="?",
        help="the seq of a clean point: the new session ends with that event, then the fork event",
    )
    p.add_argument("--json", action="store_true", help="JSON for scripts")
    p.set_defaults(handler=cmd_fork)

    for register in _registrars():
        register(sub, common)
    return parser


def _registrars() -> list[Callable[[Any, argparse.ArgumentParser], None]]:
    from .agent.commands import register as agent_commands
    from .demo import register as demo_command
    from .fleet.command import register as fleet_commands
    from .tui.commands import register as viewer_commands

    return [agent_commands, viewer_commands, demo_command, fleet_commands]


# --- the fleet: nats:// references in ls and log (wren_tui/fleet/command.py does the work) ---------


def _is_fleet_ref(text: str) -> bool:
    from .fleet.names import is_remote

    return is_remote(text)


def _fleet_log_source(target: str) -> tuple[Callable[[EventSink], ReadVerdict], str, str]:
    from .fleet.command import remote_log_source

    return remote_log_source(target)


def _fleet_ls(target: str, as_json: bool) -> int:
    from .fleet.command import cmd_ls_remote

    return cmd_ls_remote(target, as_json)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except NotAForkPoint as exc:
        err(str(exc))
        return EXIT_USAGE
    except JournalError as exc:
        err(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
