"""The session as the viewer shows it: compact indexes derived from the journal, events decoded on demand.

Per item (every event but streamed deltas) it keeps the byte span of its line, its kind and two
size hints in arrays, so a million events cost about 25 bytes each, not a decoded Struct; tool
calls and fork points are arrays of item positions. `event(i)` reads one line back through the
session's source (`sessions.SessionSource.decode`), with an LRU cache for what is on screen. A line too big to decode on
demand (a multi-megabyte reply) keeps a clip of its text instead, made where it was first read, and
streamed deltas that no reply followed (a retry, a crash) become one item: a partial reply. Nothing
here renders, and nothing is a second source of truth: `fold` over the journal's chunks rebuilds all of it.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import msgspec
from textual.cache import LRUCache

from ..foreign import write_tools
from ..journal.calls import WORDS, CallState, CallTracker, Ended, ended_as, open_state
from ..journal.events import (
    Compaction,
    Delta,
    Error,
    Event,
    Fork,
    Message,
    Rewind,
    RunEnd,
    RunStart,
    ToolCall,
    ToolEnd,
    ToolStart,
    UnknownEvent,
    Usage,
)
from ..journal.huge_line import CLIP_CHARS
from ..journal.offsets import Chunk
from ..journal.store import RunMark, State, parse_ts, state_of
from ..journal.timing import TimeSpent
from ..journal.turns import Note, Turns
from ..journal.verdict import Stop

if TYPE_CHECKING:
    from ..sessions import SessionSource

ItemKind = Literal["user", "assistant", "tool", "partial", "note", "error"]
RowState = CallState | Ended | Literal["waiting", "running"]
"""A tool row's state: what journal/calls.py decides of a call, and, while its writer runs, waiting or running."""
# Each row state in the words the tool list and the waterfall show: journal/calls.py's, and two more.
ROW_WORDS: dict[RowState, str] = {"waiting": "waiting", "running": "running"}
ROW_WORDS.update((state, word) for state, word in WORDS.items())
KINDS: tuple[ItemKind, ...] = ("user", "assistant", "tool", "partial", "note", "error")
_CODE: dict[str, int] = {kind: code for code, kind in enumerate(KINDS)}
_NONE = -1
_NO_CHUNK = Chunk([])
_EVENT_CACHE = 4096
# A line longer than this is never decoded on the UI thread: a clip of its text is kept instead
# (`journal.huge_line.CLIP_CHARS` characters of it).
BIG_LINE = 1 << 20
# The end of a reply still streaming that is kept for drawing it.
_STREAM_TAIL = 1 << 15


@dataclass(frozen=True, slots=True)
class Clip:
    """An item shown from the start of its text: a big line's event cut short, or a partial reply."""

    event: Event
    chars: int  # the whole text's length
    lines: int | None  # newlines in the whole text; None for a big line (counting them costs as much as decoding)
    last_seq: int | None = None  # a partial reply: the seq of its last delta


@dataclass(slots=True)
class Item:
    """One block of the conversation pane, decoded for drawing."""

    event: Event
    kind: ItemKind
    # Whether a long text is shown whole; flipped by Enter.
    expanded: bool = False
    # The whole text's size when `event` holds only the start of it.
    clip: Clip | None = None


def _cut(text: str) -> str:
    return text[:CLIP_CHARS]


def _cut_value(value: Any) -> Any:
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, list | dict):
        return f"<{len(value)} items, too long to show here>"
    return value


def clip_event(event: Event) -> Clip:
    """The event of a big line with its text cut to CLIP_CHARS, and the size of the whole text."""
    if isinstance(event, Message):
        msg = event.message
        calls = [ToolCall(c.id, c.name, _cut(c.args)) for c in msg.tool_calls] if msg.tool_calls else None
        thoughts = [msgspec.structs.replace(r, text=_cut(r.text)) for r in msg.reasoning] if msg.reasoning else None
        short = msgspec.structs.replace(msg, content=_cut(msg.content), tool_calls=calls, reasoning=thoughts)
        return Clip(msgspec.structs.replace(event, message=short), len(msg.content), None)
    if isinstance(event, Error):
        short_error = msgspec.structs.replace(event, message=_cut(event.message))
        return Clip(short_error, len(event.message), None)
    if isinstance(event, UnknownEvent):
        fields = {key: _cut_value(value) for key, value in event.fields.items()}
        return Clip(UnknownEvent(event.seq, event.ts, event.type, fields), 0, 0)
    if isinstance(event, ToolEnd) and event.result is not None:
        return Clip(msgspec.structs.replace(event, result={}), 0, 0)
    return Clip(event, 0, 0)


