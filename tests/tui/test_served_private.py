"""`wren watch --serve` answers only the person who started it: its token, its own Host and Origin, a viewer limit.

A real server process (`wren watch --serve`) and real clients: aiohttp for what a browser's script
or a rebinding page would send, a second user of the machine (uid 65534, through setpriv) running
the standard library's HTTP client, and the one thing that is no client's choice checked in the
viewer process itself (the terminal size it was started at, from its environment).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from tests.conftest import descendants
from tests.tui.chromium import terminal_text
from tests.tui.journals import SESSION, story, write_journal
from tests.tui.test_served import _env, _free_port, _wait_for_line
from wren_tui.cli.serve import MAX_COLUMNS, MAX_ROWS, Gate, clamp

SHOWN = "An empty list has no mean"  # on the viewer's first screen of story()


@dataclass
class Served:
    port: int
    token: str
    said: str
    server: subprocess.Popen[bytes]
    journal: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def served(tmp_path: Path, *extra: str) -> Iterator[Served]:
    folder = tmp_path / "journals"
    journal = write_journal(folder / f"{SESSION}.jsonl", story())
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wren_tui",
            "watch",
            "--serve",
            "--port",
            str(port),
            *extra,
            "--dir",
            str(folder),
            SESSION,
        ],
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        said = _wait_for_line(server, "viewers at once")
        found = re.search(rf"serving the viewer at http://127\.0\.0\.1:{port}/\?token=([A-Za-z0-9_-]+) ", said)
        assert found, said
        yield Served(port, found.group(1), said, server, journal)
    finally:
        with contextlib.suppress(ProcessLookupError):  # a test may have stopped it already
            os.killpg(server.pid, 15)
        server.wait(timeout=30)


@asynccontextmanager
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    # Cookies are passed by hand: each request says exactly what it carries.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        yield http


async def status(http: aiohttp.ClientSession, url: str, **headers: str) -> tuple[int, str]:
    async with http.get(url, headers=headers, allow_redirects=False) as reply:
        return reply.status, await reply.text()


async def upgrade(http: aiohttp.ClientSession, url: str, **headers: str) -> tuple[int, str]:
    """The status a websocket upgrade gets (101: a viewer started), and the body of a refusal."""
    try:
        ws = await http.ws_connect(url, headers=headers)
    except aiohttp.WSServerHandshakeError as exc:
        async with http.get(url, headers={**headers, "Connection": "Upgrade", "Upgrade": "websocket"}) as reply:
            return exc.status, await reply.text()
    await ws.close()
    return 101, ""


async def screen_of(ws: aiohttp.ClientWebSocketResponse, text: str, timeout: float = 30) -> str:
    """What the viewer drew, once `text` is in it."""
    got = bytearray()
    deadline = time.monotonic() + timeout
    while text not in terminal_text(bytes(got)):
        left = deadline - time.monotonic()
        assert left > 0, f"{text!r} never arrived: {terminal_text(bytes(got))[-2000:]}"
        message = await ws.receive(timeout=left)
        if message.type == aiohttp.WSMsgType.BINARY:
            got += message.data
        elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
            raise AssertionError(f"the websocket closed before {text!r}: {terminal_text(bytes(got))[-2000:]}")
    return terminal_text(bytes(got))


@pytest.mark.slow
async def test_the_served_viewer_answers_nothing_without_its_token(tmp_path: Path) -> None:
    with served(tmp_path) as s:
        assert "from another machine: ssh -L" in s.said and f"?token={s.token}" in s.said.splitlines()[1]
        async with client() as http:
            for path in ("/", "/static/js/textual.js", "/static/", "/download/anything", "/ws"):
                for query in ("", "?token=", "?token=not-the-token", f"?token={s.token[:-1]}"):
                    code, body = await status(http, s.base + path + query)
                    assert code == 403, (path, query)
                    assert "answers no one without it" in body
                    assert SHOWN not in body
                assert (await status(http, s.base + path, Cookie=f"wren-serve-{s.port}=wrong"))[0] == 403
            assert (await upgrade(http, s.base + "/ws"))[0] == 403
            # With the token: the page, a cookie for the page's own requests, and nothing of the token elsewhere.
            async with http.get(f"{s.base}/?token={s.token}") as reply:
                assert reply.status == 200
                cookie = reply.headers["Set-Cookie"]
                page = await reply.text()
            assert cookie.startswith(f"wren-serve-{s.port}={s.token};")
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert reply.headers["Referrer-Policy"] == "no-referrer" and s.token not in page
            carried = {"Cookie": f"wren-serve-{s.port}={s.token}"}
            assert (await status(http, s.base + "/static/js/textual.js", **carried))[0] == 200
            async with http.ws_connect(s.base + "/ws", headers=carried) as ws:
                assert SHOWN in await screen_of(ws, SHOWN)


@pytest.mark.slow
async def test_a_page_of_another_site_cannot_open_the_viewer_s_websocket(tmp_path: Path) -> None:
    with served(tmp_path) as s:
        async with client() as http:
            url = f"{s.base}/ws?token={s.token}"
            for origin in (
                "http://evil.example",
                f"http://evil.example:{s.port}",
                "null",
                f"https://127.0.0.1.evil:{s.port}",
            ):
                code, body = await upgrade(http, url, Origin=origin)
                assert code == 403 and "another site" in body, origin
            async with http.ws_connect(url, headers={"Origin": f"http://127.0.0.1:{s.port}"}) as ws:
                assert SHOWN in await screen_of(ws, SHOWN)  # the page's own origin: the viewer
            assert (await status(http, f"{s.base}/?token={s.token}", Origin="http://evil.example"))[0] == 403


@pytest.mark.slow
async def test_a_rebinding_host_is_refused_and_no_host_is_written_into_the_page(tmp_path: Path) -> None:
    with served(tmp_path) as s:
        async with client() as http:
            for host in (f"evil.example:{s.port}", "evil.example", f"127.0.0.1.nip.io:{s.port}", "", "a@127.0.0.1"):
                code, body = await status(http, f"{s.base}/?token={s.token}", Host=host)
                assert code == 403 and "answers only at its own address" in body, host
                assert (await upgrade(http, f"{s.base}/ws?token={s.token}", Host=host))[0] == 403
            # An SSH tunnel's port or localhost: the same server, and the page names no host at all.
            for host in (f"localhost:{s.port + 1}", f"127.0.0.1:{s.port}", f"[::1]:{s.port}"):
                code, page = await status(http, f"{s.base}/?token={s.token}", Host=host)
                assert code == 200, host
                assert 'data-session-websocket-url="/ws"' in page
                assert not any(name in page for name in ("localhost", "127.0.0.1", "::1"))


@pytest.mark.slow
async def test_more_viewers_than_the_limit_are_refused_with_a_sentence(tmp_path: Path) -> None:
    with served(tmp_path, "--max-viewers", "2") as s:
        assert "at most 2 viewers at once" in s.said
        url = f"{s.base}/ws?token={s.token}"
        async with client() as http:
            first = await http.ws_connect(url)
            second = await http.ws_connect(url)
            await screen_of(first, SHOWN)
            code, body = await upgrade(http, url)
            assert code == 503 and "2 viewers are open already" in body and "close one" in body
            code, body = await status(http, f"{s.base}/?token={s.token}")
            assert code == 503 and "2 viewers are open already" in body
            await first.close()
            deadline = time.monotonic() + 30
            while (code := (await upgrade(http, url))[0]) != 101:  # a place is free once the viewer stopped
                assert code == 503 and time.monotonic() < deadline
                await asyncio.sleep(0.1)
            await second.close()


def _terminal_sizes(pid: int) -> set[tuple[str, str]]:
    sizes = set()
    for child in descendants(pid):
        try:
            env = dict(
                item.split("=", 1) for item in Path(f"/proc/{child}/environ").read_text().split("\0") if "=" in item
            )
        except OSError:
            continue
        if "COLUMNS" in env and env.get("TEXTUAL_DRIVER", "").endswith("WebDriver"):
            sizes.add((env["COLUMNS"], env["ROWS"]))
    return sizes


@pytest.mark.slow
async def test_the_terminal_size_a_page_asks_for_is_clamped(tmp_path: Path) -> None:
    with served(tmp_path) as s:
        async with client() as http, http.ws_connect(f"{s.base}/ws?token={s.token}&width=5000&height=3000") as ws:
            await ws.send_json(["resize", {"width": 10**12, "height": "3000"}])
            await ws.send_str("not json")  # dropped, the viewer goes on
            await ws.send_json(["ping", "still here"])
            deadline = time.monotonic() + 30
            while True:
                message = await ws.receive(timeout=max(0.1, deadline - time.monotonic()))
                if message.type == aiohttp.WSMsgType.TEXT and "still here" in message.data:
                    break
                assert time.monotonic() < deadline
            assert _terminal_sizes(s.server.pid) == {(str(MAX_COLUMNS), str(MAX_ROWS))}
    assert [clamp(v, 80, 400) for v in ("5000", 10**12, -3, "x", None, True, "12", 0)] == [
        400,
        400,
        1,
        80,
        80,
        80,
        12,
        1,
    ]


_NOBODY_CLIENT = r"""
import http.client, sys
port, token = int(sys.argv[1]), sys.argv[2]
def ask(path, upgrade=False):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="} if upgrade else {}
    conn.request("GET", path, headers=headers)
    reply = conn.getresponse()
    body = b"" if reply.status == 101 else reply.read(300)
    conn.close()
    return reply.status, body.decode("utf-8", "replace").strip()
