"""Replay: messages from message events only, and every open tool call classified."""

from __future__ import annotations

from pathlib import Path

from tests.journal.helpers import session_events, write_journal
from wren_tui.journal.events import ChatMessage, Message, ToolCall, ToolEnd, ToolStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.replay import replay


def test_replay_counts_message_events_as_replayed_and_the_rest_as_skipped(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    events = read_events(path).events
    result = replay(events)
    messages = [e for e in events if isinstance(e, Message)]
    assert result.replayed == len(messages) == 6
    assert result.skipped == len(events) - len(messages) == 7
    assert result.messages == [m.message for m in messages]
    assert result.open_calls == []


def test_a_tool_end_without_its_tool_message_leaves_the_call_open() -> None:
    # Only the tool message closes a call: the model never saw a result otherwise.
    events = session_events()[:5]
    result = replay(events)
    assert [(c.call.id, c.state) for c in result.open_calls] == [("c1", "output_lost")]
    assert result.uncertain_calls[0].started == events[3]
    # How it ended is kept, for the refusal to say, but it does not settle the call.
    assert isinstance(events[4], ToolEnd) and result.uncertain_calls[0].ended == events[4]


def test_a_tool_end_is_forgotten_once_the_tool_message_answers_the_call() -> None:
    result = replay(session_events()[:6])
    assert result.open_calls == []


def test_open_calls_are_classified_by_how_far_they_got() -> None:
    calls = [
        ToolCall(id=i, name=n, args="{}") for i, n in (("a", "run_command"), ("b", "read_file"), ("c", "edit_file"))
    ]
    events = [
        Message(message=ChatMessage(role="user", content="go")),
        Message(message=ChatMessage(role="assistant", content="", tool_calls=calls)),
        ToolStart(id="b", name="read_file", read_only=True),
        ToolStart(id="c", name="edit_file", read_only=False, approval="approved"),
        ToolEnd(id="c", ok=True),
    ]
    states = {c.call.id: c.state for c in replay(events).open_calls}
    assert states == {"a": "never_started", "b": "read_only_started", "c": "output_lost"}
    assert [c.call.id for c in replay(events).uncertain_calls] == ["c"]


def test_a_call_recorded_as_not_run_is_not_uncertain_and_keeps_why() -> None:
    # A cancel (or a loop, or the limit) writes tool_end with no tool_start, then the tool message.
    call = ToolCall(id="x", name="edit_file", args="{}")
    events = [
        Message(message=ChatMessage(role="user", content="go")),
        Message(message=ChatMessage(role="assistant", content="", tool_calls=[call])),
        ToolEnd(id="x", ok=False, elapsed_ms=0, stopped_by="cancel"),
    ]
    result = replay(events)
    assert [(c.call.id, c.state) for c in result.open_calls] == [("x", "not_run")]
    assert result.open_calls[0].ended == events[2] and result.uncertain_calls == []


def test_a_tool_result_never_doubles_a_message() -> None:
    events = session_events()
    result = replay(events)
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
