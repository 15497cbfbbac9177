"""Tool calls through a journal: which are open, in which state, whether a point is clean, what resume does.

This is Wren's central rule, in one place. The model asks for a call in an assistant message
(`toolCalls`); a tool message (`toolCallId`) answers it. In between, `tool_start` says the call
began (read-only or not, approved or denied) and `tool_end` how it ended. A call is open from its
asking until its answer. A point is a clean fork point when it is a user message or an assistant
message that asks for nothing, with no call open. Resume settles each open call by its state, and
never guesses: a call with side effects that started and whose answer never came is refused.

Fork (`fork.fork_points`, the fork itself), replay (`replay.Replayer`), the listing's "outcome
unknown" (`store`), the viewer's timeline (its tool rows' states, in `WORDS`) and the agent's resume
all ask this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Literal, TypeGuard

from .events import ChatMessage, Event, Message, Rewind, ToolCall, ToolEnd, ToolStart

CallState = Literal[
    "never_started", "not_run", "read_only_started", "outcome_unknown", "output_lost", "no_result_recorded"
]
"""Where an open call got to.

never_started: no tool_start, or one that was denied: nothing ran.
not_run: recorded as not run (cancelled before it started, a loop, over the limit) by a tool_end
    with no tool_start; only the tool message saying so is missing.
read_only_started: a read-only tool started and its answer never came.
outcome_unknown: a tool with side effects started and nothing recorded how it ended.
output_lost: a tool with side effects started and ended (its tool_end says how), but its output,
    the tool message, never reached the journal: the model never saw what it did.
no_result_recorded: another agent's call (that agent journals no call's start) with no result: whether
    it ran, and what it did, nobody can say. Only asked for with `starts_recorded=False` (the viewer).