def clips_of(chunk: Chunk) -> dict[int, Clip]:
    """Clips of a chunk's big lines (by index in the chunk), so a thread can make them before `fold`."""
    if chunk.cut_from is not None:
        # Decoded in a child process, its strings already cut: only its text's length is to be kept.
        return {0: Clip(chunk.events[0], chunk.cut_from, None)} if chunk.events else {}
    return {
        index: clip_event(event)
        for index, (event, start, end) in enumerate(zip(chunk.events, chunk.starts, chunk.ends, strict=True))
        if end - start > BIG_LINE and not isinstance(event, Delta)
    }


class _Tail:
    """The last _STREAM_TAIL characters of one kind of streamed text, and how many came in all."""

    def __init__(self) -> None:
        self.chars = 0
        self._pieces: deque[str] = deque()
        self._kept = 0

    def add(self, text: str) -> None:
        self.chars += len(text)
        piece = text[-_STREAM_TAIL:]
        self._pieces.append(piece)
        self._kept += len(piece)
        while self._kept - len(self._pieces[0]) >= _STREAM_TAIL:
            self._kept -= len(self._pieces.popleft())

    def text(self, chars: int) -> str:
        """The last `chars` characters (at most the kept end)."""
        text = "".join(self._pieces)
        return text[-chars:] if chars < len(text) else text


class Stream:
    """The reply streaming now, from its deltas: its start, the end of its text and of its reasoning, and sizes."""

    def __init__(self) -> None:
        self.deltas = 0
        self.chars = 0
        self.lines = 0
        self.first: Delta | None = None
        self.last_seq = 0
        self.start = self.end = 0  # the byte span of its delta lines
        self._head: list[str] = []
        self._head_chars = 0
        # The reply's text and the model's reasoning, each shown by its own end while it streams.
        self.text = _Tail()
        self.reasoning = _Tail()

    def add(self, delta: Delta, start: int, end: int) -> None:
        text = delta.text
        if self.first is None:
            self.first, self.start = delta, start
        self.deltas += 1
        self.end, self.last_seq = end, delta.seq
        self.chars += len(text)
        self.lines += text.count("\n")
        if self._head_chars < CLIP_CHARS:
            piece = text[: CLIP_CHARS - self._head_chars]
            self._head.append(piece)
            self._head_chars += len(piece)
        (self.reasoning if delta.reasoning else self.text).add(text)

    @property
    def head(self) -> str:
        """The first CLIP_CHARS characters, reasoning and text as they came."""
        return "".join(self._head)


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
    # Another agent's call: its start is not journaled, so it runs from its asking (`asked_ts`) to its result.
    foreign: bool = False
    asked_ts: str | None = None

    def state(self, writer_alive: bool) -> RowState:
        """Its state as journal/calls.py decides it; while its writer runs, an open call is waiting or running."""
        end = self.end
        # Answered: its tool message came (reference-format lines carry the result inline, in the tool_end).
        # A call nobody was seen asking for is open to nobody (journal/calls.py): its tool_end says how it went.
        if self.answered or (end is not None and (end.result is not None or self.asked_item is None)):
            return ended_as(end)
        if writer_alive:
            if end is not None:
                return ended_as(end)  # its tool message is on its way
            if self.foreign:
                return "running"  # another agent journals no start: a call asked for runs until its result
            if self.start is None:
                return "waiting"
            if self.start.approval != "denied":
                return "running"
        return open_state(self.start, end, starts_recorded=not self.foreign)


