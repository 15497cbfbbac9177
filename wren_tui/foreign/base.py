"""What every format reader shares: one line of another agent's session in, Wren events out.

A line is translated on its own, by `Translator.translate`: the events it gives (their number and
kinds) depend only on its bytes, so a viewer can decode any line again by its byte span and its
place among the line's events. What a line cannot say alone (when the call it answers was asked,
how much of a usage its message's earlier lines already counted) comes from the translator's
memory of the lines before it: it fills values and may hide an event from a reading (`hidden`),
never change which events there are. Seq is the line's number in the file, from 1.
"""

from __future__ import annotations

import functools
import operator
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, cast

import msgspec

from ..journal.events import ChatMessage, Error, Event, Message, ToolCall, ToolEnd, UnknownEvent, Usage

S = TypeVar("S", bound=msgspec.Struct)
_T = TypeVar("_T")

Verdict = Literal["mapped", "skipped", "unknown", "malformed"]
"""What became of a line: translated into events; a known kind left out on purpose (the clients'
bookkeeping); a kind this version does not know (a newer client); a known kind whose fields do not
fit (shown as a note saying why)."""

# The kinds of note a foreign line may give, beside Wren's own events.
THINKING = "thinking"
MALFORMED = "not understood"
# A compaction whose note holds the summary the agent went on from (Codex, pi; `keep`: pi's first entry kept).
COMPACTION = "compaction"
# A compaction whose summary follows as the next user message (Claude Code).
COMPACTION_BOUNDARY = "compaction boundary"


class BadLine(Exception):
    """A line that is not a JSON object: reading stops there, as at a damaged line of a Wren journal."""


@dataclass(slots=True)
class Node:
    """A line's place in the file's tree of entries (pi's id/parentId, Claude Code's uuid/parentUuid)."""

    id: str
    parent: str | None
    # Claude Code: a compaction boundary starts a new root whose logical parent is the entry before it.
    logical_parent: str | None = None
    # Claude Code: a subagent's entry, never on the main branch.
    side: bool = False


@dataclass(slots=True)
class Translated:
    """One line, translated: every event it gives, in order, and what the line was."""

    events: list[Event]
    kind: str
    verdict: Verdict = "mapped"
    node: Node | None = None
    # Places (in `events`) the reading leaves out: what the memory says earlier lines already gave.
    hidden: frozenset[int] = frozenset()
    # The workspace and the model the line names, if any: a listing's project, a fork's run_start.
    cwd: str | None = None
    model: str | None = None


@dataclass
class Skipped:
    """Lines left out of a reading, by kind: bookkeeping on purpose, unknown kinds, malformed lines."""

    known: Counter[str] = field(default_factory=Counter)
    unknown: Counter[str] = field(default_factory=Counter)
    malformed: Counter[str] = field(default_factory=Counter)

    def count(self, line: Translated) -> None:
        if line.verdict == "skipped":
            self.known[line.kind] += 1
        elif line.verdict == "unknown":
            self.unknown[line.kind] += 1
        elif line.verdict == "malformed":
            self.malformed[line.kind] += 1

    def sentence(self) -> str | None:
        """What was left out, in one line a person reads; None when every line was translated."""
        parts = []
        if self.known:
            parts.append("not shown: " + _kinds(self.known))
        if self.unknown:
            parts.append("kinds this version does not know: " + _kinds(self.unknown))
        if self.malformed:
            parts.append("lines whose fields did not fit: " + _kinds(self.malformed))
        return "; ".join(parts) or None

    def as_json(self) -> dict[str, dict[str, int]]:
        return {"known": dict(self.known), "unknown": dict(self.unknown), "malformed": dict(self.malformed)}


