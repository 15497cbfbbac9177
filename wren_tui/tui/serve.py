"""`wren watch --serve`: the same viewer in a browser, through textual-serve.

Each browser that opens the page gets its own viewer process (`wren watch`, with the same folder
or session), its screen sent over a websocket. The server binds to loopback unless told otherwise:
reach it from another machine through an SSH tunnel (`ssh -L 8000:127.0.0.1:8000 HOST`). In a
browser the viewer offers no fork (the only write it has in a terminal) and hands exports to the
browser as downloads.
"""

from __future__ import annotations

import argparse
import ipaddress
import shlex
import sys
from pathlib import Path
from typing import Any

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--serve",
        action="store_true",
        help="serve the viewer to a web browser instead of this terminal (read-only; see --host, --port)",
    )
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"with --serve: the address to listen on (default: {DEFAULT_HOST}, this machine only; from elsewhere, "
        "an SSH tunnel: ssh -L PORT:127.0.0.1:PORT HOST)",
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"with --serve: the port to listen on (default: {DEFAULT_PORT})"
    )


def viewer_command(folder: Path, session: Path | None, poll: bool) -> str:
    """The shell command each browser's viewer runs: this wren, on the same folder or session."""
    words = [sys.executable, "-m", "wren_tui", "watch", "--dir", str(folder.resolve())]
    if session is not None:
        words.append(str(session.resolve()))
    if poll:
        words.append("--poll")
    return shlex.join(words)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(folder: Path, session: Path | None, *, host: str, port: int, poll: bool) -> int:
    """Serve the viewer until interrupted; 0 when stopped by Ctrl+C or SIGTERM."""
    import asyncio
    import signal

    from aiohttp import web
    from textual_serve.server import Server

    def announce(_aiohttp_says: str) -> None:
        """Said once the server listens (not before: a port in use is then an error, not a promise)."""
        where = f"http://{host}:{port}" if ":" not in host else f"http://[{host}]:{port}"
        sys.stdout.write(f"serving the viewer at {where} (Ctrl+C stops it)\n")
        if is_loopback(host):
            sys.stdout.write(
                f"from another machine: ssh -L {port}:127.0.0.1:{port} THIS-HOST, then open http://127.0.0.1:{port}\n"
            )
        else:
            sys.stdout.write(f"anyone who can reach {host}:{port} can read these sessions\n")
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

    server = ViewerServer(viewer_command(folder, session, poll), host=host, port=port, title="wren watch")
    try:
        server.serve()
    except OSError as exc:
        sys.stderr.write(
            f"wren: cannot serve on {host}:{port} ({(exc.strerror or str(exc)).lower()}); choose another --port\n"
        )
        return 1
    return 0
