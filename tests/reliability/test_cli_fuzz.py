"""Every command with random and hostile argument lists: never a traceback, always a documented exit status.

Each example runs `wren COMMAND ARGS...` as a user would (a separate process, its own HOME, state and
agents' folders under a temporary folder, stdin empty). What it may do: exit 0-5 with at most a sentence
(or argparse's usage and its one error line) on stderr; or, for the commands that open the viewer or
ship forever (watch, demo, mirror), keep running, and then it is stopped and what it printed so far checked.
A few examples per command by default; WREN_TORTURE=1 (`just torture`) runs many more.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability.dial import scaled
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.cli import build_parser

_, SUBCOMMANDS = build_parser()
COMMANDS = sorted(SUBCOMMANDS)
# Documented in `wren --help`: 0 ok, 1 error, 2 bad usage, 3 resume refused, 4 unreadable, 5 journal changed.
EXITS = {0, 1, 2, 3, 4, 5}
# Commands that run until stopped when their arguments are good: a viewer, the demo, a mirror.
LONG_RUNNING = {"watch", "demo", "mirror", "chat"}
# Left out: a side effect approved without asking (--yes), a pace that makes a run last for hours, a served viewer.
NEVER = {"-y", "--yes", "--pace", "--pace-factor", "--serve", "--command-timeout", "-h", "--help"}

HOSTILE = [
    "",
    "-",
    "--",
    "---",
    "-x",
    "--no-such-option",
    "--dir=",
    "0",
    "-1",
    "99999999999999999999999",
    "1e309",
    "nan",
    "inf",
    "s-20261201-000000-abcd",
    "s-../../etc",
    "latest",
    "..",
    "/",
    "/dev/null",
    "/dev/zero",
    "/proc/self/environ",
    "/etc/passwd",
    "/nonexistent/folder",
    "~",
    "nats://[::1",
    "nats://127.0.0.1:1/vm/s-20261201-000000-abcd",
    "nats://:99999",
    "nats://[zz]/x",
    "http://example.invalid/",
    "(a+)+$",
    "a{99999999999}",
    "(" * 500,
    "[z-a]",
    "*",
    "\\",
    "%s%n%x",
    "$(id)",
    "`id`",
    "\x1b]0;PWNED\x07",
    "\r\x1b[2K",
    "\u202eevil",
    "\u200b",
    "\udcff\udcfe",  # invalid UTF-8 bytes in argv (surrogateescape)
    "caf\udce9",
    "é" * 300,
    "x" * 5000,
    "line\nbreak",
    "md",
    "html",
    "json",
    "claude",
    "codex",
    "pi",
    "all",
    "user",
    "thinking",
    "3d",
    "2026-13-45",
    "scripted",
    "openai",
    "anthropic",
]


def _options(command: str) -> list[str]:
    parser = SUBCOMMANDS[command]
    return sorted({o for a in parser._actions for o in a.option_strings} - NEVER)


def _args(command: str) -> st.SearchStrategy[list[str]]:
    token = st.one_of(
        st.sampled_from(_options(command)),
        st.sampled_from(HOSTILE),
        # What a process's argv can hold: text (a lone surrogate cannot be passed to exec), or any bytes
        # but NUL, which Python hands the program as surrogate escapes.
        st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12),
        st.binary(max_size=12).filter(lambda raw: b"\x00" not in raw).map(os.fsdecode),
    )
    return st.lists(token, max_size=5).filter(lambda args: not NEVER.intersection(args))


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WREN_", "ANTHROPIC_", "CLAUDE_", "CODEX_"))}
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / "state"),
        CLAUDE_CONFIG_DIR=str(home / "claude"),
        CODEX_HOME=str(home / "codex"),
        PI_CODING_AGENT_DIR=str(home / "pi"),
        TERM="dumb",
    )
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str], hold: float) -> tuple[int | None, str]:
    """The exit status (None: still running after `hold` seconds, then stopped) and stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "wren_tui", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=hold)
        return proc.returncode, err.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
        return None, err.decode("utf-8", "replace")


@pytest.mark.parametrize("command", COMMANDS)
def test_any_arguments_give_a_documented_exit_and_never_a_traceback(
    tmp_path_factory: pytest.TempPathFactory, command: str
) -> None:
    home = tmp_path_factory.mktemp(f"fuzz-{command}")
    workspace = prepare_workspace(home / "ws")
    env = _env(home)
    hold = 6.0 if command in LONG_RUNNING else 60.0

    @settings(
        max_examples=scaled(4, 60),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        database=None,
    )
    @given(args=_args(command))
    def check(args: list[str]) -> None:
        code, err = _run([command, *args], workspace, env, hold)
        shown = f"wren {command} {args!r}: exit {code}\n{err[-3000:]}"
        assert "Traceback" not in err and 'File "' not in err, shown
        if code is None:
            assert command in LONG_RUNNING, shown  # only a viewer, the demo or a mirror may still be running
            return
        assert code in EXITS, shown
        if code == 2 and err.startswith("usage:"):
            assert err.rstrip("\n").splitlines()[-1].startswith(f"wren {command}: error: "), shown
        elif code != 0:
            assert err.count("\n") <= 3, shown  # a sentence (or two: a warning before it), never a dump

    check()


# Arguments the fuzz above found, kept so that they are tried every run: a `~user` for no user (Path.expanduser
# raised; os.path.expanduser leaves it as typed), and a pattern with a byte that is no UTF-8 (a lone surrogate).
FOUND = [
    ["export", "~0"],
    ["log", "~nouser/s.jsonl"],
    ["ls", "--agent", "all", "--dir", "~0"],
    ["search", "word", "--dir", "~nouser"],
    ["search", "A\udc80"],
    ["search", "A\udc80", "--regex"],
]


@pytest.mark.parametrize("args", FOUND, ids=[" ".join(a).encode("utf-8", "backslashreplace").decode() for a in FOUND])
def test_what_the_fuzz_found_gives_a_documented_exit_and_never_a_traceback(tmp_path: Path, args: list[str]) -> None:
    home = tmp_path / "home"
    workspace = prepare_workspace(home / "ws")
    code, err = _run(args, workspace, _env(home), 60.0)
    shown = f"wren {args!r}: exit {code}\n{err[-3000:]}"
    assert "Traceback" not in err and code in EXITS, shown
    assert err.count("\n") <= 3, shown
