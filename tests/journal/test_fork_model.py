"""Fork points against a model of open calls written here, not with fork_points() as its own oracle.

The rule (README, "fork"): a fork may start right after a user message or an assistant message that asks
for no tool, and only while no call is open. A call is open from the assistant message that asks for it
(by id) until the tool message that answers that id; tool_start and tool_end change nothing. The model
below is a set of ids; conversations are drawn as an agent (or a damaged one) would write them, with calls
left open, answered late, answered twice, or answered with an id nobody asked for.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.journal.strategies import encode
from tests.reliability.dial import scaled
from wren_tui.journal.events import (
    ChatMessage,
    Event,
    KnownEvent,
    Message,
    ToolCall,
    ToolEnd,
    ToolStart,
    Usage,
)
from wren_tui.journal.forking import NotAForkPoint, fork, fork_points
from wren_tui.journal.reader import read_events

IDS = ["c1", "c2", "c3"]
PARENT = "s-20260101-000000-prnt.jsonl"

step = st.one_of(
    st.just(("user",)),
    st.just(("say",)),
    st.tuples(st.just("ask"), st.lists(st.sampled_from(IDS), min_size=1, max_size=3)),
    st.tuples(st.just("answer"), st.sampled_from([*IDS, "nobody"])),
    st.tuples(st.just("start"), st.sampled_from(IDS)),
    st.tuples(st.just("end"), st.sampled_from(IDS)),
    st.just(("usage",)),
)


def event_of(action: tuple[object, ...]) -> KnownEvent:
    match action:
        case ("user",):
            return Message(message=ChatMessage(role="user", content="do it"))
        case ("say",):
            return Message(message=ChatMessage(role="assistant", content="done"))
        case ("ask", list() as ids):
            calls = [ToolCall(id=str(i), name="run_command", args="{}") for i in ids]
            return Message(message=ChatMessage(role="assistant", content="", tool_calls=calls))
        case ("answer", str() as call_id):
            return Message(message=ChatMessage(role="tool", content="ok", tool_call_id=call_id))
        case ("start", str() as call_id):
            return ToolStart(id=call_id, name="run_command", read_only=False, approval="approved")
        case ("end", str() as call_id):
            return ToolEnd(id=call_id, ok=True, elapsed_ms=1, chars=2)
        case _:
            return Usage(input_tokens=1, output_tokens=1)


def model_points(events: list[Event]) -> list[int]:
    """The clean points by the rule above, from a set of open call ids."""
    open_ids: set[str] = set()
    points = []
    for event in events:
        if not isinstance(event, Message):
            continue
        message = event.message
        if message.role in ("user", "assistant") and not message.tool_calls and not open_ids:
            points.append(event.seq)
        open_ids |= {call.id for call in message.tool_calls or []}
        if message.role == "tool" and message.tool_call_id is not None:
            open_ids.discard(message.tool_call_id)
    return points


conversations = st.lists(step, min_size=1, max_size=25).map(lambda steps: [event_of(s) for s in steps])


@settings(max_examples=scaled(150, 2000), deadline=None)
@given(conversations)
def test_fork_points_are_the_models_clean_points(events: list[KnownEvent]) -> None:
    stamped = read_events_of(encode(events))
    assert [p.seq for p in fork_points(stamped)] == model_points(stamped)


@settings(max_examples=scaled(25, 300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(conversations, st.data())
def test_fork_accepts_exactly_the_models_points(
    tmp_path_factory: pytest.TempPathFactory, events: list[KnownEvent], data: st.DataObject
) -> None:
    folder = tmp_path_factory.mktemp("model")
    parent = folder / PARENT
    parent.write_bytes(encode(events))
    stamped = read_events(parent).events
    clean = model_points(stamped)
    seq = data.draw(st.sampled_from([e.seq for e in stamped]), label="seq")
    out = folder / "out"
    out.mkdir()
    if seq in clean:
        forked = fork(parent, seq, folder=out)
        assert read_events(forked.path).events[:-1] == [e for e in stamped if e.seq <= seq]
    else:
        with pytest.raises(NotAForkPoint) as refused:
            fork(parent, seq, folder=out)
        assert [p.seq for p in refused.value.points] == clean


def test_the_model_sees_the_case_the_audit_named() -> None:
    # A user message while a call is open is no clean point; once answered, the next one is.
    events = [
        event_of(("user",)),
        event_of(("ask", ["c1"])),
        event_of(("user",)),
        event_of(("answer", "c1")),
        event_of(("user",)),
    ]
    stamped = read_events_of(encode(events))
    assert model_points(stamped) == [1, 5] == [p.seq for p in fork_points(stamped)]


def read_events_of(data: bytes) -> list[Event]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / PARENT
        path.write_bytes(data)
        result = read_events(path)
    assert result.stop is None
    return result.events
