"""Continue CLI's sessions (`~/.continue/sessions/<session uuid>.json`), read as Wren events.

Continue (`cn`) keeps a session as one indented JSON document, `{sessionId, title,
workspaceDirectory, history, usage}`, written whole when a run ends (a killed run writes nothing);
`sessions.json` beside it is its index. Each `history` item is a message (`role`, `content`,
`toolCalls`, `usage` with the model) and, for an assistant message that asked for calls,
`toolCallStates`: each call's `status` (`done`, `errored`, or a state of a call still going) and
its `output`. The document records no time per message: every line gets the file's time.

The document is exported as lines (`export`), one per message and one per call's state after it;
the translator reads a line from its bytes alone.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from ..journal.errors import JournalError
from ..journal.events import ToolCall
from ..journal.reader import open_for_reading
from ..portable import pread
from . import make
from .base import Format, Kinds, Translated, Translator
from .document import ExportedLine, decode_document, decode_export
from .folders import Folder, variable_or_home

NAME = "continue"
LABEL = "Continue"
ENV = "CONTINUE_GLOBAL_DIR"
SUFFIX = ".json"
MAPPED = ("session", "user", "assistant", "result", "system")
SKIPPED = ()
INDEX = "sessions.json"
# The biggest document read (a session is rewritten whole; one this big is no session of a person's).
MAX_BYTES = 1 << 28


class _Function(msgspec.Struct):
    name: str = ""
    arguments: Any = None


class _Call(msgspec.Struct):
    id: str = ""
    function: _Function | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str | None = None


class _Message(msgspec.Struct, rename="camel"):
    role: str = ""
    content: Any = None
    tool_calls: list[_Call] | None = None
    usage: _Usage | None = None


class _State(msgspec.Struct, rename="camel"):
    tool_call_id: str = ""
    status: str = ""
    output: Any = None


class _Item(msgspec.Struct, rename="camel"):
    message: _Message | None = None
    tool_call_states: list[_State] | None = None


class _Document(msgspec.Struct, rename="camel"):
    session_id: str
    history: list[_Item]
    title: str | None = None
    workspace_directory: str | None = None


class _Line(ExportedLine):
    """One exported line: a message, or the state of one call it asked."""

    cwd: str = ""
    calls: list[tuple[str, str, str]] = msgspec.field(default_factory=list)  # (id, name, arguments)
    status: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    model: str = ""


_document = msgspec.json.Decoder(_Document)
_encode = msgspec.json.Encoder()
_decode = msgspec.json.Decoder(_Line)
# A call's states that hold its result.
_ENDED = frozenset(("done", "errored", "canceled", "cancelled"))


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else make.text_of(value)


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value if value is not None else {}).decode()


def _output(value: Any) -> str:
    """A call's output: the text of each of its items (`content`), joined."""
    if isinstance(value, list):
        return "\n".join(_text(item.get("content")) if isinstance(item, dict) else _text(item) for item in value)
    return _text(value)


def _read(path: Path) -> tuple[bytes, float]:
    fd = open_for_reading(path)
    try:
        st = os.fstat(fd)
        if st.st_size > MAX_BYTES:
            raise JournalError(f"{path}: {st.st_size:,} bytes, more than Wren reads of a Continue session")
        return pread(fd, st.st_size, 0), st.st_mtime
    finally:
        os.close(fd)


def export(path: Path) -> bytes:
    """The session as lines: its head, then each message and each call's state after the message that asked it."""
    data, mtime = _read(path)
    doc = decode_document(_document, data, path, LABEL)
    ts = datetime.fromtimestamp(mtime, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    lines = [_Line("session", ts, text=doc.title or "", id=doc.session_id, cwd=doc.workspace_directory or "")]
    for item in doc.history:
        message = item.message or _Message()
        used = message.usage or _Usage()
        calls = [
            (c.id, (c.function or _Function()).name, _arguments((c.function or _Function()).arguments))
            for c in message.tool_calls or []
        ]
        lines.append(
            _Line(
                message.role or "(no role)",
                ts,
                text=_text(message.content),
                calls=calls,
                tokens_in=used.prompt_tokens,
                tokens_out=used.completion_tokens,
                model=used.model or "",
            )
        )
        for state in item.tool_call_states or []:
            if state.status in _ENDED:
                lines.append(
                    _Line("result", ts, text=_output(state.output), id=state.tool_call_id, status=state.status)
                )
    return b"".join(_encode.encode(line) + b"\n" for line in lines)


class ContinueTranslator(Translator):
    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        line = decode_export(_decode, data, "an exported Continue session")
        seq, ts, kind = lineno, line.ts, line.type
        if kind == "session":
            shown = make.note(seq, ts, "session", id=line.id, title=line.text, cwd=line.cwd or None)
            return Translated([shown], kind, cwd=line.cwd or None)
        if kind == "user":
            return Translated([make.user(seq, ts, line.text)], kind)
        if kind == "assistant":
            calls = [ToolCall(call_id, name, args) for call_id, name, args in line.calls]
            events = make.reply(seq, ts, line.text, calls, line.tokens_in, line.tokens_out, line.model)
            return Translated(events, kind, model=line.model or None)
        if kind == "result":
            return Translated(make.answer(seq, ts, line.id, line.text, ok=line.status == "done", took=None), kind)
        if kind == "system":
            return Translated([make.note(seq, ts, "context", text=line.text)], kind)
        return Translated([], kind, "unknown")


# --- recognising and finding ---------------------------------------------------------------------


def claims_file(path: Path, head: bytes) -> bool:
    """A JSON document that starts as Continue writes a session: `{"sessionId": "...",` with its history and
    workspace members."""
    start = head.lstrip()
    if not start.startswith(b"{"):
        return False
    first = start[1:].lstrip()
    return first.startswith(b'"sessionId"') and b'"history"' in head and b'"workspaceDirectory"' in head


def is_session_file(path: Path) -> bool:
    """A session's document, not the index beside it."""
    return path.name != INDEX


# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("Bash", "Write", "Edit", "MultiEdit"))

FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=Folder(
        env=ENV, root=variable_or_home(ENV, ".continue", "sessions"), suffix=SUFFIX, is_session_file=is_session_file
    ),
    translator=ContinueTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS),
    claims_file=claims_file,
    export=export,
)
