"""The call-outcome rule, one table: which calls are open and how, which points are clean, what resume does.

Every user of the rule must agree with the table: the tracker itself, replay (what resume settles
and refuses), fork_points and the fork itself (which seq it accepts), the viewer's timeline (its
fork points) and the listing (its "outcome unknown").
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wren_tui.journal.calls import CallTracker, ResumeAction
from wren_tui.journal.events import ChatMessage, Event, KnownEvent, Message, ToolCall, ToolEnd, ToolStart, Usage
from wren_tui.journal.forking import NotAForkPoint, fork, fork_points
from wren_tui.journal.reader import read_events
from wren_tui.journal.replay import Replayer, replay
from wren_tui.journal.store import describe_session
from wren_tui.journal.writer import JournalWriter
from wren_tui.sessions.local import LocalJournal
from wren_tui.tui.timeline import RowState, Timeline

RUN = ToolCall(id="c1", name="run_command", args='{"command": "make"}')
READ = ToolCall(id="c2", name="read_file", args='{"path": "a.py"}')


def user(text: str = "go") -> Message:
    return Message(message=ChatMessage(role="user", content=text))


def asks(*calls: ToolCall) -> Message:
    return Message(message=ChatMessage(role="assistant", content="", tool_calls=list(calls) or None))


def says(text: str = "done") -> Message:
    return Message(message=ChatMessage(role="assistant", content=text))


def answer(call: ToolCall) -> Message:
    return Message(message=ChatMessage(role="tool", content="out", tool_call_id=call.id))


def start(call: ToolCall, *, read_only: bool = False, denied: bool = False) -> ToolStart:
    return ToolStart(id=call.id, name=call.name, read_only=read_only, approval="denied" if denied else "approved")


def end(call: ToolCall, **how: Any) -> ToolEnd:
    return ToolEnd(id=call.id, **{"ok": True, "elapsed_ms": 3, "chars": 3, **how})


@dataclass(frozen=True)
class Row:
    name: str
    events: list[KnownEvent]
    open: dict[str, tuple[str, ResumeAction]]  # call id -> (state, what resume does)
    clean: list[int]  # seqs of the clean fork points


TABLE = [
    Row("a question and a plain answer", [user(), says()], {}, [1, 2]),
    Row("asked, never started", [user(), asks(RUN)], {"c1": ("never_started", "run")}, [1]),
    Row(
        "a side effect started, nothing after",
        [user(), asks(RUN), start(RUN)],
        {"c1": ("outcome_unknown", "refuse")},
        [1],
    ),
    Row(
        "a side effect ended, its output lost",
        [user(), asks(RUN), start(RUN), end(RUN)],
        {"c1": ("output_lost", "refuse")},
        [1],
    ),
    Row(
        "cancelled while it ran, its output lost",
        [user(), asks(RUN), start(RUN), end(RUN, ok=False, stopped_by="cancel")],
        {"c1": ("output_lost", "refuse")},
        [1],
    ),
    Row(
        "a read-only call cut off",
        [user(), asks(READ), start(READ, read_only=True)],
        {"c2": ("read_only_started", "run_again")},
        [1],
    ),
    Row(
        "a read-only call ended, its output lost",
        [user(), asks(READ), start(READ, read_only=True), end(READ)],
        {"c2": ("read_only_started", "run_again")},
        [1],
    ),
    Row(
        "denied, the answer lost",
        [user(), asks(RUN), start(RUN, denied=True), end(RUN, ok=False, stopped_by="approval")],
        {"c1": ("never_started", "run")},
        [1],
    ),
    Row(
        "recorded as not run (a loop)",
        [user(), asks(RUN), end(RUN, ok=False, stopped_by="loop")],
        {"c1": ("not_run", "say_not_run")},
        [1],
    ),
    Row(
        "answered, then a plain answer",
        [user(), asks(RUN), start(RUN), end(RUN), answer(RUN), says()],
        {},
        [1, 6],
    ),
    Row(
        "two calls, one answered",
        [user(), asks(RUN, READ), start(RUN), end(RUN), answer(RUN), start(READ, read_only=True)],
        {"c2": ("read_only_started", "run_again")},
        [1],
    ),
    Row(
        "a user message while a call is open is no clean point",
        [user(), asks(RUN), user("again"), says("hm")],
        {"c1": ("never_started", "run")},
        [1],
    ),
    Row(
        "events of other types change nothing",
        [user(), Usage(input_tokens=1, output_tokens=2), says(), Usage(input_tokens=1, output_tokens=2)],
        {},
        [1, 3],
    ),
    Row(
        "a start and an end for a call nobody asked for open nothing",
        [user(), start(RUN), end(RUN), says()],
        {},
        [1, 4],
    ),
    Row("an answer to a call nobody asked for closes nothing", [user(), answer(RUN), says()], {}, [1, 3]),
]


def _write(path: Path, events: list[KnownEvent]) -> list[Event]:
    with JournalWriter.create(path, fsync="none") as writer:
        for event in events:
            writer.append(event)
    return read_events(path).events


def _timeline(path: Path) -> tuple[list[int], dict[str, RowState]]:
    """The viewer's clean points, and the state its tool list shows of each call left open once the writer is gone."""
    source = LocalJournal(path)
    assert source.open()
    try:
        timeline = Timeline(source)
        for chunk in source.lines().chunks():
            timeline.fold(chunk)
        rows = [timeline.call(number) for number in range(timeline.calls)]
        asked = [row for row in rows if row.asked_item is not None]
        shown = {row.id: row.state(writer_alive=False) for row in asked if not row.answered}
        return [timeline.event(p).seq for p in timeline.fork_items], shown
    finally:
        source.close()


