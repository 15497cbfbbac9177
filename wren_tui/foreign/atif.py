"""ATIF trajectories (Agent Trajectory Interchange Format: Harbor, OpenHands, Wren's own exports), read as Wren events.

An ATIF file is one JSON document, not one object a line: `{"schema_version": "ATIF-v1.x", "agent":
{...}, "steps": [{...}, ...], "final_metrics": {...}}`, often pretty-printed. It is read in the same
units every other format is, each a byte span translated on its own (so the viewer decodes it again
by its span), found by `frames` instead of by newlines:

- the head: the document from its start up to the `[` of its steps (translated as that text with
  `null}` after it): who the agent is, the model, the session;
- one unit per step object;
- the tail: what follows the steps (the totals), translated as `{"steps":null` before it.

The byte after each unit is its delimiter (`[`, `,`, `]` or the document's `}`), as a newline is
after a line. Seq is the unit's number: 1 is the head, step N is seq N + 1. A user step is a user
message; an agent step is the assistant's message (its reasoning kept), the step's usage, and for
each observation result the call's end and its tool message; a system step is a note, or the Wren
event it was exported from (`extra.wren_event`). A result that Wren exported for a call that never
gave one (outcome unknown, stopped, never started) gives the call's start and end as they were and
no tool message, so it reads as open again, never as success.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..journal.events import (
    KNOWN_TYPES,
    ChatMessage,
    Delta,
    Event,
    KnownEvent,
    Message,
    Reasoning,
    ToolCall,
    ToolEnd,
    ToolStart,
    Usage,
)
from ..portable import pread
from . import make
from .base import BadLine, Format, Kinds, Translated, Translator, not_json
from .folders import Folder

NAME = "atif"
LABEL = "ATIF trajectory"
ENV = ""  # a document opened by its path: no folder of its own
MAPPED = ("head", "user", "agent", "system", "tail")
SKIPPED = ()

_any = msgspec.json.Decoder()
_encode = msgspec.json.Encoder()
# Positive evidence: an object whose schema_version is an ATIF tag (escaped quotes inside a string do not match).
_SIGNATURE = re.compile(rb'\A\s*\{.*?"schema_version"\s*:\s*"ATIF-v\d', re.DOTALL)
_WHITESPACE = b" \t\r\n"
# How deep a unit's values may nest: deeper is refused in one sentence (a recursive decoder, and every
# reader of the events after it, would run out of stack).
MAX_DEPTH = 200
_TOO_DEEP = f"its JSON is nested more than {MAX_DEPTH} deep"
# The longest message (a step's text, reasoning or observation) read whole: longer ones are clipped with a
# sentence saying so, so what is shown, forked or sent holds no more (the document itself is read whole).
MESSAGE_CAP = 8 << 20
# Where a JSON string starts, or a bracket that nests.
_STRUCTURE = re.compile(rb'["\[\]{}]')
_KEY = re.compile(rb'\s*("(?:[^"\\]|\\.)*")\s*:\s*', re.DOTALL)


def claims_head(head: bytes) -> bool:
    """Whether a file starting with `head` is an ATIF trajectory: an object with `"schema_version": "ATIF-v…"`."""
    return _SIGNATURE.match(head[: 1 << 16]) is not None


# --- the document's units --------------------------------------------------------------------------


class _Broken(Exception):
    """The document's structure breaks at `at`."""

    def __init__(self, at: int) -> None:
        self.at = at


def _skip_ws(data: bytes, at: int) -> int:
    size = len(data)
    while at < size and data[at] in _WHITESPACE:
        at += 1
    return at


def _string_end(data: bytes, at: int) -> int:
    """Just past the JSON string whose opening quote is at `at` (a closing quote is one after an even run of
    backslashes). Found with `find`, so a string of 100 MB costs no memory beside the document."""
    look = at + 1
    while True:
        quote = data.find(b'"', look)
        if quote < 0:
            raise _Broken(len(data))
        before = quote - 1
        while before > at and data[before] == 0x5C:  # each backslash run ends at this quote: linear in all
            before -= 1
        if (quote - 1 - before) % 2 == 0:
            return quote + 1
        look = quote + 1


def _value_end(data: bytes, at: int) -> int:
    """Just past the JSON value that starts at `at` (its structure only: strings and brackets)."""
    if at >= len(data):
        raise _Broken(at)
    first = data[at : at + 1]
    if first == b'"':
        return _string_end(data, at)
    if first not in (b"{", b"["):
        end = at
        while end < len(data) and data[end : end + 1] not in (b",", b"}", b"]") and data[end] not in _WHITESPACE:
            end += 1
        if end == at:
            raise _Broken(at)
        return end
    depth, look = 0, at
    while (found := _STRUCTURE.search(data, look)) is not None:
        token = found.group()
        if token == b'"':
            look = _string_end(data, found.start())
            continue
        look = found.end()
        if token in (b"{", b"["):
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return look
    raise _Broken(len(data))


