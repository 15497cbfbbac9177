"""`wren blame PATH`: for each line of a file in a session's workspace, the event that last changed it."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..snapshots.blame import Origin
    from .exits import Exit

# The journal, the snapshot store and msgspec are loaded when blame runs, not for `wren blame --help`
# (tests/test_command_imports.py holds what its help may load).


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, json_option

    p = command_parser(
        sub,
        "blame",
        cmd_blame,
        "For each line of PATH (a file in a session's workspace), the session, turn and event (an edit "
        "or a command, its seq and time) that last changed it, read from the session's snapshots. Lines the "
        "first snapshot already held say so, and lines changed since the last snapshot too.",
        common,
    )
    p.add_argument("path", metavar="PATH", nargs="?", help="a file in a session's workspace")
    p.add_argument("--session", metavar="ID", help="the session (default: the latest one that worked where PATH is)")
    p.add_argument(
        "--call",
        metavar="CALL",
        help="instead of a file: the lines one call of --session (its id) added or changed, in each file it touched",
    )
    json_option(p)


def cmd_blame(args: argparse.Namespace) -> Exit:
    from ..agent.errors import UsageError
    from ..journal.reader import read_events
    from ..journal.store import resolve, session_id_of
    from ..journal.visible import visible
    from ..snapshots.blame import blame
    from ..snapshots.rewinding import workspace_of
    from ..snapshots.store import SnapshotError, Store, store_of
    from .console import out, print_json
    from .exits import CommandFailed, Exit
    from .options import folder_of

    if args.call is not None:
        if args.path is not None or not args.session:
            raise UsageError("wren blame --call CALL needs --session ID and no PATH")
        return _call(args)
    if args.path is None:
        raise UsageError("wren blame needs a PATH (or --call CALL with --session ID)")
    folder = folder_of(args)
    target = Path(os.path.abspath(args.path))
    journal = resolve(folder, args.session) if args.session else _session_of(folder, target)
    sid = session_id_of(journal)
    result = read_events(journal)
    workspace = workspace_of(result.events)
    if workspace is None or not (Path(workspace) == target.parent or Path(workspace) in target.parents):
        raise UsageError(f"{target}: not in the workspace of {sid} ({workspace or 'none recorded'}); name the session")
    rel = os.fsencode(os.path.relpath(target, workspace)).replace(os.sep.encode(), b"/")
    now: bytes | None = None
    if os.path.islink(target):
        now = os.fsencode(os.readlink(target))
    elif target.is_file():
        now = target.read_bytes()
    try:
        lines = blame(Store(store_of(journal.parent)), result.events, rel, now)
    except SnapshotError as exc:
        raise CommandFailed(str(exc)) from None
    if now is None and not lines:
        raise CommandFailed(f"{target}: no such file now, nor in {sid}'s last snapshot")
    if args.json:
        print_json([_json(n, text, origin, sid) for n, (text, origin) in enumerate(lines, 1)])
        return Exit.OK
    for text, origin in lines:
        out(f"{_said(origin)} │ {visible(text.decode('utf-8', 'replace').rstrip(chr(10)))}")
    return Exit.OK


def _call(args: argparse.Namespace) -> Exit:
    """The lines one call changed, from the snapshots before and after it (`snapshots.blame.call_lines`)."""
    from ..agent.errors import UsageError
    from ..journal.events import ToolStart
    from ..journal.reader import read_events
    from ..journal.store import resolve, session_id_of
    from ..journal.visible import visible
    from ..snapshots.blame import NotKnown, call_lines
    from ..snapshots.store import SnapshotError, Store, store_of
    from .console import out, print_json
    from .exits import CommandFailed, Exit
    from .options import folder_of

    journal = resolve(folder_of(args), args.session)
    sid = session_id_of(journal)
    events = read_events(journal).events
    start = next((e for e in events if isinstance(e, ToolStart) and e.id == args.call), None)
    if start is None:
        raise UsageError(f"{sid} has no call {args.call}")
    try:
        files = call_lines(Store(store_of(journal.parent)), events, args.call)
    except NotKnown as exc:
        raise CommandFailed(f"{sid}: call {args.call} ({start.name}, seq {start.seq}): {exc}") from None
    except SnapshotError as exc:
        raise CommandFailed(str(exc)) from None
    if args.json:
        print_json(
            {
                "session": sid,
                "call": args.call,
                "tool": start.name,
                "seq": start.seq,
                "files": [
                    {
                        "path": f.path.decode("utf-8", "replace"),
                        "status": f.status,
                        "binary": f.binary,
                        "removed": f.removed,
                        "lines": [{"line": n, "text": t.decode("utf-8", "replace").rstrip("\n")} for n, t in f.lines],
                    }
                    for f in files
                ],
            }
        )
        return Exit.OK
    out(f"call {args.call} ({start.name}, seq {start.seq}) changed {len(files)} file{'s' if len(files) != 1 else ''}")
    for f in files:
        what = "binary" if f.binary else f"+{len(f.lines)} -{f.removed}"
        out(f"{visible(f.path.decode('utf-8', 'replace'))} ({f.status}, {what})")
        for number, text in f.lines:
            out(f"{number:>6} │ {visible(text.decode('utf-8', 'replace').rstrip(chr(10)))}")
    return Exit.OK


def _session_of(folder: Path, target: Path) -> Path:
    from ..journal.errors import SessionNotFound
    from ..journal.store import latest_of_project

    for candidate in target.parents:
        try:
            return latest_of_project(folder, candidate)
        except SessionNotFound:
            continue
    raise SessionNotFound(f"no session in {folder} worked where {target} is; name one with --session ID")


def _said(origin: Origin) -> str:
    if origin.kind == "before":
        return f"{'older than the first snapshot':<40}"
    if origin.kind == "unsnapshotted":
        return f"{'changed since the last snapshot':<40}"
    turn = f"turn {origin.turn}" if origin.turn is not None else ""
    return f"{origin.seq or '':>5} {turn:<7} {origin.kind:<8} {origin.ts[11:19]:<8}     "[:40].ljust(40)


def _json(number: int, text: bytes, origin: Origin, sid: str) -> dict[str, Any]:
    return {
        "line": number,
        "text": text.decode("utf-8", "replace").rstrip("\n"),
        "kind": origin.kind,
        "session": sid if origin.seq is not None else None,
        "turn": origin.turn,
        "seq": origin.seq,
        "ts": origin.ts or None,
        "call": origin.call,
        "tool": origin.tool,
        "what": origin.what or None,
    }


__all__ = ["cmd_blame", "register"]
