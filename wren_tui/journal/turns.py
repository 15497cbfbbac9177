"""One fold of a journal's events into what is shown of them: replies, partial replies, calls and usage.

The exports (`export.reading` for Markdown, HTML and JSON, `export.atif`, `export.otel`) and the
viewer's timeline each consume this fold; none walks the events itself. Its rules, once:

- **Streamed deltas** end with the reply they streamed: the next event, when it is an assistant
  message. Any other event first (a retry, a crash, a cancel), or the end of what there is to read
  (`close`), means the streamed text was thrown away: a partial reply.
- **A call** is asked for in an assistant message, may start (`tool_start`) and end (`tool_end`),
  and is open until a tool message answers it. Each call gets a number, in the order calls are met
  (0, 1, ...). A start or end whose id no open call has (the model was never seen asking for it, or
  it was answered already) gets a number of its own.
- **Usage** counts per turn: a turn opens with a user message; usage before the first opens one.

`Turns` places each event by one `match` over the event types (`_place`), so a new type fails the type
check (`mypy --strict`) here until it is placed; `feed` tells the common types apart by identity
before it, for speed, and places them the same way. What it found goes to a `TurnSink`, method by method.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Protocol, assert_never

from . import events
from .events import Delta, Event, Message, ToolEnd, ToolStart, Usage

Note = (
    events.RunStart
    | events.RunEnd
    | events.Error
    | events.Recovery
    | events.Fork
    | events.Snapshot
    | events.Rewind
    | events.Injected
    | events.Compaction
    | events.UnknownEvent
)
"""The events that are neither part of a reply, nor of a call, nor usage: each shown as it is."""


class TurnSink(Protocol):
    """What `Turns` hands on, in the journal's order: every event but a delta reaches `each`, then its own method."""

    def delta(self, event: Delta) -> None:
        """A fragment of the reply streaming now."""

    def partial(self, instead: Event | None) -> None:
        """The deltas since the last other event were thrown away: a partial reply. `instead`: the event that came
        (before its `each`); None: reading ends here (`Turns.close`)."""

    def streamed(self) -> None:
        """The deltas since the last other event streamed the reply that `reply` hands on next."""

    def each(self, event: Event) -> None:
        """Any event but a delta, before its own method."""

    def user(self, event: Message) -> None:
        """A user message: a turn opens (`Turns.turn_tokens` has its 0 already)."""

    def reply(self, event: Message, first: int) -> None:
        """An assistant message; the calls it asks for are numbered from `first`, in their order."""

    def answer(self, event: Message, number: int | None) -> None:
        """A tool message, and the open call it answers (None: no open call has its id)."""

    def unasked(self, number: int, event: ToolStart | ToolEnd) -> None:
        """A call met first by its start or end (before its `tool_start` or `tool_end`)."""

    def tool_start(self, event: ToolStart, number: int) -> None:
        """A call's tool_start."""

    def tool_end(self, event: ToolEnd, number: int) -> None:
        """A call's tool_end."""

    def usage(self, event: Usage) -> None:
        """A model call's usage (`Turns.tokens` and `Turns.turn_tokens` count it already)."""

    def note(self, event: Note) -> None:
        """Any other event."""


class Turns:
    """The fold: events in (`add`, `feed`), the sink's methods called as they are placed; `close` at the end."""

    __slots__ = ("_open", "_sink", "calls", "streaming", "tokens", "turn_tokens")

    def __init__(self, sink: TurnSink) -> None:
        self._sink = sink
        self.streaming = False  # deltas came since the last other event
        self.calls = 0  # calls numbered so far
        self._open: dict[str, int] = {}  # call id -> its number, until a tool message answers it
        self.tokens = 0
        # Tokens used per turn (a turn opens with a user message; usage before the first opens one too).
        self.turn_tokens: array[int] = array("q")

    def add(self, event: Event) -> None:
        self.feed((event,))

    def feed(self, events: Iterable[Event]) -> None:
        """Place each event in turn. One loop for all of them: this runs once for every event of a journal."""
        sink = self._sink
        delta, each, message, usage, place = sink.delta, sink.each, self._message, self._usage, self._place
        for event in events:
            if type(event) is Delta:  # most of a journal
                self.streaming = True
                delta(event)
                continue
            if self.streaming:
                self.streaming = False
                if type(event) is Message and event.message.role == "assistant":
                    sink.streamed()
                else:
                    sink.partial(event)
            each(event)
            # The common types are told apart by identity first: a class pattern that fails costs about 300 ns on a
            # msgspec Struct (its metaclass's isinstance), ten times an identity test. `_place` decides the same.
            if type(event) is Message:
                message(event)
            elif type(event) is Usage:
                usage(event)
            elif type(event) is ToolStart:
                sink.tool_start(event, self._number(event))
            elif type(event) is ToolEnd:
                sink.tool_end(event, self._number(event))
            else:
                place(event)

    def _place(self, event: Event) -> None:
        """Any event but a delta, by its type: mypy checks this match whole, so a new type fails here until placed."""
        sink = self._sink
        match event:
            case Message():
                self._message(event)
            case Usage():
                self._usage(event)
            case ToolStart():
                sink.tool_start(event, self._number(event))
            case ToolEnd():
                sink.tool_end(event, self._number(event))
            case Delta():  # placed before the rule for deltas, in `feed`
                raise ValueError("a delta is placed by feed")
            case _:
                sink.note(event)  # what is left must be a Note: a new type fails the type check here

    def _message(self, event: Message) -> None:
        msg, sink = event.message, self._sink
        match msg.role:
            case "user":
                self.turn_tokens.append(0)
                sink.user(event)
            case "assistant":
                first = self.calls
                if msg.tool_calls:
                    opened = self._open
                    for number, call in enumerate(msg.tool_calls, first):
                        opened[call.id] = number
                    self.calls = first + len(msg.tool_calls)
                sink.reply(event, first)
            case "tool":
                call_id = msg.tool_call_id
                sink.answer(event, None if call_id is None else self._open.pop(call_id, None))
            case _:
                assert_never(msg.role)

    def _usage(self, event: Usage) -> None:
        used = event.input_tokens + event.output_tokens
        self.tokens += used
        turns = self.turn_tokens
        if turns:
            turns[-1] += used
        else:
            turns.append(used)
        self._sink.usage(event)

    def _number(self, event: ToolStart | ToolEnd) -> int:
        """The number of the call a start or end belongs to."""
        number = self._open.get(event.id)
        return self._unasked(event) if number is None else number

    def _unasked(self, event: ToolStart | ToolEnd) -> int:
        """A start or end whose id no open call has: a call of its own, numbered now."""
        number = self._open[event.id] = self.calls
        self.calls += 1
        self._sink.unasked(number, event)
        return number

    def close(self) -> None:
        """The end of what there is to read: deltas no reply followed are a partial reply."""
        if self.streaming:
            self.streaming = False
            self._sink.partial(None)
