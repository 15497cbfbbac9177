"""A headless Chromium (Debian's package) driven over the Chrome DevTools protocol, for the browser test.

No driver download and no network: Chromium runs with a fresh profile, every background service
off, and its DevTools endpoint on a port it picks (read from DevToolsActivePort). The websocket to
it is aiohttp's (textual-serve brings aiohttp). What the page receives over its own websocket (the
viewer's screen, as terminal output) is collected from the protocol's Network events, so a test can
wait for text to arrive on the page without reading pixels.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
# Escape sequences of terminal output: CSI (with private and intermediate bytes), OSC, and two-byte ESC forms.
_ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")


def chromium_binary() -> str | None:
    for path in CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


def terminal_text(data: bytes) -> str:
    """Terminal output with its escape sequences taken out: the text it draws, in the order it was sent."""
    return _ESCAPES.sub(b"", data).decode("utf-8", "replace")


class Page:
    """One tab, spoken to over its DevTools websocket."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.received = bytearray()  # what the page's websockets received, binary and text frames alike
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for message in self._ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            if "id" in data:
                future = self._waiting.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
            elif data.get("method") == "Network.webSocketFrameReceived":
                response = data["params"]["response"]
                payload = response["payloadData"]
                self.received += base64.b64decode(payload) if response["opcode"] == 2 else payload.encode()

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = future
        await self._ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, timeout=30)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        return reply.get("result", {}).get("value")

    def text(self) -> str:
        return terminal_text(bytes(self.received))

    async def wait_for_text(self, text: str, timeout: float = 30) -> None:
        await self.wait_until(lambda: text in self.text(), f"{text!r} on the page", timeout)

    async def wait_until(self, condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the page received:\n{self.text()[-3000:]}")
            await asyncio.sleep(0.05)

    async def click(self, x: int, y: int) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    async def type_key(self, key: str, text: str = "", code: str = "", key_code: int = 0) -> None:
        """One key as a person presses it: down (with its text, if it types one), then up."""
        down = {"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": key_code}
        if text:
            down.update(text=text, unmodifiedText=text)
        await self.send("Input.dispatchKeyEvent", **down)
        await self.send("Input.dispatchKeyEvent", type="keyUp", key=key, code=code, windowsVirtualKeyCode=key_code)

    async def screenshot(self, path: Path) -> Path:
        # Two animation frames: whatever arrived has been drawn by the terminal before the picture.
        await self.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


@contextlib.asynccontextmanager
async def chromium(binary: str, profile: Path, size: tuple[int, int] = (1280, 800)) -> AsyncIterator[Page]:
    """A headless Chromium with one blank tab, killed (with its children) at the end."""
    profile.mkdir(parents=True, exist_ok=True)
    argv = [
        binary,
        "--headless",
        "--no-sandbox",  # as root Chromium refuses to start with its sandbox
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-default-browser-check",
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        "--remote-debugging-address=127.0.0.1",
        f"--window-size={size[0]},{size[1]}",
        "about:blank",
    ]
    with open(profile / "chromium.log", "wb") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    try:
        port = await _devtools_port(profile, proc)
        async with aiohttp.ClientSession() as http:
            targets = await (await http.get(f"http://127.0.0.1:{port}/json/list")).json()
            tab = next(t for t in targets if t.get("type") == "page")
            async with http.ws_connect(tab["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                page = Page(ws)
                try:
                    await page.send("Network.enable")
                    await page.send("Page.enable")
                    yield page
                finally:
                    await page.close()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


async def _devtools_port(profile: Path, proc: subprocess.Popen[bytes], timeout: float = 30) -> int:
    """The port Chromium chose, once it has written it (its first line of DevToolsActivePort)."""
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    while True:
        if marker.exists():
            first = marker.read_text().split("\n", 1)[0].strip()
            if first.isdigit():
                return int(first)
        if proc.poll() is not None:
            log = (profile / "chromium.log").read_text(errors="replace")[-2000:]
            raise AssertionError(f"chromium exited with status {proc.returncode} before it listened:\n{log}")
        if time.monotonic() > deadline:
            raise AssertionError("chromium did not open its DevTools port in time")
        await asyncio.sleep(0.05)
