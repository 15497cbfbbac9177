"""Kimi CLI's sessions (`~/.kimi/sessions/<md5 of the workspace>/<session uuid>/wire.jsonl`), read as Wren events.

Kimi CLI keeps two logs per session, both appended as it works: `context.jsonl` (the messages it
sends the model) and `wire.jsonl`, read here: what happened, in order, one line each,
`{"timestamp": SECONDS, "message": {"type": KIND, "payload": {...}}}`, after a first line
`{"type": "metadata", "protocol_version": ...}`. `TurnBegin` holds the prompt (`user_input`),
`ContentPart` the model's text (or its thinking), `ToolCall` a call when the model asks it (so a
call's start is recorded before its result), `ToolResult` its result (`return_value.is_error`,
`output`), `StatusUpdate` the step's tokens, `TurnEnd` the end of the turn. A resume appends to the
same file. The workspace is not in the file (the folder above it is an md5 of its path).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from ..journal.events import Event, ToolCall
from . import make
from .base import BadLine, Format, Kinds, Translated, Translator, field_reader, not_json
from .folders import KIMI

NAME = KIMI.name
LABEL = "Kimi CLI"
ENV = KIMI.folder.env
MAPPED = ("metadata", "TurnBegin", "ContentPart", "ToolCall", "ToolResult", "StatusUpdate")
SKIPPED = ("StepBegin", "TurnEnd", "ToolCallPart", "StepInterrupted", "CompactionBegin", "CompactionEnd")
_KNOWN = frozenset((*MAPPED, *SKIPPED))


class _Function(msgspec.Struct):
    name: str = ""
    arguments: Any = None


class _Usage(msgspec.Struct):
    input_other: int = 0
    output: int = 0
    input_cache_read: int = 0
    input_cache_creation: int = 0


class _ReturnValue(msgspec.Struct):
    is_error: bool = False
    output: Any = None
    message: str | None = None


class _Payload(msgspec.Struct):
    user_input: Any = None
    type: str | None = None
    text: str | None = None
    think: str | None = None
    id: str = ""
    function: _Function | None = None
    tool_call_id: str = ""
    return_value: _ReturnValue | None = None
    token_usage: _Usage | None = None


class _Message(msgspec.Struct):
    type: str = ""
    payload: _Payload | None = None


class _Wire(msgspec.Struct):
    timestamp: float | None = None
    type: str | None = None
    protocol_version: str | None = None
    message: _Message | None = None


_decoder = msgspec.json.Decoder(_Wire)


def _iso(seconds: float | None) -> str:
    if seconds is None:
        return ""
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return ""


def _prompt(value: Any) -> str:
    """A TurnBegin's user_input: text, or a list of parts whose text parts are joined."""
    if isinstance(value, str):
        return value
    return make.text_of(value)


def _output(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else make.text_of(value)


class KimiTranslator(Translator):
    """Remembers when each call was asked, for the time its result took."""

    def __init__(self) -> None:
        self._asked: dict[str, int | None] = {}

    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        try:
            line = _decoder.decode(data)
        except msgspec.ValidationError as exc:
            if data.lstrip()[:1] != b"{":
                raise BadLine("it is JSON but not an object") from None
            return Translated(
                [make.note(lineno, "", make.MALFORMED, kind="(wire)", why=str(exc))], "(wire)", "malformed"
            )
        except msgspec.DecodeError as exc:
            raise not_json(exc) from None
        except RecursionError:
            raise BadLine("its JSON is nested too deeply to read") from None
        if line.message is None:
            if line.type == "metadata":
                shown = make.note(lineno, "", "session", protocol=line.protocol_version)
                return Translated([shown], "metadata")
            return Translated([], line.type or "(no type)", "unknown")
        kind, payload, ts = line.message.type, line.message.payload or _Payload(), _iso(line.timestamp)
        if kind not in _KNOWN:
            return Translated([], kind or "(no type)", "unknown")
        if kind in SKIPPED:
            return Translated([], kind, "skipped")
        events: list[Event] = []
        if kind == "TurnBegin":
            events.append(make.user(lineno, ts, _prompt(payload.user_input)))
        elif kind == "ContentPart":
            if payload.type == "think" and payload.think:
                events.append(make.thinking(lineno, ts, payload.think))
            elif payload.text:
                events.append(make.assistant(lineno, ts, payload.text))
        elif kind == "ToolCall":
            function = payload.function or _Function()
            args = (
                function.arguments
                if isinstance(function.arguments, str)
                else msgspec.json.encode(function.arguments or {}).decode()
            )
            events.append(make.assistant(lineno, ts, "", [ToolCall(payload.id, function.name, args)]))
            if learn:
                self._asked.setdefault(payload.id, make.ms_of(ts))
        elif kind == "ToolResult":
            value = payload.return_value or _ReturnValue()
            took = make.elapsed(self._asked.get(payload.tool_call_id), ts)
            events += make.answer(
                lineno, ts, payload.tool_call_id, _output(value.output), ok=not value.is_error, took=took
            )
        elif kind == "StatusUpdate" and payload.token_usage is not None:
            used = payload.token_usage
            tokens_in = used.input_other + used.input_cache_read + used.input_cache_creation
            events.append(make.usage(lineno, ts, tokens_in, used.output, None))
        return Translated(events, kind)


# --- recognising and finding ---------------------------------------------------------------------


def claims(line: dict[str, Any]) -> bool:
    """Kimi's first line (metadata with a protocol version), or a wire line: a number for its time and a message of
    one of Kimi's kinds with a payload."""
    if line.get("type") == "metadata" and isinstance(line.get("protocol_version"), str) and len(line) == 2:
        return True
    message = line.get("message")
    return (
        isinstance(line.get("timestamp"), (int, float))
        and isinstance(message, dict)
        and message.get("type") in _KNOWN
        and isinstance(message.get("payload"), dict)
    )


class _UsagePayload(msgspec.Struct):
    token_usage: _Usage | None = None


class _UsageMessage(msgspec.Struct):
    payload: _UsagePayload | None = None


class _UsageLine(msgspec.Struct):
    message: _UsageMessage | None = None


def _tokens(line: _UsageLine) -> int:
    if line.message is None or line.message.payload is None or line.message.payload.token_usage is None:
        return 0
    used = line.message.payload.token_usage
    return used.input_other + used.input_cache_read + used.input_cache_creation + used.output


tokens_of = field_reader(_UsageLine, b'"token_usage"', _tokens, 0)

# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("Shell", "WriteFile", "StrReplaceFile", "Patch"))

FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=KIMI.folder,
    translator=KimiTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    session_id=KIMI.session_id,
    tokens_of=tokens_of,
)
