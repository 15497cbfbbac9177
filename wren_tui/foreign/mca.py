"""The design's own journals ("mca"): JSON lines in the event-log format Wren comes from, read as another agent's.

Each line is `{"seq", "ts", "type", ...}` with that type's fields, as Wren's own events have them
(`message` with `toolCalls`, `tool_end` with a `result` object holding `ok` and `content`), and no
`crc`: nothing proves a line whole, so such a file is never trusted as a Wren journal (it is read,
shown, searched and forked into a new Wren journal, never resumed in place). It is recognised by
positive evidence only (`claims_head`): every whole line of its start is such a line without a
crc, and its name is not a Wren session's. A Wren journal one of whose lines lost its crc is
still damage: its name is a Wren session's, or another of its lines has a crc. A line with a crc
further on stops the reading here too: a file with one is a damaged Wren journal, not the design's.

A document opened by its path (and listed by `--dir`): the design keeps no folder Wren knows.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..journal.events import Error, KnownEvent, Message, RunStart, ToolEnd, ToolStart, Usage, to_builtins
from ..journal.store import is_session_id
from . import make
from .base import BadLine, Format, Kinds, Translated, Translator, not_json
from .folders import Folder

NAME = "mca"
LABEL = "design journal (mca)"  # "a design journal (mca) session", "an ATIF trajectory, a design journal (mca) or ..."
ENV = ""  # a document opened by its path: no folder of its own
MAPPED = ("run_start", "message", "tool_start", "tool_end", "usage", "error")
SKIPPED = ()
WHERE = "an mca journal (the design's own) is read by its path or in a folder given with --dir"
# How many whole lines of a file's start are looked at to recognise it.
_LINES = 8
_events = msgspec.json.Decoder(KnownEvent)
_any = msgspec.json.Decoder()
# A line of a Wren journal with its crc, as the writer ends it (`journal._framing`).
_CRC = b'"crc":'
WREN_LINE = "it has a crc, as a Wren journal's line has: this is a damaged Wren journal, not an mca journal"


def _a_line(value: object) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("seq"), int)
        and not isinstance(value.get("seq"), bool)
        and isinstance(value.get("ts"), str)
        and isinstance(value.get("type"), str)
        and "crc" not in value
    )


def claims_head(head: bytes, name: str) -> bool:
    """Whether a file named `name` that starts with `head` is an mca journal: at least one whole line, every whole
    line of its start (up to 8) an object with an integer seq, a string ts and type, and no crc; its name not a
    Wren session's (`s-YYYYMMDD-HHMMSS-xxxx.jsonl`)."""
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
    if is_session_id(stem):
        return False
    whole = [line for line in head.split(b"\n")[:-1][:_LINES] if line.strip()]
    if not whole:
        return False
    for line in whole:
        try:
            value = _any.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return False
        if not _a_line(value):
            return False
    return True


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return make.text_of(value) if value is not None else ""


class McaTranslator(Translator):
    """Remembers the calls a tool_end answered with its result (a tool message for one after it is not shown twice)
    and when each call was asked."""

    def __init__(self) -> None:
        self._answered: set[str] = set()
        self._asked: dict[str, int | None] = {}

    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        try:
            raw = _any.decode(data)
        except msgspec.DecodeError as exc:
            raise not_json(exc) from None
        except RecursionError:
            raise BadLine("its JSON is nested too deeply to read") from None
        if not isinstance(raw, dict):
            raise BadLine("it is JSON but not an object")
        if "crc" in raw:
            raise BadLine(WREN_LINE)
        kind, ts = raw.get("type"), raw.get("ts")
        kind = kind if isinstance(kind, str) else "(no type)"
        ts = ts if isinstance(ts, str) else ""
        try:
            event = _events.decode(data)
        except msgspec.ValidationError as exc:
            if kind in MAPPED:
                return Translated([make.note(lineno, ts, make.MALFORMED, kind=kind, why=str(exc))], kind, "malformed")
            fields = {k: v for k, v in raw.items() if k not in ("seq", "ts", "type")}
            return Translated([make.note(lineno, ts, kind, **fields)], kind)
        event = msgspec.structs.replace(event, seq=lineno)
        if isinstance(event, RunStart):
            shown = make.note(lineno, ts, "session", cwd=event.cwd, model=event.model, version=event.version)
            return Translated([shown], kind, cwd=event.cwd or None, model=event.model or None)
        if isinstance(event, Message):
            msg = event.message
            if learn:
                for call in msg.tool_calls or ():
                    self._asked.setdefault(call.id, make.ms_of(ts))
            hidden = frozenset({0}) if msg.role == "tool" and msg.tool_call_id in self._answered else frozenset()
            return Translated([event], kind, hidden=hidden)
        if isinstance(event, ToolEnd):
            result = event.result or {}
            if "content" not in result and "output" not in result:
                return Translated([event], kind)  # its result comes as a tool message after it
            if learn:
                self._answered.add(event.id)
            ok = result.get("ok") if isinstance(result.get("ok"), bool) else event.ok
            took = event.elapsed_ms if event.elapsed_ms is not None else make.elapsed(self._asked.get(event.id), ts)
            text = _text(result.get("content", result.get("output")))
            return Translated(make.answer(lineno, ts, event.id, text, ok=ok, took=took), kind)
        if isinstance(event, (ToolStart, Usage, Error)):
            return Translated([event], kind, model=event.model or None if isinstance(event, Usage) else None)
        fields = {k: v for k, v in to_builtins(event).items() if k not in ("seq", "ts", "type")}
        return Translated([make.note(lineno, ts, kind, **fields)], kind)


# --- recognising and finding ---------------------------------------------------------------------


def claims(_line: dict[str, Any]) -> bool:
    return False  # recognised by the file's start and name (`claims_head`), never by one line alone


def root(env: Mapping[str, str], home: Path) -> Path:
    return Path.cwd()  # no folder of its own: opened by path, listed by --dir


def session_id(path: Path) -> str:
    return path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.stem


# Its tools that change the workspace, as the design names them.
WRITE_TOOLS = frozenset(("run_command", "write_file", "edit_file"))

FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=Folder(env=ENV, root=root, own_folder=False, where=WHERE),
    translator=McaTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    session_id=session_id,
)
