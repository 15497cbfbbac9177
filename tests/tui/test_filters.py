"""The session screen's filters through Pilot: what each shows, the status line's count, live appends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.tui.conftest import screen_text, session_app, wait_for
from tests.tui.journals import SESSION, assistant, encode, finished_story, story, tool_result, user, write_journal
from wren_tui.cli.watch import ONLY_CHOICES
from wren_tui.journal.events import ChatMessage, KnownEvent, Message, Reasoning, ToolCall, ToolEnd, ToolStart
from wren_tui.sessions.local import LocalJournal
from wren_tui.tui.app import WrenApp
from wren_tui.tui.filters import ONLY, Only
from wren_tui.tui.filters import shown as shown_items
from wren_tui.tui.timeline import Timeline
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine

# finished_story's items (its two deltas are a reply that came whole, so not items): 24 of them.
SHOWN: dict[Only | None, list[int]] = {
    None: [1, 2, *range(5, 27)],
    # What the model says: its replies with text.
    "thinking": [5, 10, 16, 20, 25],
    # Every call: the reply asking for it, its start, its end, its result.
    "tools": [5, 6, 7, 8, 10, 11, 12, 13, 16, 17, 18, 19, 20, 21, 22, 23],
    # The shell calls (not read-only at their start) and the edit; not the read_file call (10-13).
    "writes": [5, 6, 7, 8, 16, 17, 18, 19, 20, 21, 22, 23],
    # The failed test run's tool_end and the gateway's error.
    "errors": [7, 15],
}


def _app(path: Path, only: Only | None = None) -> WrenApp:
    return session_app(path, only=only)


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


async def _reachable(pilot: Pilot[object], app: WrenApp) -> list[int]:
    """The seqs a person reaches with the cursor, from Home down to the end."""
    view = app.screen.query_one(ConversationView)
    await pilot.press("home")
    seqs: list[int] = []
    while view.selected_event is not None and view.selected_event.seq not in seqs:
        seqs.append(view.selected_event.seq)
        await pilot.press("down")
    return seqs


@pytest.mark.parametrize("only", ["thinking", "tools", "writes", "errors"])
async def test_watch_only_shows_what_the_filter_keeps_and_the_status_says_how_many_are_hidden(
    tmp_path: Path, only: Only
) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    app = _app(journal, only)
    async with app.run_test(size=(120, 50)) as pilot:
        label = {"thinking": "thinking", "tools": "tool calls", "writes": "writes", "errors": "errors"}[only]
        hidden = len(SHOWN[None]) - len(SHOWN[only])
        await wait_for(pilot, lambda: f"only {label}: {hidden} hidden" in _status(app), "the filter's status")
        assert await _reachable(pilot, app) == SHOWN[only]


async def test_filters_have_keys_and_0_shows_everything_again(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    app = _app(journal)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_for(pilot, lambda: "26 events" in _status(app), "the journal read")
        assert "only" not in _status(app)
        for key, only in (("1", "thinking"), ("2", "tools"), ("3", "writes"), ("4", "errors")):
            await pilot.press(key)
            assert await _reachable(pilot, app) == SHOWN[only], key  # type: ignore[index]
        await pilot.press("0")
        assert "only" not in _status(app)
        assert await _reachable(pilot, app) == SHOWN[None]
        await pilot.press("o")  # o cycles: everything, thinking, tools...
        assert "only thinking: 19 hidden" in _status(app)
        await pilot.press("o")
        assert "only tool calls: 8 hidden" in _status(app)


async def test_the_screen_shows_no_hidden_text_under_a_filter(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    app = _app(journal, "errors")
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_for(pilot, lambda: "model gateway timed out" in screen_text(app), "the error")
        text = screen_text(app)
        assert "run the tests, find the failing case" not in text  # the user's message
        assert "Fixed: mean([]) now returns 0.0" not in text  # the model's last reply


async def test_jumping_to_a_hidden_item_turns_the_filter_off(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    app = _app(journal, "errors")
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_for(pilot, lambda: "only errors" in _status(app), "the filter on")
        view = app.screen.query_one(ConversationView)
        await pilot.press("home")
        assert view.selected_event is not None and view.selected_event.seq == 7
        await pilot.press("t")  # the next tool call, seq 11, is hidden by the filter
        assert view.selected_event is not None and view.selected_event.seq == 11
        assert view.only is None and "only" not in _status(app)


async def test_thinking_shows_a_reply_that_only_reasons_before_a_call(tmp_path: Path) -> None:
    reply = Message(
        message=ChatMessage(
            role="assistant",
            content="",
            tool_calls=[ToolCall("c1", "read_file", '{"path": "stats/core.py"}')],
            reasoning=[Reasoning(text="the empty case needs a guard", kind="reasoning_content")],
        )
    )
    silent = assistant("", ToolCall("c2", "read_file", '{"path": "stats/__init__.py"}'))
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", [user("fix the mean"), reply, silent])
    app = _app(journal, "thinking")
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_for(pilot, lambda: "only thinking: 2 hidden" in _status(app), "the filter's status")
        assert await _reachable(pilot, app) == [2]


def _append(path: Path, events: list[KnownEvent], first_seq: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, encode(events, first_seq=first_seq))
    finally:
        os.close(fd)


async def test_a_filter_applies_to_events_appended_while_following(tmp_path: Path) -> None:
    events = story()[:5]  # up to the reply that asks for the shell call
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    app = _app(journal, "writes")
    async with app.run_test(size=(120, 50)) as pilot:
        view = app.screen.query_one(ConversationView)
        # A "shell" call says it writes only at its start: its ask is hidden until then.
        await wait_for(pilot, lambda: "only writes: 3 hidden" in _status(app), "everything hidden")
        assert "I'll run the test suite first." not in screen_text(app)
        _append(journal, [ToolStart(id="call_1", name="shell", read_only=False, approval="approved")], 6)
        await wait_for(pilot, lambda: "I'll run the test suite first." in screen_text(app), "the ask revealed")
        await wait_for(pilot, lambda: "only writes: 2 hidden" in _status(app), "the count after the start")
        read = ToolCall("call_2", "read_file", '{"path": "stats/core.py"}')
        _append(
            journal,
            [
                ToolEnd(id="call_1", ok=True, elapsed_ms=4, chars=2),
                tool_result("call_1", "ok"),
                assistant("reading the module next", read),
                ToolStart(id="call_2", name="read_file", read_only=True),
                ToolEnd(id="call_2", ok=True, elapsed_ms=1, chars=9),
                tool_result("call_2", "def mean"),
            ],
            7,
        )
        await wait_for(pilot, lambda: "12 events" in _status(app), "the appended events read")
        await wait_for(pilot, lambda: "only writes: 6 hidden" in _status(app), "the reads hidden")
        assert "reading the module next" not in screen_text(app)
        assert view.follow and view.selected_event is not None and view.selected_event.seq == 8
        await pilot.press("0")
        await wait_for(pilot, lambda: "reading the module next" in screen_text(app), "everything again")


def test_watch_only_offers_every_filter_of_the_viewer() -> None:
    assert ONLY_CHOICES == ONLY


def test_a_wren_call_writes_by_what_its_tool_start_says_not_by_its_tool_name(tmp_path: Path) -> None:
    """The viewer keeps no list of Wren's write tools: a call's tool_start says whether it writes (readOnly)."""
    asked = assistant(
        "",
        ToolCall("c1", "run_command", '{"command": "make"}'),
        ToolCall("c2", "fetch_issue", '{"number": 38}'),  # a tool the viewer knows nothing of
        ToolCall("c3", "read_file", '{"path": "a.py"}'),
        ToolCall("c4", "write_file", '{"path": "b.py"}'),  # the run ended before it started: it wrote nothing
    )
    events: list[KnownEvent] = [
        user("tidy up"),
        asked,
        ToolStart(id="c1", name="run_command", read_only=False, approval="approved"),
        ToolEnd(id="c1", ok=True, elapsed_ms=3, chars=2),
        tool_result("c1", "ok"),
        ToolStart(id="c2", name="fetch_issue", read_only=False, approval="approved"),
        ToolEnd(id="c2", ok=True, elapsed_ms=1, chars=2),
        tool_result("c2", "ok"),
        ToolStart(id="c3", name="read_file", read_only=True),
        ToolEnd(id="c3", ok=True, elapsed_ms=1, chars=2),
        tool_result("c3", "ok"),
    ]
    source = LocalJournal(write_journal(tmp_path / f"{SESSION}.jsonl", events))
    assert source.open()
    try:
        timeline = Timeline(source)
        for chunk in source.lines().chunks():
            timeline.fold(chunk)
        writes = {timeline.call(number).id: bool(timeline.call_writes[number]) for number in range(timeline.calls)}
        assert writes == {"c1": True, "c2": True, "c3": False, "c4": False}
        shown = shown_items(timeline, "writes", 0, len(timeline))
        # The ask (it asks for calls that write), and the starts, ends and results of c1 and c2.
        assert [timeline.event(at).seq for at, keep in enumerate(shown) if keep] == [2, 3, 4, 5, 6, 7, 8]
    finally:
        source.close()
