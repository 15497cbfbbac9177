"""A real terminal for tests and benchmarks: a tmux server of our own, never the caller's.

Every use gets its own server (`tmux -L <unique>`, no config file), so a run from inside a user's
tmux neither reaches their server nor depends on its environment. The command runs with absolute
paths and exactly the environment given here (this interpreter's folder first on PATH, so `wren`
is the one under test), and the server is killed when the terminal is closed.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# What any command needs and nothing of the caller's session: no TMUX, no WREN_*, no VIRTUAL_ENV guesswork.
_KEEP = ("HOME", "LANG", "LC_ALL", "USER", "LOGNAME", "TMPDIR")


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command in the terminal gets: this venv's bin first on PATH, the repo importable."""
    env = {k: os.environ[k] for k in _KEEP if k in os.environ}
    env["PATH"] = os.pathsep.join([str(BIN), "/usr/local/bin", "/usr/bin", "/bin"])
    env["PYTHONPATH"] = str(REPO)
    if os.environ.get("WREN_SIMULATE_OS"):  # the simulated system (tests/os_sim) reaches the terminal too
        env["WREN_SIMULATE_OS"] = os.environ["WREN_SIMULATE_OS"]
        env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests" / "os_sim"), str(REPO)])
    env["TERM"] = "xterm-256color"
    env.update(extra or {})
    return env


class Terminal:
    """One tmux server with one window running one command."""

    def __init__(self, name: str) -> None:
        self.server = name
        self.pid: int | None = None
        self.socket: Path | None = None

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.server, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=check,
            env=clean_env(),
        )

    def start(
        self,
        argv: list[str],
        cwd: Path,
        size: tuple[int, int],
        env: Mapping[str, str] | None = None,
        *,
        report_exit: bool = True,
    ) -> None:
        """Run `argv` in `cwd` with exactly `clean_env(env)`.

        With `report_exit`, print WREN-EXITED-<status> after it and keep the window open; without,
        the command is the pane's process itself (its pid is `self.pid`).
        """
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in clean_env(env).items())
        command = f"cd {shlex.quote(str(cwd.resolve()))} && exec env -i {exports} "
        if report_exit:
            command += "sh -c " + shlex.quote(shlex.join(argv) + '; echo "WREN-EXITED-$?"; sleep 600')
        else:
            command += shlex.join(argv)
        self.tmux("new-session", "-d", "-s", "t", "-x", str(size[0]), "-y", str(size[1]), command)
        pid, socket = self.tmux("display", "-p", "-t", "t", "#{pane_pid} #{socket_path}").stdout.split(maxsplit=1)
        self.pid, self.socket = int(pid), Path(socket.strip())

    def capture(self, *, joined: bool = False) -> str:
        """The screen; `joined` gives each line the terminal wrapped back as one line, as it was printed."""
        return self.tmux("capture-pane", "-p", *(["-J"] if joined else []), "-t", "t").stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def wait_for(self, text: str, timeout: float = 20.0, poll: float = 0.05) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared on the terminal; it shows:\n{screen}")
            time.sleep(poll)

    def wait_gone(self, text: str, timeout: float = 20.0, poll: float = 0.05) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture()
            if text not in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} stayed on the terminal; it shows:\n{screen}")
            time.sleep(poll)

    def close(self) -> None:
        self.tmux("kill-server", check=False)
        if self.socket is not None:
            self.socket.unlink(missing_ok=True)  # tmux leaves the socket file of a killed server


@contextmanager
def terminal(prefix: str = "wren-test") -> Iterator[Terminal]:
    term = Terminal(f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        yield term
    finally:
        term.close()


def python_argv(*args: str) -> list[str]:
    """`wren ARGS` by the absolute interpreter under test, whatever PATH holds."""
    return [sys.executable, "-m", "wren_tui", *args]
