"""`wren watch`: the viewer on a session, a folder or a fleet's server; with --pick, the chosen fork point
printed for scripts; with --serve, the same viewer in a web browser, through textual-serve.

On a damaged journal --pick opens the viewer as ever: the person sees where reading stops, and the
points offered are the clean ones before it (a fork from one of them is the remedy). After the
pick, `ID SEQ` is printed, then the same sentence and status as every other command reading that
journal (exit 4), from the stop the viewer found; a torn tail is a crash's normal end (exit 0).

With --serve each browser that opens the page gets its own viewer process (`wren watch`, with the
same folder or session), its screen sent over a websocket. The server binds to loopback unless told
otherwise: reach it from another machine through an SSH tunnel (`ssh -L 8000:127.0.0.1:8000 HOST`).
In a browser the viewer offers no fork (the only write it has in a terminal) and hands exports to
the browser as downloads.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from ..agent.errors import UsageError
from ..journal.errors import JournalError
from ..journal.store import journal_paths, latest, resolve
from . import agents, fleet
from .console import out
from .exits import CommandFailed, Exit, Unreadable
from .options import folder_of

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000

# The viewer's filters (tui/filters.py:ONLY, which loads Textual: not imported for every command).
ONLY_CHOICES = ("thinking", "tools", "writes", "errors")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "watch",
        parents=[common],
        help="the viewer: a session live, or the journals of a folder",
        description="Watch a journal live in a full-screen viewer that never writes to it. With no "
        "session (or a folder), browse the journals newest first; Enter opens one. Given a fleet's server "
        "(nats://SERVER, see wren mirror), browse every machine's sessions there, live; a fork of one is "
        "written in the journals folder here.",
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
    agents.add_agent_option(p, "browse the sessions")
    p.set_defaults(handler=cmd_watch)


def target_of(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """The folder to browse and the session to open (None: the browser)."""
    folder = folder_of(args)
    target: str | None = args.target
    if target is not None and Path(target).expanduser().is_dir():
        folder = _journals_in(Path(target).expanduser())
        target = None
    elif target is None and os.path.lexists(folder) and not folder.is_dir():
        raise JournalError(f"{folder} is not a folder; give --dir the journals folder (or set WREN_DIR)")
    if target is not None:
        session = resolve(folder, target)
        agents.foreign_format(session)  # a .json file that is no ATIF trajectory is refused here
        return session.parent, session
    return folder, latest(folder) if args.pick else None


def _journals_in(folder: Path) -> Path:
    """The folder named, or its journals/ when it holds no journal and that does (a workspace was named)."""
    inner = folder / "journals"
    if not journal_paths(folder) and inner.is_dir():
        return inner
    return folder


def cmd_watch(args: argparse.Namespace) -> Exit:
    if getattr(args, "agent", None) is not None:
        if args.pick or args.serve or args.target is not None:
            given = "--pick" if args.pick else "--serve" if args.serve else args.target
            raise UsageError(
                f"--agent browses the agent's own folder in this terminal; it takes no {given} "
                "(watch one session with `wren watch PATH`)"
            )
        return agents.watch_agents(args)
    if args.target is not None and fleet.is_remote(args.target):
        if args.serve:
            raise UsageError("--serve serves a local folder or journal; watch a fleet's server in this terminal")
        return fleet.watch_remote(args.target, pick=args.pick, fork_folder=folder_of(args))
    folder, session = target_of(args)
    if args.serve:
        if args.pick:
            raise UsageError("--pick prints to this terminal; it cannot be used with --serve")
        return serve(folder, session, host=args.host, port=args.port, poll=args.poll, only=args.only)
    from ..tui.app import WrenApp

    # Another agent's session forks into the journals folder (--dir, WREN_DIR or the default), never beside it.
    app = WrenApp(
        folder=folder,
        session=session,
        pick=args.pick,
        watch_mode="poll" if args.poll else "auto",
        journals=folder_of(args),
        only=getattr(args, "only", None),
    )
    picked = app.run()
    if app.return_code:
        return Exit.ERROR  # the viewer crashed (Textual printed why)
    if not args.pick:
        return Exit.OK
    if picked is None:
        raise CommandFailed("no fork point picked")
    out(f"{picked.session} {picked.seq}")
    if picked.stop is not None and not picked.stop.torn and session is not None:
        raise Unreadable(session, picked.stop)
    return Exit.OK


# --- --serve: the viewer in a browser ------------------------------------------------------------


def viewer_command(folder: Path, session: Path | None, poll: bool, only: str | None = None) -> str:
    """The shell command each browser's viewer runs: this wren, on the same folder or session, with the same filter."""
    words = [sys.executable, "-m", "wren_tui", "watch", "--dir", str(folder.resolve())]
    if session is not None:
        words.append(str(session.resolve()))
    if poll:
        words.append("--poll")
    if only is not None:
        words.extend(("--only", only))
    return shlex.join(words)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(folder: Path, session: Path | None, *, host: str, port: int, poll: bool, only: str | None = None) -> Exit:
    """Serve the viewer until interrupted (Ctrl+C or SIGTERM: exit 0)."""
    import asyncio
    import signal

    from aiohttp import web
    from textual_serve.server import Server

    def announce(_aiohttp_says: str) -> None:
        """Said once the server listens (not before: a port in use is then an error, not a promise)."""
        where = f"http://{host}:{port}" if ":" not in host else f"http://[{host}]:{port}"
        out(f"serving the viewer at {where} (Ctrl+C stops it)")
        if is_loopback(host):
            out(f"from another machine: ssh -L {port}:127.0.0.1:{port} THIS-HOST, then open http://127.0.0.1:{port}")
        else:
            out(f"anyone who can reach {host}:{port} can read these sessions")
        sys.stdout.flush()

    class ViewerServer(Server):
        """textual-serve's server, saying what Wren needs said, and answering at the address it was reached by."""

        async def on_startup(self, app: Any) -> None:
            pass  # textual-serve's banner: `announce` says what a person needs, once listening

        def serve(self, debug: bool = False) -> None:
            # As textual-serve's own, with Wren's sentence printed when the server is listening.
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            loop.add_signal_handler(signal.SIGINT, self.request_exit)
            loop.add_signal_handler(signal.SIGTERM, self.request_exit)
            web.run_app(
                self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop, print=announce
            )

        async def handle_index(self, request: Any) -> Any:
            # The page's websocket goes back where the browser came from: a tunnel's port, a host name.
            self.public_url = f"{request.scheme}://{request.host}"
            return await super().handle_index(request)

    server = ViewerServer(viewer_command(folder, session, poll, only), host=host, port=port, title="wren watch")
    try:
        server.serve()
    except OSError as exc:
        raise CommandFailed(
            f"cannot serve on {host}:{port} ({(exc.strerror or str(exc)).lower()}); choose another --port"
        ) from None
    return Exit.OK
