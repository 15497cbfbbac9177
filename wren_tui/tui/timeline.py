"""The session as the viewer shows it: derived from events, appended to as the journal grows.

Holds the parsed events and small indexes over them (conversation items, tool calls, errors);
nothing here renders, and nothing here is a second source of truth: every field can be rebuilt
from the journal by `Timeline().extend(events)`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

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
from ..journal.store import parse_ts

ItemKind = Literal["user", "assistant", "tool", "note", "error"]
CallState = Literal["waiting", "running", "ok", "failed", "stopped", "outcome unknown", "interrupted", "never started"]


@dataclass(slots=True)
class Item:
    """One block of the conversation pane: the event at `index` in `Timeline.events`."""

    index: int
    kind: ItemKind
    # Whether a long tool result is shown whole; flipped by Enter.
    expanded: bool = False


@dataclass(slots=True)
class ToolRow:
    """One tool call: asked for by the model, maybe started, maybe ended."""

    id: str
    name: str
    args: str
    asked_index: int | None = None
    start: ToolStart | None = None
    start_index: int | None = None
    end: ToolEnd | None = None
    answered: bool = False

    def state(self, writer_alive: bool) -> CallState:
        if self.end is not None:
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


@dataclass
class Timeline:
    events: list[Event] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    calls: dict[str, ToolRow] = field(default_factory=dict)
    call_order: list[ToolRow] = field(default_factory=list)
    # Positions in `items` of errors (error events, failed calls) and of tool starts, for e/E and t.
    error_items: list[int] = field(default_factory=list)
    tool_items: list[int] = field(default_factory=list)
    tokens: int = 0
    # The assistant reply still streaming: delta text since the last assistant message.
    streaming: list[str] = field(default_factory=list)
    ended: bool = False

    def extend(self, events: Iterable[Event]) -> None:
        for event in events:
            self._add(event)

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]

    def _add(self, event: Event) -> None:
        index = len(self.events)
        self.events.append(event)
        if isinstance(event, Delta):
            self.streaming.append(event.text)
            return
        kind: ItemKind = "note"
        if isinstance(event, Message):
            kind = event.message.role
            if kind == "assistant":
                self.streaming.clear()
                for call in event.message.toolCalls or ():
                    self._asked(call, index)
            elif kind == "tool" and event.message.toolCallId in self.calls:
                self.calls[event.message.toolCallId].answered = True
        elif isinstance(event, ToolStart):
            row = self.calls.get(event.id) or self._asked(ToolCall(event.id, event.name, ""), None)
            row.start, row.start_index = event, index
            self.tool_items.append(len(self.items))
        elif isinstance(event, ToolEnd):
            row = self.calls.get(event.id) or self._asked(ToolCall(event.id, "?", ""), None)
            row.end = event
            if event.ok is False or event.stoppedBy is not None:
                kind = "error"
        elif isinstance(event, Error):
            kind = "error"
        elif isinstance(event, Usage):
            self.tokens += event.inputTokens + event.outputTokens
        elif isinstance(event, RunStart):
            self.streaming.clear()
            self.ended = False
        elif isinstance(event, RunEnd):
            self.ended = True
        if kind == "error":
            self.error_items.append(len(self.items))
        self.items.append(Item(index, kind))

    def _asked(self, call: ToolCall, index: int | None) -> ToolRow:
        row = ToolRow(call.id, call.name, call.args, asked_index=index)
        self.calls[call.id] = row
        self.call_order.append(row)
        return row

    @property
    def last_ts(self) -> str | None:
        return self.events[-1].ts if self.events else None

    def seconds_since_last(self, now: datetime) -> float | None:
        last = self.last_ts
        return None if last is None else max(0.0, (now - parse_ts(last)).total_seconds())

    @property
    def stream_text(self) -> str:
        return "".join(self.streaming)
