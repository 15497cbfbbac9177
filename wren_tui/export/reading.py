"""One pass over a journal for an export: the conversation handed on as it is read, the calls and totals kept.

The events are read once, by the journal's own reader (every line checked), and only what the
export's first screen needs is kept: the tool calls (for their table and the waterfall), the tokens,
the time spent in each phase, and the reader's verdict. The events are folded by journal/turns.py:
streamed deltas are kept only until the reply they stream arrives; deltas no reply followed are a
partial reply, shown as such.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..journal.calls import WORDS, ended_as, open_state
from ..journal.events import Delta, Error, Event, Fork, Message, RunEnd, RunStart, ToolEnd, ToolStart, Usage
from ..journal.locks import lock_holder
from ..journal.reader import scan_events
from ..journal.store import session_id_of
from ..journal.timing import TimeSpent, ts_ms
from ..journal.turns import Note, Turns
from ..journal.verdict import ReadVerdict, Stop


class Conversation(Protocol):
    """Where an export writes the conversation, item by item, as the journal is read."""

    def message(self, event: Message) -> None: ...

    def partial(self, first: Delta, last_seq: int, text: str) -> None: ...

    def note(self, event: Event, error: bool) -> None: ...

    def close(self) -> None:
        """The journal was read to its end (or to where reading stopped): write what is held back."""


@dataclass
class CallRow:
    """A tool call as the tables and the waterfall show it."""

    number: int
    id: str
    name: str
    args: str
    asked_seq: int
    start_ms: int | None = None
    start: ToolStart | None = None
    end: ToolEnd | None = None
    answered: bool = False

    def state(self, writer_alive: bool) -> str:
        """Its state in the words of journal/calls.py; an export also says how a call with a tool_end ended."""
        end = self.end
        if end is not None or self.answered:
            ended = ended_as(end)
            return f"stopped: {end.stopped_by}" if ended == "stopped" and end is not None else WORDS[ended]
        if writer_alive and self.start is not None and self.start.approval != "denied":
            return "running"
        return WORDS[open_state(self.start, None)]

    @property
    def elapsed_ms(self) -> int | None:
        return None if self.end is None else self.end.elapsed_ms


@dataclass
class Reading:
    """What a pass over the journal found, besides the conversation it handed on."""

    id: str
    path: Path
    verdict: ReadVerdict = field(default_factory=ReadVerdict)
    events: int = 0
    tokens: int = 0
    turn_tokens: list[int] = field(default_factory=list)
    calls: list[CallRow] = field(default_factory=list)
    spent: TimeSpent = field(default_factory=TimeSpent)
    first_ms: int | None = None
    last_ms: int | None = None
    first_ts: str | None = None
    last_ts: str | None = None
    forked_from: str | None = None
    fork_at: int | None = None
    ended: str | None = None  # the last run_end's reason
    writer_alive: bool = False

    def stop_sentence(self) -> str | None:
        """Where and why reading stopped, for an export's first screen; None when it was read to its end."""
        return None if self.verdict.stop is None else stop_sentence(self.verdict.stop)


def stop_sentence(stop: Stop) -> str:
    """An export's sentence for where and why reading stopped."""
    kind = "a torn tail, the normal end of a crash" if stop.torn else "the journal is corrupt there"
    return f"Reading stopped at line {stop.line} (byte {stop.offset}): {stop.why} ({kind}). Nothing after it is shown."


def read_session(path: Path, conversation: Conversation, cancelled: Callable[[], bool] | None = None) -> Reading:
    """Read the journal at `path` once, handing the conversation to `conversation`; what else it found."""
    reading = Reading(session_id_of(path), path)
    pass_ = _Pass(reading, conversation)
    reading.verdict = scan_events(path, pass_.take if cancelled is None else pass_.checked(cancelled))
    pass_.close()
    reading.writer_alive = lock_holder(path) is not None
    return reading


class ExportCancelled(Exception):
    """The export was stopped before it was written (the viewer closed its dialog)."""


class _Pass:
    """The exports' sink of the one fold (journal/turns.py): the conversation handed on, the calls and totals kept."""

    def __init__(self, reading: Reading, conversation: Conversation) -> None:
        self.reading = reading
        self.out = conversation
        self.rows = reading.calls  # by the fold's call number
        self.deltas: list[Delta] = []
        self.turns = Turns(self)
        self.each = reading.spent.add

    def checked(self, cancelled: Callable[[], bool]) -> Callable[[list[Event], bytes | memoryview], None]:
        def take(events: list[Event], lines: bytes | memoryview) -> None:
            if cancelled():
                raise ExportCancelled
            self.take(events, lines)

        return take

    def take(self, events: list[Event], _lines: bytes | memoryview) -> None:
        reading = self.reading
        if reading.first_ts is None and events:
            reading.first_ts = events[0].ts
        self.turns.feed(events)
        if events:
            reading.events += len(events)
            reading.last_ts = events[-1].ts

    # --- the fold's sink (turns.TurnSink) ---------------------------------------------------------

    def delta(self, event: Delta) -> None:
        self.deltas.append(event)

    def partial(self, instead: Event | None) -> None:
        deltas, self.deltas = self.deltas, []
        self.out.partial(deltas[0], deltas[-1].seq, "".join(d.text for d in deltas))

    def streamed(self) -> None:
        self.deltas = []

    def user(self, event: Message) -> None:
        self.out.message(event)

    def reply(self, event: Message, first: int) -> None:
        rows = self.rows
        for number, call in enumerate(event.message.tool_calls or (), first):
            rows.append(CallRow(number + 1, call.id, call.name, call.args, event.seq))
        self.out.message(event)

    def answer(self, event: Message, number: int | None) -> None:
        if number is not None:
            self.rows[number].answered = True
        self.out.message(event)

    def unasked(self, number: int, event: ToolStart | ToolEnd) -> None:
        """A call the model was never seen asking for gets a row too."""
        name = event.name if isinstance(event, ToolStart) else "?"
        self.rows.append(CallRow(number + 1, event.id, name, "", event.seq))

    def tool_start(self, event: ToolStart, number: int) -> None:
        row = self.rows[number]
        row.start, row.start_ms = event, ts_ms(event.ts)
        self.out.note(event, False)

    def tool_end(self, event: ToolEnd, number: int) -> None:
        self.rows[number].end = event
        self.out.note(event, event.ok is False or event.stopped_by is not None)

    def usage(self, event: Usage) -> None:
        self.out.note(event, False)

    def note(self, event: Note) -> None:
        reading = self.reading
        match event:
            case Fork():
                reading.forked_from, reading.fork_at = event.from_, event.at_seq
            case RunEnd():
                reading.ended = event.reason
            case RunStart():
                reading.ended = None
            case _:
                pass
        self.out.note(event, isinstance(event, Error))

    def close(self) -> None:
        reading = self.reading
        self.turns.close()
        self.out.close()
        reading.tokens = self.turns.tokens
        reading.turn_tokens = list(self.turns.turn_tokens)
        reading.first_ms = ts_ms(reading.first_ts) if reading.first_ts else None
        reading.last_ms = ts_ms(reading.last_ts) if reading.last_ts else None
