"""The `wren` command: parsing, dispatch, and the journal commands (log, ls, fork).

Exit statuses: 0 ok, 1 error, 2 bad usage, 3 resume refused (an outcome is unknown),
4 journal unreadable past a line, 5 the journal was changed under the run, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from . import __version__
from .journal.commandline import wren_command
from .journal.errors import JournalChanged, JournalError
from .journal.events import Event, describe, event_type, to_builtins
from .journal.forking import NotAForkPoint, fork, fork_listing, fork_points
from .journal.reader import EventSink, read_events, scan_events
from .journal.store import (
    SessionInfo,
    in_project,
    journals_dir,
    list_sessions,
    project_label,
    resolve,
    session_id_of,
    write_problem,
)
from .journal.verdict import ReadVerdict
from .journal.visible import visible

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REFUSED, EXIT_UNREADABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
EXIT_CHANGED = 5

Handler = Callable[[argparse.Namespace], int]
# Where journals go when --dir is not given (journal/store.py:journals_dir decides it).
DEFAULT_DIR_HELP = "$WREN_DIR, else $XDG_STATE_HOME/wren/journals, else ~/.local/state/wren/journals"
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


def stop_sentence(verdict: ReadVerdict) -> str:
    """Where and why reading stopped, and what a person can do about it (the verdict has a stop)."""
    stop = verdict.stop
    assert stop is not None
    where = f"stopped at line {stop.line} (byte {stop.offset}): {stop.why}"
    if stop.torn:
        return f"{where} [torn tail] (a crash's normal end; resuming the session sets these bytes aside)"
    return f"{where} [corrupt] (nothing after it is read; fork from an earlier point or move the file aside)"


def cmd_log(args: argparse.Namespace) -> int:
    if _is_fleet_ref(args.session):
        scan, session_id, where = _fleet_log_source(args.session)
    else:
        path = resolve(folder_of(args), args.session)
        scan, session_id, where = partial(scan_events, path), session_id_of(path), str(path)
    result = _log_json(scan, session_id, where) if args.json else _log_text(scan)
    return EXIT_OK if result.ok else EXIT_UNREADABLE


def _log_text(scan: Callable[[EventSink], ReadVerdict]) -> ReadVerdict:
    def show(events: list[Event], _lines: object) -> None:
        sys.stdout.write("".join(f"{e.seq:>6}  {e.ts}  {event_type(e):<10}  {visible(describe(e))}\n" for e in events))

    result = scan(show)
    for warning in result.warnings:
        err(f"warning: {warning}")
    if not result.ok:
        out(stop_sentence(result))
    return result


def _log_json(scan: Callable[[EventSink], ReadVerdict], session_id: str, where: str) -> ReadVerdict:
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
        "project": info.project,
    }


def cmd_ls(args: argparse.Namespace) -> int:
    if args.server is not None:
        return _fleet_ls(args.server, args.json)
    folder = folder_of(args)
    if not os.path.lexists(folder) and (args.dir or os.environ.get("WREN_DIR")):
        # A folder the person named is a typo until it exists; the default folder is simply not made yet.
        err(f"{folder}: no such folder; name the journals folder with --dir (or WREN_DIR), or leave both out")
        return EXIT_ERROR
    sessions = list_sessions(folder)
    for s in sessions:
        if s.state == "unreadable":
            err(f"{s.reason}; it is listed as unreadable")
    if args.project is not None:
        project = Path(args.project).expanduser().resolve()
        sessions = [s for s in sessions if in_project(s.project, project)]
    if args.json:
        print_json([_row(s) for s in sessions])
        return EXIT_OK
    if not sessions:
        out(f"no sessions in {folder}" + (f" of {project}" if args.project is not None else ""))
        return EXIT_OK
    out(
        f"{'ID':<24}  {'STARTED':<24}  {'EVENTS':>6}  {'DURATION':>8}  {'TOKENS':>7}  {'STATE':<15}  "
        f"{'PROJECT':<{_PROJECT_WIDTH}}  FORKED FROM"
    )
    for s in sessions:
        if s.state == "unreadable":
            out(f"{s.id:<24}  {'-':<24}  {'-':>6}  {'-':>8}  {'-':>7}  {s.state:<15}  ({s.reason})")
            continue
        dur = f"{s.duration_s:.1f}s" if s.duration_s is not None else "-"
        origin = f"{s.forked_from}@{s.fork_at}" if s.forked_from else ""
        tokens = str(s.tokens) if s.exact else f"~{s.tokens}"  # a big journal is summed from its head and tail
        place = project_label(s.project, _PROJECT_WIDTH)
        out(
            visible(
                f"{s.id:<24}  {s.started or '-':<24}  {s.events:>6}  {dur:>8}  {tokens:>7}  {s.state:<15}  "
                f"{place:<{_PROJECT_WIDTH}}  {origin}"
            )
        )
    return EXIT_OK


_PROJECT_WIDTH = 28


# --- wren fork ------------------------------------------------------------------------------


def cmd_fork(args: argparse.Namespace) -> int:
    path = resolve(folder_of(args), args.session)
    sid = session_id_of(path)
    if args.seq is None:
        result = read_events(path)
        points = fork_points(result.events)
        if args.json:
            print_json([{"seq": p.seq, "role": p.role, "preview": p.preview} for p in points])
        elif not points:
            out(f"{sid} has no clean fork point yet")
        else:
            again = wren_command("fork", sid, folder=path.parent, tail="SEQ")
            out(f"Clean fork points of {sid} (fork with `{again}`):")
            for line in fork_listing(points):
                out(f"  {visible(line)}")
        if not result.ok and not args.json:
            out(stop_sentence(result))
        return EXIT_OK
    try:
        forked = fork(path, args.seq, folder=path.parent)
    except OSError as exc:
        err(
            f"{write_problem(path.parent, exc)}, so the fork (written beside {path.name}) was not made; copy "
            "the journal to a folder you can write and fork it there"
        )
        return EXIT_ERROR
    if args.json:
        print_json({"id": forked.id, "path": str(forked.path), "from": forked.parent, "atSeq": forked.at_seq})
    else:
        out(f"forked {forked.parent} at seq {forked.at_seq} -> {forked.id}")
        out(f"continue it with: {wren_command('resume', forked.id, folder=forked.path.parent)}")
    return EXIT_OK


# --- parser ---------------------------------------------------------------------------------


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The `wren` parser, and each command's own parser by name."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dir", metavar="DIR", help=f"journals folder (default: {DEFAULT_DIR_HELP})")
    parser = argparse.ArgumentParser(
        prog="wren",
        description="A coding agent that survives being killed, and a viewer that only watches it. "
        "Every step is appended to a journal (JSON Lines) before anything else changes.",
        epilog="exit status: 0 ok, 1 error, 2 bad usage, 3 resume refused (outcome unknown), "
        "4 journal unreadable past a line, 5 the journal was changed under the run, 130 interrupted",
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
        description="List the journals in the journals folder, newest first, with their state (live; done, "
        "cancelled, error or limit: how the last run ended; interrupted; outcome unknown; torn tail; corrupt; "
        "empty; unreadable, with why), events, duration, tokens, and the project (the folder the last run "
        "worked in). A journal that cannot be read is listed and named on stderr; the others are still listed.",
    )
    p.add_argument(
        "server",
        metavar="nats://SERVER[/HOST]",
        nargs="?",
        help="list the sessions mirrored to a fleet's server (every host's, or one host's) instead",
    )
    p.add_argument("--json", action="store_true", help="a JSON array for scripts")
    p.add_argument(
        "--project", metavar="PATH", help="only the sessions whose last run worked in PATH or a folder inside it"
    )
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
    return parser, dict(sub.choices)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Options before or after positionals, in every command (`wren resume ID --yes MESSAGE`).

    argparse cannot intermix around subcommands, so the command's own parser does it for the words
    after the command name; its errors print that command's usage line, not wren's.
    """
    parser, commands = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    at = next((i for i, word in enumerate(words) if not word.startswith("-")), None)
    if at is None or words[at] not in commands:
        return parser.parse_args(words)  # --help, --version, no command, or an unknown one
    parser.parse_args(words[:at])  # wren's own options before the command (--help, --version)
    args = commands[words[at]].parse_intermixed_args(words[at + 1 :])
    args.command = words[at]
    return args


def _registrars() -> list[Callable[[Any, argparse.ArgumentParser], None]]:
    from .agent.commands import register as agent_commands
    from .demo import register as demo_command
    from .fleet.command import register as fleet_commands
    from .search.command import register as search_command
    from .tui.commands import register as viewer_commands

    return [agent_commands, viewer_commands, demo_command, fleet_commands, search_command]


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
    args = parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        build_parser()[0].print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except NotAForkPoint as exc:
        err(str(exc))
        return EXIT_USAGE
    except JournalChanged as exc:
        err(f"{exc}.")
        return EXIT_CHANGED
    except JournalError as exc:
        err(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        # The last resort: each command names its own folder problems; any other is still one sentence.
        where = f"{exc.filename}: " if exc.filename else ""
        err(f"{where}{exc.strerror or exc}; check the path and its permissions, then try again")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
