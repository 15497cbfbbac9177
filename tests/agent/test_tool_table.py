"""A tool is one object in one table: registered in TOOLS, it is offered to the model, approved by its
read-only flag, journaled with that flag, and run under the Toolbox's path rules; nothing else changes."""

from __future__ import annotations

import io
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import events_of
from tests.agent.openai_server import OpenAIServer, Stream, call_chunk, finish_chunk, reply_stream, sse
from wren_tui.agent.approval import ApprovalGate
from wren_tui.agent.loop import Agent, Printer
from wren_tui.agent.models.openai import OpenAIGateway
from wren_tui.agent.tools import TOOLS, Tool, Toolbox, ToolResult
from wren_tui.journal.events import ChatMessage, Message, ToolStart
from wren_tui.journal.writer import JournalWriter

LINES = {"type": "object", "properties": {"path": {"type": "string", "description": "a file"}}, "required": ["path"]}


async def _count_lines(box: Toolbox, args: dict[str, Any]) -> ToolResult:
    place = box.workspace.place(str(args.get("path", "")))
    fd, _ = box.workspace.open_file(place)
    try:
        data = os.read(fd, 1 << 20)
    finally:
        os.close(fd)
    return ToolResult(True, f"{place.rel}: {len(data.splitlines())} lines")


@pytest.fixture
def stamped(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Registers two new tools, one read-only and one with side effects; returns the calls the second got."""
    calls: list[dict[str, Any]] = []

    async def stamp(box: Toolbox, args: dict[str, Any]) -> ToolResult:
        calls.append(args)
        return ToolResult(True, "stamped")

    monkeypatch.setitem(
        TOOLS, "count_lines", Tool("count_lines", "Count the lines of a file.", LINES, True, _count_lines)
    )
    monkeypatch.setitem(TOOLS, "stamp_file", Tool("stamp_file", "Stamp a file.", LINES, False, stamp))
    return calls


async def test_a_tool_added_to_the_table_is_offered_approved_by_its_flag_and_journaled_with_it(
    tmp_path: Path, stamped: list[dict[str, Any]]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("one\ntwo\nthree\n")

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Stream:
        if any(m["role"] == "tool" for m in body["messages"]):
            return reply_stream("Counted.")
        args = json.dumps({"path": "notes.txt"})
        return Stream(
            [
                sse(
                    call_chunk(0, args, call_id="c1", name="count_lines"),
                    call_chunk(1, args, call_id="c2", name="stamp_file"),
                    finish_chunk("tool_calls"),
                )
            ]
        )

    path = tmp_path / "journals" / "s-20250101-000000-abcd.jsonl"
    async with OpenAIServer(answer) as srv:
        gateway = OpenAIGateway(base_url=srv.base_url, model="m", backoff=0.01, rng=random.Random(1))
        with JournalWriter.create(path) as writer:
            # No terminal and no --yes: calls with side effects are denied, read-only ones run.
            agent = Agent(writer, gateway, Toolbox(root), ApprovalGate("deny"), printer=Printer(io.StringIO()))
            agent.say(ChatMessage(role="user", content="count the lines of notes.txt"))
            assert await agent.turn() == "done"

    offered = {t["function"]["name"]: t for t in srv.requests[0]["tools"]}
    assert list(offered) == list(TOOLS)
    assert offered["count_lines"] == {
        "type": "function",
        "function": {"name": "count_lines", "description": "Count the lines of a file.", "parameters": LINES},
    }
    events = events_of(path)
    starts = {e.id: (e.name, e.read_only, e.approval) for e in events if isinstance(e, ToolStart)}
    assert starts == {"c1": ("count_lines", True, "auto"), "c2": ("stamp_file", False, "denied")}
    results = {e.message.tool_call_id: e.message.content for e in events if isinstance(e, Message)}
    assert results["c1"] == "notes.txt: 3 lines"
    assert results["c2"].startswith("not run: denied")
    assert stamped == []


async def test_a_tool_added_to_the_table_gets_the_workspace_path_rules(
    tmp_path: Path, stamped: list[dict[str, Any]]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("outside\n")
    box = Toolbox(root)
    result = await box.run("count_lines", json.dumps({"path": "../secret.txt"}))
    assert not result.ok and "outside the workspace" in result.content
    assert "count_lines" in (await box.run("no_such_tool", "{}")).content
