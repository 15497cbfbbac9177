"""GitHub Copilot CLI's session logs (`~/.copilot/session-state/<session uuid>/events.jsonl`), read as Wren events.

Each line is an event `{type, data, id, timestamp, parentId}`, `parentId` being the line before's
`id` (one sequence, no branches). The conversation: `user.message`, `assistant.message` (its text
and `toolRequests`), `tool.execution_start` and `tool.execution_complete` (a call's start and its
end, on lines of their own), `session.usage_record` (one per request). The client's own lines (the
system prompt, turn marks, the shutdown's totals) are left out. A run that ended normally ends with
`session.shutdown`; a call started with no `tool.execution_complete` after it has no result recorded.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..journal.events import Event, ToolCall
from . import make
from .base import Format, Kinds, Translated, TypedTranslator, field_reader, union
from .folders import COPILOT

NAME = COPILOT.name
LABEL = "Copilot CLI"
ENV = COPILOT.folder.env

MAPPED = (
    "session.start",
    "session.resume",
    "user.message",
    "assistant.message",
    "tool.execution_start",
    "tool.execution_complete",
    "session.usage_record",
    "session.error",
)
# The system prompt, turn marks, the shutdown's totals: the client's own.
SKIPPED = (
    "system.message",
    "assistant.turn_start",
    "assistant.turn_end",
    "session.shutdown",
)
_KNOWN = frozenset({*MAPPED, *SKIPPED})


class _Request(msgspec.Struct, rename="camel"):
    tool_call_id: str = ""
    name: str = ""
    arguments: Any = None


class _Result(msgspec.Struct):
    content: Any = None


class _Shell(msgspec.Struct, rename="camel"):
    exit_code: int | None = None


class _UsageData(msgspec.Struct, rename="camel"):
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class _Data(msgspec.Struct, rename="camel"):
    # session.start, session.resume
    session_id: str | None = None
    selected_model: str | None = None
    context: dict[str, Any] | None = None
    copilot_version: str | None = None
    # user.message, assistant.message
    content: Any = None
    model: str | None = None
    tool_requests: list[_Request] | None = None
    reasoning_text: str | None = None
    # tool.execution_*
    tool_call_id: str = ""
    tool_name: str = ""
    success: bool | None = None
    result: _Result | None = None
    error: Any = None
    shell_execution: _Shell | None = None
    # session.usage_record
    usage: _UsageData | None = None
    # session.error
    message: str | None = None


class _Line(msgspec.Struct, tag_field="type", kw_only=True):
    timestamp: str = ""
    id: str | None = None
    data: _Data = msgspec.field(default_factory=_Data)


def _kind(tag: str) -> type[_Line]:
    return msgspec.defstruct(f"_{tag.replace('.', '_')}", [], bases=(_Line,), tag=tag)  # type: ignore[return-value]


_TYPES = {tag: _kind(tag) for tag in (*MAPPED, *SKIPPED)}
_decoder: msgspec.json.Decoder[_Line] = msgspec.json.Decoder(union(tuple(_TYPES.values())))


class CopilotTranslator(TypedTranslator[_Line], decoder=_decoder, known=_KNOWN):
    """Remembers when each call was asked and started, for the time its result took."""

    def typed(self, seq: int, kind: str, line: _Line, learn: bool) -> Translated:
        return self._line(seq, line.timestamp, kind, line.data, learn)

    def _line(self, seq: int, ts: str, kind: str, d: _Data, learn: bool) -> Translated:
        if kind in SKIPPED:
            return Translated([], kind, "skipped")
        if kind in ("session.start", "session.resume"):
            cwd = d.context.get("cwd") if isinstance(d.context, dict) else None
            what = "session" if kind == "session.start" else "resumed"
            events: list[Event] = [make.note(seq, ts, what, id=d.session_id, cwd=cwd, model=d.selected_model)]
            out = Translated(events, kind, model=d.selected_model)
            out.cwd = cwd if isinstance(cwd, str) else None
            return out
        if kind == "user.message":
            return Translated([make.user(seq, ts, make.text_of(d.content))], kind)
        if kind == "assistant.message":
            events = []
            if d.reasoning_text:
                events.append(make.thinking(seq, ts, d.reasoning_text))
            calls = []
            for request in d.tool_requests or ():
                args = request.arguments
                text = args if isinstance(args, str) else msgspec.json.encode(args if args is not None else {}).decode()
                calls.append(ToolCall(request.tool_call_id, request.name, text))
                if learn:
                    self._asked.setdefault(request.tool_call_id, make.ms_of(ts))
            content = make.text_of(d.content)
            if content or calls:
                events.append(make.assistant(seq, ts, content, calls))
            return Translated(events, kind, model=d.model)
        if kind == "tool.execution_start":
            if learn:
                self._asked[d.tool_call_id] = make.ms_of(ts)  # the call's start, on a line of its own
            return Translated([], kind, "skipped")
        if kind == "tool.execution_complete":
            result = d.result.content if d.result is not None else d.error
            text = (
                make.text_of(result) if not isinstance(result, dict) else make.text_of(result.get("message") or result)
            )
            code = d.shell_execution.exit_code if d.shell_execution is not None else None
            ok = None if d.success is None else bool(d.success) and code in (None, 0)
            took = make.elapsed(self._asked.get(d.tool_call_id), ts)
            return Translated(make.answer(seq, ts, d.tool_call_id, text, ok=ok, took=took), kind)
        if kind == "session.usage_record":
            used = d.usage or _UsageData()
            tokens_in = used.input_tokens + used.cache_read_tokens + used.cache_write_tokens
            return Translated([make.usage(seq, ts, tokens_in, used.output_tokens, used.model)], kind, model=used.model)
        if kind == "session.error":
            return Translated([make.error(seq, ts, d.message or make.text_of(d.content) or "error")], kind)
        return Translated([], kind, "unknown")


# --- which files are its (where its sessions are: `folders`) ---------------------------------


def claims(line: dict[str, Any]) -> bool:
    """An event of Copilot CLI's kinds in its whole envelope: a `type` of its kinds, an object `data`, a string
    `id` and `timestamp`, and a `parentId` (a string, or null for the first); an envelope short of any is not."""
    kind = line.get("type")
    parent = line.get("parentId")
    return (
        isinstance(kind, str)
        and "." in kind
        and kind.split(".", 1)[0] in _PREFIXES
        and isinstance(line.get("data"), dict)
        and isinstance(line.get("id"), str)
        and isinstance(line.get("timestamp"), str)
        and "parentId" in line
        and (parent is None or isinstance(parent, str))
    )


_PREFIXES = frozenset({"session", "user", "assistant", "tool", "system"})


class _UsageOnly(msgspec.Struct):
    usage: _UsageData | None = None


class _UsageLine(msgspec.Struct):
    type: str = ""
    data: _UsageOnly | None = None


def _tokens(line: _UsageLine) -> int:
    used = line.data.usage if line.data is not None else None
    if line.type != "session.usage_record" or used is None:
        return 0
    return used.input_tokens + used.cache_read_tokens + used.cache_write_tokens + used.output_tokens


# The tokens a usage record counts, read alone.
tokens_of = field_reader(_UsageLine, b'"session.usage_record"', _tokens, 0)


# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("bash", "create", "edit"))


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=COPILOT.folder,
    translator=CopilotTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    session_id=COPILOT.session_id,
    tokens_of=tokens_of,
)
