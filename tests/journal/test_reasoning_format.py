"""Reasoning in format 1: optional fields a reader of the format before them reads without error.

The old definitions below are the message and delta Structs as they were before reasoning was kept
(copied from git history, not imported), so the test decodes today's lines exactly as an older Wren would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from wren_tui.journal.events import ChatMessage, Delta, Message, Reasoning, ToolCall
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import encode_line


class _OldToolCall(msgspec.Struct, frozen=True):
    id: str
    name: str
    args: str


class _OldChatMessage(msgspec.Struct, frozen=True, omit_defaults=True):
    role: Literal["user", "assistant", "tool"]
    content: str
    toolCalls: list[_OldToolCall] | None = None
    toolCallId: str | None = None


class _OldEvent(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag_field="type"):
    seq: int = 0
    ts: str = ""


class _OldMessage(_OldEvent, frozen=True, tag="message"):
    message: _OldChatMessage


class _OldDelta(_OldEvent, frozen=True, tag="delta"):
    text: str


_OLD = msgspec.json.Decoder(_OldMessage | _OldDelta)
TS = "2026-11-30T12:00:00.000Z"

THOUGHTFUL = Message(
    message=ChatMessage(
        role="assistant",
        content="Let me read it.",
        tool_calls=[ToolCall("toolu_01", "read_file", '{"path": "a.py"}')],
        reasoning=[
            Reasoning("The user wants the file.", "thinking", signature="EoQDCm0IDhgCKkCD"),
            Reasoning(kind="redacted_thinking", data="EtgBCkYIBxgC"),
        ],
    )
)


def test_a_message_with_reasoning_is_read_by_the_reader_before_reasoning_without_error() -> None:
    line = encode_line(THOUGHTFUL, 4, TS)
    old = _OLD.decode(line)
    assert isinstance(old, _OldMessage)
    assert (old.seq, old.message.content, old.message.toolCalls) == (
        4,
        "Let me read it.",
        [_OldToolCall("toolu_01", "read_file", '{"path": "a.py"}')],
    )


def test_a_reasoning_delta_is_read_by_the_reader_before_reasoning_as_text() -> None:
    old = _OLD.decode(encode_line(Delta(text="thinking…", reasoning=True), 3, TS))
    assert isinstance(old, _OldDelta) and old.text == "thinking…"


def test_reasoning_is_written_only_when_there_is_some_and_read_back_whole(tmp_path: Path) -> None:
    plain = encode_line(Message(message=ChatMessage(role="assistant", content="Hi.")), 1, TS)
    assert b"reasoning" not in plain
    assert b"reasoning" not in encode_line(Delta(text="Hi"), 2, TS)
    path = tmp_path / "s.jsonl"
    path.write_bytes(plain + encode_line(Delta(text="t", reasoning=True), 2, TS) + encode_line(THOUGHTFUL, 3, TS))
    result = read_events(path)
    assert result.stop is None
    assert result.events[1] == Delta(seq=2, ts=TS, text="t", reasoning=True)
    assert result.events[2] == msgspec.structs.replace(THOUGHTFUL, seq=3, ts=TS)
