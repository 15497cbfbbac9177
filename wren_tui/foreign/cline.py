"""Cline CLI's sessions (`~/.cline/data/sessions/<id>/<id>.messages.json`), read as Wren events.

Cline keeps a session as two JSON documents, both rewritten whole at each step: `<id>.json` (its
`status`, `pid`, `cwd`, model, usage) and `<id>.messages.json` (`messages`: Anthropic-shaped
content blocks, `text`, `tool_use`, and `tool_result` in a user message, each message with its `ts`
in milliseconds and the assistant's `metrics`). The messages document is the session; the other
gives its workspace. A run killed during a tool leaves `status: "running"` and a `tool_use` with
no `tool_result`: nobody writes it any more, so it is not live (the listing judges that by the
file's time, never by the status it says), and it is stopped mid-call.

The document is exported as lines (`export`), one per message and one per tool result; the
translator reads a line from its bytes alone.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from ..journal.errors import JournalError
from ..journal.events import ToolCall
from . import make
from .base import Format, Kinds, Translated, Translator
from .document import ExportedLine, decode_document, decode_export, iso_of_ms, read_document
from .folders import Folder, variable_or_home

NAME = "cline"
LABEL = "Cline"
ENV = "CLINE_DIR"
SUFFIX = ".messages.json"
MAPPED = ("session", "user", "assistant", "result")
SKIPPED = ()
MAX_BYTES = 1 << 28
# The prompt as Cline records it: `<user_input mode="act">TEXT</user_input>`.
_WRAPPED = re.compile(r"\A<user_input(?: [^>]*)?>(.*)</user_input>\Z", re.DOTALL)


class _Block(msgspec.Struct):
    type: str = ""
    text: str | None = None
    id: str = ""
    name: str = ""
    input: Any = None
    tool_use_id: str = ""
    content: Any = None
    is_error: bool = False


class _ModelInfo(msgspec.Struct):
    id: str | None = None


class _Metrics(msgspec.Struct, rename="camel"):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class _Message(msgspec.Struct, rename="camel"):
    role: str = ""
    content: list[_Block] | str = []
    ts: int | None = None
    model_info: _ModelInfo | None = None
    metrics: _Metrics | None = None


class _Messages(msgspec.Struct, rename="camel"):
    session_id: str
    messages: list[_Message]


class _Session(msgspec.Struct):
    status: str | None = None
    cwd: str | None = None
    model: str | None = None
    started_at: str | None = None


class _Line(ExportedLine):
    """One exported line: the session's head, a message, or one tool result."""

    cwd: str = ""
    status: str = ""
    calls: list[tuple[str, str, str]] = msgspec.field(default_factory=list)  # (id, name, input as JSON)
    ok: bool = True
    tokens_in: int = 0
    tokens_out: int = 0
    model: str = ""


_messages = msgspec.json.Decoder(_Messages)
_session = msgspec.json.Decoder(_Session)
_encode = msgspec.json.Encoder()
_decode = msgspec.json.Decoder(_Line)


def _read(path: Path) -> bytes:
    return read_document(path, MAX_BYTES, LABEL)


_iso = iso_of_ms


def _result_text(content: Any) -> tuple[str, bool]:
    """A tool_result's text, and whether it says the call failed (an item with `success: false` or an error)."""
    if isinstance(content, str):
        return content, True
    texts, ok = [], True
    for item in content if isinstance(content, list) else [content]:
        if isinstance(item, dict):
            if item.get("success") is False or item.get("error"):
                ok = False
            value = item.get("result", item.get("text", item.get("content")))
            texts.append(value if isinstance(value, str) else make.text_of(value))
        else:
            texts.append(make.text_of(item))
    return "\n".join(texts), ok


