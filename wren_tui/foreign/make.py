"""The Wren events a line of another agent's session gives, made alike by every format's translator
(`make.user(seq, ts, text)`, `make.answer(...)`), and the values they are made from (times, texts).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from ..journal.events import ChatMessage, Error, Event, Message, ToolCall, ToolEnd, UnknownEvent, Usage

# The kinds of note a foreign line may give, beside Wren's own events.
THINKING = "thinking"
MALFORMED = "not understood"
# A compaction whose note holds the summary the agent went on from (Codex, pi; `keep`: pi's first entry kept).
COMPACTION = "compaction"
# A compaction whose summary follows as the next user message (Claude Code).
COMPACTION_BOUNDARY = "compaction boundary"


def ms_of(ts: str | None) -> int | None:
    """An ISO-8601 time as milliseconds since the epoch; None for anything else."""
    if not ts:
        return None
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def elapsed(asked: int | None, answered: str | None) -> int | None:
    """Milliseconds from a call's asking to its answer's line; None when either is unknown."""
    end = ms_of(answered)
    if asked is None or end is None:
        return None
    return max(end - asked, 0)


# A raw field that was absent (msgspec keeps no Optional Raw).
NO_RAW = msgspec.Raw(b"")


def raw_text(raw: msgspec.Raw) -> str:
    """A field kept as raw JSON, as its JSON text (the arguments a model wrote, exactly)."""
    return bytes(raw).decode("utf-8", "replace")


def text_of(content: Any, *, image: str = "[image]") -> str:
    """The text of a content value: a string, or a list of blocks whose text parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif block.get("type") in ("image", "input_image", "image_url"):
                    parts.append(image)
        return "\n".join(parts)
    return msgspec.json.encode(content).decode()


def user(seq: int, ts: str, text: str) -> Message:
    return Message(seq=seq, ts=ts, message=ChatMessage(role="user", content=text))


def assistant(seq: int, ts: str, text: str, calls: list[ToolCall] | None = None) -> Message:
    return Message(seq=seq, ts=ts, message=ChatMessage(role="assistant", content=text, tool_calls=calls or None))


def answer(seq: int, ts: str, call_id: str, text: str, *, ok: bool | None, took: int | None) -> list[Event]:
    """A call's end and its result, as Wren journals them: a tool_end, then the tool message."""
    return [
        ToolEnd(seq=seq, ts=ts, id=call_id, ok=ok, elapsed_ms=took, chars=len(text)),
        Message(seq=seq, ts=ts, message=ChatMessage(role="tool", content=text, tool_call_id=call_id)),
    ]


def note(seq: int, ts: str, what: str, /, **fields: Any) -> UnknownEvent:
    """A line Wren has no event for, shown as a note with the fields that say what it was (any names: a line's own
    `what` or `seq` is one of its fields)."""
    return UnknownEvent(seq=seq, ts=ts, type=what, fields={k: v for k, v in fields.items() if v not in (None, "")})


def thinking(seq: int, ts: str, text: str) -> UnknownEvent:
    """A reasoning or thinking block: a note of its own, folded like a long text."""
    return UnknownEvent(seq=seq, ts=ts, type=THINKING, fields={"text": text})


def usage(seq: int, ts: str, tokens_in: int, tokens_out: int, model: str | None) -> Usage:
    return Usage(seq=seq, ts=ts, input_tokens=tokens_in, output_tokens=tokens_out, model=model or "")


def error(seq: int, ts: str, text: str) -> Error:
    return Error(seq=seq, ts=ts, message=text)


def reply(
    seq: int, ts: str, text: str, calls: list[ToolCall], tokens_in: int, tokens_out: int, model: str
) -> list[Event]:
    """An exported assistant line's events: its message when it says or asks anything, then its usage when it
    counted any tokens ("" for a model not named)."""
    events: list[Event] = []
    if text or calls:
        events.append(assistant(seq, ts, text, calls))
    if tokens_in or tokens_out:
        events.append(usage(seq, ts, tokens_in, tokens_out, model or None))
    return events
