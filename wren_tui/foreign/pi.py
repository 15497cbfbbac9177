"""pi's session files (`~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`, format version 3), read as Wren events.

The first line is the `session` header (cwd, version). Every other line is an entry with an 8-hex
`id` and a `parentId`: they form a tree, and a person can go back to an earlier entry and go on
from there in the same file. `message` entries hold the conversation (`user`, `assistant` with
`text`/`thinking`/`toolCall` blocks and its usage, `toolResult` with `isError`, and a few roles of
pi's own); the other entries record settings, compactions and summaries of branches left behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..journal.events import Event, ToolCall
from .base import (
    COMPACTION,
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
    tagged,
    text_of,
    thinking,
    union,
    usage,
    user,
)

NAME = "pi"
LABEL = "pi"
ENV = "PI_CODING_AGENT_DIR"
# Its tools that change the workspace (the writes filter shows their calls).
WRITE_TOOLS = frozenset(("bash", "write", "edit"))

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


class _Usage(msgspec.Struct):
    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheWrite: int = 0


class _Message(msgspec.Struct):
    role: str = ""
    content: Any = None
    toolCallId: str = ""
    isError: bool = False
    usage: _Usage | None = None
    stopReason: str | None = None
    errorMessage: str | None = None
    model: str | None = None
    # bashExecution: a command the person ran (`!cmd`) and what it printed.
    command: str | None = None
    output: str | None = None
    exitCode: int | None = None
    excludeFromContext: bool = False
    # branchSummary, compactionSummary
    summary: str | None = None


class _Entry(msgspec.Struct, tag_field="type", kw_only=True):
    id: str | None = None
    parentId: str | None = None
    timestamp: str = ""


class _Session(_Entry, tag="session"):
    cwd: str | None = None
    version: int | None = None


class _MessageEntry(_Entry, tag="message"):
    message: _Message


class _ModelChange(_Entry, tag="model_change"):
    provider: str | None = None
    modelId: str | None = None


class _ThinkingLevel(_Entry, tag="thinking_level_change"):
    thinkingLevel: str | None = None


class _Compaction(_Entry, tag="compaction"):
    summary: str = ""
    firstKeptEntryId: str | None = None
    tokensBefore: int | None = None


class _BranchSummary(_Entry, tag="branch_summary"):
    summary: str = ""


class _CustomMessage(_Entry, tag="custom_message"):
    content: Any = None
    customType: str | None = None


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


class PiTranslator(TypedTranslator[_Entry]):
    decoder = _decoder
    known = _KNOWN

    def time_of(self, line: _Entry) -> str:
        return line.timestamp

    def node(self, kind: str, line: _Entry) -> Node | None:
        # The header is not an entry of the tree.
        return Node(line.id, line.parentId) if line.id is not None and kind != "session" else None

    def typed(self, seq: int, kind: str, entry: _Entry, learn: bool) -> Translated:
        ts = entry.timestamp
        if isinstance(entry, _MessageEntry):
            out = self._message(seq, ts, entry.message, learn)
        elif isinstance(entry, _Session):
            out = Translated([note(seq, ts, "session", id=entry.id, cwd=entry.cwd, version=entry.version)], kind)
            out.cwd = entry.cwd
        elif isinstance(entry, _ModelChange):
            out = Translated([note(seq, ts, "model", provider=entry.provider, model=entry.modelId)], kind)
            out.model = entry.modelId
        elif isinstance(entry, _ThinkingLevel):
            out = Translated([note(seq, ts, "thinking level", level=entry.thinkingLevel)], kind)
        elif isinstance(entry, _Compaction):
            compaction = note(seq, ts, COMPACTION, text=entry.summary, keep=entry.firstKeptEntryId)
            out = Translated([compaction], kind)
        elif isinstance(entry, _BranchSummary):
            out = Translated([note(seq, ts, "branch summary", text=entry.summary)], kind)
        elif isinstance(entry, _CustomMessage):
            out = Translated([user(seq, ts, text_of(entry.content))], kind)
        else:
            out = Translated([], kind, "skipped")
        return out

    def _message(self, seq: int, ts: str, msg: _Message, learn: bool) -> Translated:
        role = msg.role
        events: list[Event] = []
        if role == "user":
            events.append(user(seq, ts, text_of(msg.content)))
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
                    events.append(thinking(seq, ts, str(block.get("thinking") or "")))
                elif kind == "toolCall":
                    call_id = str(block.get("id") or "")
                    arguments = msgspec.json.encode(block.get("arguments") or {}).decode()
                    calls.append(ToolCall(call_id, str(block.get("name") or ""), arguments))
                    if learn:
                        self._asked.setdefault(call_id, ms_of(ts))
            if texts or calls:
                events.append(assistant(seq, ts, "\n".join(texts), calls))
            if msg.stopReason in ("error", "aborted"):
                why = msg.errorMessage or ("the reply was aborted" if msg.stopReason == "aborted" else "error")
                events.append(error(seq, ts, why))
            if msg.usage is not None:
                used = msg.usage
                events.append(usage(seq, ts, used.input + used.cacheRead + used.cacheWrite, used.output, msg.model))
        elif role == "toolResult":
            took = elapsed(self._asked.get(msg.toolCallId), ts)
            events += answer(seq, ts, msg.toolCallId, text_of(msg.content), ok=not msg.isError, took=took)
        elif role == "bashExecution":
            # A command the person ran themselves; pi puts it in the model's context unless told not to.
            shown = f"$ {msg.command or ''}\n{msg.output or ''}"
            if msg.exitCode not in (None, 0):
                shown += f"\n(exit code {msg.exitCode})"
            events.append(note(seq, ts, "context", text=shown) if msg.excludeFromContext else user(seq, ts, shown))
        elif role in ("branchSummary", "compactionSummary"):
            events.append(note(seq, ts, "summary", text=msg.summary or text_of(msg.content)))
        elif role == "custom":
            events.append(user(seq, ts, text_of(msg.content)))
        else:
            return Translated([], f"message:{role}", "unknown")
        return Translated(events, "message", model=msg.model)


def root(env: Mapping[str, str], home: Path) -> Path:
    """$PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions."""
    base = env.get(ENV)
    return (Path(base).expanduser() if base else home / ".pi" / "agent") / "sessions"


def session_id(path: Path) -> str:
    """The uuid after the start time (<time>_<uuid>)."""
    return path.stem.rsplit("_", 1)[-1]


def claims(line: dict[str, Any]) -> bool:
    kind = line.get("type")
    if kind == "session":
        return "version" in line and "cwd" in line
    message = line.get("message")
    return kind in _KNOWN and "parentId" in line and (kind != "message" or isinstance(message, dict))


class _NodeLine(msgspec.Struct):
    type: str = ""
    id: str | None = None
    parentId: str | None = None


node_of = node_reader(
    _NodeLine, lambda line: None if line.id is None or line.type == "session" else Node(line.id, line.parentId)
)


class _UsageOnly(msgspec.Struct):
    usage: _Usage | None = None


class _UsageLine(msgspec.Struct):
    message: _UsageOnly | None = None


def _tokens(line: _UsageLine) -> int:
    if line.message is None or line.message.usage is None:
        return 0
    u = line.message.usage
    return u.input + u.cacheRead + u.cacheWrite + u.output


# The tokens an assistant message's line records (each message has its own usage), read alone.
tokens_of = field_reader(_UsageLine, b'"usage"', _tokens, 0)


FORMAT = Format.of(__name__, PiTranslator)
