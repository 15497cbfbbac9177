"""A format of an agent that does not exist ("Toy"), written as a new format is: one module with a `FORMAT`.

Its lines are its own shape, told apart by a "toy" member: `start` (the session's folder), `say` (a person
or the agent speaking), `call` (a tool asked for: `peek` reads, `scribble` writes) and `done` (a call's
result). Registered for a test alone (`tests/tui/test_toy_format.py` puts it into `FORMATS`), it must be
found by every command and screen that lists, reads, searches or filters other agents' sessions.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from wren_tui.foreign import make
from wren_tui.foreign.base import BadLine, Format, Kinds, Translated, Translator, not_json
from wren_tui.foreign.folders import Folder
from wren_tui.journal.events import ToolCall

NAME = "toy"
LABEL = "Toy Agent"
ENV = "TOY_AGENT_DIR"
WRITE_TOOLS = frozenset({"scribble"})  # `peek` only reads
MAPPED = ("start", "say", "call", "done")
SKIPPED = ("tick",)  # the toy agent's clock ticks: bookkeeping


class _Line(msgspec.Struct, tag_field="toy", kw_only=True):
    at: str


class _Start(_Line, tag="start"):
    dir: str


class _Say(_Line, tag="say"):
    who: str
    text: str


class _Call(_Line, tag="call"):
    id: str
    tool: str
    args: dict[str, Any] = {}


class _Done(_Line, tag="done"):
    id: str
    out: str
    ok: bool = True


class _Tick(_Line, tag="tick"):
    pass


_decoder = msgspec.json.Decoder(_Start | _Say | _Call | _Done | _Tick)
_any = msgspec.json.Decoder()


class ToyTranslator(Translator):
    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        try:
            line = _decoder.decode(data)
        except msgspec.ValidationError:
            try:
                value = _any.decode(data)
            except msgspec.DecodeError as exc:
                raise not_json(exc) from None
            if not isinstance(value, dict):
                raise BadLine("it is JSON but not an object") from None
            return Translated([], str(value.get("toy")), "unknown")
        except msgspec.DecodeError as exc:
            raise not_json(exc) from None
        kind = str(line.__struct_config__.tag)
        if isinstance(line, _Start):
            return Translated([make.note(lineno, line.at, "session", cwd=line.dir)], kind, cwd=line.dir)
        if isinstance(line, _Say):
            said = (
                make.user(lineno, line.at, line.text)
                if line.who == "person"
                else make.assistant(lineno, line.at, line.text)
            )
            return Translated([said], kind)
        if isinstance(line, _Call):
            call = ToolCall(line.id, line.tool, msgspec.json.encode(line.args).decode())
            return Translated([make.assistant(lineno, line.at, "", [call])], kind)
        if isinstance(line, _Done):
            return Translated(make.answer(lineno, line.at, line.id, line.out, ok=line.ok, took=None), kind)
        return Translated([], kind, "skipped")


def claims(line: dict[str, Any]) -> bool:
    return line.get("toy") in (*MAPPED, *SKIPPED) and "at" in line


def root(env: Mapping[str, str], home: Path) -> Path:
    """$TOY_AGENT_DIR, else ~/.toy/sessions."""
    base = env.get(ENV)
    return Path(base).expanduser() if base else home / ".toy" / "sessions"


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=Folder(env=ENV, root=root),
    translator=ToyTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
)


def session(started: str = "2026-12-01T09:00:00Z") -> bytes:
    """A toy session: a question, a call that reads, a call that writes, their results, and the answer."""
    at = started[:-3]
    lines: list[dict[str, Any]] = [
        {"toy": "start", "at": started, "dir": "/home/toy/garden"},
        {"toy": "say", "at": f"{at}:01Z", "who": "person", "text": "Plant a marigold in the toy garden"},
        {"toy": "call", "at": f"{at}:02Z", "id": "c1", "tool": "peek", "args": {"path": "garden.txt"}},
        {"toy": "done", "at": f"{at}:03Z", "id": "c1", "out": "tulip, rose"},
        {"toy": "tick", "at": f"{at}:04Z"},
        {"toy": "call", "at": f"{at}:05Z", "id": "c2", "tool": "scribble", "args": {"path": "garden.txt"}},
        {"toy": "done", "at": f"{at}:06Z", "id": "c2", "out": "wrote garden.txt"},
        {"toy": "say", "at": f"{at}:07Z", "who": "agent", "text": "The marigold is planted beside the rose."},
    ]
    return b"".join(msgspec.json.encode(line) + b"\n" for line in lines)
