"""`wren watch` and `wren demo` in a real terminal (tmux): what lands on the captured screen."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.journals import SESSION, finished_story, story, user, write_journal
from wren_tui.journal.store import lock_holder
from wren_tui.journal.writer import JournalWriter

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
REPO = Path(__file__).resolve().parents[2]


class Terminal:
    def __init__(self, name: str) -> None:
        self.name = name

    def capture(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True, check=True
        ).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared on the terminal; it shows:\n{screen}")
            time.sleep(0.05)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    name = f"wren-test-{uuid.uuid4().hex[:8]}"
    yield Terminal(name)
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def _start(terminal: Terminal, args: list[str], cwd: Path, size: tuple[int, int] = (100, 30)) -> None:
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in {"PYTHONPATH": str(REPO), "TERM": "xterm-256color"}.items())
    command = f"cd {shlex.quote(str(cwd))} && env {env} {shlex.quote(sys.executable)} -m wren_tui {shlex.join(args)}"
    command += "; echo WREN-EXITED-$?; sleep 60"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", terminal.name, "-x", str(size[0]), "-y", str(size[1]), command],
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith(("WREN_", "TMUX"))},
    )


def test_watch_shows_events_another_process_appends(tmp_path: Path, terminal: Terminal) -> None:
    path = write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", story()[:2])
    _start(terminal, ["watch", SESSION, "--dir", str(path.parent)], tmp_path)
    terminal.wait_for("run the tests, find the failing case and fix it")
    with JournalWriter.open(path, fsync="none") as writer:
        for n in range(1, 6):
            writer.append(user(f"appended from another process, number {n}"))
        screen = terminal.wait_for("appended from another process, number 5")
        assert " live " in screen
        assert "7 events" in screen
    terminal.keys("q")
    terminal.wait_for("WREN-EXITED-0")


def test_watch_pick_prints_the_chosen_session_and_seq(tmp_path: Path, terminal: Terminal) -> None:
    path = write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", finished_story())
    _start(terminal, ["watch", "--pick", str(path)], tmp_path)
    terminal.wait_for("printed as ID SEQ on exit")
    terminal.keys("Up", "Enter")
    terminal.wait_for("WREN-EXITED-0")
    assert f"{SESSION} 2" in terminal.capture()
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_demo_in_80x24_runs_the_agent_live_and_quitting_stops_it(tmp_path: Path, terminal: Terminal) -> None:
    _start(terminal, ["demo", "--dir", "journals", "--pace-factor", "2"], tmp_path, size=(80, 24))
    terminal.wait_for("run the tests, find the failing case and fix it", timeout=30)
    terminal.wait_for(" live ")
    journal = next((tmp_path / "journals").glob("s-*.jsonl"))
    assert lock_holder(journal) is not None
    terminal.keys("q")
    screen = terminal.wait_for("WREN-EXITED-0", timeout=30)
    assert "the agent was still running and has been stopped" in screen
    assert f"watch it again: wren watch {journal.stem}" in screen
    assert lock_holder(journal) is None
