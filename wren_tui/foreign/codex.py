"""Codex CLI's rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`), read as Wren events.

Each line is `{"timestamp", "type", "payload"}` (newer clients add `ordinal`). The conversation is
in `response_item` payloads: what was sent to the model (`message`, `function_call`,
`function_call_output`, `custom_tool_call`..., `reasoning`). `event_msg` payloads say much of it
again for the client's own screen; only what they alone hold is taken from them: a command's exit
code and duration, token counts, errors. The lines form one sequence: no tree.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from ..journal.events import Event, ToolCall
from . import make
from .base import Format, Kinds, Translated, Translator, decode_line, malformed, union
from .folders import CODEX

NAME = CODEX.name
LABEL = "Codex"
ENV = CODEX.folder.env

MAPPED = (
    "session_meta",
    "response_item:message",
    "response_item:function_call",
    "response_item:function_call_output",
    "response_item:custom_tool_call",
    "response_item:custom_tool_call_output",
    "response_item:local_shell_call",
    "response_item:reasoning",
    "response_item:web_search_call",
    "event_msg:token_count",
    "event_msg:error",
    "event_msg:stream_error",
    "event_msg:turn_aborted",
    "token_usage_record",
    "compacted",
)
# Said again elsewhere in the file, or the client's own state: left out (read for what they alone hold).
SKIPPED = (
    "turn_context",
    "world_state",
    "event_msg:task_started",
    "event_msg:task_complete",
    "event_msg:thread_settings_applied",
    "event_msg:item_completed",
    "event_msg:item_started",
    "event_msg:user_message",
    "event_msg:agent_message",
    "event_msg:agent_reasoning",
    "event_msg:agent_reasoning_raw_content",
    "event_msg:exec_command_begin",
    "event_msg:exec_command_end",
    "event_msg:patch_apply_begin",
    "event_msg:patch_apply_end",
    "event_msg:mcp_tool_call_begin",
    "event_msg:mcp_tool_call_end",
    "event_msg:web_search_begin",
    "event_msg:web_search_end",
    "event_msg:turn_diff",
    "event_msg:plan_update",
    "event_msg:entered_review_mode",
    "event_msg:exited_review_mode",
)
_ENVELOPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state"})
_KNOWN = frozenset({*MAPPED, *SKIPPED, "response_item", "event_msg", "token_usage_record"})
# What a harness puts in a user message for the model (the workspace, AGENTS.md): context, not a person's words.
_CONTEXT_OPENINGS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions")
_EXIT_CODE = re.compile(r"^Process exited with code (-?\d+)$", re.MULTILINE)


class _Line(msgspec.Struct):
    type: str
    payload: msgspec.Raw
    timestamp: str = ""


class _Meta(msgspec.Struct):
    id: str = ""
    cwd: str | None = None
    cli_version: str | None = None
    model_provider: str | None = None
    originator: str | None = None


class _TurnContext(msgspec.Struct):
    cwd: str | None = None
    model: str | None = None


class _Item(msgspec.Struct, tag_field="type", kw_only=True):
    call_id: str = ""


class _Msg(_Item, tag="message"):
    role: str = ""
    content: list[Any] | str | None = None
    internal_chat_message_metadata_passthrough: dict[str, Any] | None = None


class _Call(_Item, tag="function_call"):
    name: str = ""
    arguments: str = ""


class _CustomCall(_Item, tag="custom_tool_call"):
    name: str = ""
    input: str = ""


class _ShellCall(_Item, tag="local_shell_call"):
    action: Any = None


class _Output(_Item, tag="function_call_output"):
    output: Any = None


class _CustomOutput(_Item, tag="custom_tool_call_output"):
    output: Any = None


class _Reasoning(_Item, tag="reasoning"):
    summary: list[Any] | None = None
    content: list[Any] | None = None


class _WebSearch(_Item, tag="web_search_call"):
    action: Any = None


class _Event(msgspec.Struct, tag_field="type", kw_only=True):
    pass


class _TokenCount(_Event, tag="token_count"):
    info: dict[str, Any] | None = None


class _ErrorEvent(_Event, tag="error"):
    message: str = ""


class _StreamError(_Event, tag="stream_error"):
    message: str = ""


class _Aborted(_Event, tag="turn_aborted"):
    reason: str = ""


class _Completed(_Event, tag="item_completed"):
    item: dict[str, Any] | None = None


class _ExecEnd(_Event, tag="exec_command_end"):
    call_id: str = ""
    exit_code: int | None = None
    duration: Any = None


class _TokenUsage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0


class _UsageRecord(msgspec.Struct):
    usage: _TokenUsage | None = None


class _Compacted(msgspec.Struct):
    message: str = ""


_item_kinds = tuple(_Item.__subclasses__())
_items: msgspec.json.Decoder[_Item] = msgspec.json.Decoder(union(_item_kinds))
_event_kinds = tuple(_Event.__subclasses__())
_events: msgspec.json.Decoder[_Event] = msgspec.json.Decoder(union(_event_kinds))
_lines = msgspec.json.Decoder(_Line)
_meta = msgspec.json.Decoder(_Meta)
_context = msgspec.json.Decoder(_TurnContext)
_record = msgspec.json.Decoder(_UsageRecord)
_compacted = msgspec.json.Decoder(_Compacted)
_tag = msgspec.json.Decoder(dict[str, Any])


class CodexTranslator(Translator):
    """Remembers when calls were asked, each command's exit code and duration, the model, and the token totals."""

    def __init__(self) -> None:
        self._asked: dict[str, int | None] = {}
        self._commands: dict[str, tuple[int | None, int | None]] = {}
        self._model: str | None = None
        # Token counts: one record per response in newer clients; cumulative totals (said twice) in older ones.
        self._records = False
        self._total: tuple[int, int] | None = None
        self._counted: dict[int, tuple[int, int] | None] = {}

    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        line = decode_line(_lines, lineno, data, _ENVELOPES)
        if isinstance(line, Translated):
            return line  # a kind this reader does not type, counted, or a known one that does not fit
        kind = line.type
        try:
            if kind in ("response_item", "event_msg"):
                payload: _Item | _Event
                try:
                    payload = _items.decode(line.payload) if kind == "response_item" else _events.decode(line.payload)
                except msgspec.ValidationError as exc:  # a payload of a kind this version does not type, or unfit
                    return self._other(lineno, line, kind, exc)
                if isinstance(payload, _Item):
                    return self._item(lineno, line, payload, learn)
                return self._event(lineno, line, payload, learn)
            if kind == "session_meta":
                meta = _meta.decode(line.payload)
                version = " ".join(v for v in (meta.originator, meta.cli_version) if v)
                event = make.note(lineno, line.timestamp, "session", id=meta.id, cwd=meta.cwd, client=version)
                return Translated([event], kind, cwd=meta.cwd, model=meta.model_provider)
            if kind == "turn_context":
                turn = _context.decode(line.payload)
                if learn and turn.model:
                    self._model = turn.model
                return Translated([], kind, "skipped", cwd=turn.cwd, model=turn.model)
            if kind == "token_usage_record":
                record = _record.decode(line.payload)
                if learn:
                    self._records = True
                used = record.usage or _TokenUsage()
                return Translated(
                    [make.usage(lineno, line.timestamp, used.input_tokens, used.output_tokens, self._model)], kind
                )
            if kind == "compacted":
                summary = _compacted.decode(line.payload).message
                return Translated([make.note(lineno, line.timestamp, make.COMPACTION, text=summary)], kind)
            if kind == "world_state":
                return Translated([], kind, "skipped")
        except (msgspec.ValidationError, TypeError, ValueError) as exc:
            return malformed(lineno, line.timestamp, kind, exc)
        return Translated([], kind, "unknown")

    # --- response items: the conversation ------------------------------------------------------

    def _item(self, seq: int, line: _Line, item: _Item, learn: bool) -> Translated:
        ts = line.timestamp
        kind = f"response_item:{item.__struct_config__.tag}"
        events: list[Event]
        if isinstance(item, _Msg):
            text = make.text_of(item.content)
            if item.role == "assistant":
                events = [make.assistant(seq, ts, text)]
            elif item.role == "user" and not _harness_context(item, text):
                events = [make.user(seq, ts, text)]
            else:
                events = [make.note(seq, ts, "context", role=item.role, text=text)]
            return Translated(events, kind)
        if isinstance(item, _Call | _CustomCall | _ShellCall):
            if isinstance(item, _Call):
                call = ToolCall(item.call_id, item.name, item.arguments)
            elif isinstance(item, _CustomCall):
                call = ToolCall(item.call_id, item.name, item.input)
            else:
                call = ToolCall(item.call_id, "local_shell", msgspec.json.encode(item.action).decode())
            if learn:
                self._asked.setdefault(item.call_id, make.ms_of(ts))
            return Translated([make.assistant(seq, ts, "", [call])], kind)
        if isinstance(item, _Output | _CustomOutput):
            return Translated(self._output(seq, ts, item.call_id, item.output), kind)
        if isinstance(item, _Reasoning):
            parts = [make.text_of(item.summary), make.text_of(item.content)]
            text = "\n\n".join(p for p in parts if p) or "[reasoning kept encrypted by the provider]"
            return Translated([make.thinking(seq, ts, text)], kind)
        if isinstance(item, _WebSearch):
            return Translated([make.note(seq, ts, "web search", action=item.action)], kind)
        return Translated([], kind, "unknown")

    def _output(self, seq: int, ts: str, call_id: str, output: Any) -> list[Event]:
        """A call's output: ok or failed from its exit code (the command's record, or the output's own words)."""
        exit_code, took = self._commands.get(call_id, (None, None))
        if isinstance(output, str) and output.startswith("{"):
            # Older clients: {"output": text, "metadata": {"exit_code", "duration_seconds"}}.
            try:
                wrapped = _tag.decode(output)
            except msgspec.DecodeError:
                wrapped = {}
            metadata = wrapped.get("metadata")
            if isinstance(wrapped.get("output"), str) and isinstance(metadata, dict):
                code, seconds = metadata.get("exit_code"), metadata.get("duration_seconds")
                exit_code = code if isinstance(code, int) and exit_code is None else exit_code
                if took is None and isinstance(seconds, int | float):
                    took = int(seconds * 1000)
        text = make.text_of(output)
        if exit_code is None and (found := _EXIT_CODE.search(text)) is not None:
            exit_code = int(found.group(1))
        ok = None if exit_code is None else exit_code == 0
        if took is None:
            took = make.elapsed(self._asked.get(call_id), ts)
        return make.answer(seq, ts, call_id, text, ok=ok, took=took)

    # --- event messages: what only they hold ---------------------------------------------------

    def _event(self, seq: int, line: _Line, event: _Event, learn: bool) -> Translated:
        ts = line.timestamp
        kind = f"event_msg:{event.__struct_config__.tag}"
        if isinstance(event, _Completed):
            item = event.item or {}
            if learn and item.get("type") == "CommandExecution" and isinstance(item.get("id"), str):
                code = item.get("exit_code")
                self._commands[item["id"]] = (code if isinstance(code, int) else None, _duration(item))
            return Translated([], kind, "skipped")
        if isinstance(event, _ExecEnd):
            if learn and event.call_id:
                self._commands[event.call_id] = (event.exit_code, _duration({"duration": event.duration}))
            return Translated([], kind, "skipped")
        if isinstance(event, _TokenCount):
            return self._token_count(seq, ts, event, learn)
        if isinstance(event, _ErrorEvent):
            return Translated([make.error(seq, ts, event.message)], kind)
        if isinstance(event, _StreamError):
            return Translated([make.error(seq, ts, f"stream error (retried): {event.message}")], kind)
        if isinstance(event, _Aborted):
            return Translated([make.error(seq, ts, f"turn aborted: {event.reason or 'no reason given'}")], kind)
        return Translated([], kind, "unknown")

    def _token_count(self, seq: int, ts: str, event: _TokenCount, learn: bool) -> Translated:
        """A token count's last response, when no per-response record is kept and its total moved."""
        kind = "event_msg:token_count"
        if not learn and seq in self._counted:
            counted = self._counted[seq]
        else:
            info = event.info or {}
            last, total = _tokens(info.get("last_token_usage")), _tokens(info.get("total_token_usage"))
            counted = None
            if not self._records and last is not None and total is not None and total != self._total:
                counted = last
            if learn:
                self._counted[seq] = counted
                self._total = total or self._total
        tokens_in, tokens_out = counted or (0, 0)
        events: list[Event] = [make.usage(seq, ts, tokens_in, tokens_out, self._model)]
        return Translated(events, kind, hidden=frozenset() if counted else frozenset({0}))

    def _other(self, seq: int, line: _Line, envelope: str, exc: msgspec.ValidationError) -> Translated:
        """A payload the typed decoder refused: a kind this version does not know, or one that does not fit."""
        try:
            payload = _tag.decode(line.payload)
        except msgspec.DecodeError:
            return malformed(seq, line.timestamp, envelope, exc)
        tag = payload.get("type")
        kind = f"{envelope}:{tag}" if isinstance(tag, str) else envelope
        if kind in _KNOWN and kind not in SKIPPED:
            return malformed(seq, line.timestamp, kind, exc)
        return Translated([], kind, "skipped" if kind in SKIPPED else "unknown")