for path, up in (("/", False), ("/ws", True), ("/static/js/textual.js", False)):
    print("without", path, *ask(path, up), sep="|")
for path, up in (("/?token=" + token, False), ("/ws?token=" + token, True)):
    print("with", path.split("?")[0], *ask(path, up)[:1], sep="|")
"""


@pytest.mark.slow
def test_another_local_user_without_the_token_is_refused(tmp_path: Path) -> None:
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        pytest.skip("needs setpriv and root to run a client as another user (uid 65534)")
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    as_nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    with served(tmp_path) as s:
        s.journal.chmod(0o600)
        cannot = subprocess.run([*as_nobody, "cat", str(s.journal)], capture_output=True, text=True, timeout=30)
        assert cannot.returncode != 0 and "Permission denied" in cannot.stderr  # the viewer would be the way in
        proc = subprocess.run(
            [*as_nobody, python, "-c", _NOBODY_CLIENT, str(s.port), s.token],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        rows = [line.split("|") for line in proc.stdout.splitlines()]
        refused = [row for row in rows if row[0] == "without"]
        assert [(row[1], row[2]) for row in refused] == [("/", "403"), ("/ws", "403"), ("/static/js/textual.js", "403")]
        assert all("answers no one without it" in row[3] for row in refused)
        # The same user with the token gets in: the token, not the uid, is what keeps them out.
        assert [row for row in rows if row[0] == "with"] == [["with", "/", "200"], ["with", "/ws", "101"]]


def test_the_gate_s_host_rule_follows_the_address_listened_on() -> None:
    loopback = Gate("127.0.0.1", 8000)
    assert [loopback.host_allowed(h) for h in ("127.0.0.1:8000", "localhost:9", "[::1]", "127.0.0.2:8000")] == [
        True,
        True,
        True,
        True,
    ]
    assert not any(loopback.host_allowed(h) for h in ("evil.example:8000", "192.168.1.5:8000", None, "x:notaport"))
    anywhere = Gate("0.0.0.0", 8000)
    assert anywhere.host_allowed("192.168.1.5:8000") and anywhere.host_allowed("127.0.0.1:8000")
    assert not anywhere.host_allowed("evil.example:8000")
    one = Gate("192.168.1.5", 8000)
    assert one.host_allowed("192.168.1.5:8000") and not one.host_allowed("192.168.1.6:8000")
    assert Gate.origin_allowed(None, "127.0.0.1:8000") and Gate.origin_allowed(
        "http://127.0.0.1:8000", "127.0.0.1:8000"
    )
    assert not Gate.origin_allowed("http://127.0.0.1:8001", "127.0.0.1:8000")
    assert Gate("127.0.0.1", 8000).token != Gate("127.0.0.1", 8000).token  # a new secret at each start


def _raw_status(port: int, request: bytes) -> bytes:
    """The status line the server answers a request sent as these bytes (what no HTTP client library sends)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(request)
        reply = b""
        while b"\r\n" not in reply:
            more = conn.recv(4096)
            if not more:
                break
            reply += more
    return reply.split(b"\r\n", 1)[0]


