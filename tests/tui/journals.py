"""Journals for the viewer's tests: realistic sessions with fixed timestamps, built in tmp_path.

Lines are encoded by the journal kernel's own encoder (`encode_line`, the writer's format with
its CRC), stamped from a fixed start so snapshots never see the wall clock.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from wren_tui.journal.events import (
    ChatMessage,
    Delta,
    Error,
    KnownEvent,
    Message,
    RunEnd,
    RunStart,
    ToolCall,
    ToolEnd,
    ToolStart,
    Usage,
)
from wren_tui.journal.writer import encode_line

START = datetime(2025, 3, 1, 9, 30, 0, tzinfo=UTC)
STEP = timedelta(milliseconds=1250)
SESSION = "s-20250301-093000-demo"
FORK_SESSION = "s-20250301-094500-fork"


def ts_at(index: int, start: datetime = START) -> str:
    moment = start + STEP * index
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def after_last(events: Sequence[KnownEvent], seconds: float, start: datetime = START) -> datetime:
    """The moment `seconds` after the last of `events` was stamped (for a fixed clock)."""
    return start + STEP * (len(events) - 1) + timedelta(seconds=seconds)


def encode(events: Sequence[KnownEvent], *, first_seq: int = 1, start: datetime = START) -> bytes:
    return b"".join(encode_line(e, first_seq + i, ts_at(first_seq - 1 + i, start)) for i, e in enumerate(events))


def write_journal(path: Path, events: Sequence[KnownEvent], *, start: datetime = START) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, encode(events, start=start))
    finally:
        os.close(fd)
    return path


def user(text: str) -> Message:
    return Message(message=ChatMessage(role="user", content=text))


def assistant(text: str, *calls: ToolCall) -> Message:
    return Message(message=ChatMessage(role="assistant", content=text, tool_calls=list(calls) or None))


def tool_result(call_id: str, text: str) -> Message:
    return Message(message=ChatMessage(role="tool", content=text, tool_call_id=call_id))


TEST_OUTPUT = "\n".join(
    [
        "$ python -m pytest -q",
        "..F.....",
        "=================================== FAILURES ===================================",
        "______________________________ test_mean_of_empty ______________________________",
        "",
        "    def test_mean_of_empty():",
        ">       assert mean([]) == 0.0",
        "E       ZeroDivisionError: division by zero",
        "",
        "stats/core.py:12: ZeroDivisionError",
        "=========================== short test summary info ============================",
        "FAILED tests/test_core.py::test_mean_of_empty - ZeroDivisionError",
        "1 failed, 7 passed in 0.04s",
    ]
)


def story() -> list[KnownEvent]:
    """A session that runs tests, reads the code, and is cut off while editing (no tool_end)."""
    run_tests = ToolCall("call_1", "shell", '{"command": "python -m pytest -q"}')
    read = ToolCall("call_2", "read_file", '{"path": "stats/core.py"}')
    edit = ToolCall("call_3", "edit_file", '{"path": "stats/core.py", "old": "return sum(xs) / len(xs)"}')
    return [
        RunStart(pid=4242, cwd="/work/demo", model="scripted", version="0.1.0"),
        user("run the tests, find the failing case and fix it"),
        Delta(text="I'll run the "),
        Delta(text="test suite first."),
        assistant("I'll run the test suite first.", run_tests),
        ToolStart(id="call_1", name="shell", read_only=False, approval="approved"),
        ToolEnd(id="call_1", ok=False, elapsed_ms=412, chars=len(TEST_OUTPUT)),
        tool_result("call_1", TEST_OUTPUT),
        Usage(input_tokens=812, output_tokens=64, model="scripted"),
        assistant("test_mean_of_empty fails with ZeroDivisionError; reading stats/core.py.", read),
        ToolStart(id="call_2", name="read_file", read_only=True),
        ToolEnd(id="call_2", ok=True, elapsed_ms=3, chars=118),
        tool_result("call_2", "def mean(xs):\n    return sum(xs) / len(xs)\n"),
        Usage(input_tokens=1104, output_tokens=71, model="scripted"),
        Error(message="model gateway timed out after 30 s", retryable=True, attempt=1),
        assistant("An empty list has no mean; I'll return 0.0 for it.", edit),
        ToolStart(id="call_3", name="edit_file", read_only=False, approval="approved"),
    ]


def finished_story() -> list[KnownEvent]:
    """The same session carried to its end: the edit lands, the tests pass, the run is done."""
    rerun = ToolCall("call_4", "shell", '{"command": "python -m pytest -q"}')
    return [
        *story(),
        ToolEnd(id="call_3", ok=True, elapsed_ms=5, chars=24),
        tool_result("call_3", "edited stats/core.py (1 change)"),
        assistant("Now the tests again.", rerun),
        ToolStart(id="call_4", name="shell", read_only=False, approval="approved"),
        ToolEnd(id="call_4", ok=True, elapsed_ms=398, chars=25),
        tool_result("call_4", "8 passed in 0.04s"),
        Usage(input_tokens=1390, output_tokens=40, model="scripted"),
        assistant("Fixed: mean([]) now returns 0.0 and all 8 tests pass."),
        RunEnd(reason="done"),
    ]
