"""The approval gate as a user meets it: no terminal, --yes, and a real terminal (a pty) asking y/n/always."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.agent.conftest import events_of, journals_of, messages_of, only_journal
from tests.conftest import run_wren
from wren_tui.journal.events import ToolEnd, ToolStart

FIX = "run the tests, find the failing case and fix it"


def test_without_a_terminal_or_yes_side_effects_are_denied_and_the_model_is_told(workspace: Path) -> None:
    proc = run_wren(["run", "--dir", "../journals", FIX], cwd=workspace, input="")
    assert proc.returncode == 0, proc.stderr
    events = events_of(only_journal(journals_of(workspace)))
    start = next(e for e in events if isinstance(e, ToolStart))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert (start.name, start.approval) == ("run_command", "denied")
    assert (end.ok, end.stopped_by) == (False, "approval")
    said = [m.message for m in messages_of(events)]
    tool_result = next(m for m in said if m.role == "tool")
    assert tool_result.content == (
        "not run: denied: there is no terminal to ask for approval and --yes was not given, so side effects are denied"
    )
    # The model read the denial and says so instead of pretending it ran the tests.
    assert said[-1].role == "assistant" and "could not run" in said[-1].content
    assert "--yes" in said[-1].content
    assert not any(isinstance(e, ToolStart) and e.approval != "denied" for e in events)


def test_with_yes_side_effects_are_approved(workspace: Path) -> None:
    proc = run_wren(["run", "--dir", "../journals", "--yes", FIX], cwd=workspace, input="")
    assert proc.returncode == 0, proc.stderr
    starts = [e for e in events_of(only_journal(journals_of(workspace))) if isinstance(e, ToolStart)]
    assert {(e.name, e.approval) for e in starts} == {
        ("run_command", "approved"),
        ("read_file", "auto"),
        ("edit_file", "approved"),
    }


class Terminal:
    """`wren` on a pseudo-terminal: read what it prints, answer its prompts."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, slave = os.openpty()
        env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wren_tui", *args],
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        self.seen = ""

    def wait_for(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never appeared; the terminal shows:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    chunk = b""
                assert chunk, f"wren closed the terminal before {text!r}; it showed:\n{self.seen}"
                self.seen += chunk.decode("utf-8", errors="replace")

    def answer(self, line: str) -> None:
        self.seen = ""
        os.write(self.master, line.encode() + b"\n")

    def finish(self, timeout: float = 30) -> int:
        self.wait_for("continue with:", timeout)
        code = self.proc.wait(timeout)
        os.close(self.master)
        return code


def test_at_a_terminal_yes_then_always_allows_and_always_stops_asking_for_that_tool(workspace: Path) -> None:
    term = Terminal(["run", "--dir", "../journals", FIX], workspace)
    term.wait_for("allow run_command `python -m unittest -v`?")
    term.answer("always")
    term.wait_for("allow edit_file stats/core.py")
    term.answer("y")
    assert term.finish() == 0
    assert "allow run_command" not in term.seen  # the second test run was not asked about
    starts = [e for e in events_of(only_journal(journals_of(workspace))) if isinstance(e, ToolStart)]
    assert [(e.name, e.approval) for e in starts if not e.read_only] == [
        ("run_command", "approved"),
        ("edit_file", "approved"),
        ("run_command", "approved"),
    ]
    assert "All 6 tests pass" in term.seen


def test_at_a_terminal_no_denies_the_call_and_the_model_stops(workspace: Path) -> None:
    term = Terminal(["run", "--dir", "../journals", FIX], workspace)
    term.wait_for("allow run_command")
    term.answer("n")
    assert term.finish() == 0
    events = events_of(only_journal(journals_of(workspace)))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.stopped_by == "approval"
    told = next(m.message.content for m in messages_of(events) if m.message.role == "tool")
    assert told == "not run: denied: the user answered no at the approval prompt"


def test_ctrl_c_at_the_approval_prompt_closes_the_call_as_cancelled_and_exits_130(workspace: Path) -> None:
    term = Terminal(["run", "--dir", "../journals", FIX], workspace)
    term.wait_for("allow run_command")
    term.proc.send_signal(signal.SIGINT)
    assert term.proc.wait(30) == 130
    os.close(term.master)
    events = events_of(only_journal(journals_of(workspace)))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.stopped_by == "cancel"
    assert not any(isinstance(e, ToolStart) for e in events)  # it never started
    assert messages_of(events)[-1].message.content == (
        "not run: the turn was stopped by SIGINT (Ctrl+C) before this call started"
    )
    assert type(events[-1]).__name__ == "RunEnd" and events[-1].reason == "cancelled"  # type: ignore[union-attr]
