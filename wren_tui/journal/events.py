"""The journal's event types (format 1): one msgspec Struct per type, tagged on "type"."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Role = Literal["user", "assistant", "tool"]


# gc=False: events hold only strings, numbers and lists or dicts of them, so they cannot form a
# cycle; untracked, a million decoded events cost the garbage collector nothing.


class ToolCall(msgspec.Struct, frozen=True, gc=False):
    id: str
    name: str
    # The arguments stay the JSON text the model produced; a tool parses them when it runs.
    args: str


class Reasoning(msgspec.Struct, frozen=True, omit_defaults=True, gc=False):
    """One piece of a model's reasoning (thinking), as its server sent it."""

    text: str = ""
    # The wire field or block it came in (reasoning_content, reasoning, thinking, redacted_thinking):
    # a gateway sends it back only to the kind of server that asked for it.
    kind: str = ""
    # Anthropic's proof that a thinking block is the model's own, sent back with it unchanged.
    signature: str | None = None
    # Anthropic's encrypted thinking (a redacted_thinking block), sent back as it came.
    data: str | None = None


class ChatMessage(msgspec.Struct, frozen=True, omit_defaults=True, gc=False):
    role: Role
    content: str
    toolCalls: list[ToolCall] | None = None
    toolCallId: str | None = None
    # An assistant's reasoning before its reply; an older reader skips the field.
    reasoning: list[Reasoning] | None = None


class _Event(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag_field="type", gc=False):
    # seq and ts default to "unset" so the writer can stamp them; the reader rejects unset values.
    seq: int = 0
    ts: str = ""


class RunStart(_Event, frozen=True, tag="run_start"):
    pid: int
    cwd: str
    model: str
    version: str
    resumed: bool = False


class Message(_Event, frozen=True, tag="message"):
    message: ChatMessage


class Delta(_Event, frozen=True, tag="delta"):
    """A fragment of the assistant's reply as it streams; the whole reply follows as a message."""

    text: str
    # A fragment of its reasoning rather than of its text (an older reader shows it as text).
    reasoning: bool = False


class ToolStart(_Event, frozen=True, tag="tool_start"):
    id: str
    name: str
    readOnly: bool
    approval: Literal["auto", "approved", "denied"] = "auto"


class ToolEnd(_Event, frozen=True, tag="tool_end"):
    id: str
    ok: bool | None = None
    elapsedMs: int | None = None
    chars: int | None = None
    truncated: bool = False
    stoppedBy: Literal["approval", "loop", "timeout", "cancel"] | None = None
    redacted: int = 0
    # Lines from the reference format carry the result inline; ours keep it in the tool message.
    result: dict[str, Any] | None = None


class Usage(_Event, frozen=True, tag="usage"):
    inputTokens: int
    outputTokens: int
    model: str = ""


class Error(_Event, frozen=True, tag="error"):
    message: str
    retryable: bool = False
    attempt: int = 0


class Recovery(_Event, frozen=True, tag="recovery"):
    id: str
    decision: str


class Fork(_Event, frozen=True, tag="fork"):
    from_: str = msgspec.field(name="from")
    atSeq: int


class RunEnd(_Event, frozen=True, tag="run_end"):
    reason: Literal["done", "cancelled", "error", "limit"]


KnownEvent = RunStart | Message | Delta | ToolStart | ToolEnd | Usage | Error | Recovery | Fork | RunEnd

KNOWN_TYPES: frozenset[str] = frozenset(
    cls.__struct_config__.tag  # type: ignore[misc]
    for cls in (RunStart, Message, Delta, ToolStart, ToolEnd, Usage, Error, Recovery, Fork, RunEnd)
)


class UnknownEvent(msgspec.Struct, frozen=True, gc=False):
    """An event of a type this version does not know: kept and shown, never fatal."""

    seq: int
    ts: str
    type: str
    fields: dict[str, Any]


Event = KnownEvent | UnknownEvent


def event_type(event: Event) -> str:
    if isinstance(event, UnknownEvent):
        return event.type
    return str(type(event).__struct_config__.tag)


def to_builtins(event: Event) -> dict[str, Any]:
    """The event as plain JSON-able data, seq/ts/type first (for --json and the raw view)."""
    if isinstance(event, UnknownEvent):
        return {"seq": event.seq, "ts": event.ts, "type": event.type, **event.fields}
    data: dict[str, Any] = msgspec.to_builtins(event)
    return {"seq": data.pop("seq", 0), "ts": data.pop("ts", ""), "type": data.pop("type"), **data}


def describe(event: Event) -> str:
    """One line a person can scan for an event that is not a message (the CLI and the viewer both show it)."""
    if isinstance(event, ToolStart):
        effect = "read-only" if event.readOnly else "side effects"
        return f"{event.name} [{event.id}] started ({effect}, {event.approval})"
    if isinstance(event, ToolEnd):
        status = {True: "ok", False: "failed", None: "ended"}[event.ok]
        parts = [f"[{event.id}] {status}"]
        if event.elapsedMs is not None:
            parts.append(f"{event.elapsedMs} ms")
        if event.chars is not None:
            parts.append(f"{event.chars} chars")
        if event.truncated:
            parts.append("truncated")
        if event.stoppedBy:
            parts.append(f"stopped by {event.stoppedBy}")
        return ", ".join(parts)
    if isinstance(event, Usage):
        return f"{event.inputTokens} in / {event.outputTokens} out tokens {event.model}"
    if isinstance(event, Error):
        retry = f", retry {event.attempt}" if event.retryable else ""
        return f"{event.message}{retry}"
    if isinstance(event, RunStart):
        return f"{'resumed' if event.resumed else 'started'} · model {event.model} · pid {event.pid} · {event.cwd}"
    if isinstance(event, RunEnd):
        return event.reason
    if isinstance(event, Fork):
        return f"forked from {event.from_} at seq {event.atSeq}"
    if isinstance(event, Recovery):
        return f"[{event.id}] {event.decision}"
    if isinstance(event, Delta):
        of = " of reasoning" if event.reasoning else ""
        return f"streamed {len(event.text)} chars{of}: {_fragment(event.text)}"
    if isinstance(event, UnknownEvent):
        return " ".join(f"{k}={v!r}" for k, v in event.fields.items())
    return ""


_FRAGMENT = 80


def _fragment(text: str) -> str:
    """A streamed fragment on one line: quoted, control characters escaped, at most _FRAGMENT characters."""
    if len(text) > _FRAGMENT:
        text = text[: _FRAGMENT - 1] + "…"
    return repr(text)
