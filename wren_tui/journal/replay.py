"""Replay: the conversation rebuilt from `message` events alone, and the tool calls left open."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress
from typing import Literal

from .events import ChatMessage, Event, Message, ToolCall, ToolEnd, ToolStart

_REPLAYED = frozenset({Message, ToolStart, ToolEnd})

CallState = Literal["never_started", "not_run", "read_only_started", "outcome_unknown"]


@dataclass(frozen=True)
class OpenCall:
    """A tool call the model asked for that has no tool message yet."""

    call: ToolCall
    state: CallState
    # The tool_start event, when the call got that far.
    started: ToolStart | None = None
    # The tool_end event, when the call ended (or was recorded as not run) but its tool message never came.
    ended: ToolEnd | None = None

    @property
    def uncertain(self) -> bool:
        return self.state == "outcome_unknown"


@dataclass
class Replayed:
    messages: list[ChatMessage]
    replayed: int
    skipped: int
    open_calls: list[OpenCall] = field(default_factory=list)

    @property
    def uncertain_calls(self) -> list[OpenCall]:
        return [c for c in self.open_calls if c.uncertain]


def replay(events: Iterable[Event]) -> Replayed:
    """Only message events rebuild the conversation; every other type is for people."""
    replayer = Replayer()
    replayer.feed(events)
    return replayer.result()


class Replayer:
    """Replay fed in runs of events as a reader streams them, so no run is kept after it is fed."""

    def __init__(self) -> None:
        self.messages: list[ChatMessage] = []
        self.skipped = 0
        self._asked: dict[str, ToolCall] = {}
        self._started: dict[str, ToolStart] = {}
        self._ended: dict[str, ToolEnd] = {}

    def feed(self, events: Iterable[Event], _lines: object = None) -> None:
        """Take the next run of events (the second argument lets it serve as a reader's sink)."""
        run = events if isinstance(events, list) else list(events)
        kinds = list(map(type, run))
        # Only messages, tool starts and tool ends change the replay; the others are counted, in C, not visited.
        self.skipped += len(run) - kinds.count(Message)
        messages, asked, started, ended = self.messages, self._asked, self._started, self._ended
        for event in compress(run, map(_REPLAYED.__contains__, kinds)):
            if type(event) is Message:
                msg = event.message
                messages.append(msg)
                if msg.toolCalls:
                    for call in msg.toolCalls:
                        asked[call.id] = call
                if msg.role == "tool" and msg.toolCallId is not None:
                    asked.pop(msg.toolCallId, None)
                    started.pop(msg.toolCallId, None)
                    ended.pop(msg.toolCallId, None)
            elif type(event) is ToolStart:
                started[event.id] = event
            elif type(event) is ToolEnd and event.id in asked:
                ended[event.id] = event

    def result(self) -> Replayed:
        open_calls = [
            _classify(call, self._started.get(call_id), self._ended.get(call_id))
            for call_id, call in self._asked.items()
        ]
        return Replayed(self.messages, len(self.messages), self.skipped, open_calls)


def _classify(call: ToolCall, start: ToolStart | None, end: ToolEnd | None) -> OpenCall:
    # Recorded as not run (cancelled, a loop, over the limit): only the message saying so is missing.
    if start is None and end is not None:
        return OpenCall(call, "not_run", None, end)
    # A denied call was recorded but never ran, so it is as safe to ask again as one never started.
    if start is None or start.approval == "denied":
        return OpenCall(call, "never_started")
    if start.readOnly:
        return OpenCall(call, "read_only_started", start)
    # Even with its tool_end the call stays uncertain: the model never saw its output, and what
    # the tool did beyond ok or failed (what a command printed, how far an edit got) is lost.
    return OpenCall(call, "outcome_unknown", start, end)