class Timeline:
    """Everything the session screen derives from the journal, kept as arrays of positions."""

    def __init__(self, source: SessionSource | None = None) -> None:
        self.source = source
        self.events = 0  # lines read, deltas included
        # Per item: the byte span of its line, its kind, its text length and newline count.
        self.starts: array[int] = array("q")
        self.ends: array[int] = array("q")
        # An item's place among its line's events, where not 0 (a format whose lines give several events).
        self.parts: dict[int, int] = {}
        self.kinds: array[int] = array("b")
        self.chars: array[int] = array("i")
        self.breaks: array[int] = array("i")
        self.expanded: set[int] = set()
        # Items shown from a clip: big lines (never decoded again on the UI thread) and partial replies.
        self.clips: dict[int, Clip] = {}
        self.partial_items: array[int] = array("i")
        # The first fork point after each compaction (its position) -> the compaction's seq: a fork from there on
        # rebuilds the summary, as `wren fork ID` marks it.
        self.fork_after: dict[int, int] = {}
        self._compaction_unmarked = 0
        # The context gauge of the last `usage` that holds one: (estimated tokens, window); None before.
        self.gauge: tuple[int, int] | None = None
        # Replies that carry the model's reasoning (shown by the "thinking" filter even without text).
        self.reasoning_items: array[int] = array("i")
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
        # Per tool call: whether it writes (its tool, or its start says it is not read-only), and its result item.
        self.call_writes = bytearray()
        self.call_result: array[int] = array("i")
        # The call each tool_start, tool_end and tool result item belongs to.
        self.item_call: dict[int, int] = {}
        # (a start's item, its call's ask item) where only the start said the call writes.
        self.late_writes: list[tuple[int, int]] = []
        self._foreign = False  # another agent's session: a call's asking is where it shows in the tool list
        # The tools whose calls change the workspace, for another agent's session (its format's): that agent
        # journals no tool_start. A Wren call says so in its tool_start (readOnly).
        self._writes: frozenset[str] = frozenset()
        # Which calls are open (so which points are clean), and how far each got (so whether the session's
        # outcome is unknown).
        self._calls = CallTracker()
        self._last_run: RunMark | None = None  # its last run_start, run_end or fork: how its last run ended
        # The one fold (journal/turns.py) places each event; this timeline is its sink. It numbers the calls and
        # counts the tokens used per turn (a turn opens with a user message; usage before the first opens one too).
        self._turns = Turns(self)
        self.turn_tokens: array[int] = self._turns.turn_tokens
        # The chunk being folded: its lines' spans and places, the clips of its big lines; the event being placed
        # (its index in the chunk) and its clip.
        self._chunk = _NO_CHUNK
        self._made: Mapping[int, Clip] = {}
        self._at = -1
        self._clip: Clip | None = None
        # Where the session's time went: waiting for the model, running tools, waiting for a person.
        self.spent = TimeSpent()
        # The assistant reply still streaming: the deltas since the last event of any other kind.
        self.stream = Stream()
        self.ended = False
        self.last_ts: str | None = None
        self._cache: LRUCache[int, Event] = LRUCache(_EVENT_CACHE)

    def __len__(self) -> int:
        return len(self.kinds)

    @property
    def tokens(self) -> int:
        return self._turns.tokens

    # --- reading --------------------------------------------------------------------------

    def fold(self, chunk: Chunk, clips: Mapping[int, Clip] | None = None) -> int:
        """Add a chunk's events (`clips`: those of its big lines, if already made); returns the first new item."""
        first = len(self.kinds)
        agent = None if self.source is None else self.source.agent
        self._foreign = agent is not None
        self._writes = frozenset() if agent is None else write_tools(agent)
        self.spent.ends_timed = self._foreign
        self._made = clips_of(chunk) if clips is None else clips
        self._chunk, self._at = chunk, -1
        try:
            self._turns.feed(chunk.events)
        finally:
            self._chunk, self._made, self._clip = _NO_CHUNK, {}, None  # nothing of it kept beyond the items
        self.events += len(chunk.events)
        if chunk.events:
            self.last_ts = chunk.events[-1].ts
        return first

    # --- the fold's sink (turns.TurnSink): each event but a delta becomes an item -----------------

    def delta(self, event: Delta) -> None:
        at = self._at = self._at + 1
        self.stream.add(event, self._chunk.starts[at], self._chunk.ends[at])

    def partial(self, instead: Event | None) -> None:
        self._add_partial()  # a retry, a crash or a cancel threw the streamed text away

    def streamed(self) -> None:
        self.stream = Stream()  # the whole reply is here

    def each(self, event: Event) -> None:
        at = self._at = self._at + 1
        self.spent.add(event)
        clip = self._clip = self._made.get(at) if self._made else None
        if clip is not None:
            self.clips[len(self.kinds)] = clip
        parts = self._chunk.parts
        if parts is not None and parts[at]:
            self.parts[len(self.kinds)] = parts[at]

    def user(self, event: Message) -> None:
        self._said(event, "user", *self._size(event))

    def reply(self, event: Message, first: int) -> None:
        position = len(self.kinds)
        msg = event.message
        chars, breaks = self._size(event)
        if msg.reasoning:
            self.reasoning_items.append(position)
        if msg.tool_calls:
            breaks += len(msg.tool_calls)
            writes = self._writes
            for slot, call in enumerate(msg.tool_calls):
                self._new_call(position, slot)
                self.call_writes[first + slot] = call.name in writes
            if self._foreign:
                self.tool_items.append(position)
        self._said(event, "assistant", chars, breaks)

    def answer(self, event: Message, number: int | None) -> None:
        if number is not None:
            position = len(self.kinds)
            self.call_answered[number] = 1
            self.call_result[number] = position
            self.item_call[position] = number
        self._said(event, "tool", *self._size(event))

    def _size(self, event: Message) -> tuple[int, int]:
        clip = self._clip
        if clip is not None:
            return clip.chars, clip.lines or 0
        content = event.message.content
        return len(content), content.count("\n")

    def _said(self, event: Message, kind: ItemKind, chars: int, breaks: int) -> None:
        """A message's item; a clean fork point when it is one."""
        if self._calls.is_clean_point(event):
            position = len(self.kinds)
            self.fork_items.append(position)
            if self._compaction_unmarked:
                self.fork_after[position], self._compaction_unmarked = self._compaction_unmarked, 0
        self._calls.add(event)
        self._item(kind, chars, breaks)

    def unasked(self, number: int, event: ToolStart | ToolEnd) -> None:
        self._new_call(_NONE, _NONE)  # the model was never seen asking for it: a row all the same

    def tool_start(self, event: ToolStart, number: int) -> None:
        position = len(self.kinds)
        self.call_start[number] = position
        self.item_call[position] = number
        self.tool_items.append(position)
        self._calls.add(event)
        if not event.read_only and not self.call_writes[number]:
            self.call_writes[number] = 1
            if self.call_asked[number] != _NONE:
                self.late_writes.append((position, self.call_asked[number]))
        self._item("note", 0, 0)

    def tool_end(self, event: ToolEnd, number: int) -> None:
        position = len(self.kinds)
        self.call_end[number] = position
        self.item_call[position] = number
        self._calls.add(event)
        self._item("error" if event.ok is False or event.stopped_by is not None else "note", 0, 0)

    def usage(self, event: Usage) -> None:
        if event.window:
            self.gauge = (event.estimated, event.window)
        self._item("note", 0, 0)

    def note(self, event: Note) -> None:
        match event:
            case Error():
                clip = self._clip
                self._item("error", clip.chars if clip else len(event.message), 0)
                return
            case Compaction():
                self._compaction_unmarked = event.seq
            case RunStart():
                self.ended = False
                self._last_run = event
            case RunEnd():
                self.ended = True
                self._last_run = event
            case Fork():
                self._last_run = event
            case Rewind():
                self._calls.add(event)  # the conversation goes back to a clean point: no call open there
            case _:
                pass
        self._item("note", 0, 0)

    def _item(self, kind: ItemKind, chars: int, breaks: int) -> None:
        """The event being placed, as the next item: its line's span, its kind and its size."""
        if kind == "error":
            self.error_items.append(len(self.kinds))
        chunk, at = self._chunk, self._at
        self.starts.append(chunk.starts[at])
        self.ends.append(chunk.ends[at])
        self.kinds.append(_CODE[kind])
        self.chars.append(min(chars, 2**31 - 1))
        self.breaks.append(min(breaks, 2**31 - 1))

    def _add_partial(self) -> None:
        """The streamed deltas so far as one item, spanning their lines: a reply that was thrown away."""
        stream, self.stream = self.stream, Stream()
        assert stream.first is not None
        position = len(self.kinds)
        start = Delta(seq=stream.first.seq, ts=stream.first.ts, text=stream.head)
        self.clips[position] = Clip(start, stream.chars, stream.lines, stream.last_seq)
        self.partial_items.append(position)
        self.starts.append(stream.start)
        self.ends.append(stream.end)
        self.kinds.append(_CODE["partial"])
        self.chars.append(min(stream.chars, 2**31 - 1))
        self.breaks.append(min(stream.lines, 2**31 - 1))

    def _new_call(self, item: int, slot: int) -> None:
        """The next call's row (the fold numbered it): where it was asked, if it was."""
        self.call_asked.append(item)
        self.call_slot.append(slot)
        self.call_start.append(_NONE)
        self.call_end.append(_NONE)
        self.call_answered.append(0)
        self.call_writes.append(0)
        self.call_result.append(_NONE)

    # --- decoding what is shown -----------------------------------------------------------

    def event(self, position: int) -> Event:
        """The item's event as shown: decoded from its line, or the clip of a big line or a partial reply."""
        clip = self.clips.get(position)
        if clip is not None:
            return clip.event
        cached = self._cache.get(position)
        if cached is None:
            assert self.source is not None, "a timeline decodes events only once it has its source"
            cached = self.source.decode(self.starts[position], self.ends[position], self.parts.get(position, 0))
            self._cache[position] = cached
        return cached

    def kind(self, position: int) -> ItemKind:
        return KINDS[self.kinds[position]]

    def item(self, position: int) -> Item:
        return Item(self.event(position), self.kind(position), position in self.expanded, self.clips.get(position))

    def place(self, position: int) -> tuple[int, int]:
        """Where item `position` is in the session: its line's start and its place among the line's events."""
        return self.starts[position], self.parts.get(position, 0)

    def position_at(self, place: tuple[int, int]) -> int | None:
        """The item at `place` (see `place`), if this timeline has it."""
        offset, part = place
        starts = self.starts
        position = bisect_left(starts, offset)
        while position < len(starts) and starts[position] == offset:
            if self.parts.get(position, 0) == part:
                return position
            position += 1
        return None

    @property
    def calls(self) -> int:
        return len(self.call_asked)

    def state(self, stop: Stop | None) -> State:
        """The session's state once nobody writes it (`stop`: where reading stopped), in the listing's word."""
        return state_of(
            stop,
            live=lambda: False,
            empty=not self.events,
            uncertain=lambda: any(call.uncertain for call in self._calls.open_calls()),
            last_run=self._last_run,
        )

    @property
    def any_open_call(self) -> bool:
        """Some call the model asked for has no result yet."""
        return self._calls.any_open

    def call(self, number: int) -> ToolRow:
        asked, start, end = self.call_asked[number], self.call_start[number], self.call_end[number]
        start_event = self.event(start) if start != _NONE else None
        end_event = self.event(end) if end != _NONE else None
        call: ToolCall | None = None
        asked_ts: str | None = None
        if asked != _NONE:
            message = self.event(asked)
            asked_ts = message.ts
            if isinstance(message, Message) and message.message.tool_calls:
                call = message.message.tool_calls[self.call_slot[number]]
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
            foreign=self.source is not None and self.source.agent is not None,
            asked_ts=asked_ts,
        )

    def seconds_since_last(self, now: datetime) -> float | None:
        last = None if self.last_ts is None else parse_ts(self.last_ts)
        return None if last is None else max(0.0, (now - last).total_seconds())