def _harness_context(item: _Msg, text: str) -> bool:
    """A user message the client wrote for the model (the workspace, instructions), not a person."""
    passthrough = item.internal_chat_message_metadata_passthrough or {}
    kinds = passthrough.get("content_item_kinds")
    if isinstance(kinds, list) and kinds:
        return not any(isinstance(k, str) and k.startswith("user.") for k in kinds)
    return text.lstrip().startswith(_CONTEXT_OPENINGS)


def _duration(item: dict[str, Any]) -> int | None:
    """A command's duration in ms: {"secs", "nanos"}, or completed minus started."""
    duration = item.get("duration")
    if isinstance(duration, dict):
        secs, nanos = duration.get("secs"), duration.get("nanos")
        if isinstance(secs, int) and isinstance(nanos, int):
            return secs * 1000 + nanos // 1_000_000
    started, completed = item.get("started_at_ms"), item.get("completed_at_ms")
    if isinstance(started, int) and isinstance(completed, int):
        return max(completed - started, 0)
    return None


def _tokens(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, dict):
        return None
    tokens_in, tokens_out = value.get("input_tokens"), value.get("output_tokens")
    if isinstance(tokens_in, int) and isinstance(tokens_out, int):
        return tokens_in, tokens_out
    return None


def claims(line: dict[str, Any]) -> bool:
    return line.get("type") in (*_ENVELOPES, "token_usage_record") and "payload" in line


class _Totals(msgspec.Struct):
    info: dict[str, Any] | None = None
    thread_token_usage: dict[str, Any] | None = None


class _TotalsLine(msgspec.Struct):
    type: str = ""
    payload: _Totals | None = None


_totals = msgspec.json.Decoder(_TotalsLine)


def totals(data: bytes) -> int | None:
    """The session's tokens so far, from a token count (its total) or a usage record (the thread's)."""
    if b"token_usage" not in data:
        return None
    try:
        line = _totals.decode(data)
    except msgspec.DecodeError:
        return None
    payload = line.payload
    if payload is None:
        return None
    found = _tokens(payload.thread_token_usage) or _tokens((payload.info or {}).get("total_token_usage"))
    return None if found is None else sum(found)


# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("exec_command", "local_shell", "apply_patch", "write_stdin"))


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=CODEX.folder,
    translator=CodexTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    session_id=CODEX.session_id,
    totals=totals,
)
