"""A foreign session's clean fork points on each of its branches, and the messages up to one of them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.foreign.sessions import EXTERNAL, fixture
from wren_tui.foreign import detect
from wren_tui.foreign.conversation import Context, context, fork_points, outline
from wren_tui.journal.forking import ForkPoint


@contextmanager
def opened(path: Path) -> Iterator[int]:
    fd = os.open(path, os.O_RDONLY)
    try:
        yield fd
    finally:
        os.close(fd)


def points(path: Path) -> list[ForkPoint]:
    fmt = detect(path)
    assert fmt is not None
    with opened(path) as fd:
        return fork_points(outline(fd, fmt)).points


def context_at(path: Path, lineno: int) -> Context:
    fmt = detect(path)
    assert fmt is not None
    with opened(path) as fd:
        return context(fd, fmt, outline(fd, fmt), lineno)


def test_the_points_are_after_each_prompt_and_each_finished_reply() -> None:
    assert [(p.seq, p.role) for p in points(fixture("claude", "multi-turn"))] == [
        (3, "user"),
        (27, "assistant"),
        (33, "user"),
        (39, "assistant"),
    ]
    assert [(p.seq, p.role) for p in points(fixture("pi", "multi-turn"))] == [
        (4, "user"),
        (7, "assistant"),
        (8, "user"),
        (11, "assistant"),
    ]
    codex = points(fixture("codex", "multi-turn"))
    assert [(p.seq, p.role) for p in codex] == [(8, "user"), (16, "assistant"), (23, "user"), (31, "assistant")]
    assert codex[1].preview == "notes.txt is a short to-do list with two items."


def test_a_reply_written_as_two_lines_is_no_point_between_them(tmp_path: Path) -> None:
    # Claude Code writes "I'll list the folder first." and its tool call as lines 21 and 22.
    seqs = [p.seq for p in points(fixture("claude", "simple"))]
    assert 21 not in seqs and seqs == [3, 28]
    # Killed after the call (what a killed run leaves): no point after the prompt, the call is open.
    killed = tmp_path / "killed.jsonl"
    killed.write_bytes(b"".join(fixture("claude", "simple").read_bytes().splitlines(keepends=True)[:22]))
    assert [p.seq for p in points(killed)] == [3]


def test_every_branch_of_a_tree_has_its_points_and_the_branch_shown_comes_first() -> None:
    listed = points(EXTERNAL / "pi" / "agentlogs_branched.jsonl")
    shown = [p for p in listed if "branch" not in p.role]
    other = [p for p in listed if p.role.endswith("branch 2")]
    assert [p.seq for p in shown] == [4, 7, 12, 15, 16]
    assert [p.seq for p in other] == [8, 11] and listed.index(other[0]) > listed.index(shown[-1])
    rewound = points(EXTERNAL / "claude-code" / "claude-code-log_dag_compact_after_rewind.jsonl")
    assert [p.seq for p in rewound if "branch" in p.role] == [3, 4]  # the first attempt, rewound


def test_the_messages_up_to_a_point_follow_its_branch_and_merge_a_reply_written_in_lines() -> None:
    ctx = context_at(fixture("claude", "simple"), 28)
    assert [m.role for m in ctx.messages] == ["user", "assistant", "tool", "assistant"]
    reply = ctx.messages[1]
    assert reply.content == "I'll list the folder first." and reply.tool_calls is not None
    assert reply.tool_calls[0].name == "Bash" and ctx.messages[2].tool_call_id == reply.tool_calls[0].id
    assert ctx.cwd == "/var/tmp/wren-claude-code-simple-erjtk5c_/ws" and ctx.model == "claude-opus-5-5"
    other = context_at(EXTERNAL / "pi" / "agentlogs_branched.jsonl", 11)
    users = [m.content for m in other.messages if m.role == "user"]
    assert users == ["write a haiku about coding to haiku1.txt", "now write a second haiku to haiku2.txt"]


def test_after_a_compaction_the_context_starts_from_its_summary() -> None:
    ctx = context_at(EXTERNAL / "claude-code" / "claude-code-log_dag_compact_after_rewind.jsonl", 12)
    assert ctx.messages[0].content.startswith("This session is being continued")
    assert [m.content for m in ctx.messages][-2:] == ["After compaction", "Final answer"]
    before = context_at(EXTERNAL / "claude-code" / "claude-code-log_dag_compact_after_rewind.jsonl", 8)
    assert [m.content for m in before.messages][:2] == ["Start", "Ready"]  # a point before it: all of it
