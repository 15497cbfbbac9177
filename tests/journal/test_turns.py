"""The one event fold (journal/turns.py): the delta rule, the calls' numbers, usage per turn, every type placed once."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.journal.strategies import any_event
from wren_tui.journal.events import (
    ChatMessage,
    Delta,
    Error,
    Event,
    KnownEvent,
    Message,
    RunEnd,
    RunStart,
    ToolCall,
    ToolEnd,
    ToolStart,
    UnknownEvent,
    Usage,
    event_type,
)
from wren_tui.journal.turns import Note, Turns


class Record:
    """A sink that writes down each call it gets, as (method, what it was given)."""

    def __init__(self) -> None:
        self.said: list[tuple[Any, ...]] = []

    def delta(self, event: Delta) -> None:
        self.said.append(("delta", event.seq))

    def partial(self, instead: Event | None) -> None:
        self.said.append(("partial",))

    def streamed(self) -> None:
        self.said.append(("streamed",))

    def each(self, event: Event) -> None:
        self.said.append(("each", event.seq))

    def user(self, event: Message) -> None:
        self.said.append(("user", event.seq))

    def reply(self, event: Message, first: int) -> None:
        self.said.append(("reply", event.seq, first))

    def answer(self, event: Message, number: int | None) -> None:
        self.said.append(("answer", event.seq, number))

    def unasked(self, number: int, event: ToolStart | ToolEnd) -> None:
        self.said.append(("unasked", number, event.seq))

    def tool_start(self, event: ToolStart, number: int) -> None:
        self.said.append(("tool_start", event.seq, number))

    def tool_end(self, event: ToolEnd, number: int) -> None:
        self.said.append(("tool_end", event.seq, number))

    def usage(self, event: Usage) -> None:
        self.said.append(("usage", event.seq))

    def note(self, event: Note) -> None:
        self.said.append(("note", event.seq))

    def after_each(self) -> list[tuple[Any, ...]]:
        return [said for said in self.said if said[0] not in ("each", "delta")]


def _user(seq: int, text: str = "hi") -> Message:
    return Message(seq=seq, message=ChatMessage(role="user", content=text))


def _reply(seq: int, *calls: str) -> Message:
    asked = [ToolCall(id=c, name="read_file", args="{}") for c in calls] or None
    return Message(seq=seq, message=ChatMessage(role="assistant", content="ok", tool_calls=asked))


def _result(seq: int, call_id: str | None) -> Message:
    return Message(seq=seq, message=ChatMessage(role="tool", content="done", tool_call_id=call_id))


def _fold(events: list[Event], *, close: bool = True) -> tuple[Turns, Record]:
    sink = Record()
    turns = Turns(sink)
    turns.feed(events)
    if close:
        turns.close()
    return turns, sink


def test_deltas_that_end_with_the_reply_they_streamed_are_no_partial_reply() -> None:
    _turns, sink = _fold([_user(1), Delta(seq=2, text="o"), Delta(seq=3, text="k"), _reply(4)])
    assert sink.said == [
        ("each", 1),
        ("user", 1),
        ("delta", 2),
        ("delta", 3),
        ("streamed",),
        ("each", 4),
        ("reply", 4, 0),
    ]


def test_deltas_followed_by_anything_but_an_assistant_message_are_a_partial_reply_before_that_event() -> None:
    for after in (
        Error(seq=3, message="overloaded", retryable=True),
        _user(3),
        _result(3, "c1"),
        RunEnd(seq=3, reason="cancelled"),
    ):
        _turns, sink = _fold([Delta(seq=2, text="half a rep"), after])
        assert sink.said[:3] == [("delta", 2), ("partial",), ("each", 3)], after


def test_deltas_at_the_end_of_what_there_is_to_read_are_a_partial_reply_only_once_closed() -> None:
    turns, sink = _fold([_user(1), Delta(seq=2, text="still streaming")], close=False)
    assert ("partial",) not in sink.said and turns.streaming
    turns.close()
    turns.close()
    assert sink.said.count(("partial",)) == 1 and not turns.streaming
    _turns, quiet = _fold([_user(1), _reply(2)])
    assert ("partial",) not in quiet.said


def test_calls_are_numbered_as_asked_and_their_start_end_and_answer_name_that_number() -> None:
    events: list[Event] = [
        _user(1),
        _reply(2, "a", "b"),
        ToolStart(seq=3, id="b", name="read_file", read_only=True),
        ToolEnd(seq=4, id="b", ok=True),
        _result(5, "b"),
        ToolStart(seq=6, id="a", name="read_file", read_only=True),
        _result(7, "a"),
        _reply(8, "c"),
    ]
    turns, sink = _fold(events)
    assert sink.after_each() == [
        ("user", 1),
        ("reply", 2, 0),
        ("tool_start", 3, 1),
        ("tool_end", 4, 1),
        ("answer", 5, 1),
        ("tool_start", 6, 0),
        ("answer", 7, 0),
        ("reply", 8, 2),
    ]
    assert turns.calls == 3


def test_a_start_or_end_no_open_call_has_the_id_of_is_a_call_of_its_own() -> None:
    events: list[Event] = [
        _reply(1, "a"),
        _result(2, "a"),
        ToolEnd(seq=3, id="a", ok=False),  # answered already: not that call any more
        ToolStart(seq=4, id="z", name="write_file", read_only=False),  # never seen asked for
        ToolEnd(seq=5, id="z", ok=True),
        _result(6, "z"),
        _result(7, "nobody"),
        _result(8, None),
    ]
    turns, sink = _fold(events)
    assert sink.after_each() == [
        ("reply", 1, 0),
        ("answer", 2, 0),
        ("unasked", 1, 3),
        ("tool_end", 3, 1),
        ("unasked", 2, 4),
        ("tool_start", 4, 2),
        ("tool_end", 5, 2),
        ("answer", 6, 2),
        ("answer", 7, None),
        ("answer", 8, None),
    ]
    assert turns.calls == 3


def test_usage_counts_per_turn_and_usage_before_the_first_user_message_opens_a_turn() -> None:
    events: list[Event] = [
        Usage(seq=1, input_tokens=5, output_tokens=1),
        _user(2),
        Usage(seq=3, input_tokens=10, output_tokens=2),
        Usage(seq=4, input_tokens=20, output_tokens=3),
        _user(5),
        _user(6),
        Usage(seq=7, input_tokens=1, output_tokens=1),
    ]
    turns, sink = _fold(events)
    assert list(turns.turn_tokens) == [6, 35, 0, 2]
    assert turns.tokens == 43
    assert [said for said in sink.said if said[0] == "usage"] == [
        ("usage", 1),
        ("usage", 3),
        ("usage", 4),
        ("usage", 7),
    ]


def test_the_other_events_are_notes() -> None:
    events: list[Event] = [
        RunStart(seq=1, pid=1, cwd="/w", model="m", version="0"),
        Error(seq=2, message="boom"),
        UnknownEvent(seq=3, ts="", type="thinking", fields={"text": "hm"}),
        RunEnd(seq=4, reason="done"),
    ]
    _turns, sink = _fold(events)
    assert sink.after_each() == [("note", 1), ("note", 2), ("note", 3), ("note", 4)]


_ONE_PLACE = {"user", "reply", "answer", "tool_start", "tool_end", "usage", "note"}
# The method each kind of event reaches (a message by its role); every other type is a note.
_METHOD = {
    "user": "user",
    "assistant": "reply",
    "tool": "answer",
    "tool_start": "tool_start",
    "tool_end": "tool_end",
    "usage": "usage",
}


def _kind(event: Event) -> str:
    return event.message.role if isinstance(event, Message) else event_type(event)


@settings(max_examples=200, deadline=None)
@given(st.lists(any_event(), max_size=30))
def test_every_event_is_placed_once_and_every_run_of_deltas_is_either_a_reply_or_a_partial_one(
    events: list[KnownEvent],
) -> None:
    numbered: list[Event] = [msgspec.structs.replace(event, seq=seq) for seq, event in enumerate(events, 1)]
    turns, sink = _fold(numbered)
    placed = [said for said in sink.said if said[0] in _ONE_PLACE]
    others = [event for event in numbered if not isinstance(event, Delta)]
    assert [said[1] for said in placed] == [event.seq for event in others]
    assert [said[1] for said in sink.said if said[0] == "each"] == [event.seq for event in others]
    assert [said[0] for said in placed] == [_METHOD.get(_kind(event), "note") for event in others]
    ends = [at for at, event in enumerate(numbered) if isinstance(event, Delta)]
    runs = sum(1 for at in ends if at + 1 == len(numbered) or not isinstance(numbered[at + 1], Delta))
    assert sink.said.count(("partial",)) + sink.said.count(("streamed",)) == runs
    assert turns.calls == sum(1 for said in sink.said if said[0] == "unasked") + sum(
        len(event.message.tool_calls or ())
        for event in others
        if isinstance(event, Message) and event.message.role == "assistant"
    )


def test_the_match_over_every_type_places_the_common_types_as_the_identity_tests_before_it_do() -> None:
    """`feed` tells messages, usage and tool events apart by identity first; `_place`, the match mypy checks whole,
    must place each the same way (it is what places every other type)."""
    events: list[Event] = [
        _user(1),
        _reply(2, "a"),
        ToolStart(seq=3, id="a", name="read_file", read_only=True),
        ToolEnd(seq=4, id="a", ok=True),
        _result(5, "a"),
        ToolEnd(seq=6, id="z", ok=False),
        Usage(seq=7, input_tokens=3, output_tokens=4),
        Error(seq=8, message="boom"),
    ]
    fed, by_feed = _fold(events)
    sink = Record()
    placed = Turns(sink)
    for event in events:
        placed._place(event)
    assert sink.said == by_feed.after_each()
    assert (placed.calls, placed.tokens, list(placed.turn_tokens)) == (fed.calls, fed.tokens, list(fed.turn_tokens))