"""

Ended = Literal["ok", "failed", "stopped"]
"""How a call that was answered ended, by its tool_end (a tool message with no tool_end: ok)."""

WORDS: dict[CallState | Ended, str] = {
    "never_started": "never started",
    "not_run": "not run",
    "read_only_started": "interrupted",
    "outcome_unknown": "outcome unknown",
    "output_lost": "output lost",
    "no_result_recorded": "no result recorded",
    "ok": "ok",
    "failed": "failed",
    "stopped": "stopped",
}
"""Each state in the words a person reads (the viewer's tool list, its waterfall)."""

ResumeAction = Literal["run", "run_again", "say_not_run", "refuse"]
"""What resume does with an open call: run it (it never started), run it again (read-only, cut
off), say again that it was not run, or refuse to go on (unless told to assume it failed)."""

_ON_RESUME: dict[CallState, ResumeAction] = {
    "never_started": "run",
    "not_run": "say_not_run",
    "read_only_started": "run_again",
    # Even with its tool_end, what the call did beyond ok or failed (what a command printed, how far
    # an edit got) is lost, and the model never saw it: both are as uncertain as a call cut off.
    "outcome_unknown": "refuse",
    "output_lost": "refuse",
    "no_result_recorded": "refuse",
}

_TRACKED = frozenset({Message, ToolStart, ToolEnd, Rewind})
# Which calls are open is decided by messages alone (and rewinds); starts and ends only tell an open call's state.
_MESSAGES = frozenset({Message, Rewind})


_State = tuple[list[ChatMessage], list[int], dict[str, ToolCall], dict[str, ToolStart], dict[str, ToolEnd]]


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
    def on_resume(self) -> ResumeAction:
        return _ON_RESUME[self.state]

    @property
    def uncertain(self) -> bool:
        """Resume refuses it: it may have had side effects nobody can read back."""
        return self.on_resume == "refuse"


class CallTracker:
    """Follows the tool calls of a journal's events, fed one by one or in runs as a reader streams them.

    Only messages, tool starts and tool ends are looked at; everything else passes by untouched.
    With `keep_messages`, it also keeps every message it follows, in order (`messages`): a replay.
    With `states=False` it follows which calls are open and no more (a fork's only question): tool
    starts and ends pass by too, and `open_calls` cannot be asked.

    A `rewind` event (`wren rewind`) takes the conversation back to the one at its atSeq, a clean
    point (no call open there); an undo (`undoes`) to the one just before the rewind it undoes, its
    open calls included. `messages` is changed in place.
    """

    def __init__(self, *, keep_messages: bool = False, states: bool = True) -> None:
        self.messages: list[ChatMessage] | None = [] if keep_messages else None
        # With `keep_messages`, the seq of each kept message (a compaction names its range by them).
        self.seqs: list[int] = []
        self._tracked = _TRACKED if states else _MESSAGES
        self._asked: dict[str, ToolCall] = {}
        self._started: dict[str, ToolStart] = {}
        self._ended: dict[str, ToolEnd] = {}
        # For rewinds: the conversations a rewind left (from which seq each held, its messages and their
        # seqs); the state just before each rewind, by its seq (for an undo).
        self._start = 0
        self._left: list[tuple[int, list[ChatMessage], list[int]]] = []
        self._before: dict[int, _State] = {}

    def feed(self, events: Sequence[Event], kinds: list[type] | None = None) -> None:
        """Take the next run of events (`kinds`: their types, if the caller has them already)."""
        kinds = list(map(type, events)) if kinds is None else kinds
        # The other event types are skipped in C, not visited: most of a journal is deltas and usage.
        self._follow(compress(events, map(self._tracked.__contains__, kinds)))

    def add(self, event: Event) -> None:
        """Take one event."""
        if type(event) in self._tracked:
            self._follow((event,))

    def follow_ids(self, items: Iterable[Event | str | tuple[str, ...]]) -> None:
        """Take events in order, some of them messages known only by their call ids.

        A str is a tool message answering that call; a tuple, a message asking for those calls (their
        names and arguments unread). What a fork's scan hands over (`forking`): it reads no more of a
        plain message than that. With `keep_messages`, only the events are kept.
        """
        self._follow(items)

    def _follow(self, events: Iterable[Event | str | tuple[str, ...]]) -> None:
        asked, started, ended, kept, seqs = self._asked, self._started, self._ended, self.messages, self.seqs
        for event in events:
            if type(event) is Message:
                msg = event.message
                if kept is not None:
                    kept.append(msg)
                    seqs.append(event.seq)
                if msg.tool_calls:
                    for call in msg.tool_calls:
                        asked[call.id] = call
                # Only the tool message closes a call: without it the model never saw a result.
                if msg.role == "tool" and msg.tool_call_id is not None:
                    asked.pop(msg.tool_call_id, None)
                    started.pop(msg.tool_call_id, None)
                    ended.pop(msg.tool_call_id, None)
            elif type(event) is ToolStart:
                started[event.id] = event
            elif type(event) is ToolEnd and event.id in asked:
                ended[event.id] = event
            elif type(event) is str:  # a tool message answering that call, its other fields unread
                asked.pop(event, None)
                started.pop(event, None)
                ended.pop(event, None)
            elif type(event) is tuple:  # a message asking for these calls, their names and arguments unread
                for call_id in event:
                    asked[call_id] = ToolCall(id=call_id, name="", args="")
            elif type(event) is Rewind:
                self._rewind(event)

    def _rewind(self, event: Rewind) -> None:
        kept, seqs = self.messages if self.messages is not None else [], self.seqs
        self._before[event.seq] = (list(kept), list(seqs), dict(self._asked), dict(self._started), dict(self._ended))
        self._left.append((self._start, list(kept), list(seqs)))
        self._start = event.seq
        undone = self._before.get(event.undoes) if event.undoes is not None else None
        if undone is not None:
            messages, seqs_then, asked, started, ended = undone
        else:
            # The conversation at atSeq: the messages of the one that held then that were there at atSeq (a
            # clean point: none open). Not a prefix by position: a compaction's summary stands where its range
            # was, with the compaction's seq (`wren rewind` refuses a point before a compaction).
            held = next((c for c in reversed(self._left) if c[0] <= event.at_seq), (0, [], []))
            there = [i for i, seq in enumerate(held[2]) if seq <= event.at_seq]
            messages, seqs_then = [held[1][i] for i in there], [held[2][i] for i in there]
            asked, started, ended = {}, {}, {}
        if self.messages is not None:
            self.messages[:] = messages
            self.seqs[:] = seqs_then
        self._asked.clear()
        self._asked.update(asked)
        self._started.clear()
        self._started.update(started)
        self._ended.clear()
        self._ended.update(ended)

    @property
    def any_open(self) -> bool:
        """Some call asked for has no answer yet."""
        return bool(self._asked)

    def is_clean_point(self, event: Event) -> TypeGuard[Message]:
        """Whether a fork right after `event` is clean: a user message or a tool-free assistant message, no call open.

        The same before or after `add(event)`: such a message opens and closes nothing.
        """
        if type(event) is not Message or self._asked:
            return False
        return event.message.role != "tool" and not event.message.tool_calls

    def clean_points(self, events: Iterable[Event]) -> Iterator[Message]:
        """Follow `events`, yielding each message that is a clean point as it is reached."""
        follow = self._follow
        for event in events:
            kind = type(event)
            if kind is Message:
                if self.is_clean_point(event):
                    yield event
                follow((event,))
            elif kind in self._tracked:
                follow((event,))

    def open_calls(self) -> list[OpenCall]:
        """Every call still open, in the order it was asked for, with its state."""
        if self._tracked is _MESSAGES:
            raise ValueError("a CallTracker made with states=False knows which calls are open, not their states")
        return [self._classify(call) for call in self._asked.values()]

    def _classify(self, call: ToolCall) -> OpenCall:
        start, end = self._started.get(call.id), self._ended.get(call.id)
        state = open_state(start, end)
        if state == "never_started":
            return OpenCall(call, state)
        # The tool_end is kept where resume reads it: a call recorded as not run, or one whose output was lost.
        return OpenCall(call, state, start, end if state in ("not_run", "output_lost") else None)


def open_state(start: ToolStart | None, end: ToolEnd | None, *, starts_recorded: bool = True) -> CallState:
    """The state of a call with no tool message, from its tool_start and tool_end (None where there is none).

    `starts_recorded=False`: another agent's call, whose start that agent never journals.
    """
    if start is None and not starts_recorded:
        return "no_result_recorded"
    if start is None and end is not None:
        return "not_run"
    # A denied call was recorded but never ran, so it is as safe to ask again as one never started.
    if start is None or start.approval == "denied":
        return "never_started"
    if start.read_only:
        return "read_only_started"
    return "outcome_unknown" if end is None else "output_lost"


def ended_as(end: ToolEnd | None) -> Ended:
    """How an answered call ended: stopped (by a person, a limit), failed, or ok (also with no tool_end)."""
    if end is None:
        return "ok"
    if end.stopped_by is not None:
        return "stopped"
    return "failed" if end.ok is False else "ok"


def open_calls(events: Iterable[Event]) -> list[OpenCall]:
    """The calls left open at the end of `events`."""
    tracker = CallTracker()
    tracker.feed(events if isinstance(events, list) else list(events))
    return tracker.open_calls()
