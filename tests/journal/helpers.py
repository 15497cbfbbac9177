"""Journals for tests: a realistic session written through the real writer, and a line-by-line reference reader."""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from wren_tui.journal.events import (
    ChatMessage,
    Event,
    KnownEvent,
    Message,
    RunEnd,
    RunStart,
    ToolCall,
    ToolEnd,
    ToolStart,
    Usage,
)
from wren_tui.journal.reader import _LineError, _parse_line
from wren_tui.journal.verdict import Stop
from wren_tui.journal.writer import JournalWriter


def session_events() -> list[KnownEvent]:
    """One turn of a coding agent: a question, a side-effecting call and a read-only one, an answer."""
    run_tests = ToolCall(id="c1", name="run_command", args='{"command": "pytest -q"}')
    read = ToolCall(id="c2", name="read_file", args='{"path": "calc.py"}')
    return [
        RunStart(pid=os.getpid(), cwd="/work/demo", model="scripted", version="test"),
        Message(message=ChatMessage(role="user", content="run the tests and fix the failing one")),
        Message(message=ChatMessage(role="assistant", content="Running the tests.", tool_calls=[run_tests])),
        ToolStart(id="c1", name="run_command", read_only=False, approval="approved"),
        ToolEnd(id="c1", ok=False, elapsed_ms=812, chars=41),
        Message(
            message=ChatMessage(role="tool", content="FAILED test_calc.py::test_divide_by_zero", tool_call_id="c1")
        ),
        Usage(input_tokens=1200, output_tokens=40, model="scripted"),
        Message(message=ChatMessage(role="assistant", content="Reading calc.py.", tool_calls=[read])),
        ToolStart(id="c2", name="read_file", read_only=True),
        ToolEnd(id="c2", ok=True, elapsed_ms=2, chars=64),
        Message(message=ChatMessage(role="tool", content="def divide(a, b):\n    return a / b\n", tool_call_id="c2")),
        Message(message=ChatMessage(role="assistant", content="divide() has no guard for b == 0 — «ünïcode» too.")),
        RunEnd(reason="done"),
    ]


def framed(lines: bytes) -> bytes:
    """Hand-written journal lines (`{...}` each, newline-ended) with the crc member the writer ends each with."""
    out = []
    for line in lines.splitlines():
        body = line[:-1]
        out.append(b'%b,"crc":"%08x"}\n' % (body, zlib.crc32(body)))
    return b"".join(out)


def write_journal(path: Path, events: list[KnownEvent] | None = None) -> list[KnownEvent]:
    """Write events through the real writer; returns them stamped as they are on disk."""
    with JournalWriter.create(path, fsync="none") as writer:
        return [writer.append(e) for e in (session_events() if events is None else events)]


@dataclass
class Reference:
    """What reading line by line, the simplest way, gives: the model the streaming reader must match."""

    events: list[Event] = field(default_factory=list)
    stop: Stop | None = None
    warnings: list[str] = field(default_factory=list)
    line_ends: list[int] = field(default_factory=list)


def reference_read(data: bytes) -> Reference:
    ref = Reference()
    offset, prev = 0, 0
    lines = data.split(b"\n")
    for lineno, line in enumerate(lines, start=1):
        if lineno == len(lines):  # what follows the last newline
            if line:
                ref.stop = Stop(lineno, offset, "the last line was cut short (no newline at its end)", torn=True)
            return ref
        try:
            event = _parse_line(line, prev)
        except _LineError as exc:
            ref.stop = Stop(lineno, offset, str(exc))
            return ref
        if prev and event.seq != prev + 1:
            ref.warnings.append(f"line {lineno}: seq jumps from {prev} to {event.seq}")
        prev = event.seq
        ref.events.append(event)
        offset += len(line) + 1
        ref.line_ends.append(offset)
    return ref


def where(stop: Stop | None) -> tuple[int, int] | None:
    """Where a reading stopped (line, byte), whatever it says about why."""
    return None if stop is None else (stop.line, stop.offset)