def _kinds(counts: Counter[str]) -> str:
    return ", ".join(f"{kind} ×{n}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


class Translator(ABC):
    """Translates one session's lines; remembers, line by line, what later lines need.

    `translate(..., learn=True)` is for a line read for the first time, in file order; `learn=False`
    decodes a line read before (the memory is only looked at). BadLine for a line that is not a
    JSON object.
    """

    @abstractmethod
    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated: ...


# --- helpers the formats share ---------------------------------------------------------------


def ms_of(ts: str | None) -> int | None:
    """An ISO-8601 time as milliseconds since the epoch; None for anything else."""
    if not ts:
        return None
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def elapsed(asked: int | None, answered: str | None) -> int | None:
    """Milliseconds from a call's asking to its answer's line; None when either is unknown."""
    end = ms_of(answered)
    if asked is None or end is None:
        return None
    return max(end - asked, 0)


def union(kinds: tuple[type, ...]) -> Any:
    """The union of some Struct classes, for a decoder that picks one by its tag."""
    return functools.reduce(operator.or_, kinds)


def tagged(base: type[S], kinds: tuple[str, ...]) -> tuple[type[S], ...]:
    """A Struct class per kind, with `base`'s fields and no more: lines decoded only to be counted."""
    return tuple(cast(type[S], msgspec.defstruct(f"_{i}", [], bases=(base,), tag=kind)) for i, kind in enumerate(kinds))


# A raw field that was absent (msgspec keeps no Optional Raw).
NO_RAW = msgspec.Raw(b"")


def raw_text(raw: msgspec.Raw) -> str:
    """A field kept as raw JSON, as its JSON text (the arguments a model wrote, exactly)."""
    return bytes(raw).decode("utf-8", "replace")


def text_of(content: Any, *, image: str = "[image]") -> str:
    """The text of a content value: a string, or a list of blocks whose text parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif block.get("type") in ("image", "input_image", "image_url"):
                    parts.append(image)
        return "\n".join(parts)
    return msgspec.json.encode(content).decode()


def user(seq: int, ts: str, text: str) -> Message:
    return Message(seq=seq, ts=ts, message=ChatMessage(role="user", content=text))


def assistant(seq: int, ts: str, text: str, calls: list[ToolCall] | None = None) -> Message:
    return Message(seq=seq, ts=ts, message=ChatMessage(role="assistant", content=text, toolCalls=calls or None))


def answer(seq: int, ts: str, call_id: str, text: str, *, ok: bool | None, took: int | None) -> list[Event]:
    """A call's end and its result, as Wren journals them: a tool_end, then the tool message."""
    return [
        ToolEnd(seq=seq, ts=ts, id=call_id, ok=ok, elapsedMs=took, chars=len(text)),
        Message(seq=seq, ts=ts, message=ChatMessage(role="tool", content=text, toolCallId=call_id)),
    ]


def note(seq: int, ts: str, what: str, **fields: Any) -> UnknownEvent:
    """A line Wren has no event for, shown as a note with the fields that say what it was."""
    return UnknownEvent(seq=seq, ts=ts, type=what, fields={k: v for k, v in fields.items() if v not in (None, "")})


def thinking(seq: int, ts: str, text: str) -> UnknownEvent:
    """A reasoning or thinking block: a note of its own, folded like a long text."""
    return UnknownEvent(seq=seq, ts=ts, type=THINKING, fields={"text": text})


def usage(seq: int, ts: str, tokens_in: int, tokens_out: int, model: str | None) -> Usage:
    return Usage(seq=seq, ts=ts, inputTokens=tokens_in, outputTokens=tokens_out, model=model or "")


def error(seq: int, ts: str, text: str) -> Error:
    return Error(seq=seq, ts=ts, message=text)


def malformed(seq: int, ts: str, kind: str, why: Exception) -> Translated:
    """A known kind whose fields do not fit: a note that says so, and the line counted as malformed."""
    return Translated([note(seq, ts, MALFORMED, kind=kind, why=str(why))], kind, "malformed")


class Envelope(msgspec.Struct):
    """Only the kind of a line (and its time), for lines the typed decoder refused."""

    type: Any = None
    timestamp: Any = None


_envelope = msgspec.json.Decoder(Envelope)


def refused(seq: int, data: bytes, exc: msgspec.ValidationError, known: frozenset[str]) -> Translated:
    """A line the typed decoder refused: an unknown kind (counted), a known kind that does not fit (a
    note), or not a JSON object at all (BadLine)."""
    try:
        env = _envelope.decode(data)
    except msgspec.ValidationError:
        raise BadLine("it is JSON but not an object") from None
    except msgspec.DecodeError as bad:  # a value, then more: the typed decoder refused the first before seeing them
        raise not_json(bad) from None
    kind = env.type if isinstance(env.type, str) else "(no type)"
    ts = env.timestamp if isinstance(env.timestamp, str) else ""
    if kind in known:
        return malformed(seq, ts, kind, exc)
    return Translated([], kind, "unknown")


def decode_line(decoder: msgspec.json.Decoder[_T], seq: int, data: bytes, known: frozenset[str]) -> _T | Translated:
    """The line as `decoder` types it; what `refused` makes of one it cannot type (check with isinstance
    Translated); BadLine for one that is not JSON. Every format's translator starts here."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        return refused(seq, data, exc, known)
    except msgspec.DecodeError as exc:
        raise not_json(exc) from None


def not_json(exc: msgspec.DecodeError) -> BadLine:
    """Why a line that msgspec could not parse at all stops the reading."""
    return BadLine("its bytes are not valid UTF-8" if "UTF-8" in str(exc) else "it is not JSON")


@dataclass(frozen=True)
class Tail:
    """The last whole lines of a session's export, made without exporting what comes before them.

    A big session's viewer shows these before its first frame and exports the whole session
    afterwards (`tui/sources/exported.py`). `lines` are byte for byte how the whole export ends.
    """

    lines: bytes
    before: int  # how many lines of the whole export come before them


Progress = Callable[[float], object]


class Follower(Protocol):
    """One session's export, made again as the session changes (`Format.follower`)."""

    def __call__(self, progress: Progress | None = None) -> bytes:
        """The whole export as the session is now; `progress` is told how much of it is made (0 to 1) now and then."""
        ...

    def tail(self, least: int) -> Tail | None:
        """Its last lines, at least `least` bytes of the session's own, starting where the export's state starts
        afresh; None when the session is not much bigger than that (export it whole) or cannot be cut."""
        ...


@dataclass
class _Exports:
    """A format's `export` of one path, made again each time, as a `Follower` (no tail alone)."""

    path: Path
    export: Callable[[Path], bytes]

    def __call__(self, progress: Progress | None = None) -> bytes:
        return self.export(self.path)

    def tail(self, least: int) -> Tail | None:
        return None


@dataclass(frozen=True)
class Format:
    """One agent's session files: how to translate them, recognise them and find them."""

    def follower(self, path: Path) -> Follower:
        """The export of the session at `path`, to call again as it changes (an exported format's)."""
        if self.exporter is not None:
            return self.exporter(path)
        assert self.export is not None, "a session read as it is, not exported"
        return _Exports(path, self.export)

    name: str  # as --agent takes it: claude, codex, pi
    label: str  # as a person knows the agent: Claude Code
    env: str  # the variable naming the agent's own folder, when set
    translator: Callable[[], Translator]
    # Whether one decoded line (of the first few) is this agent's.
    claims: Callable[[dict[str, Any]], bool]
    # The folder of sessions: from the environment and the home folder.
    root: Callable[[Mapping[str, str], Path], Path]
    session_id: Callable[[Path], str]
    # A line's place in the file's tree, read cheaply; None for a format whose lines are one sequence.
    node_of: Callable[[bytes], Node | None] | None
    is_session_file: Callable[[Path], bool]
    mapped: tuple[str, ...]
    skipped: tuple[str, ...]
    # The session's tokens so far, from a line that carries the running total (None: no such line here).
    totals: Callable[[bytes], int | None] = lambda _line: None
    # The tokens one line records, read without translating it (None: the line is translated to know).
    tokens_of: Callable[[bytes], int] | None = None
    # How its session files' names end (a folder is searched for these).
    suffix: str = ".jsonl"
    # Positive evidence from the file itself (its first bytes, and what they lead to), for a format
    # whose files are not JSON lines (OpenCode's database, aider's Markdown).
    claims_file: Callable[[Path, bytes], bool] | None = None
    # A session that is not JSON lines, as lines its translator reads (`foreign.exported`): built
    # from the file, which is only read. None: the file is read as it is.
    export: Callable[[Path], bytes] | None = None
    # Every session a file holds, by path, as `export` gives each (OpenCode: one database, many).
    export_all: Callable[[Path], dict[Path, bytes]] | None = None
    # For following: the export of one session, to call again as it changes (the last export is kept
    # while the files are unchanged; OpenCode keeps its copy of the database), and its tail alone
    # for a big session's first frame. None: `export` each time.
    exporter: Callable[[Path], Follower] | None = None
    # Whether a search for its files goes into hidden folders (.git, .venv: not where aider writes).
    hidden_folders: bool = True
    # Whether its default folder is the agent's own (False: aider writes beside each project, and its
    # "folder" is wherever Wren is run), so that a Wren fork is never written inside it.
    own_folder: bool = True
    # What the agent never records, said where its sessions are shown ("aider records no tool calls").
    unrecorded: str | None = None
    # Whether a call is written before its result; False (Gemini CLI: a call only with its result) means
    # a session never shows a call open, and one whose last record is a reply may have been stopped in a tool.
    open_calls_recorded: bool = True
    # For a format that is one document rather than a line per object (ATIF): the units it is read in,
    # as `reader.units` gives them, (fd, start, stop) -> (start, bytes) with `looked`. None: by newlines.
    frames: Callable[[int, int, int | None], Frames] | None = None


class Frames(Protocol):
    """Units of a file from one offset on, (start, bytes) each; the byte after each unit is its delimiter."""

    looked: int

    def __iter__(self) -> Iterator[tuple[int, bytes]]: ...