def _head_of(path: Path) -> _Session:
    """The session's `<id>.json` beside its messages (its status, workspace and model); empty when absent."""
    status = path.with_name(path.name[: -len(SUFFIX)] + ".json")
    try:
        return _session.decode(_read(status))
    except (JournalError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return _Session()


def export(path: Path) -> bytes:
    """The session as lines: its head, then each message, a tool result on a line of its own."""
    doc = decode_document(_messages, _read(path), path, LABEL)
    head = _head_of(path)
    first = _iso(doc.messages[0].ts) if doc.messages else ""
    lines = [_Line("session", first, id=doc.session_id, cwd=head.cwd or "", status=head.status or "")]
    for message in doc.messages:
        ts = _iso(message.ts)
        blocks = [_Block("text", message.content)] if isinstance(message.content, str) else message.content
        texts = [b.text for b in blocks if b.type == "text" and b.text]
        if message.role == "assistant":
            calls = [
                (b.id, b.name, msgspec.json.encode(b.input or {}).decode()) for b in blocks if b.type == "tool_use"
            ]
            used = message.metrics or _Metrics()
            model = (message.model_info.id if message.model_info else None) or head.model or ""
            lines.append(
                _Line(
                    "assistant",
                    ts,
                    text="\n".join(texts),
                    calls=calls,
                    tokens_in=used.input_tokens + used.cache_read_tokens + used.cache_write_tokens,
                    tokens_out=used.output_tokens,
                    model=model,
                )
            )
            continue
        for block in blocks:
            if block.type == "tool_result":
                text, ok = _result_text(block.content)
                lines.append(_Line("result", ts, text=text, id=block.tool_use_id, ok=ok and not block.is_error))
        if texts:
            text = "\n".join(texts)
            wrapped = _WRAPPED.match(text)
            lines.append(_Line(message.role or "(no role)", ts, text=wrapped[1] if wrapped else text))
    return b"".join(_encode.encode(line) + b"\n" for line in lines)


class ClineTranslator(Translator):
    """Remembers when each call was asked, for the time its result took."""

    def __init__(self) -> None:
        self._asked: dict[str, int | None] = {}

    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        line = decode_export(_decode, data, "an exported Cline session")
        seq, ts, kind = lineno, line.ts, line.type
        if kind == "session":
            shown = make.note(seq, ts, "session", id=line.id, status=line.status or None, cwd=line.cwd or None)
            return Translated([shown], kind, cwd=line.cwd or None)
        if kind == "user":
            return Translated([make.user(seq, ts, line.text)], kind)
        if kind == "assistant":
            calls = [ToolCall(call_id, name, args) for call_id, name, args in line.calls]
            if learn:
                for call in calls:
                    self._asked.setdefault(call.id, make.ms_of(ts))
            events = make.reply(seq, ts, line.text, calls, line.tokens_in, line.tokens_out, line.model)
            return Translated(events, kind, model=line.model or None)
        if kind == "result":
            took = make.elapsed(self._asked.get(line.id), ts)
            return Translated(make.answer(seq, ts, line.id, line.text, ok=line.ok, took=took), kind)
        return Translated([], kind, "unknown")


# --- recognising and finding ---------------------------------------------------------------------


def claims_file(path: Path, head: bytes) -> bool:
    """A JSON document as Cline writes a session's messages: an object with its agent, sessionId, origin and
    messages members."""
    if not head.lstrip().startswith(b"{"):
        return False
    return all(member in head for member in (b'"agent"', b'"sessionId"', b'"origin"', b'"messages"'))


def is_session_file(path: Path) -> bool:
    return path.name.endswith(SUFFIX)


def kept_with(path: Path) -> tuple[Path, ...]:
    """The session's status document (`<id>.json`, beside `<id>.messages.json`), which its reading asks."""
    return (path.with_name(path.name[: -len(SUFFIX)] + ".json"),) if path.name.endswith(SUFFIX) else ()


def session_id(path: Path) -> str:
    return path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else path.stem


# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("run_commands", "write_to_file", "replace_in_file", "editor"))

FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=Folder(
        env=ENV,
        root=variable_or_home(ENV, ".cline", "data/sessions"),
        suffix=SUFFIX,
        is_session_file=is_session_file,
        kept_with=kept_with,
    ),
    translator=ClineTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS),
    session_id=session_id,
    claims_file=claims_file,
    export=export,
)
