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

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..journal.events import Event, ToolCall
from .base import (
    Format,
    Node,
    Translated,
    TypedTranslator,
    answer,
    assistant,
    elapsed,
    error,
    field_reader,
    ms_of,
    node_reader,
    note,
    thinking,
    union,
    usage,
    user,
)

NAME = "qwen"
LABEL = "Qwen Code"
ENV = "QWEN_HOME"
# Its tools that change the workspace (the writes filter shows their calls).
WRITE_TOOLS = frozenset(("run_shell_command", "write_file", "replace", "edit"))
# Moves only where conversations (and logs) go, not the rest of ~/.qwen.
RUNTIME_ENV = "QWEN_RUNTIME_DIR"

MAPPED = ("user", "assistant", "tool_result", "system")
SKIPPED = ("system:attribution_snapshot", "system:ui_telemetry")
_KNOWN = frozenset(MAPPED)


class _Part(msgspec.Struct):
    text: str | None = None
    thought: bool = False
    functionCall: dict[str, Any] | None = None
    functionResponse: dict[str, Any] | None = None


class _Message(msgspec.Struct):
    role: str = ""
    parts: list[_Part] = []


class _UsageMeta(msgspec.Struct):
    promptTokenCount: int = 0
    candidatesTokenCount: int = 0
    thoughtsTokenCount: int = 0


class _CallResult(msgspec.Struct):
    callId: str = ""
    status: str = ""
    resultDisplay: Any = None


class _Entry(msgspec.Struct, tag_field="type", kw_only=True):
    uuid: str | None = None
    parentUuid: str | None = None
    timestamp: str = ""
    cwd: str | None = None


class _User(_Entry, tag="user"):
    message: _Message


class _Assistant(_Entry, tag="assistant"):
    message: _Message
    model: str | None = None
    usageMetadata: _UsageMeta | None = None


class _ToolResult(_Entry, tag="tool_result"):
    message: _Message
    toolCallResult: _CallResult | None = None


class _System(_Entry, tag="system"):
    subtype: str = ""
    systemPayload: dict[str, Any] | None = None


_decoder: msgspec.json.Decoder[_Entry] = msgspec.json.Decoder(union((_User, _Assistant, _ToolResult, _System)))


def _response_text(response: dict[str, Any]) -> tuple[str, bool]:
    """A functionResponse's text, and whether it says the call failed (an `error` member)."""
    body = response.get("response")
    if not isinstance(body, dict):
        return ("" if body is None else str(body)), False
    if "error" in body and body["error"] is not None:
        return str(body["error"]), True
    output = body.get("output", body.get("content"))
    if isinstance(output, str):
        return output, False
    return msgspec.json.encode(body).decode(), False


class QwenTranslator(TypedTranslator[_Entry]):
    decoder = _decoder
    known = _KNOWN

    def time_of(self, line: _Entry) -> str:
        return line.timestamp

    def node(self, kind: str, line: _Entry) -> Node | None:
        return Node(line.uuid, line.parentUuid) if line.uuid is not None else None

    def cwd(self, line: _Entry) -> str | None:
        return line.cwd

    def typed(self, seq: int, kind: str, entry: _Entry, learn: bool) -> Translated:
        ts = entry.timestamp
        if isinstance(entry, _User):
            text = "\n".join(p.text for p in entry.message.parts if p.text is not None and not p.thought)
            return Translated([user(seq, ts, text)], kind)
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
                events.append(thinking(seq, ts, part.text))
            elif part.text is not None:
                texts.append(part.text)
            elif part.functionCall is not None:
                call = part.functionCall
                call_id = str(call.get("id") or "")
                calls.append(
                    ToolCall(call_id, str(call.get("name") or ""), msgspec.json.encode(call.get("args") or {}).decode())
                )
                if learn:
                    self._asked.setdefault(call_id, ms_of(ts))
        if texts or calls:
            events.append(assistant(seq, ts, "\n".join(texts), calls))
        if entry.usageMetadata is not None:
            used = entry.usageMetadata
            events.append(
                usage(seq, ts, used.promptTokenCount, used.candidatesTokenCount + used.thoughtsTokenCount, entry.model)
            )
        return Translated(events, "assistant", model=entry.model)

    def _result(self, seq: int, ts: str, entry: _ToolResult) -> list[Event]:
        events: list[Event] = []
        status = entry.toolCallResult.status if entry.toolCallResult is not None else ""
        for part in entry.message.parts:
            if part.functionResponse is None:
                continue
            call_id = str(part.functionResponse.get("id") or "")
            text, failed = _response_text(part.functionResponse)
            ok = not failed and status not in ("error", "cancelled")
            events += answer(seq, ts, call_id, text, ok=ok, took=elapsed(self._asked.get(call_id), ts))
        return events


def _system(seq: int, ts: str, entry: _System) -> Translated:
    kind = f"system:{entry.subtype}"
    payload = entry.systemPayload or {}
    if entry.subtype == "ui_telemetry":
        ui = payload.get("uiEvent")
        name = ui.get("event.name") if isinstance(ui, dict) else None
        if isinstance(name, str) and name.endswith("api_error"):
            why = ui.get("error") if isinstance(ui, dict) else None
            return Translated([error(seq, ts, str(why or "the model's request failed"))], kind)
        return Translated([], kind, "skipped")
    if kind in SKIPPED:
        return Translated([], kind, "skipped")
    return Translated([note(seq, ts, "system", subtype=entry.subtype)], kind)


# --- the tree, cheaply ------------------------------------------------------------------------


class _NodeLine(msgspec.Struct):
    uuid: str | None = None
    parentUuid: str | None = None


node_of = node_reader(_NodeLine, lambda line: None if line.uuid is None else Node(line.uuid, line.parentUuid))


# --- where the sessions are -------------------------------------------------------------------


def root(env: Mapping[str, str], home: Path) -> Path:
    """$QWEN_RUNTIME_DIR/projects, else $QWEN_HOME/projects, else ~/.qwen/projects."""
    base = env.get(RUNTIME_ENV) or env.get(ENV)
    return (Path(base).expanduser() if base else home / ".qwen") / "projects"


def is_session_file(path: Path) -> bool:
    """A conversation (`<project>/chats/<uuid>.jsonl`), not the client's usage records or logs."""
    return path.parent.name == "chats"


def session_id(path: Path) -> str:
    return path.stem


def claims(line: dict[str, Any]) -> bool:
    """An entry with the envelope and a Gemini-shaped message (parts), a tool_result, or the client's system payload."""
    if line.get("type") not in _KNOWN or "sessionId" not in line or "uuid" not in line:
        return False
    message = line.get("message")
    return (isinstance(message, dict) and "parts" in message) or "systemPayload" in line


class _UsageLine(msgspec.Struct):
    usageMetadata: _UsageMeta | None = None


def _tokens(line: _UsageLine) -> int:
    used = line.usageMetadata
    return 0 if used is None else used.promptTokenCount + used.candidatesTokenCount + used.thoughtsTokenCount


# The tokens an assistant entry records, read alone.
tokens_of = field_reader(_UsageLine, b'"usageMetadata"', _tokens, 0)


FORMAT = Format.of(__name__, QwenTranslator)
