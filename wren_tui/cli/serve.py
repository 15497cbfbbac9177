"""`wren watch --serve`: the viewer in a web browser, through textual-serve, for the person who started it only.

Each page's websocket starts a viewer process that can read every session the server's user can,
so the server answers no request without three things (docs/security.md):

- the token: a random secret made at each start and printed in the address (`/?token=...`); the
  page's first request carries it and gets it back as a cookie (HttpOnly, SameSite=Strict, named
  for the port), which the page's own requests (its script, its websocket, a download) then carry.
  Another user of the machine can connect to the port but does not know the token.
- a Host that names this server, not another site: a loopback address or `localhost` (any port, so
  an SSH tunnel's works), and with `--host` another address, that address or this machine's name.
  A name an attacker's DNS points at 127.0.0.1 (DNS rebinding) is refused. The page's websocket
  address is relative (`/ws`), so no Host is ever written into the page.
- no Origin, or the Origin of the page itself: a script on another site's page cannot open the
  websocket (websockets are not bound by the browser's same-origin rule; this check is the rule).

Each viewer is a process of about 50 MB: at most `--max-viewers` (4) are open at once, more are
refused with a sentence (503), and the terminal size a page asks for is clamped to 400 x 200.

This module loads aiohttp and textual-serve: `wren watch` imports it only to serve.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import logging
import re
import secrets
import shlex
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from ..portable import add_signal_handler
from .console import out
from .exits import CommandFailed, Exit

MAX_VIEWERS = 4  # watch.MAX_VIEWERS says the same for --help
MAX_COLUMNS, MAX_ROWS = 400, 200
# A page's messages are keys, sizes and pings; a paste of 64 KB is still one message.
MAX_MESSAGE = 64 << 10
_TOKEN_PARAM = "token"

FORBIDDEN_TOKEN = (
    "wren watch --serve: open the address it printed, with its ?token=...; this server answers no one without it."
)
FORBIDDEN_HOST = (
    "wren watch --serve: this server answers only at its own address (the Host of this request names another); "
    "open the address it printed."
)
FORBIDDEN_ORIGIN = "wren watch --serve: a page from another site cannot open this viewer."
TOO_MANY = (
    "wren watch --serve: {n} viewers are open already, the most this server allows (--max-viewers); "
    "close one, then reload this page."
)


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
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return host == ""


def clamp(value: object, default: int, most: int) -> int:
    """A size a page asked for, as a whole number from 1 to `most` (anything else: `default`)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return default
    try:
        number = int(value)
    except ValueError:
        return default
    return max(1, min(number, most))


@dataclass
class Gate:
    """What a request must carry to be answered: the token, a Host naming this server, its own Origin or none."""

    host: str  # the address listened on (--host)
    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    @property
    def cookie(self) -> str:
        """The cookie's name: one per port, so two servers on one machine do not overwrite each other's."""
        return f"wren-serve-{self.port}"

    def names(self) -> set[str]:
        """The names (not addresses) a request's Host may give: localhost; this machine's own when not loopback."""
        names = {"localhost"}
        if not is_loopback(self.host):
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
            if not _is_wildcard(self.host):
                names.add(self.host.lower())
        return names

    def host_allowed(self, header: str | None) -> bool:
        """Whether a Host header names this server: an address it listens on, or one of `names`; any port."""
        if not header:
            return False
        try:
            parts = urlsplit(f"//{header}")
            name, _ = parts.hostname, parts.port  # .port raises on a port that is not a number
        except ValueError:
            return False
        if not name or parts.username is not None or parts.password is not None or parts.path:
            return False
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return name in self.names()
        if is_loopback(self.host):
            return address.is_loopback
        if _is_wildcard(self.host):
            return True  # any address of this machine: a rebinding needs a name, never an address
        return address == ipaddress.ip_address(self.host.strip("[]")) or address.is_loopback

    @staticmethod
    def origin_allowed(origin: str | None, host: str) -> bool:
        """No Origin (not a browser, or a page's own navigation), or the origin of a page this server served."""
        if origin is None:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower() and parts.path in ("", "/")

    def token_given(self, query: str | None, cookie: str | None) -> str | None:
        """'query' or 'cookie', whichever carries the right token; None when neither does.

        The token is URL-safe ASCII: anything else is not it (aiohttp gives bytes that are not UTF-8 as
        surrogates, which no encoding takes), and is refused like any wrong token, never compared.
        """
        for where, value in (("query", query), ("cookie", cookie)):
            if value is not None and value.isascii() and hmac.compare_digest(value.encode(), self.token.encode()):
                return where
        return None

    def refusal(self, host: str | None, origin: str | None, query: str | None, cookie: str | None) -> str | None:
        """Why a request is refused (403), or None when it may be answered."""
        if not self.host_allowed(host):
            return FORBIDDEN_HOST
        if not self.origin_allowed(origin, host or ""):
            return FORBIDDEN_ORIGIN
        if self.token_given(query, cookie) is None:
            return FORBIDDEN_TOKEN
        return None

    def address(self, port: int | None = None) -> str:
        """The address to open, token included."""
        where = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{where}:{port or self.port}/?{_TOKEN_PARAM}={self.token}"


