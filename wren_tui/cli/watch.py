"""`wren watch`: the viewer on a session, a folder or a fleet's server; with --pick, the chosen fork point
printed for scripts; with --serve, the same viewer in a web browser, through textual-serve.

On a damaged journal --pick opens the viewer as ever: the person sees where reading stops, and the
points offered are the clean ones before it (a fork from one of them is the remedy). After the
pick, `ID SEQ` is printed, then the same sentence and status as every other command reading that
journal (exit 4), from the stop the viewer found; a torn tail is a crash's normal end (exit 0).

With --serve each browser that opens the page gets its own viewer process (`wren watch`, with the
same folder or session), its screen sent over a websocket (serve.py: the token in the address, the
Host and Origin checks, the limits). The server binds to loopback unless told otherwise: reach it
from another machine through an SSH tunnel (`ssh -L 8000:127.0.0.1:8000 HOST`). In a browser the
viewer offers no fork (the only write it has in a terminal) and hands exports to the browser as
downloads.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..agent.errors import UsageError
from . import fleet, foreign
from .console import err, out
from .exits import CommandFailed, Exit, Unreadable

if TYPE_CHECKING:
    from ..sessions.tailing import WatchMode

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
MAX_VIEWERS = 4  # serve.MAX_VIEWERS (serve.py loads aiohttp: it is imported only to serve)

# The viewer's filters (tui/filters.py:ONLY, which loads Textual: not imported for every command).
ONLY_CHOICES = ("thinking", "tools", "writes", "errors")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser

    p = command_parser(
        sub,
        "watch",
        cmd_watch,
        "Watch a journal live in a full-screen viewer that never writes to it. With no "
        "session (or a folder), browse the journals newest first; Enter opens one. Given a fleet's server "
        "(nats://SERVER, see wren mirror), browse every machine's sessions there, live; a fork of one is "
        "written in the journals folder here.",
        common,
    )
    p.add_argument(
        "target",
        metavar="ID|PATH|DIR|nats://SERVER[/HOST[/ID]]",
        nargs="?",
        help="a session id, a journal file, a folder, or a fleet's server (every host's sessions, a host's, a session)",
    )
    p.add_argument(
        "--pick",
        action="store_true",
        help='choose a fork point and print "ID SEQ" on exit, for scripts (the latest session if none is given)',
    )
    p.add_argument("--poll", action="store_true", help="poll for changes instead of using file notifications")
    p.add_argument(
        "--only",
        choices=ONLY_CHOICES,
        help="open with a filter on: the model's words (thinking), tool calls, writes (write_file, edit_file, "
        "commands) or errors; in the viewer, o cycles the filters, 1-4 pick one, 0 shows everything",
    )
    p.add_argument(
        "--serve",
        action="store_true",
        help="serve the viewer to a web browser instead of this terminal (read-only; see --host, --port)",
    )
    p.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"with --serve: the address to listen on (default: {DEFAULT_HOST}, this machine only; from elsewhere, "
        "an SSH tunnel: ssh -L PORT:127.0.0.1:PORT HOST)",
    )
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"with --serve: the port to listen on (default: {DEFAULT_PORT})"
    )
    p.add_argument(
        "--max-viewers",
        type=int,
        default=MAX_VIEWERS,
        metavar="N",
        help=f"with --serve: browser pages open at once, each a viewer process (default: {MAX_VIEWERS}); more are "
        "refused with a sentence",
    )
    foreign.add_agent_option(p, "browse the sessions")


def cmd_watch(args: argparse.Namespace) -> Exit:
    from ..sessions.opening import watched

    if args.agent is not None and (args.pick or args.serve or args.target is not None):
        given = "--pick" if args.pick else "--serve" if args.serve else args.target
        raise UsageError(
            f"--agent browses the agent's own folder in this terminal; it takes no {given} "
            "(watch one session with `wren watch PATH`)"
        )
    # What is shown, found below: a session, a folder, a database of sessions, the agents' folders, or a fleet.
    shown = watched(
        args.target,
        folder=args.dir,
        agent=args.agent,
        pick=args.pick,
        databases=not args.serve and not args.pick,
        say=err,
    )
    watch_mode: WatchMode = "poll" if args.poll else "auto"
    if shown.fleet is not None:
        if args.serve:
            raise UsageError("--serve serves a local folder or journal; watch a fleet's server in this terminal")
        return fleet.watch_remote(shown.fleet, pick=args.pick, fork_folder=shown.journals)
    if args.serve:
        if args.pick:
            raise UsageError("--pick prints to this terminal; it cannot be used with --serve")
        if args.max_viewers < 1:
            raise UsageError(f"--max-viewers {args.max_viewers}: must be 1 or more")
        from .serve import serve

        return serve(
            shown.folder,
            shown.session,
            host=args.host,
            port=args.port,
            poll=args.poll,
            only=args.only,
            max_viewers=args.max_viewers,
        )
    from ..tui import strings

    # --only filters the session or the journals browsed here; the agents' browser (a database's too) opens its
    # sessions unfiltered, as it always has.
    only = args.only if shown.agents is None else None
    app = foreign.viewer(shown, pick=args.pick, watch_mode=watch_mode, only=only)
    picked = app.run()
    if app.return_code:
        return Exit.ERROR  # the viewer crashed (Textual printed why)
    if not args.pick:
        return Exit.OK
    if picked is None:
        raise CommandFailed(strings.PICKED_NOTHING)
    out(f"{picked.session} {picked.seq}")
    if picked.stop is not None and not picked.stop.torn and shown.session is not None:
        raise Unreadable(shown.session, picked.stop)
    return Exit.OK