def depth_of(data: bytes, most: int) -> int:
    """How deep the brackets of `data` nest, counted up to `most + 1` (strings skipped); cheap when it has few."""
    if data.count(b"[") + data.count(b"{") <= most:
        return 0  # too few brackets to nest past `most`, wherever they are
    depth = deepest = 0
    look = 0
    while (found := _STRUCTURE.search(data, look)) is not None:
        token = found.group()
        if token == b'"':
            try:
                look = _string_end(data, found.start())
            except _Broken:
                break
            continue
        look = found.end()
        if token in (b"{", b"["):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > most:
                    break
        else:
            depth -= 1
    return deepest


def spans(data: bytes) -> tuple[list[tuple[int, int]], int | None]:
    """The units of a document: (start, end) of the head, each step and the tail; where it breaks, if it does.

    Each unit's end is the offset of the byte that delimits it (not part of it).
    """
    found: list[tuple[int, int]] = []
    try:
        at = _skip_ws(data, 0)
        if data[at : at + 1] != b"{":
            raise _Broken(at)
        at += 1
        while True:
            at = _skip_ws(data, at)
            if data[at : at + 1] == b"}":
                raise _Broken(at)  # no steps at all
            key = _KEY.match(data, at)
            if key is None:
                raise _Broken(at)
            at = key.end()
            if key.group(1) == b'"steps"':
                if data[at : at + 1] != b"[":
                    raise _Broken(at)
                found.append((0, at))
                at += 1
                break
            at = _skip_ws(data, _value_end(data, at))
            if data[at : at + 1] != b",":
                raise _Broken(at)
            at += 1
        at = _skip_ws(data, at)
        if data[at : at + 1] != b"]":
            while True:
                end = _value_end(data, at)
                found.append((at, end))
                at = _skip_ws(data, end)
                if data[at : at + 1] == b"]":
                    break
                if data[at : at + 1] != b",":
                    raise _Broken(at)
                at = _skip_ws(data, at + 1)
        # The tail: after the `]` up to the document's last byte (its `}`, or the whitespace after it).
        last = len(data.rstrip(_WHITESPACE)) - 1
        if last <= at or data[last : last + 1] != b"}":
            raise _Broken(at + 1)
        found.append((at + 1, len(data) - 1))
    except _Broken as broken:
        return found, broken.at
    return found, None


class DocumentFrames:
    """The units of the document read through `fd` from `start` (up to `stop`): (start, bytes) as `reader.Lines`.

    A document that breaks gives its whole units, then the rest from where the next unit would
    start as one unit, which does not translate (reading stops there, with its unit and byte).
    """

    def __init__(self, fd: int, start: int, stop: int | None = None, size: int = 0) -> None:
        self.fd, self.start, self.stop = fd, start, stop
        self.looked = start

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        end = os.fstat(self.fd).st_size if self.stop is None else self.stop
        parts, offset = [], 0
        while offset < end:
            chunk = pread(self.fd, min(1 << 24, end - offset), offset)
            if not chunk:
                break
            parts.append(chunk)
            offset += len(chunk)
        data = b"".join(parts)
        self.looked = len(data)
        found, broken = spans(data)
        for begin, finish in found:
            if begin >= self.start:
                yield begin, data[begin:finish]
        if broken is not None:
            begin = found[-1][1] + 1 if found else 0
            if begin >= self.start and begin < len(data):
                yield begin, data[begin:]


def frames(fd: int, start: int, stop: int | None = None, size: int = 0) -> DocumentFrames:
    return DocumentFrames(fd, start, stop, size)


# --- translating a unit -------------------------------------------------------------------------------


def _object(data: bytes, before: bytes = b"", after: bytes = b"") -> dict[str, Any] | None:
    """The unit as an object (None: not one); BadLine for one nested past `MAX_DEPTH` (reading stops there)."""
    if depth_of(data, MAX_DEPTH) > MAX_DEPTH:
        raise BadLine(_TOO_DEEP)
    try:
        value = _any.decode(before + data + after if before or after else data)
    except msgspec.DecodeError:
        return None
    except RecursionError:  # nearer the stack's limit than MAX_DEPTH leaves room for
        raise BadLine(_TOO_DEEP) from None
    return value if isinstance(value, dict) else None


def _text(value: Any) -> str:
    text = make.text_of(value) if value is not None else ""
    return clipped(text) if len(text) > MESSAGE_CAP else text


