"""The session as the viewer shows it: compact indexes derived from the journal, events decoded on demand.

Per item (every event but streamed deltas) it keeps the byte span of its line, its kind and two
size hints in arrays, so a million events cost about 25 bytes each, not a decoded Struct; tool
calls and fork points are arrays of item positions. `event(i)` reads one line back through
`journal.index.decode_at`, with an LRU cache for what is on screen. Nothing here renders, and
nothing is a second source of truth: `fold` over the journal's chunks rebuilds all of it.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from textual.cache import LRUCache

from ..journal.events import (
    Delta,
    Error,
    Event,
    Message,
    RunEnd,
    RunStart,
    ToolCall,
    ToolEnd,
    ToolStart,
    Usage,
)
from ..journal.index import Chunk, decode_at
from ..journal.store import parse_ts

ItemKind = Literal["user", "assistant", "tool", "note", "error"]
CallState = Literal[
    "waiting", "running", "ok", "failed", "stopped", "output lost", "outcome unknown", "interrupted", "never started"
]
KINDS: tuple[ItemKind, ...] = ("user", "assistant", "tool", "note", "error")
_CODE: dict[str, int] = {kind: code for code, kind in enumerate(KINDS)}
_NONE = -1
_EVENT_CACHE = 4096


@dataclass(slots=True)
class Item:
    """One block of the conversation pane, decoded for drawing."""

    event: Event
    kind: ItemKind
    # Whether a long tool result is shown whole; flipped by Enter.
    expanded: bool = False


@dataclass(slots=True)
class ToolRow:
    """One tool call, decoded from its events when the tool pane draws it."""

    id: str
    name: str
    args: str
    start: ToolStart | None = None
    end: ToolEnd | None = None
    answered: bool = False
    # Item positions, for jumping to the call in the conversation.
    asked_item: int | None = None
    start_item: int | None = None

    def state(self, writer_alive: bool) -> CallState:
        if self.end is not None:
            # Ended, but the writer is gone before the tool message: what the call printed is lost,
            # and resume treats it as of unknown outcome. (Reference-format lines carry the result inline.)
            if not self.answered and not writer_alive and self.start is not None and self.end.result is None:
                return "output lost"
            if self.end.stoppedBy is not None:
                return "stopped"
            return "failed" if self.end.ok is False else "ok"
        if self.answered:
            return "ok"
        if self.start is None or self.start.approval == "denied":
            return "waiting" if writer_alive and self.start is None else "never started"
        if writer_alive:
            return "running"
        # The writer is gone mid-call: a side effect may or may not have happened.
        return "interrupted" if self.start.readOnly else "outcome unknown"


class Timeline:
    """Everything the session screen derives from the journal, kept as arrays of positions."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = fd
        self.events = 0  # lines read, deltas included
        # Per item: the byte span of its line, its kind, its text length and newline count.
        self.starts: array[int] = array("q")
        self.ends: array[int] = array("q")
        self.kinds: array[int] = array("b")
        self.chars: array[int] = array("i")
        self.breaks: array[int] = array("i")
        self.expanded: set[int] = set()
        # Item positions of errors (error events, failed calls), tool starts and clean fork points.
        self.error_items: array[int] = array("i")
        self.tool_items: array[int] = array("i")
        self.fork_items: array[int] = array("i")
        # Per tool call: where it was asked (item, and which call of that message), started, ended.
        self.call_asked: array[int] = array("i")
        self.call_slot: array[int] = array("h")
        self.call_start: array[int] = array("i")
        self.call_end: array[int] = array("i")
        self.call_answered = bytearray()
        self._open: dict[str, int] = {}  # call id -> call number, until its tool message arrives
        self._unanswered: set[str] = set()  # asked by the model and not answered: no clean point
        self.tokens = 0
        # The assistant reply still streaming: delta text since the last assistant message.
        self.streaming: list[str] = []
        self.ended = False
        self.last_ts: str | None = None
        self._cache: LRUCache[int, Event] = LRUCache(_EVENT_CACHE)

    def __len__(self) -> int:
        return len(self.kinds)

    # --- reading --------------------------------------------------------------------------

    def fold(self, chunk: Chunk) -> int:
        """Add a chunk's events; returns the position of the first item it added."""
        first = len(self.kinds)
        for event, start, end in zip(chunk.events, chunk.starts, chunk.ends, strict=True):
            self._add(event, start, end)
        self.events += len(chunk.events)
        if chunk.events:
            self.last_ts = chunk.events[-1].ts
        return first

    def _add(self, event: Event, start: int, end: int) -> None:
        if isinstance(event, Delta):
            self.streaming.append(event.text)
            return
        position = len(self.kinds)
        kind = "note"
        chars = breaks = 0
        if isinstance(event, Message):
            msg = event.message
            kind = msg.role
            chars, breaks = len(msg.content), msg.content.count("\n")
            if kind == "assistant":
                self.streaming.clear()
                breaks += len(msg.toolCalls or ())
                for slot, call in enumerate(msg.toolCalls or ()):
                    self._asked(call.id, position, slot)
                    self._unanswered.add(call.id)
            elif kind == "tool" and msg.toolCallId is not None:
                self._unanswered.discard(msg.toolCallId)
                number = self._open.pop(msg.toolCallId, None)
                if number is not None:
                    self.call_answered[number] = 1
            if kind != "tool" and not msg.toolCalls and not self._unanswered:
                self.fork_items.append(position)
        elif isinstance(event, ToolStart):
            self.call_start[self._call_number(event.id)] = position
            self.tool_items.append(position)
        elif isinstance(event, ToolEnd):
            self.call_end[self._call_number(event.id)] = position
            if event.ok is False or event.stoppedBy is not None:
                kind = "error"
        elif isinstance(event, Error):
            kind = "error"
            chars = len(event.message)
        elif isinstance(event, Usage):
            self.tokens += event.inputTokens + event.outputTokens
        elif isinstance(event, RunStart):
            self.streaming.clear()
            self.ended = False
        elif isinstance(event, RunEnd):
            self.ended = True
        if kind == "error":
            self.error_items.append(position)
        self.starts.append(start)
        self.ends.append(end)
        self.kinds.append(_CODE[kind])
        self.chars.append(min(chars, 2**31 - 1))
        self.breaks.append(min(breaks, 2**31 - 1))

    def _call_number(self, call_id: str) -> int:
        """The call a tool_start or tool_end belongs to; one the model was never seen asking for gets a row too."""
        number = self._open.get(call_id)
        return self._asked(call_id, _NONE, _NONE) if number is None else number

    def _asked(self, call_id: str, item: int, slot: int) -> int:
        number = len(self.call_asked)
        self.call_asked.append(item)
        self.call_slot.append(slot)
        self.call_start.append(_NONE)
        self.call_end.append(_NONE)
        self.call_answered.append(0)
        self._open[call_id] = number
        return number

    # --- decoding what is shown -----------------------------------------------------------

    def event(self, position: int) -> Event:
        cached = self._cache.get(position)
        if cached is None:
            assert self.fd is not None, "a timeline decodes events only once it has its journal open"
            cached = decode_at(self.fd, self.starts[position], self.ends[position])
            self._cache[position] = cached
        return cached

    def kind(self, position: int) -> ItemKind:
        return KINDS[self.kinds[position]]

    def item(self, position: int) -> Item:
        return Item(self.event(position), self.kind(position), position in self.expanded)

    def position_at(self, offset: int) -> int | None:
        """The item whose line starts at byte `offset`, if any."""
        position = bisect_left(self.starts, offset)
        return position if position < len(self.starts) and self.starts[position] == offset else None

    @property
    def calls(self) -> int:
        return len(self.call_asked)

    def call(self, number: int) -> ToolRow:
        asked, start, end = self.call_asked[number], self.call_start[number], self.call_end[number]
        start_event = self.event(start) if start != _NONE else None
        end_event = self.event(end) if end != _NONE else None
        call: ToolCall | None = None
        if asked != _NONE:
            message = self.event(asked)
            if isinstance(message, Message) and message.message.toolCalls:
                call = message.message.toolCalls[self.call_slot[number]]
        if call is None:
            known = start_event if isinstance(start_event, ToolStart) else None
            call_id = known.id if known else end_event.id if isinstance(end_event, ToolEnd) else "?"
            call = ToolCall(call_id, known.name if known else "?", "")
        return ToolRow(
            call.id,
            call.name,
            call.args,
            start=start_event if isinstance(start_event, ToolStart) else None,
            end=end_event if isinstance(end_event, ToolEnd) else None,
            answered=bool(self.call_answered[number]),
            asked_item=None if asked == _NONE else asked,
            start_item=None if start == _NONE else start,
        )

    def seconds_since_last(self, now: datetime) -> float | None:
        last = None if self.last_ts is None else parse_ts(self.last_ts)
        return None if last is None else max(0.0, (now - last).total_seconds())

    @property
    def stream_text(self) -> str:
        return "".join(self.streaming)
