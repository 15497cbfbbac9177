"""Claude Code's session files (`~/.claude/projects/<folder>/<session uuid>.jsonl`), read as Wren events.

Each line has a `type`. The conversation is `user` (a prompt, or tool results) and `assistant`
lines, one content block per line (a reply's text and its tool call are two lines sharing a
`message.id`, each repeating the usage). Entries chain by `uuid`/`parentUuid`; a `system`
compaction boundary starts a new root whose `logicalParentUuid` is the entry before it; a
subagent's entries are marked `isSidechain`. The rest is the client's bookkeeping, left out.
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
from .folders import CLAUDE

NAME = CLAUDE.name
LABEL = "Claude Code"
ENV = CLAUDE.folder.env

# Lines the client writes for itself: its context attachments, request records, queue, costs.
SKIPPED = (
    "attachment",
    "queue-operation",
    "atis-latch",
    "api-request-shape",
    "api-request-blob",
    "api-request",
    "last-prompt",
    "tools-used",
    "cost-state",
    "mode",
    "file-history-snapshot",
    "summary",
    "progress",
    "custom-title",
    "agent-name",
    "tag",
)
MAPPED = ("user", "assistant", "system")
# The kinds whose lines carry `sessionId` or `uuid`: what a Claude Code file is recognised by.
_CLAIMED = frozenset({*MAPPED, *SKIPPED})


class _Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = 0
    cache_read_input_tokens: int | None = 0


class _Block(msgspec.Struct):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    id: str = ""
    name: str = ""
    input: msgspec.Raw = make.NO_RAW
    tool_use_id: str = ""
    content: Any = None
    is_error: bool | None = None


class _Message(msgspec.Struct):
    role: str = ""
    content: str | list[_Block] = ""
    id: str | None = None
    model: str | None = None
    usage: _Usage | None = None


class _Line(msgspec.Struct, tag_field="type", kw_only=True, rename="camel"):
    uuid: str | None = None
    parent_uuid: str | None = None
    logical_parent_uuid: str | None = None
    is_sidechain: bool = False
    timestamp: str = ""
    cwd: str | None = None


class _User(_Line, tag="user"):
    message: _Message
    is_meta: bool = False


class _Assistant(_Line, tag="assistant"):
    message: _Message
    is_api_error_message: bool = False


class _System(_Line, tag="system"):
    subtype: str = ""
    content: Any = None
    level: str = ""


_Skipped = tagged(_Line, SKIPPED)
_decoder: msgspec.json.Decoder[_Line] = msgspec.json.Decoder(union((_User, _Assistant, _System, *_Skipped)))


class ClaudeTranslator(TypedTranslator[_Line], decoder=_decoder, known=_CLAIMED, skipped=_Skipped):
    """Remembers when each tool call was asked, and how much of each reply's usage was counted."""

    def __init__(self) -> None:
        super().__init__()
        # A reply's usage is repeated on each of its lines (growing, in older clients): each line
        # counts what it adds to the line before it, and a line that adds nothing is hidden.
        self._last_usage: dict[str, tuple[int, int]] = {}
        self._usage_at: dict[int, tuple[int, int]] = {}

    def node(self, kind: str, line: _Line) -> Node | None:
        return (
            None
            if line.uuid is None
            else Node(line.uuid, line.parent_uuid, line.logical_parent_uuid, line.is_sidechain)
        )

    def cwd(self, line: _Line) -> str | None:
        return line.cwd

    def typed(self, seq: int, kind: str, line: _Line, learn: bool) -> Translated:
        if isinstance(line, _User):
            return self._user(seq, line)
        if isinstance(line, _Assistant):
            return self._assistant(seq, line, learn)
        if isinstance(line, _System):
            return _system(seq, line)
        return Translated([], kind, "skipped")

    def _user(self, seq: int, line: _User) -> Translated:
        ts, content = line.timestamp, line.message.content
        events: list[Event] = []
        texts: list[str] = []
        if isinstance(content, str):
            texts += [content] if content else []
        else:
            for block in content:
                if block.type == "tool_result":
                    ok = block.is_error is not True
                    took = make.elapsed(self._asked.get(block.tool_use_id), ts)
                    events += make.answer(seq, ts, block.tool_use_id, make.text_of(block.content), ok=ok, took=took)
                elif block.type == "text" and block.text is not None:
                    texts.append(block.text)
                elif block.type == "image":
                    texts.append("[image]")
        if texts:
            text = "\n".join(texts)
            # Text the client added for the model (a caveat, a command's output): context, not a person's words.
            events.append(make.note(seq, ts, "context", text=text) if line.is_meta else make.user(seq, ts, text))
        return Translated(events, "user")

    def _assistant(self, seq: int, line: _Assistant, learn: bool) -> Translated:
        ts, msg = line.timestamp, line.message
        events: list[Event] = []
        texts: list[str] = []
        calls: list[ToolCall] = []
        blocks = [_Block(type="text", text=msg.content)] if isinstance(msg.content, str) else msg.content
        for block in blocks:
            if block.type == "text" and block.text is not None:
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(ToolCall(block.id, block.name, make.raw_text(block.input) or "{}"))
                if learn:
                    self._asked.setdefault(block.id, make.ms_of(ts))
            elif block.type == "thinking":
                events.append(make.thinking(seq, ts, block.thinking or ""))
            elif block.type == "redacted_thinking":
                events.append(make.thinking(seq, ts, "[redacted by the model's provider]"))
        text = "\n".join(texts)
        if line.is_api_error_message:
            events.append(make.error(seq, ts, text))
        elif texts or calls:
            events.append(make.assistant(seq, ts, text, calls))
        hidden: frozenset[int] = frozenset()
        if msg.usage is not None:
            tokens_in, tokens_out = self._usage(seq, msg.id, msg.usage, learn)
            if not tokens_in and not tokens_out:
                hidden = frozenset({len(events)})
            events.append(make.usage(seq, ts, tokens_in, tokens_out, msg.model))
        return Translated(events, "assistant", hidden=hidden, model=msg.model)

    def _usage(self, seq: int, message_id: str | None, used: _Usage, learn: bool) -> tuple[int, int]:
        """What this line adds to its reply's usage (all of it on the reply's first line)."""
        if not learn and seq in self._usage_at:
            return self._usage_at[seq]
        tokens_in = used.input_tokens + (used.cache_creation_input_tokens or 0) + (used.cache_read_input_tokens or 0)
        before_in, before_out = self._last_usage.get(message_id or "", (0, 0)) if message_id else (0, 0)
        added = (max(tokens_in - before_in, 0), max(used.output_tokens - before_out, 0))
        if learn:
            if message_id:
                self._last_usage[message_id] = (max(tokens_in, before_in), max(used.output_tokens, before_out))
            self._usage_at[seq] = added
        return added