def clipped(text: str) -> str:
    """A message past `MESSAGE_CAP` characters: its first `MESSAGE_CAP`, and a sentence saying how much is left out."""
    return text[:MESSAGE_CAP] + (
        f"\n[Wren clipped this message here: {len(text) - MESSAGE_CAP:,} more characters of it are left out "
        f"(an ATIF message is read up to {MESSAGE_CAP:,} characters)]"
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class AtifTranslator(Translator):
    """One unit of an ATIF document in, Wren events out; it remembers the model the head names."""

    def __init__(self) -> None:
        self.model: str | None = None

    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        stripped = data.lstrip(_WHITESPACE)
        if stripped[:1] != b"{":
            return self._tail(lineno, data)
        step = _object(data)
        if step is not None and "steps" not in step and "schema_version" not in step:
            return self._step(lineno, step)
        head = step if step is not None else _object(data, after=b"null}")
        if head is None:
            try:
                _any.decode(data)
            except msgspec.DecodeError as exc:
                raise not_json(exc) from None
            raise BadLine("it is not a part of an ATIF trajectory")
        return self._head(lineno, head, learn)

    def _head(self, seq: int, head: dict[str, Any], learn: bool) -> Translated:
        agent = head.get("agent") if isinstance(head.get("agent"), dict) else {}
        assert isinstance(agent, dict)
        model = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
        if learn:
            self.model = model
        extra = head.get("extra") if isinstance(head.get("extra"), dict) else {}
        assert isinstance(extra, dict)
        wren = extra.get("wren") if isinstance(extra.get("wren"), dict) else {}
        assert isinstance(wren, dict)
        cwd = wren.get("cwd") if isinstance(wren.get("cwd"), str) else None
        fields = {
            "schema_version": head.get("schema_version"),
            "agent": agent.get("name"),
            "version": agent.get("version"),
            "model": model,
            "session": head.get("session_id"),
            "notes": head.get("notes"),
        }
        return Translated([make.note(seq, "", "trajectory", **fields)], "head", model=model, cwd=cwd)

    def _tail(self, seq: int, data: bytes) -> Translated:
        body = data.rstrip(_WHITESPACE)
        tail = _object(body[:-1], b'{"steps":null', b"}") if body.endswith(b"}") else None
        if tail is None:
            tail = _object(data, b'{"steps":null', b"}")
        if tail is None:
            raise BadLine("it is not the end of an ATIF trajectory")
        metrics = tail.get("final_metrics")
        if not isinstance(metrics, dict):
            return Translated([], "tail", "skipped")
        fields = {
            "prompt_tokens": metrics.get("total_prompt_tokens"),
            "completion_tokens": metrics.get("total_completion_tokens"),
            "steps": metrics.get("total_steps"),
            "cost_usd": metrics.get("total_cost_usd"),
        }
        return Translated([make.note(seq, "", "final metrics", **fields)], "tail")

    def _step(self, seq: int, step: dict[str, Any]) -> Translated:
        ts = step.get("timestamp") if isinstance(step.get("timestamp"), str) else ""
        assert isinstance(ts, str)
        source = step.get("source")
        text = _text(step.get("message"))
        extra = step.get("extra") if isinstance(step.get("extra"), dict) else {}
        assert isinstance(extra, dict)
        if source == "user":
            msg = Message(seq=seq, ts=ts, message=ChatMessage(role="user", content=text))
            return Translated([msg], "user")
        if source == "agent":
            return self._agent(seq, ts, text, step, extra)
        if source == "system":
            return Translated([self._system(seq, ts, text, step, extra)], "system")
        kind = source if isinstance(source, str) else "(no source)"
        return Translated(
            [make.note(seq, ts, "not understood", kind=kind, why="a step whose source is not user, agent or system")],
            kind,
            "malformed",
        )

    @staticmethod
    def _system(seq: int, ts: str, text: str, step: dict[str, Any], extra: dict[str, Any]) -> Event:
        event = extra.get("wren_event")
        if isinstance(event, dict) and event.get("type") in KNOWN_TYPES and event.get("type") != "message":
            try:
                known: KnownEvent = msgspec.convert({**event, "seq": seq, "ts": ts}, KnownEvent)
            except msgspec.ValidationError:
                pass
            else:
                return known
        results = (step.get("observation") or {}).get("results") if isinstance(step.get("observation"), dict) else None
        said = [_text(r.get("content")) for r in results or () if isinstance(r, dict)]
        return make.note(seq, ts, "system", text=text, observation="\n".join(said) or None)

    def _agent(self, seq: int, ts: str, text: str, step: dict[str, Any], extra: dict[str, Any]) -> Translated:
        thought = _text(step["reasoning_content"]) if isinstance(step.get("reasoning_content"), str) else None
        model = step.get("model_name") if isinstance(step.get("model_name"), str) else self.model
        if extra.get("wren_partial"):
            # A reply cut off while streaming (Wren's export): its fragments, never a whole reply.
            events: list[Event] = []
            if thought:
                events.append(Delta(seq=seq, ts=ts, text=thought, reasoning=True))
            events.append(Delta(seq=seq, ts=ts, text=text))
            return Translated(events, "agent")
        calls: list[ToolCall] = []
        starts: dict[str, ToolStart] = {}
        for raw in step.get("tool_calls") or ():
            if not isinstance(raw, dict):
                continue
            call_id = str(raw.get("tool_call_id", ""))
            name = str(raw.get("function_name", ""))
            call_extra = raw.get("extra") if isinstance(raw.get("extra"), dict) else {}
            assert isinstance(call_extra, dict)
            args = call_extra.get("wren_arguments_text")
            if not isinstance(args, str):
                args = _encode.encode(raw.get("arguments", {})).decode()
            calls.append(ToolCall(call_id, name, args))
            if "wren_read_only" in call_extra:
                approval = call_extra.get("wren_approval")
                starts[call_id] = ToolStart(
                    seq=seq,
                    ts=ts,
                    id=call_id,
                    name=name,
                    read_only=bool(call_extra["wren_read_only"]),
                    approval=approval if approval in ("auto", "approved", "denied") else "auto",
                )
        reasoning = [Reasoning(text=thought, kind="reasoning_content")] if thought else None
        message = ChatMessage(role="assistant", content=text, tool_calls=calls or None, reasoning=reasoning)
        events = [Message(seq=seq, ts=ts, message=message)]
        metrics = step.get("metrics")
        if isinstance(metrics, dict):
            used = Usage(
                seq=seq,
                ts=ts,
                input_tokens=_int(metrics.get("prompt_tokens")),
                output_tokens=_int(metrics.get("completion_tokens")),
                model=model or "",
            )
            events.append(used)
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, dict) else None
        answered: set[str] = set()
        for result in results if isinstance(results, list) else ():
            if isinstance(result, dict):
                events += self._result(seq, ts, result, starts, answered)
        for call_id, start in starts.items():
            if call_id not in answered:
                events.append(start)
        return Translated(events, "agent")

    @staticmethod
    def _result(
        seq: int, ts: str, result: dict[str, Any], starts: dict[str, ToolStart], answered: set[str]
    ) -> list[Event]:
        call_id = result.get("source_call_id")
        content = _text(result.get("content"))
        if not isinstance(call_id, str):
            return [make.note(seq, ts, "observation", text=content)]
        extra = result.get("extra") if isinstance(result.get("extra"), dict) else {}
        assert isinstance(extra, dict)
        events: list[Event] = []
        start = starts.get(call_id)
        if start is not None:
            events.append(start)
            answered.add(call_id)
        status = extra.get("wren_status")
        ok = extra.get("ok") if isinstance(extra.get("ok"), bool) else None
        took = extra.get("elapsed_ms") if isinstance(extra.get("elapsed_ms"), int) else None
        stopped = extra.get("stopped_by")
        if status is None or "wren_end_seq" in extra:
            events.append(
                ToolEnd(
                    seq=seq,
                    ts=ts,
                    id=call_id,
                    ok=ok,
                    elapsed_ms=took,
                    chars=len(content) if "wren_seq" in extra or status is None else None,
                    truncated=extra.get("truncated") is True,
                    stopped_by=stopped if stopped in ("approval", "loop", "timeout", "cancel") else None,
                    redacted=_int(extra.get("redacted")),
                )
            )
        if status is None or "wren_seq" in extra:
            # A result the call gave (Wren exported one only when the journal held it).
            events.append(
                Message(seq=seq, ts=ts, message=ChatMessage(role="tool", content=content, tool_call_id=call_id))
            )
        return events


def claims(_value: dict[str, Any]) -> bool:
    return False  # recognised by the document's head (`claims_head`), never by one line


def root(env: Mapping[str, str], home: Path) -> Path:
    return Path.cwd()  # trajectories have no folder of their own: they are opened by path


def session_id(path: Path) -> str:
    name = path.name
    for suffix in (".atif.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_session_file(path: Path) -> bool:
    return path.suffix == ".json"


# A trajectory of any agent's session: every format's tools that change the workspace.
WRITE_TOOLS = None


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=Folder(env=ENV, root=root, is_session_file=is_session_file),
    translator=AtifTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    session_id=session_id,
    frames=frames,
)
