"""Qwen Code's session files (`~/.qwen/projects/<workspace>/chats/<session uuid>.jsonl`), read as Wren events.

Each line is an entry with Claude Code's envelope (`uuid`, `parentUuid` chaining the entries,
`sessionId`, `timestamp`, `type`, `cwd`, `version`) and `provenance`, but its message is
Gemini-shaped: `{role: "user"|"model", parts: [...]}`. `user` entries hold the prompt (`text`
parts); `assistant` entries the model's reply (`text`, `thought` and `functionCall` parts, with
`usageMetadata`); a `tool_result` entry answers one call (`functionResponse`, and `toolCallResult`
with its status and exit code); `system` entries are the client's own (attribution snapshots, UI
telemetry) and are left out. A call's start is recorded only as the call itself.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..journal.events import Event, ToolCall
from . import make
from .base import Format, Kinds, Node, Translated, TypedTranslator, field_reader, node_reader, union
from .folders import QWEN
from .gemini_parts import Part, function_call, response_text

NAME = QWEN.name
LABEL = "Qwen Code"
ENV = QWEN.folder.env

MAPPED = ("user", "assistant", "tool_result", "system")
SKIPPED = ("system:attribution_snapshot", "system:ui_telemetry")
_KNOWN = frozenset(MAPPED)


class _Message(msgspec.Struct):
    role: str = ""
    parts: list[Part] = []


class _UsageMeta(msgspec.Struct, rename="camel"):
    prompt_token_count: int = 0
    candidates_token_count: int = 0
    thoughts_token_count: int = 0


class _CallResult(msgspec.Struct, rename="camel"):
    call_id: str = ""
    status: str = ""
    result_display: Any = None


class _Entry(msgspec.Struct, tag_field="type", kw_only=True, rename="camel"):
    uuid: str | None = None
    parent_uuid: str | None = None
    timestamp: str = ""
    cwd: str | None = None


class _User(_Entry, tag="user"):
    message: _Message


class _Assistant(_Entry, tag="assistant"):
    message: _Message
    model: str | None = None
    usage_metadata: _UsageMeta | None = None


class _ToolResult(_Entry, tag="tool_result"):
    message: _Message
    tool_call_result: _CallResult | None = None


class _System(_Entry, tag="system"):
    subtype: str = ""
    system_payload: dict[str, Any] | None = None


_decoder: msgspec.json.Decoder[_Entry] = msgspec.json.Decoder(union((_User, _Assistant, _ToolResult, _System)))


class QwenTranslator(TypedTranslator[_Entry], decoder=_decoder, known=_KNOWN):
    def node(self, kind: str, line: _Entry) -> Node | None:
        return Node(line.uuid, line.parent_uuid) if line.uuid is not None else None

    def cwd(self, line: _Entry) -> str | None:
        return line.cwd

    def typed(self, seq: int, kind: str, entry: _Entry, learn: bool) -> Translated:
        ts = entry.timestamp
        if isinstance(entry, _User):
            text = "\n".join(p.text for p in entry.message.parts if p.text is not None and not p.thought)
            return Translated([make.user(seq, ts, text)], kind)
        if isinstance(entry, _Assistant):
            return self._assistant(seq, ts, entry, learn)
        if isinstance(entry, _ToolResult):
            return Translated(self._result(seq, ts, entry), kind)
        if isinstance(entry, _System):
            return _system(seq, ts, entry)
        return Translated([], kind, "unknown")  # pragma: no cover - the union has no other member

    def _assistant(self, seq: int, ts: str, entry: _Assistant, learn: bool) -> Translated:
        events: list[Event] = []
        texts: list[str] = []
        calls: list[ToolCall] = []
        for part in entry.message.parts:
            if part.thought and part.text is not None:
                events.append(make.thinking(seq, ts, part.text))
            elif part.text is not None:
                texts.append(part.text)
            elif part.function_call is not None:
                call = function_call(part.function_call)
                calls.append(call)
                if learn:
                    self._asked.setdefault(call.id, make.ms_of(ts))
        if texts or calls:
            events.append(make.assistant(seq, ts, "\n".join(texts), calls))
        if entry.usage_metadata is not None:
            used = entry.usage_metadata
            events.append(
                make.usage(
                    seq,
                    ts,
                    used.prompt_token_count,
                    used.candidates_token_count + used.thoughts_token_count,
                    entry.model,
                )
            )
        return Translated(events, "assistant", model=entry.model)

    def _result(self, seq: int, ts: str, entry: _ToolResult) -> list[Event]:
        events: list[Event] = []
        status = entry.tool_call_result.status if entry.tool_call_result is not None else ""
        for part in entry.message.parts:
            if part.function_response is None:
                continue
            call_id = str(part.function_response.get("id") or "")
            text, failed = response_text(part.function_response, content=True)
            ok = not failed and status not in ("error", "cancelled")
            events += make.answer(seq, ts, call_id, text, ok=ok, took=make.elapsed(self._asked.get(call_id), ts))
        return events


def _system(seq: int, ts: str, entry: _System) -> Translated:
    kind = f"system:{entry.subtype}"
    payload = entry.system_payload or {}
    if entry.subtype == "ui_telemetry":
        ui = payload.get("uiEvent")
        name = ui.get("event.name") if isinstance(ui, dict) else None
        if isinstance(name, str) and name.endswith("api_error"):
            why = ui.get("error") if isinstance(ui, dict) else None
            return Translated([make.error(seq, ts, str(why or "the model's request failed"))], kind)
        return Translated([], kind, "skipped")
    if kind in SKIPPED:
        return Translated([], kind, "skipped")
    return Translated([make.note(seq, ts, "system", subtype=entry.subtype)], kind)


# --- the tree, cheaply ------------------------------------------------------------------------


class _NodeLine(msgspec.Struct, rename="camel"):
    uuid: str | None = None
    parent_uuid: str | None = None


node_of = node_reader(_NodeLine, lambda line: None if line.uuid is None else Node(line.uuid, line.parent_uuid))


# --- which files are its (where its sessions are: `folders`) ---------------------------------


def claims(line: dict[str, Any]) -> bool:
    """An entry with the envelope and a Gemini-shaped message (parts), a tool_result, or the client's system payload."""
    if line.get("type") not in _KNOWN or "sessionId" not in line or "uuid" not in line:
        return False
    message = line.get("message")
    return (isinstance(message, dict) and "parts" in message) or "systemPayload" in line


class _UsageLine(msgspec.Struct, rename="camel"):
    usage_metadata: _UsageMeta | None = None


def _tokens(line: _UsageLine) -> int:
    used = line.usage_metadata
    return 0 if used is None else used.prompt_token_count + used.candidates_token_count + used.thoughts_token_count


# The tokens an assistant entry records, read alone.
tokens_of = field_reader(_UsageLine, b'"usageMetadata"', _tokens, 0)


# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("run_shell_command", "write_file", "replace", "edit"))


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=QWEN.folder,
    translator=QwenTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    node_of=node_of,
    tokens_of=tokens_of,
)
