"""A `rewind` event in replay, clean points and a fork: the conversation goes back to its point; an undo back again."""

from __future__ import annotations

from pathlib import Path

from wren_tui.journal.events import ChatMessage, KnownEvent, Message, Rewind, ToolCall, ToolStart
from wren_tui.journal.forking import fork, fork_points
from wren_tui.journal.reader import read_events
from wren_tui.journal.replay import replay
from wren_tui.journal.writer import JournalWriter


def said(role: str, text: str, calls: list[ToolCall] | None = None) -> Message:
    return Message(message=ChatMessage(role=role, content=text, tool_calls=calls))  # type: ignore[arg-type]


CALL = ToolCall(id="c1", name="run_command", args='{"command": "make"}')


def journal(tmp_path: Path, events: list[KnownEvent]) -> Path:
    path = tmp_path / "s-20260101-000000-abcd.jsonl"
    with JournalWriter.create(path, fsync="none") as writer:
        for event in events:
            writer.append(event)
    return path


def contents(events: list[object]) -> list[str]:
    return [m.content for m in replay(events).messages]  # type: ignore[arg-type]


def test_a_rewind_sends_the_conversation_up_to_its_point_and_an_undo_the_one_before_it_with_its_open_call(
    tmp_path: Path,
) -> None:
    path = journal(
        tmp_path,
        [
            said("user", "one"),  # 1
            said("assistant", "done one"),  # 2
            said("user", "two"),  # 3
            said("assistant", "running", [CALL]),  # 4
            ToolStart(id="c1", name="run_command", read_only=False, approval="approved"),  # 5: killed after it
            Rewind(at_seq=2, snapshot="a" * 40, before="b" * 40),  # 6
            said("user", "three"),  # 7
            said("assistant", "done three"),  # 8
            Rewind(at_seq=5, snapshot="b" * 40, before="c" * 40, undoes=6),  # 9: undo of 6
        ],
    )
    events = read_events(path).events
    upto = {seq: [e for e in events if e.seq <= seq] for seq in (5, 6, 8, 9)}
    assert contents(upto[5]) == ["one", "done one", "two", "running"]
    assert [c.state for c in replay(upto[5]).open_calls] == ["outcome_unknown"]
    # The rewind: the conversation at seq 2, no call open (resume would not refuse).
    assert contents(upto[6]) == ["one", "done one"] and replay(upto[6]).open_calls == []
    assert contents(upto[8]) == ["one", "done one", "three", "done three"]
    # Its undo: the conversation as it was just before the rewind, its uncertain call open again.
    assert contents(upto[9]) == ["one", "done one", "two", "running"]
    assert [c.call.id for c in replay(upto[9]).uncertain_calls] == ["c1"]
    # Clean points follow: after the rewind, seq 7 and 8 are clean (the open call was left behind).
    assert [p.seq for p in fork_points(upto[8])] == [1, 2, 3, 7, 8]


def test_a_fork_after_a_rewind_that_left_an_open_call_behind_starts_at_a_clean_point(tmp_path: Path) -> None:
    path = journal(
        tmp_path,
        [
            said("user", "one"),
            said("assistant", "running", [CALL]),
            ToolStart(id="c1", name="run_command", read_only=False, approval="approved"),
            Rewind(at_seq=1, snapshot="a" * 40, before="b" * 40),
            said("user", "again"),  # 5
            said("assistant", "done"),  # 6
        ],
    )
    forked = fork(path, 6, folder=tmp_path, new_id="s-20260101-000001-abcd")
    assert contents(read_events(forked.path).events) == ["one", "again", "done"]
    # A conversation a rewind goes back to before another rewind: the messages of that earlier branch.
    path2 = journal(
        tmp_path / "x",
        [
            said("user", "a"),  # 1
            said("assistant", "A"),  # 2
            said("user", "b"),  # 3
            said("assistant", "B"),  # 4
            Rewind(at_seq=2, snapshot="a" * 40, before="b" * 40),  # 5
            said("user", "c"),  # 6
            said("assistant", "C"),  # 7
            Rewind(at_seq=4, snapshot="d" * 40, before="e" * 40),  # 8: back to the abandoned branch's end
        ],
    )
    assert contents(read_events(path2).events) == ["a", "A", "b", "B"]
