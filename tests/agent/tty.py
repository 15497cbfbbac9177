"""`wren` on a real pseudo-terminal, and the hostile sequences a model or a tool can send to one.

The terminal's output processing and echo are off, so every byte read from it is a byte wren
wrote: a CR in what we read is a CR wren wrote, not the line discipline's.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import subprocess
import sys
import termios
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

# (name, what a model or a tool sends, how wren must show it): each one a thing a terminal obeys.
HOSTILE: list[tuple[str, str, str]] = [
    ("CSI erase screen", "\x1b[2J\x1b[H", "␛[2J␛[H"),
    ("CR + erase line (the spoof)", "\r\x1b[2K", "␍␛[2K"),
    ("SGR colour", "\x1b[31mRED\x1b[0m", "␛[31mRED␛[0m"),
    ("OSC 0 window title", "\x1b]0;PWNED\x07", "␛]0;PWNED␇"),
    ("OSC 8 hyperlink", "\x1b]8;;http://127.0.0.1/\x1b\\link\x1b]8;;\x1b\\", "␛]8;;http://127.0.0.1/␛\\link␛]8;;␛\\"),
    ("OSC 52 clipboard", "\x1b]52;c;cHduZWQ=\x07", "␛]52;c;cHduZWQ=␇"),
    ("BEL", "\x07", "␇"),
    ("backspace", "\x08\x08", "␈␈"),
    ("lone CR", "\r", "␍"),
    ("DEL", "\x7f", "␡"),
    ("C1 CSI (U+009B)", "\x9b31m", "<U+009B>31m"),
    ("bidi override (U+202E)", "\u202eabc\u202c", "<U+202E>abc<U+202C>"),
    ("zero-width space (Cf)", "\u200b", "<U+200B>"),
]


def hostile_lines() -> str:
    """One line per sequence, each between `<` and `>` so its shown form can be found: `<name: SEQ>`."""
    return "".join(f"<{name}: {raw}>\n" for name, raw, _ in HOSTILE)


def shown_forms() -> dict[str, str]:
    return {name: f"<{name}: {shown}>" for name, _, shown in HOSTILE}


def obeyed_characters(text: str) -> list[str]:
    """Every character in `text` a terminal would act on rather than print (newline alone allowed)."""
    return [
        c
        for c in text
        if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F or unicodedata.category(c) in ("Cf", "Cs")
    ]


def assert_inert(data: bytes, where: str) -> str:
    """`data` is valid UTF-8 with no character a terminal obeys; returns it decoded."""
    text = data.decode("utf-8")
    bad = obeyed_characters(text)
    assert not bad, f"{where}: the terminal was sent {sorted(set(bad))!r}:\n{text[:3000]}"
    return text


class Tty:
    """`wren ARGS` with a pseudo-terminal as stdin, stdout and stderr (and, if asked, as its controlling terminal)."""

    def __init__(
        self, args: list[str], cwd: Path, env: dict[str, str] | None = None, *, controlling: bool = False
    ) -> None:
        self.master, slave = os.openpty()
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.OPOST
        attrs[3] &= ~(termios.ECHO | termios.ECHONL)
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
        full_env.update(env or {})

        def take_terminal() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wren_tui", *args],
            cwd=cwd,
            env=full_env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=take_terminal if controlling else None,
        )
        os.close(slave)
        self.data = bytearray()
        self.closed = False

    def _read(self, timeout: float) -> bool:
        """Read what is there within `timeout`; False once wren has closed the terminal."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError as exc:
            if exc.errno != errno.EIO:
                raise
            chunk = b""
        self.data += chunk
        return bool(chunk)

    def wait_for(self, needle: bytes, timeout: float = 60) -> None:
        self.wait_until(lambda: needle in self.data, repr(needle), timeout)

    def wait_until(self, condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            left = deadline - time.monotonic()
            assert left > 0, f"{what} never came; the terminal shows:\n{self.text()}"
            assert self._read(min(left, 0.5)), f"wren closed the terminal before {what}; it showed:\n{self.text()}"

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def finish(self, timeout: float = 60) -> int:
        """Read to the end (wren closes the terminal when it exits), then its exit status."""
        deadline = time.monotonic() + timeout
        while self._read(max(deadline - time.monotonic(), 0.01)):
            assert time.monotonic() < deadline, f"wren did not finish; the terminal shows:\n{self.text()}"
        code = self.proc.wait(max(deadline - time.monotonic(), 1))
        self.close()
        return code

    def hang_up(self) -> None:
        """Close the terminal, as when its window is closed or an ssh connection drops."""
        self.close()

    def close(self) -> None:
        if not self.closed:
            os.close(self.master)
            self.closed = True

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self.close()

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")
