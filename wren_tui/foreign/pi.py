"""pi's session files (`~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`, format version 3), read as Wren events.

The first line is the `session` header (cwd, version). Every other line is an entry with an 8-hex
`id` and a `parentId`: they form a tree, and a person can go back to an earlier entry and go on
from there in the same file. `message` entries hold the conversation (`user`, `assistant` with
`text`/`thinking`/`toolCall` blocks and its usage, `toolResult` with `isError`, and a few roles of
pi's own); the other entries record settings, compactions and summaries of branches left behind.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..journal.events import Event, ToolCall
from . import make
from .base import (
    Format,
    Kinds,
    Node,
    Translated,
    TypedTranslator,
    field_reader,
    node_reader,
    tagged,
    union,
)
from .folders import PI

NAME = PI.name
LABEL = "pi"
ENV = PI.folder.env

MAPPED = (
    "session",
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom_message",
)
# Extension state and labels: not part of the conversation.
SKIPPED = ("custom", "label", "session_info")
_KNOWN = frozenset({*MAPPED, *SKIPPED})


class _Usage(msgspec.Struct, rename="camel"):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


class _Message(msgspec.Struct, rename="camel"):
    role: str = ""
    content: Any = None
    tool_call_id: str = ""
    is_error: bool = False
    usage: _Usage | None = None
    stop_reason: str | None = None
    error_message: str | None = None
    model: str | None = None
    # bashExecution: a command the person ran (`!cmd`) and what it printed.
    command: str | None = None
    output: str | None = None
    exit_code: int | None = None
    exclude_from_context: bool = False
    # branchSummary, compactionSummary
    summary: str | None = None


class _Entry(msgspec.Struct, tag_field="type", kw_only=True, rename="camel"):
    id: str | None = None
    parent_id: str | None = None
    timestamp: str = ""


class _Session(_Entry, tag="session"):
    cwd: str | None = None
    version: int | None = None


class _MessageEntry(_Entry, tag="message"):
    message: _Message


class _ModelChange(_Entry, tag="model_change"):
    provider: str | None = None
    model_id: str | None = None


class _ThinkingLevel(_Entry, tag="thinking_level_change"):
    thinking_level: str | None = None


class _Compaction(_Entry, tag="compaction"):
    summary: str = ""
    first_kept_entry_id: str | None = None
    tokens_before: int | None = None


class _BranchSummary(_Entry, tag="branch_summary"):
    summary: str = ""


class _CustomMessage(_Entry, tag="custom_message"):
    content: Any = None
    custom_type: str | None = None


_Skipped = tagged(_Entry, SKIPPED)
_kinds: tuple[type[_Entry], ...] = (
    _Session,
    _MessageEntry,
    _ModelChange,
    _ThinkingLevel,
    _Compaction,
    _BranchSummary,
    _CustomMessage,
    *_Skipped,
)
_decoder: msgspec.json.Decoder[_Entry] = msgspec.json.Decoder(union(_kinds))


class PiTranslator(TypedTranslator[_Entry], decoder=_decoder, known=_KNOWN):
    def node(self, kind: str, line: _Entry) -> Node | None:
        # The header is not an entry of the tree.
        return Node(line.id, line.parent_id) if line.id is not None and kind != "session" else None

    def typed(self, seq: int, kind: str, entry: _Entry, learn: bool) -> Translated:
        ts = entry.timestamp
        if isinstance(entry, _MessageEntry):
            out = self._message(seq, ts, entry.message, learn)
        elif isinstance(entry, _Session):
            out = Translated([make.note(seq, ts, "session", id=entry.id, cwd=entry.cwd, version=entry.version)], kind)
            out.cwd = entry.cwd
        elif isinstance(entry, _ModelChange):
            out = Translated([make.note(seq, ts, "model", provider=entry.provider, model=entry.model_id)], kind)
            out.model = entry.model_id
        elif isinstance(entry, _ThinkingLevel):
            out = Translated([make.note(seq, ts, "thinking level", level=entry.thinking_level)], kind)
        elif isinstance(entry, _Compaction):
            compaction = make.note(seq, ts, make.COMPACTION, text=entry.summary, keep=entry.first_kept_entry_id)
            out = Translated([compaction], kind)
        elif isinstance(entry, _BranchSummary):
            out = Translated([make.note(seq, ts, "branch summary", text=entry.summary)], kind)
        elif isinstance(entry, _CustomMessage):
            out = Translated([make.user(seq, ts, make.text_of(entry.content))], kind)
        else:
            out = Translated([], kind, "skipped")
        return out

    def _message(self, seq: int, ts: str, msg: _Message, learn: bool) -> Translated:
        role = msg.role
        events: list[Event] = []
        if role == "user":
            events.append(make.user(seq, ts, make.text_of(msg.content)))
        elif role == "assistant":
            texts: list[str] = []
            calls: list[ToolCall] = []
            for block in msg.content if isinstance(msg.content, list) else [msg.content]:
                if isinstance(block, str):
                    texts.append(block)
                    continue
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif kind == "thinking":
                    events.append(make.thinking(seq, ts, str(block.get("thinking") or "")))
                elif kind == "toolCall":
                    call_id = str(block.get("id") or "")
                    arguments = msgspec.json.encode(block.get("arguments") or {}).decode()
                    calls.append(ToolCall(call_id, str(block.get("name") or ""), arguments))
                    if learn:
                        self._asked.setdefault(call_id, make.ms_of(ts))
            if texts or calls:
                events.append(make.assistant(seq, ts, "\n".join(texts), calls))
            if msg.stop_reason in ("error", "aborted"):
                why = msg.error_message or ("the reply was aborted" if msg.stop_reason == "aborted" else "error")
                events.append(make.error(seq, ts, why))
            if msg.usage is not None:
                used = msg.usage
                events.append(
                    make.usage(seq, ts, used.input + used.cache_read + used.cache_write, used.output, msg.model)
                )
        elif role == "toolResult":
            took = make.elapsed(self._asked.get(msg.tool_call_id), ts)
            events += make.answer(seq, ts, msg.tool_call_id, make.text_of(msg.content), ok=not msg.is_error, took=took)
        elif role == "bashExecution":
            # A command the person ran themselves; pi puts it in the model's context unless told not to.
            shown = f"$ {msg.command or ''}\n{msg.output or ''}"
            if msg.exit_code not in (None, 0):
                shown += f"\n(exit code {msg.exit_code})"
            events.append(
                make.note(seq, ts, "context", text=shown) if msg.exclude_from_context else make.user(seq, ts, shown)
            )
        elif role in ("branchSummary", "compactionSummary"):
            events.append(make.note(seq, ts, "summary", text=msg.summary or make.text_of(msg.content)))
        elif role == "custom":
            events.append(make.user(seq, ts, make.text_of(msg.content)))
        else:
            return Translated([], f"message:{role}", "unknown")
        return Translated(events, "message", model=msg.model)


def claims(line: dict[str, Any]) -> bool:
    kind = line.get("type")
    if kind == "session":
        return "version" in line and "cwd" in line
    message = line.get("message")
    return kind in _KNOWN and "parentId" in line and (kind != "message" or isinstance(message, dict))


class _NodeLine(msgspec.Struct, rename="camel"):
    type: str = ""
    id: str | None = None
    parent_id: str | None = None


node_of = node_reader(
    _NodeLine, lambda line: None if line.id is None or line.type == "session" else Node(line.id, line.parent_id)
)


class _UsageOnly(msgspec.Struct):
    usage: _Usage | None = None


class _UsageLine(msgspec.Struct):
    message: _UsageOnly | None = None


def _tokens(line: _UsageLine) -> int:
    if line.message is None or line.message.usage is None:
        return 0
    u = line.message.usage
    return u.input + u.cache_read + u.cache_write + u.output


# The tokens an assistant message's line records (each message has its own usage), read alone.
tokens_of = field_reader(_UsageLine, b'"usage"', _tokens, 0)


# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("bash", "write", "edit"))


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=PI.folder,
    translator=PiTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    session_id=PI.session_id,
    node_of=node_of,
    tokens_of=tokens_of,
)
