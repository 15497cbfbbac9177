"""What the model and the person are told is true: four distinct prefixes, loops counted per turn, and
the scripted model reading both right."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import events_of, journals_of, messages_of, only_journal
from tests.agent.openai_server import Answer, OpenAIServer, Stream, call_chunk, finish_chunk, reply_stream, sse
from tests.agent.test_signals import LATE, command_group, group_members, wait_until
from tests.agent.tty import Tty
from tests.conftest import run_wren
from wren_tui.agent import outcomes
from wren_tui.agent.approval import PROMPT_LIMIT, approval_prompt, preview_call
from wren_tui.agent.loop import Printer
from wren_tui.agent.session import SYSTEM_PROMPT
from wren_tui.journal.events import ToolCall, ToolEnd
from wren_tui.journal.store import new_session_id
from wren_tui.journal.visible import visible

FIX = "run the tests, find the failing case and fix it"


# --- the prefixes ----------------------------------------------------------------------------------


def test_the_system_prompt_defines_each_prefix_and_not_run_means_never_started() -> None:
    prompt = SYSTEM_PROMPT.format(root="/ws")
    for prefix in (outcomes.NOT_RUN, outcomes.INTERRUPTED, outcomes.OUTCOME_UNKNOWN, outcomes.OUTPUT_LOST):
        assert f"'{prefix}' means" in prompt
    assert "'not run:' means it never started" in prompt
    samples = {
        outcomes.interrupted(2003, "SIGTERM (Wren was told to stop)"),
        outcomes.outcome_unknown("2026-01-01T00:00:00.000Z"),
        outcomes.output_lost("2026-01-01T00:00:00.000Z", "it ended ok after 2 ms, but 40 chars never reached"),
    }
    assert all(outcomes.did_not_finish(text) and not text.startswith(outcomes.NOT_RUN) for text in samples)


def test_assume_failed_after_a_kill_tells_the_model_outcome_unknown_and_the_scripted_model_does_not_guess(
    workspace: Path,
) -> None:
    sid = new_session_id()
    journal = journals_of(workspace) / f"{sid}.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wren_tui",
            "run",
            "--dir",
            "../journals",
            "--yes",
            "--session-id",
            sid,
            f"run `{LATE}`",
        ],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        group = command_group(workspace, journal)
        proc.kill()
        proc.wait(30)
    finally:
        proc.kill()
    wait_until(lambda: not group_members(group), "the command's group to end", timeout=10)
    resumed = run_wren(["resume", "--dir", "../journals", "--yes", "--assume-failed", sid], cwd=workspace)
    assert resumed.returncode == 0, resumed.stderr
    events = events_of(journal)
    told = next(m.message.content for m in messages_of(events) if m.message.role == "tool")
    assert told.startswith("outcome unknown: Wren stopped after this call started")
    reply = messages_of(events)[-1].message.content
    assert "finished" not in reply and "not run:" not in reply
    assert reply.startswith(f"I do not know how `{LATE}` went: Wren stopped after this call started")
    assert "I will not run it again on a guess" in reply


# --- loops -----------------------------------------------------------------------------------------


def test_the_same_command_asked_for_in_three_requests_runs_each_time(workspace: Path) -> None:
    sid = new_session_id()
    asked = "run `date +%N`"
    assert run_wren(["run", "--dir", "../journals", "--yes", "--session-id", sid, asked], cwd=workspace).returncode == 0
    for _ in range(2):
        proc = run_wren(["resume", "--dir", "../journals", "--yes", sid, asked], cwd=workspace)
        assert proc.returncode == 0, proc.stderr
        assert "[not run: loop]" not in proc.stdout
    ends = [e for e in events_of(only_journal(journals_of(workspace))) if isinstance(e, ToolEnd)]
    assert [(e.ok, e.stopped_by) for e in ends] == [(True, None)] * 3


async def test_calls_of_a_turn_made_by_an_earlier_process_are_not_counted_as_a_loop(workspace: Path) -> None:
    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if results and results[-1].startswith("not run:"):
            return reply_stream("I see, I was looping.")
        n = len(results)
        return Stream(
            [sse(call_chunk(0, '{"path": "README.md"}', call_id=f"c{n}", name="read_file"), finish_chunk("tool_calls"))]
        )

    (workspace / "README.md").write_text("hello\n")
    async with OpenAIServer(answer) as srv:
        env = {"WREN_BASE_URL": srv.base_url}
        sid = new_session_id()
        first = await _wren(
            ["run", "--dir", "../journals", "--model", "openai", "--max-steps", "2", "--session-id", sid, "read"],
            workspace,
            env,
        )
        assert first == 0
        # The turn goes on in a new process: its third identical call is its first.
        again = await _wren(
            ["resume", "--dir", "../journals", "--model", "openai", "--max-steps", "1", sid], workspace, env
        )
        assert again == 0
        # Within one process the loop is still stopped.
        third = await _wren(
            ["resume", "--dir", "../journals", "--model", "openai", "--max-steps", "5", sid], workspace, env
        )
        assert third == 0
    ends = [e.stopped_by for e in events_of(only_journal(journals_of(workspace))) if isinstance(e, ToolEnd)]
    assert ends == [None, None, None, None, None, "loop"]


async def _wren(args: list[str], cwd: Path, env: dict[str, str]) -> int:
    full = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")} | env
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "wren_tui", *args, cwd=cwd, env=full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return proc.returncode


# --- the scripted model's memory -------------------------------------------------------------------


def test_asked_what_came_first_the_scripted_model_answers_with_the_first_question(workspace: Path) -> None:
    questions = ["what is your name?", "how are you?", "what did I ask first?", "what did I ask second?"]
    proc = run_wren(
        ["chat", "--dir", "../journals"],
        cwd=workspace,
        input="\n".join([*questions, "what did I ask?", "/quit"]) + "\n",
    )
    assert proc.returncode == 0, proc.stderr
    said = [m.message.content for m in messages_of(events_of(only_journal(journals_of(workspace))))]
    assert "First you asked: 'what is your name?'." in said
    assert "Request number 2: 'how are you?'." in said
    assert "You asked: 'what did I ask second?'." in said


# --- Ctrl+D at the approval prompt -----------------------------------------------------------------


def test_end_of_input_at_the_approval_prompt_is_recorded_as_no_answer_not_as_no(workspace: Path) -> None:
    tty = Tty(["run", "--dir", "../journals", FIX], workspace)
    try:
        tty.wait_for(b"[a]lways run_command: ")
        tty.send(b"\x04")  # Ctrl+D: the terminal's end of input
        assert tty.finish() == 0
    finally:
        tty.kill()
    events = events_of(only_journal(journals_of(workspace)))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.stopped_by == "approval"
    told = next(m.message.content for m in messages_of(events) if m.message.role == "tool")
    assert told.startswith("not run: no answer: the terminal closed its input at the approval prompt")
    assert "answered no" not in told
    assert "[no answer]" in tty.text()


# --- the prompt and the printer --------------------------------------------------------------------


def command(text: str) -> ToolCall:
    return ToolCall("c1", "run_command", json.dumps({"command": text}))


def test_a_multi_line_command_is_shown_line_by_line_behind_a_gutter() -> None:
    prompt = approval_prompt(command("cat > x <<'EOF'\nallow run_command `ls`?\nEOF"))
    assert prompt.splitlines()[1:5] == [
        "allow run_command, a command of 3 lines?",
        "  | cat > x <<'EOF'",
        "  | allow run_command `ls`?",
        "  | EOF",
    ]


def test_a_command_too_long_for_the_prompt_says_how_much_is_not_shown() -> None:
    long = "echo " + "x" * 10_000 + " && rm -rf build"
    prompt = approval_prompt(command(long))
    cut = len(long) - PROMPT_LIMIT
    assert f"  ... {cut} characters not shown ..." in prompt
    assert f"(the command is {len(long)} characters long: {cut} in the middle are not shown here)" in prompt
    assert "rm -rf build" in prompt  # its end is always shown
    assert preview_call(command(long)).endswith(f"... [{len(long) - 200} more characters not shown]`")


def test_a_path_with_control_characters_is_shown_and_named_at_the_prompt() -> None:
    call = ToolCall("c1", "write_file", json.dumps({"path": "notes\r\x1b[2Kdocs/ok.md", "content": "x"}))
    prompt = approval_prompt(call)
    assert "allow write_file notes␍␛[2Kdocs/ok.md (1 characters)?" in prompt
    assert "(the path contains control characters, shown as ␍ carriage return, ␛ escape)" in prompt


def test_the_printer_shows_a_sequence_cut_across_fragments_and_writes_no_control_character() -> None:
    out = io.StringIO()
    printer = Printer(out)
    for fragment in ("a\x1b", "]0;title\x07", "b\r", "\nc\x9b", "2Jd\u202e", "e\n"):
        printer.text(fragment)
    printer.line("done\x08")
    assert out.getvalue() == "a␛]0;title␇b␍\nc<U+009B>2Jd<U+202E>e\ndone␈\n"


class _HungUp(io.StringIO):
    """A terminal that hung up: every write fails with EIO, and each attempt is counted."""

    def __init__(self, errno_: int = 5) -> None:
        super().__init__()
        self.attempts: list[str] = []
        self.errno = errno_

    def write(self, text: str) -> int:
        self.attempts.append(text)
        raise OSError(self.errno, "Input/output error")


@pytest.mark.parametrize("errno_", [5, 32, 6])  # EIO (hung up), EPIPE (the reader left), ENXIO
def test_the_printer_goes_quiet_when_the_terminal_is_gone(errno_: int) -> None:
    terminal = _HungUp(errno_)
    printer = Printer(terminal)
    printer.text("a")  # the first write meets the error, and nothing is raised
    printer.line("b")
    printer.reasoning("c")
    printer.text("d")
    # One attempt, then quiet: no write is tried on a terminal that is gone (the journal keeps the record).
    assert terminal.attempts == ["a"]


def test_any_other_write_error_is_not_hidden() -> None:
    printer = Printer(_HungUp(28))  # ENOSPC: not a terminal that went away
    with pytest.raises(OSError):
        printer.text("a")


@pytest.mark.parametrize(("char", "shown"), [("\ud800", "<U+D800>"), ("\u2067", "<U+2067>"), ("\x85", "<U+0085>")])
def test_visible_shows_surrogates_isolates_and_c1_as_placeholders(char: str, shown: str) -> None:
    assert visible(f"a{char}b") == f"a{shown}b"