def quiet_logging() -> None:
    """What the server logs: warnings and errors only, one plain line each, an error's traceback without its
    frames' variables (textual-serve's own handler prints them, and the gate's holds the token).

    An error's message never holds the token: nothing Wren raises quotes a request's token or cookie.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Redacting("wren watch --serve: %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


class _Redacting(logging.Formatter):
    """A log line with the token in it, as an address or a cookie quotes it (`token=...`, `wren-serve-PORT=...`),
    shown as `token=***`."""

    def format(self, record: logging.LogRecord) -> str:
        return _TOKEN_IN_TEXT.sub(r"\1***", super().format(record))


_TOKEN_IN_TEXT = re.compile(rf"((?:{_TOKEN_PARAM}|wren-serve-\d+)=)[A-Za-z0-9_\-]+")


def index_context(font_size: int, title: str | None) -> dict[str, Any]:
    """What textual-serve's page template (`app_index.html`) reads, with relative addresses.

    The page's websocket goes back where the browser came from (a tunnel's port included) without the
    request's Host ever being written into the page. tests/test_private_api_fences.py holds these keys
    against the template's.
    """
    return {
        "font_size": font_size,
        "app_websocket_url": "/ws",
        "config": {"static": {"url": "/static/"}},
        "application": {"name": title},
    }


class ViewerServer(Server):
    """textual-serve's server behind the gate, with a limit on viewers and on the size a page asks for.

    It overrides textual-serve's `_make_app` (private: the gate and the headers go into the web app it
    builds), `serve`, `handle_index` and `handle_websocket` wholesale; tests/test_private_api_fences.py
    holds their signatures and the template's keys, and textual-serve is capped in pyproject.toml.
    """

    def __init__(self, command: str, gate: Gate, *, max_viewers: int = MAX_VIEWERS, title: str = "wren watch") -> None:
        super().__init__(command, host=gate.host, port=gate.port, title=title)
        self.gate = gate
        self.max_viewers = max_viewers
        self.viewers = 0

    def announce(self, _aiohttp_says: str) -> None:
        """Said once the server listens (not before: a port in use is then an error, not a promise)."""
        gate, host, port = self.gate, self.gate.host, self.gate.port
        out(f"serving the viewer at {gate.address()} (Ctrl+C stops it; the token keeps everyone else out)")
        if is_loopback(host):
            tunnelled = Gate("127.0.0.1", port, gate.token).address()
            target = f"[{host}]" if ":" in host else host
            out(f"from another machine: ssh -L {port}:{target}:{port} THIS-HOST, then open {tunnelled}")
        else:
            out(f"anyone who can reach {host}:{port} and has the address above can read these sessions")
        out(f"at most {self.max_viewers} viewers at once")
        sys.stdout.flush()

    @web.middleware
    async def guard(self, request: web.Request, handler: _Handler) -> web.StreamResponse:
        """Every request through the gate (403 with its sentence); the token's cookie set on the first."""
        gate = self.gate
        try:
            query = request.query.get(_TOKEN_PARAM)
            why = gate.refusal(
                request.headers.get("Host"), request.headers.get("Origin"), query, request.cookies.get(gate.cookie)
            )
        except Exception:  # a request the checks cannot even read (bytes no header should hold): refused
            query, why = None, FORBIDDEN_TOKEN
        if why is not None:
            return web.Response(status=403, text=why + "\n")
        response = await handler(request)
        if gate.token_given(query, None) and not response.prepared:
            # The page's own requests carry it from here on, without it in their addresses.
            response.set_cookie(gate.cookie, gate.token, httponly=True, samesite="Strict", path="/")
        return response

    async def on_startup(self, app: Any) -> None:
        pass  # textual-serve's banner: `announce` says what a person needs, once listening

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.guard)
        app.on_response_prepare.append(_private_headers)
        return app

    def initialize_logging(self) -> None:
        quiet_logging()

    def serve(self, debug: bool = False) -> None:
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        add_signal_handler(loop, signal.SIGINT, self.request_exit)  # on Windows too (portable)
        add_signal_handler(loop, signal.SIGTERM, self.request_exit)
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            handle_signals=False,
            loop=loop,
            print=self.announce,
            access_log=None,  # no line per request: noise, and a page's first request holds the token
        )

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        import aiohttp_jinja2

        if self.viewers >= self.max_viewers:
            return web.Response(status=503, text=TOO_MANY.format(n=self.max_viewers) + "\n")
        context = index_context(clamp(request.query.get("fontsize"), 16, 64), self.title)
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        if self.viewers >= self.max_viewers:
            raise web.HTTPServiceUnavailable(text=TOO_MANY.format(n=self.max_viewers) + "\n")
        width = clamp(request.query.get("width"), 80, MAX_COLUMNS)
        height = clamp(request.query.get("height"), 24, MAX_ROWS)
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=MAX_MESSAGE)
        self.viewers += 1  # counted before the first await: two requests cannot both take the last place
        viewer: AppService | None = None

        async def close() -> None:
            await websocket.close()

        try:
            await websocket.prepare(request)
            viewer = AppService(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            await viewer.start(width, height)
            await _relay(websocket, viewer)
        except asyncio.CancelledError:
            await websocket.close()
        finally:
            self.viewers -= 1
            if viewer is not None:
                await viewer.stop()
        return websocket


_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def _private_headers(_request: web.Request, response: web.StreamResponse) -> None:
    # The address holds the token: never sent on to another site, the page never framed by one.
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"


async def _relay(websocket: web.WebSocketResponse, viewer: AppService) -> None:
    """The page's messages to its viewer: keys, a size (clamped), focus; anything else is dropped."""
    async for message in websocket:
        if message.type != WSMsgType.TEXT:
            continue
        with contextlib.suppress(ValueError):
            envelope = json.loads(message.data)
            if not isinstance(envelope, list) or not envelope:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await viewer.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                size = clamp(data.get("width"), 80, MAX_COLUMNS), clamp(data.get("height"), 24, MAX_ROWS)
                await viewer.set_terminal_size(*size)
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await viewer.blur()
            elif kind == "focus":
                await viewer.focus()


def serve(
    folder: Path,
    session: Path | None,
    *,
    host: str,
    port: int,
    poll: bool,
    only: str | None = None,
    max_viewers: int = MAX_VIEWERS,
) -> Exit:
    """Serve the viewer until interrupted (Ctrl+C or SIGTERM: exit 0)."""
    server = ViewerServer(viewer_command(folder, session, poll, only), Gate(host, port), max_viewers=max_viewers)
    try:
        server.serve()
    except OSError as exc:
        raise CommandFailed(
            f"cannot serve on {host}:{port} ({(exc.strerror or str(exc)).lower()}); choose another --port"
        ) from None
    return Exit.OK