@pytest.mark.parametrize("row", TABLE, ids=[r.name for r in TABLE])
def test_every_user_of_the_call_rule_agrees_with_the_table(tmp_path: Path, row: Row) -> None:
    path = tmp_path / "s-20260101-000000-abcd.jsonl"
    events = _write(path, row.events)

    tracker = CallTracker()
    tracker.feed(events)
    assert {c.call.id: (c.state, c.on_resume) for c in tracker.open_calls()} == row.open
    assert tracker.any_open == bool(row.open)

    # Replay, as resume reads the journal: what it settles, and what it refuses to guess about.
    replayed = replay(events)
    assert {c.call.id: (c.state, c.on_resume) for c in replayed.open_calls} == row.open
    assert {c.call.id for c in replayed.uncertain_calls} == {i for i, (_, a) in row.open.items() if a == "refuse"}

    assert [p.seq for p in fork_points(events)] == row.clean
    # The viewer shows the same points, and each open call in the state resume reads.
    points, shown = _timeline(path)
    assert points == row.clean
    assert shown == {call: state for call, (state, _) in row.open.items()}

    # The fork streams the journal with its own tracker: it accepts exactly the clean points.
    for seq in range(1, len(events) + 1):
        if seq in row.clean:
            forked = fork(path, seq, folder=tmp_path)
            assert [e.seq for e in read_events(forked.path).events] == [*range(1, seq + 1), seq + 1]
            forked.path.unlink()
        else:
            with pytest.raises(NotAForkPoint):
                fork(path, seq, folder=tmp_path)

    # The listing calls a journal "outcome unknown" when resume would refuse it.
    refused = any(action == "refuse" for _, action in row.open.values())
    assert (describe_session(path).state == "outcome unknown") == refused


def test_a_clean_point_is_the_same_before_and_after_the_tracker_takes_it() -> None:
    for row in TABLE:
        tracker = CallTracker()
        for event in row.events:
            before = tracker.is_clean_point(event)
            tracker.add(event)
            assert tracker.is_clean_point(event) == before, row.name


# Sequences of the events that matter to the rule, with the few call ids that make them meet.
_calls = st.sampled_from([RUN, READ, ToolCall(id="c3", name="edit_file", args="{}")])
_steps = st.one_of(
    st.just(user()),
    st.just(says()),
    st.lists(_calls, min_size=1, max_size=2, unique_by=lambda c: c.id).map(lambda calls: asks(*calls)),
    _calls.map(answer),
    st.builds(lambda c, ro, denied: start(c, read_only=ro, denied=denied), _calls, st.booleans(), st.booleans()),
    st.builds(
        lambda c, by: end(c, stopped_by=by), _calls, st.sampled_from([None, "cancel", "loop", "approval", "timeout"])
    ),
    st.just(Usage(input_tokens=1, output_tokens=1)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_steps, min_size=1, max_size=25), st.randoms(use_true_random=False))
def test_fed_one_by_one_or_in_runs_of_any_size_the_rule_says_the_same(
    steps: list[KnownEvent], rng: random.Random
) -> None:
    events: list[Event] = [msgspec.structs.replace(e, seq=seq, ts="t") for seq, e in enumerate(steps, start=1)]
    one_by_one = CallTracker()
    points = []
    for event in events:
        if one_by_one.is_clean_point(event):
            points.append(event.seq)
        one_by_one.add(event)
    assert [p.seq for p in fork_points(events)] == points
    replayer = Replayer()
    at = 0
    while at < len(events):
        size = rng.randint(1, 6)
        replayer.feed(events[at : at + size])
        at += size
    assert replayer.result().open_calls == one_by_one.open_calls()


@settings(max_examples=150, deadline=None)
@given(st.lists(_steps, min_size=1, max_size=25))
def test_a_tracker_without_states_finds_the_same_clean_points_and_open_calls(steps: list[KnownEvent]) -> None:
    # Fork, fork points and the viewer's timeline skip tool starts and ends (states=False): only
    # messages open and close a call, so the points must be the ones the full tracker finds.
    events: list[Event] = [msgspec.structs.replace(e, seq=seq, ts="t") for seq, e in enumerate(steps, start=1)]
    full, light = CallTracker(), CallTracker(states=False)
    for event in events:
        assert light.is_clean_point(event) == full.is_clean_point(event)
        full.add(event)
        light.add(event)
        assert light.any_open == full.any_open
    assert [m.seq for m in CallTracker(states=False).clean_points(events)] == [
        m.seq for m in CallTracker().clean_points(events)
    ]


def test_a_tracker_without_states_refuses_to_tell_states() -> None:
    tracker = CallTracker(states=False)
    tracker.add(msgspec.structs.replace(asks(RUN), seq=1, ts="t"))
    with pytest.raises(ValueError, match="states=False"):
        tracker.open_calls()
