"""`wren watch` on another agent's session in a real terminal (tmux), while lines of a real session are appended."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.foreign.sessions import AN_HOUR, age, copy_session, lines_of
from tests.tmux import Terminal, python_argv
from tests.tmux import terminal as own_terminal

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    with own_terminal() as term:
        yield term


@pytest.mark.parametrize("agent", ["claude", "codex", "pi", "gemini", "qwen", "copilot"])
def test_watch_follows_a_real_session_as_its_lines_are_appended(agent: str, tmp_path: Path, terminal: Terminal) -> None:
    lines = lines_of(agent, "multi-turn")
    # The last line saying the first answer (Codex says it for its own screen first, then as the reply).
    first_answer = max(i for i, line in enumerate(lines) if b"notes.txt is a short to-do list" in line)
    path = copy_session(agent, "multi-turn", tmp_path / "sessions", nested=True, lines=first_answer + 1)
    terminal.start(python_argv("watch", str(path), "--dir", str(tmp_path / "journals")), tmp_path, (120, 40))
    terminal.wait_for("notes.txt is a short to-do list with two items.")
    # The agent goes on: the second turn's lines, one write each, as the clients write them.
    with path.open("ab") as agent_writes:
        for line in lines[first_answer + 1 :]:
            agent_writes.write(line)
            agent_writes.flush()
            time.sleep(0.02)
    terminal.wait_for("hello.py has 3 lines.")
    screen = terminal.wait_for(" live ")  # it just changed
    calls = screen.split("Tool calls")[-1]
    assert len([row for row in calls.splitlines() if " ms " in row]) == 2  # both calls, each with its time
    age(path, AN_HOUR)
    # Its ending as `wren ls` says it: Gemini CLI records a call only with its result, so a session ending in a
    # reply is "last: reply", never "ended" (docs/agents.md).
    screen = terminal.wait_for(" last: reply " if agent == "gemini" else " ended ", timeout=20)
    assert "no result recorded" not in screen
    terminal.keys("q")
    terminal.wait_for("WREN-EXITED-0")


def test_watch_on_an_opencode_database_of_several_sessions_browses_them(tmp_path: Path, terminal: Terminal) -> None:
    from tests.foreign.test_opencode import OPENCODE, database, edit, fingerprint

    db = database(tmp_path / "opencode", "simple")
    tables = ("session", "message", "part", "event", "event_sequence")
    other = OPENCODE / "multi-turn.opencode.db"
    edit(db, f"attach '{other}' as other", *(f"insert into {t} select * from other.{t}" for t in tables))
    before = fingerprint(db)
    terminal.start(python_argv("watch", str(db), "--dir", str(tmp_path / "journals")), tmp_path, (140, 30))
    terminal.wait_for("ses_dce0f6347ffem")
    screen = terminal.wait_for("ses_dce0f289affee")
    assert "Sessions of OpenCode" in screen
    terminal.keys("Enter")
    terminal.wait_for("hello.py has 3 lines.")  # the newest, first: the multi-turn session
    terminal.keys("q")
    terminal.wait_for("WREN-EXITED-0")
    assert fingerprint(db) == before
