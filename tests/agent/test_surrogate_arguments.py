"""A lone surrogate (half of a UTF-16 pair) in a tool call's arguments: the call is refused before it is asked
for or started, with a sentence the model reads; the run goes on, no traceback, no false "outcome unknown",
and the workspace is untouched. Both ways a server can send one: as a character of the arguments' text (a
`\\ud800` escape in the stream's JSON) and as an escape inside the arguments' own JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.hostile_streams import env_for, openai_call
from tests.agent.openai_server import Answer, OpenAIServer, Stream, reply_stream
from tests.agent.test_recorded_servers import wren
from wren_tui.journal.events import Message, RunEnd, ToolEnd, ToolStart

LONE = "\ud800"
# Each tool, and arguments holding a lone surrogate where the finding put one.
CALLS = {
    "run_command": {"command": f"echo {LONE} > made.txt"},
    "write_file path": {"path": f"made{LONE}.txt", "content": "x\n"},
    "write_file content": {"path": "made.txt", "content": f"x{LONE}\n"},
    "edit_file": {"path": "README.md", "old": "a", "new": f"b{LONE}"},
    "read_file": {"path": f"README{LONE}.md"},
    "list_dir": {"path": f"src{LONE}"},
}


def tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.relative_to(folder).parts[0].startswith(".")
    }


async def run_once(workspace: Path, name: str, text: str) -> tuple[int, str, str, list[dict[str, Any]]]:
    """`wren run --yes` against a server whose first reply is the call `name(text)`, and whose next is text."""

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        if any(m["role"] == "tool" for m in body["messages"]):
            return reply_stream("I will send it again.")
        return Stream([openai_call("c1", name, [text])])

    async with OpenAIServer(answer) as server:
        code, out, err = await wren(
            ["run", "--dir", "../journals", "--model", "openai", "--yes", "change it"],
            workspace,
            env_for("openai", server.base_url),
        )
        return code, out, err, server.requests


@pytest.mark.parametrize("which", list(CALLS))
async def test_a_call_whose_arguments_escape_a_lone_surrogate_is_refused_before_it_starts(
    workspace: Path, which: str
) -> None:
    name = which.split()[0]
    (workspace / "README.md").write_text("a\n")
    before = tree(workspace)
    code, out, err, requests = await run_once(workspace, name, json.dumps(CALLS[which], ensure_ascii=True))
    assert code == 0, err
    assert "Traceback" not in err + out
    assert "[not run: a lone surrogate in its arguments]" in out
    events = events_of(only_journal(journals_of(workspace)))
    assert not [e for e in events if isinstance(e, ToolStart)]  # never started: nothing to guess on resume
    [end] = [e for e in events if isinstance(e, ToolEnd)]
    assert (end.id, end.ok, end.stopped_by) == ("c1", False, None)
    [said] = [e.message.content for e in events if isinstance(e, Message) and e.message.role == "tool"]
    assert said.startswith("not run:") and f"the arguments of {name} hold a lone surrogate" in said
    assert said in [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]  # the model read why
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "done"
    assert tree(workspace) == before


@pytest.mark.parametrize("which", list(CALLS))
async def test_a_lone_surrogate_character_in_a_calls_arguments_runs_as_the_replacement_character_journaled(
    workspace: Path, which: str
) -> None:
    """The stream's text is made valid where it is read (U+FFFD for the half): the call runs with what the
    journal holds, and ends (ok or failed) with its tool_end: never a traceback, never "outcome unknown"."""
    name = which.split()[0]
    (workspace / "README.md").write_text("a\n")
    code, out, err, _requests = await run_once(workspace, name, json.dumps(CALLS[which], ensure_ascii=False))
    assert code == 0, err
    assert "Traceback" not in err + out
    events = events_of(only_journal(journals_of(workspace)))
    [asked] = [e.message for e in events if isinstance(e, Message) and e.message.tool_calls]
    assert asked.tool_calls is not None
    journaled = json.loads(asked.tool_calls[0].args)
    assert journaled == json.loads(json.dumps(CALLS[which]).replace("\\ud800", "\\ufffd"))
    assert [e.id for e in events if isinstance(e, ToolStart)] == ["c1"]
    assert [e.id for e in events if isinstance(e, ToolEnd)] == ["c1"]
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "done"
    if which == "write_file path":
        assert (workspace / "made\ufffd.txt").read_bytes() == b"x\n"
    if which == "write_file content":
        assert (workspace / "made.txt").read_text() == "x\ufffd\n"


async def test_resume_says_the_same_refusal_for_a_refused_call_whose_tool_message_was_lost(workspace: Path) -> None:
    """Killed between the refused call's tool_end and its tool message: resume tells the model the same sentence."""
    from wren_tui.journal.events import ChatMessage, RunStart, ToolCall
    from wren_tui.journal.writer import encode_line

    args = json.dumps({"path": f"README{LONE}.md"}, ensure_ascii=True)
    call = ToolCall("c1", "read_file", args)
    journals = journals_of(workspace)
    journals.mkdir()
    sid = "s-20261207-100000-lost"
    lines = [
        RunStart(pid=1, cwd=str(workspace), model="gpt-4o-mini", version="0.1.0"),
        Message(message=ChatMessage(role="user", content="read it")),
        Message(message=ChatMessage(role="assistant", content="", tool_calls=[call])),
        ToolEnd(id="c1", ok=False, elapsed_ms=0, chars=10),
    ]
    (journals / f"{sid}.jsonl").write_bytes(
        b"".join(encode_line(e, seq, "2026-12-07T10:00:00.000Z") for seq, e in enumerate(lines, 1))
    )

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        return reply_stream("I will send it again.")

    async with OpenAIServer(answer) as server:
        code, out, err = await wren(
            ["resume", "--dir", "../journals", "--model", "openai", "--yes", sid],
            workspace,
            env_for("openai", server.base_url),
        )
        requests = server.requests
    assert code == 0, err
    assert "not run (a lone surrogate in its arguments), as recorded before" in out
    [said] = [m["content"] for m in requests[0]["messages"] if m["role"] == "tool"]
    assert said.startswith("not run:") and "the arguments of read_file hold a lone surrogate" in said
