"""The journal's event types (format 1): one msgspec Struct per type, tagged on "type".

A new type is a Struct here and a member of `KnownEvent`; `describe` then fails the type check
(`mypy --strict`) until it says how to show the new type. Everything else that walks events
(the reader's known types, secret redaction, the property tests' strategies) follows the union.
"""

from __future__ import annotations

from typing import Any, Literal, assert_never, get_args

import msgspec

Role = Literal["user", "assistant", "tool"]

# The first words of the user messages Wren itself puts into a conversation: a project's instructions,
# and the summary a compaction put in place of the messages it replaced.
INSTRUCTIONS_MARK = "[project instructions]"
SUMMARY_MARK = "[summary of the conversation so far]"


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


class ChatMessage(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel", gc=False):
    role: Role
    content: str
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    # An assistant's reasoning before its reply; an older reader skips the field.
    reasoning: list[Reasoning] | None = None


class _Event(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, tag_field="type", rename="camel", gc=False):
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
    read_only: bool
    approval: Literal["auto", "approved", "denied"] = "auto"


class ToolEnd(_Event, frozen=True, tag="tool_end"):
    id: str
    ok: bool | None = None
    elapsed_ms: int | None = None
    chars: int | None = None
    truncated: bool = False
    stopped_by: Literal["approval", "loop", "timeout", "cancel"] | None = None
    redacted: int = 0
    # Lines from the reference format carry the result inline; ours keep it in the tool message.
    result: dict[str, Any] | None = None


class Usage(_Event, frozen=True, tag="usage"):
    input_tokens: int
    output_tokens: int
    model: str = ""
    # The request's tokens as Wren estimated them before sending it, and the model's window as Wren
    # knows it (WREN_CONTEXT_WINDOW, or its table of models); 0: not known (an older journal).
    estimated: int = 0
    window: int = 0


class Error(_Event, frozen=True, tag="error"):
    message: str
    retryable: bool = False
    attempt: int = 0


class Recovery(_Event, frozen=True, tag="recovery"):
    id: str
    decision: str


class Fork(_Event, frozen=True, tag="fork"):
    from_: str = msgspec.field(name="from")
    at_seq: int
    # The folder the fork's files were written to (`wren fork --workspace`): where resume works.
    workspace: str | None = None
    # The snapshot of the files as they were at atSeq, when the parent has one.
    snapshot: str | None = None


class Snapshot(_Event, frozen=True, tag="snapshot"):
    """The workspace's files as a snapshot in Wren's store, taken before a call with side effects or at a turn's end.

    Written only once every object the snapshot needs is durable. `off` says snapshots are off for
    this run, and why (--no-snapshots, no git); such an event names no snapshot.
    """

    id: str = ""
    files: int = 0
    changed: int = 0
    # The id of the call it precedes; None: taken at the end of a turn.
    before: str | None = None
    # Paths the snapshot does not hold and why (at most 50); the count is whole.
    not_covered: list[str] | None = None
    not_covered_count: int = 0
    off: str | None = None


class Rewind(_Event, frozen=True, tag="rewind"):
    """The session went back to the point atSeq: its workspace to the files of `snapshot`, its conversation to atSeq's.

    Journaled before any file changes (`wren rewind`); nothing before it is removed. `before` is the
    snapshot of the files just before the rewind (what `--undo` puts back). An undo is a rewind too:
    `undoes` names the rewind it undoes, and the conversation is put back as it was just before that one.
    """

    at_seq: int
    snapshot: str
    before: str
    undoes: int | None = None
    # Paths left as they were: changed since the session's last snapshot of them by someone else.
    kept: list[str] | None = None


class Injected(_Event, frozen=True, tag="injected"):
    """What Wren put into the conversation from a file, written before the message that carries its text.

    `instructions`: a project's AGENTS.md (or CLAUDE.md) given at a run's start; `reference`: an `@`
    reference in a typed message. The text itself is in the message event that follows (so a resume
    or fork sends what was sent); this event says where it came from: the path, the SHA-256 and
    size of the bytes given, its characters and estimated tokens, and a sentence when it was clipped
    or refused (then nothing of it was given).
    """

    kind: Literal["instructions", "reference"]
    path: str
    # A reference as it was written (`@src/a.py:10-40`, `@docs/`).
    ref: str | None = None
    sha256: str = ""
    size: int = 0
    chars: int = 0
    tokens: int = 0
    note: str | None = None
    refused: bool = False


class Compaction(_Event, frozen=True, tag="compaction"):
    """The conversation's messages from `firstSeq` to `lastSeq` (as rebuilt at this point) replaced by a summary.

    Written once the summary is whole, before any request uses it; nothing of the journal is rewritten.
    The rebuild (`replay.compact`) puts the message of the range with seq `keep_seq` (the project
    instructions, 0: none), then the summary (a user message starting SUMMARY_MARK), where the range was.
    """

    summary: str
    first_seq: int
    last_seq: int
    replaced: int
    keep_seq: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


class RunEnd(_Event, frozen=True, tag="run_end"):
    reason: Literal["done", "cancelled", "error", "limit"]


KnownEvent = (
    RunStart
    | Message
    | Delta
    | ToolStart
    | ToolEnd
    | Usage
    | Error
    | Recovery
    | Fork
    | RunEnd
    | Snapshot
    | Rewind
    | Injected
    | Compaction
)

# The "type" tag of each member of KnownEvent: a line of one of these types must decode as it.
KNOWN_TYPES: frozenset[str] = frozenset(str(cls.__struct_config__.tag) for cls in get_args(KnownEvent))


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
    """One line a person can scan for what happened at this event (`wren log`, chat's /log, the viewer).

    A message shows as its role, its text (on one line, quoted, cut at 100 characters) and the
    calls it asks for; every other type as its own few facts.
    """
    match event:
        case Message(message=msg):
            text = " ".join(msg.content.split())
            if len(text) > 100:
                text = text[:97] + "..."
            calls = "".join(f" -> {c.name}({c.args})" for c in msg.tool_calls or ())
            # Reasoning folds to its size and first words (`wren log --json` has all of it).
            whole = "".join(r.text for r in msg.reasoning or ())
            thought = " ".join(whole.split())
            thought = thought[:60] + "…" if len(thought) > 60 else thought
            sealed = sum(1 for r in msg.reasoning or () if r.data)
            notes = [f"{len(whole):,} chars {thought!r}"] if thought else []
            notes += [f"{sealed} encrypted"] if sealed else []
            return f"{msg.role}: {text!r}{calls}" + (f"  · reasoning: {', '.join(notes)}" if notes else "")
        case ToolStart():
            effect = "read-only" if event.read_only else "side effects"
            return f"{event.name} [{event.id}] started ({effect}, {event.approval})"
        case ToolEnd():
            return _ended(event)
        case Usage():
            return f"{event.input_tokens} in / {event.output_tokens} out tokens {event.model}" + _context(event)
        case Error():
            retry = f", retry {event.attempt}" if event.retryable else ""
            return f"{event.message}{retry}"
        case RunStart():
            return f"{'resumed' if event.resumed else 'started'} · model {event.model} · pid {event.pid} · {event.cwd}"
        case RunEnd():
            return event.reason
        case Fork():
            files = f" · files in {event.workspace}" if event.workspace else ""
            return f"forked from {event.from_} at seq {event.at_seq}{files}"
        case Snapshot():
            return _snapshot(event)
        case Rewind():
            undo = f"undid the rewind at seq {event.undoes}: " if event.undoes is not None else ""
            return f"{undo}rewound to seq {event.at_seq} · files of {event.snapshot[:12]} (before: {event.before[:12]})"
        case Recovery():
            return f"[{event.id}] {event.decision}"
        case Injected():
            return _injected(event)
        case Compaction():
            return (
                f"compacted {event.replaced} messages (seq {event.first_seq}-{event.last_seq}) into a summary of "
                f"{len(event.summary):,} chars · ~{event.tokens_before:,} → ~{event.tokens_after:,} tokens"
            )
        case Delta():
            of = " of reasoning" if event.reasoning else ""
            return f"streamed {len(event.text)} chars{of}: {_fragment(event.text)}"
        case UnknownEvent():
            return " ".join(f"{k}={v!r}" for k, v in event.fields.items())
        case _:
            assert_never(event)


def _context(event: Usage) -> str:
    """The gauge at this request: the prompt's tokens against the window, and Wren's estimate before it was sent."""
    if not event.window:
        return f" · estimated {event.estimated:,}" if event.estimated else ""
    share = 100 * event.input_tokens / event.window
    estimate = f", estimated {event.estimated:,}" if event.estimated else ""
    return f" · context {event.input_tokens:,} / {event.window:,} ({share:.1f}%){estimate}"


def _injected(event: Injected) -> str:
    size = f"{event.chars:,} chars, ~{event.tokens:,} tokens"
    name = f"{event.ref} ({event.path})" if event.ref else event.path
    given = f"{name} refused" if event.refused else f"{name} · {size}"
    return f"{event.kind} {given}" + (f" · {event.note}" if event.note else "")


def _snapshot(event: Snapshot) -> str:
    if event.off:
        return event.off
    when = f"before [{event.before}]" if event.before else "end of turn"
    uncovered = f", {event.not_covered_count} not covered" if event.not_covered_count else ""
    return f"{event.id[:12]} · {event.files} files, {event.changed} changed{uncovered} · {when}"


def _ended(event: ToolEnd) -> str:
    status = {True: "ok", False: "failed", None: "ended"}[event.ok]
    parts = [f"[{event.id}] {status}"]
    if event.elapsed_ms is not None:
        parts.append(f"{event.elapsed_ms} ms")
    if event.chars is not None:
        parts.append(f"{event.chars} chars")
    if event.truncated:
        parts.append("truncated")
    if event.stopped_by:
        parts.append(f"stopped by {event.stopped_by}")
    return ", ".join(parts)


_FRAGMENT = 80


def _fragment(text: str) -> str:
    """A streamed fragment on one line: quoted, control characters escaped, at most _FRAGMENT characters."""
    if len(text) > _FRAGMENT:
        text = text[: _FRAGMENT - 1] + "…"
    return repr(text)
