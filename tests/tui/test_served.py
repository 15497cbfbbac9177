"""`wren watch --serve` in a real browser: headless Chromium loads the page and the viewer arrives, live.

The server and each page's viewer are real processes; another process appends to the journal and
the page receives it. A screenshot of the page is saved into the test's folder (kept by pytest
under its basetemp) so a person can look at what the browser showed.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tui.chromium import CANDIDATES, Page, chromium, chromium_binary
from tests.tui.journals import SESSION, story, write_journal

BINARY = chromium_binary()
pytestmark = pytest.mark.skipif(
    BINARY is None,
    reason=f"no Chromium (looked for {', '.join(CANDIDATES)} and chromium on PATH): "
    "apt-get install chromium (.ci/run installs it) to run the browser test",
)

APPENDED = "a question typed in another process"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _env(tmp_path: Path) -> dict[str, str]:
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    return env


def _wait_for_line(proc: subprocess.Popen[bytes], marker: str, timeout: float = 30) -> str:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    seen = b""
    deadline = time.monotonic() + timeout
    while marker.encode() not in seen:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the server did not say {marker!r} (status {proc.poll()}): {seen!r}")
        try:
            seen += os.read(fd, 65536)
        except BlockingIOError:
            time.sleep(0.02)  # a polling step, bounded by the deadline
    return seen.decode()


async def _page_says(page: Page, text: str, timeout: float = 30) -> None:
    """Wait until the page's own text (not the terminal's) holds `text`."""
    deadline = time.monotonic() + timeout
    while text not in (await page.evaluate("document.body ? document.body.innerText : ''") or ""):
        assert time.monotonic() < deadline, f"the page never said {text!r}"
        await asyncio.sleep(0.05)


def served_address(said: str, port: int) -> str:
    """The address `wren watch --serve` printed, with the token it made at this start."""
    found = re.search(rf"serving the viewer at (http://127\.0\.0\.1:{port}/\?token=[A-Za-z0-9_-]+) ", said)
    assert found, said
    return found.group(1)


def _append_from_another_process(journal: Path, env: dict[str, str]) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from wren_tui.journal.events import ChatMessage, Message\n"
        "from wren_tui.journal.writer import JournalWriter\n"
        "with JournalWriter.open(Path(sys.argv[1])) as w:\n"
        f"    w.append(Message(message=ChatMessage(role='user', content={APPENDED!r})))\n"
    )
    subprocess.run([sys.executable, "-c", code, str(journal)], env=env, check=True, timeout=60)


@pytest.mark.slow
async def test_the_viewer_served_to_a_browser_shows_the_session_and_what_is_appended(tmp_path: Path) -> None:
    assert BINARY is not None
    folder = tmp_path / "journals"
    journal = write_journal(folder / f"{SESSION}.jsonl", story())
    env = _env(tmp_path)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "wren_tui", "watch", "--serve", "--port", str(port), "--dir", str(folder), SESSION],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        said = _wait_for_line(server, "viewers at once")
        address = served_address(said, port)
        assert f"ssh -L {port}:127.0.0.1:{port}" in said
        async with chromium(BINARY, tmp_path / "profile") as page:
            # Without its token the server answers nothing but the sentence saying what to open.
            await page.send("Page.navigate", url=f"http://127.0.0.1:{port}/")
            await _page_says(page, "answers no one without it")
            # With the address as printed: the viewer, and then the page's own requests carry a cookie.
            await page.send("Page.navigate", url=address)
            # The session's last messages, as the viewer shows them on opening (following the end).
            await page.wait_for_text("An empty list has no mean; I'll return 0.0 for it.")
            await page.screenshot(tmp_path / "served.png")
            _append_from_another_process(journal, env)
            await page.wait_for_text(APPENDED)
            shot = await page.screenshot(tmp_path / "served-after-append.png")
            assert shot.stat().st_size > 10_000  # a picture of a page with text, not a blank one
            # The page is the viewer: read-only (it offers no fork in a browser), and an export is a download.
            assert "Fork points" not in page.text()
            downloads = tmp_path / "downloads"
            downloads.mkdir()
            await page.send("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(downloads))
            await page.click(400, 300)  # the terminal takes the keys
            await page.type_key("x", "x", "KeyX", 88)
            await page.wait_for_text("Enter: download it")
            await page.type_key("Enter", "\r", "Enter", 13)
            exported = downloads / f"{SESSION}.html"
            await page.wait_until(exported.exists, "the export to arrive as a download", timeout=30)
            await page.wait_until(lambda: b"</html>" in exported.read_bytes(), "the whole download")
            assert APPENDED in exported.read_text()
            assert not list(folder.glob("*.html"))  # nothing written on the serving side
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)


@pytest.mark.slow
async def test_watch_serve_only_opens_each_browser_s_viewer_with_the_filter_on(tmp_path: Path) -> None:
    assert BINARY is not None
    folder = tmp_path / "journals"
    write_journal(folder / f"{SESSION}.jsonl", story())
    port = _free_port()
    argv = [sys.executable, "-m", "wren_tui", "watch", "--serve", "--only", "errors", "--port", str(port)]
    server = subprocess.Popen(
        [*argv, "--dir", str(folder), SESSION],
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        said = _wait_for_line(server, "viewers at once")
        async with chromium(BINARY, tmp_path / "profile") as page:
            await page.send("Page.navigate", url=served_address(said, port))
            # The page's viewer opens with the filter on: the gateway's error shows, the replies around it do not.
            await page.wait_for_text("only errors")
            await page.wait_for_text("model gateway timed out after 30 s")
            await page.screenshot(tmp_path / "served-only-errors.png")
            assert "An empty list has no mean" not in page.text()
            assert "I'll run the test suite first." not in page.text()
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