def _system(seq: int, line: _System) -> Translated:
    text = make.text_of(line.content)
    if line.subtype == "compact_boundary":
        boundary = make.note(seq, line.timestamp, make.COMPACTION_BOUNDARY, text=text or "earlier messages summarised")
        return Translated([boundary], "system")
    if line.level == "error" or line.subtype == "api_error":
        return Translated([make.error(seq, line.timestamp, text or line.subtype)], "system")
    return Translated([make.note(seq, line.timestamp, "system", subtype=line.subtype, text=text)], "system")


# --- the tree, cheaply ------------------------------------------------------------------------


class _NodeLine(msgspec.Struct, rename="camel"):
    uuid: str | None = None
    parent_uuid: str | None = None
    logical_parent_uuid: str | None = None
    is_sidechain: bool = False


def _node(line: _NodeLine) -> Node | None:
    return None if line.uuid is None else Node(line.uuid, line.parent_uuid, line.logical_parent_uuid, line.is_sidechain)


# A line's place in the chain, without reading the rest of it; None for a bookkeeping line; BadLine for a line
# that is not a JSON object.
node_of = node_reader(_NodeLine, _node)


# --- which files are its (where its sessions are: `folders`) ---------------------------------


def claims(line: dict[str, Any]) -> bool:
    """A line of Claude Code's kinds with its ids, and a message with `content` (Qwen Code's, with the same
    envelope, has `parts`) or none of Qwen Code's own members."""
    kind = line.get("type")
    if kind not in _CLAIMED or not ("sessionId" in line or "uuid" in line or "leafUuid" in line):
        return False
    if kind in ("user", "assistant"):
        message = line.get("message")
        return isinstance(message, dict) and "content" in message
    return "provenance" not in line and "systemPayload" not in line


class _Cost(msgspec.Struct, rename="camel"):
    type: str = ""
    model_usage: dict[str, dict[str, Any]] | None = None


_COUNTED = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")


def _total(cost: _Cost) -> int | None:
    if cost.type != "cost-state" or cost.model_usage is None:
        return None
    counts = (used.get(key) for used in cost.model_usage.values() for key in _COUNTED)
    return sum(n for n in counts if isinstance(n, int))


# The session's tokens so far, from a `cost-state` line (the last line of a run that ended).
totals = field_reader(_Cost, b'"cost-state"', _total, None)


# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("Bash", "Write", "Edit", "MultiEdit", "NotebookEdit"))


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=CLAUDE.folder,
    translator=ClaudeTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    node_of=node_of,
    totals=totals,
)