def _stopped_output(s: Served) -> str:
    """Everything the server wrote after its first lines, once it has been stopped (SIGTERM) and has ended."""
    os.killpg(s.server.pid, 15)
    s.server.wait(timeout=30)
    assert s.server.stdout is not None
    os.set_blocking(s.server.stdout.fileno(), True)
    return s.server.stdout.read().decode(errors="replace")


@pytest.mark.slow
async def test_a_cookie_that_is_not_utf8_is_refused_and_no_log_line_holds_the_token(tmp_path: Path) -> None:
    with served(tmp_path) as s:
        for cookie in (b"\xff\xfe\xfd", b"\xed\xa0\x80" + s.token.encode(), s.token.encode() + b"\xc3"):
            request = (
                f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\n".encode()
                + f"Cookie: wren-serve-{s.port}=".encode()
                + cookie
                + b"\r\nConnection: close\r\n\r\n"
            )
            assert _raw_status(s.port, request) == b"HTTP/1.1 403 Forbidden", cookie
        async with client() as http:
            code, _ = await status(http, f"{s.base}/?token={s.token}")
            assert code == 200
            cookie = {"Cookie": f"wren-serve-{s.port}={s.token}"}
            assert (await status(http, f"{s.base}/static/js/textual.js", **cookie))[0] == 200
            assert (await status(http, f"{s.base}/?token=wrong"))[0] == 403
        rest = _stopped_output(s)
    # Only the two lines that give the address hold the token; nothing after them does, and no request is logged.
    assert [line for line in s.said.splitlines() if s.token in line] == s.said.splitlines()[:2]
    assert s.token not in rest and "Traceback" not in rest and "GET /" not in rest, rest


def test_a_log_line_quoting_the_token_shows_it_hidden() -> None:
    import logging

    from wren_tui.cli.serve import _Redacting

    line = "GET /?token=abc_DEF-123&width=80 HTTP/1.1; Cookie: wren-serve-8023=abc_DEF-123"
    record = logging.LogRecord("aiohttp.access", logging.WARNING, __file__, 1, line, None, None)
    shown = _Redacting("%(message)s").format(record)
    assert shown == "GET /?token=***&width=80 HTTP/1.1; Cookie: wren-serve-8023=***"
