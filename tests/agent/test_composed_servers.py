"""The demo task and a kill -9, through each wire protocol, against servers whose replies are composed.

No recording can drive the demo task (it needs replies about this workspace's tests), so the
loopback server decides each reply with the offline model's own reasoning (`scripted.decide`) over
the conversation it received, and sends it in the recorded framing (tests/agent/recorded.py): the
first Anthropic reply carries a recorded thinking block, its text and signature byte for byte.
What is recorded: that thinking block and the events' framing. What is composed: the text and the
tool calls, and the usage counts.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agent.conftest import events_of, journals_of, only_journal, types_of
from tests.agent.openai_server import Answer, OpenAIServer, Recorded
from tests.agent.recorded import (
    RECORDED_THINKING,
    anthropic_conversation,
    anthropic_reply,
    cuts,
    openai_conversation,
    openai_reply,
)
from tests.agent.test_recorded_servers import model_env, wren
from wren_tui.agent.models.scripted import decide
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import ChatMessage, Message, Recovery, ToolStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import new_session_id

FIX = "run the tests, find the failing case and fix it"
SLOW = "sleep 30 && echo late > late.txt"

Brain = Callable[[list[ChatMessage]], tuple[str, list[tuple[str, dict[str, Any]]]]]


def composing(protocol: str, brain: Brain, *, think: bool = False) -> OpenAIServer:
    """A server that reads each request back into messages, asks `brain`, and answers in the recorded shape."""

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        read = anthropic_conversation if protocol == "anthropic" else openai_conversation
        messages = read(body)
        text, wanted = brain(messages)
        number = len(server.requests)
        prefix = "toolu" if protocol == "anthropic" else "call"
        calls = [(f"{prefix}_{number:02d}_{i}", name, json.dumps(args)) for i, (name, args) in enumerate(wanted)]
        if protocol == "anthropic":
            data = anthropic_reply(text, calls, think=think and number == 1)
        else:
            data = openai_reply(text, calls)
        return Recorded(data, cuts=cuts(data))

    server = OpenAIServer(answer)
    return server


def demo_brain(root: Path) -> Brain:
    def brain(messages: list[ChatMessage]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
        decision = decide(messages, root)
        return decision.text, [(name, dict(args)) for name, args in decision.calls]

    return brain


def slow_brain(messages: list[ChatMessage]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """Start one slow side-effecting command; once told its outcome is unknown, say what it will do."""
    if any(m.role == "tool" for m in messages):
        return "Its outcome is unknown, so I will check the workspace before running it again.", []
    return "Starting the slow job.", [("run_command", {"command": SLOW})]


def suite_passes(workspace: Path) -> bool:
    import subprocess

    done = subprocess.run([sys.executable, "-m", "unittest"], cwd=workspace, capture_output=True, timeout=60)
    return done.returncode == 0


async def test_the_anthropic_model_completes_the_demo_task_and_sends_the_recorded_thinking_back(tmp_path: Path) -> None:
    workspace = tmp_path / "demo"
    code, _out, err = await wren(["demo", "--prepare", str(workspace)], tmp_path, {})
    assert code == 0, err
    assert not suite_passes(workspace)
    async with composing("anthropic", demo_brain(workspace), think=True) as srv:
        folder, where = str(tmp_path / "journals"), str(workspace)
        args = ["run", "--dir", folder, "--workspace", where, "--yes", "--model", "anthropic", FIX]
        code, out, err = await wren(args, tmp_path, model_env("anthropic", srv))
    assert code == 0, err
    assert suite_passes(workspace)
    events = events_of(only_journal(tmp_path / "journals"))
    said = [e.message for e in events if isinstance(e, Message) and e.message.role == "assistant"]
    assert said[0].reasoning is not None
    kind, text, signature, _ = RECORDED_THINKING
    assert [(r.kind, r.text, r.signature) for r in said[0].reasoning] == [(kind, text, signature)]
    # Every later request carried the thinking back, first in the first assistant turn, as the API requires.
    for body in srv.requests[1:]:
        assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": text, "signature": signature}
    names = [e.name for e in events if isinstance(e, ToolStart)]
    assert names[0] == "run_command" and "edit_file" in names and names[-1] == "run_command"
    assert said[-1].content and not said[-1].tool_calls
    assert "[thinking]" in out and said[-1].content.splitlines()[0] in out


async def killed_and_resumed(protocol: str, tmp_path: Path) -> dict[str, Any]:
    """`wren run` killed with SIGKILL in its slow command, then resumed without and with --assume-failed."""
    workspace = prepare_workspace(tmp_path / protocol / "ws")
    folder = journals_of(workspace)
    sid = new_session_id()
    journal = folder / f"{sid}.jsonl"
    async with composing(protocol, slow_brain) as srv:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WREN_", "ANTHROPIC_"))}
        env |= model_env(protocol, srv)
        args = ["run", "--dir", str(folder), "--yes", "--model", protocol, "--session-id", sid, "start the slow job"]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "wren_tui", *args, cwd=workspace, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not (journal.exists() and any(isinstance(e, ToolStart) for e in read_events(journal).events)):
            assert time.monotonic() < deadline, "the run never started its command"
            assert proc.returncode is None, "the run ended before its command started"
            await asyncio.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        assert await proc.wait() == -signal.SIGKILL
        before = journal.read_bytes()
        again = ["resume", "--dir", str(folder), "--model", protocol, sid]
        refused = await wren(again, workspace, model_env(protocol, srv))
        after_refusal = journal.read_bytes()
        resumed = await wren(
            ["resume", "--dir", str(folder), "--model", protocol, "--assume-failed", sid],
            workspace,
            model_env(protocol, srv),
        )
    return {
        "sid": sid,
        "folder": folder,
        "refused": refused,
        "unchanged": before == after_refusal,
        "resumed": resumed,
        "events": events_of(journal),
        "last_request": srv.requests[-1],
        "read": anthropic_conversation if protocol == "anthropic" else openai_conversation,
    }


async def test_a_killed_anthropic_run_refuses_then_continues_exactly_as_an_openai_run(tmp_path: Path) -> None:
    ours, theirs = await asyncio.gather(*(killed_and_resumed(p, tmp_path) for p in ("anthropic", "openai")))
    for run in (ours, theirs):
        status, out, err = run["refused"]
        assert status == 3, out + err
        assert "run_command" in out + err and SLOW in out + err
        assert run["unchanged"]
        status, out, err = run["resumed"]
        assert status == 0, err
        told = [m for m in run["read"](run["last_request"]) if m.role == "tool"]
        assert told[-1].content.startswith("outcome unknown:")
        assert any(isinstance(e, Recovery) for e in run["events"])

    # The same journal, event for event (deltas come as fast as the bytes do), and the same refusal,
    # but for the session's id, its folder, its times and the servers' call ids.
    def kinds(run: dict[str, Any]) -> list[str]:
        return [kind for kind in types_of(run["events"]) if kind != "delta"]

    assert kinds(ours) == kinds(theirs)

    def plain(run: dict[str, Any]) -> str:
        _status, out, err = run["refused"]
        text = (out + err).replace(run["sid"], "ID").replace(str(run["folder"]), "DIR")
        # The refusal names the open call's own seq, which the number of deltas before it moves.
        started = [e.seq for e in run["events"] if isinstance(e, ToolStart)][-1]
        assert f"(seq {started})" in text
        text = text.replace(f"(seq {started})", "(seq N)")
        return re.sub(r"\b(toolu|call)_\d+_\d+\b", "CALL", re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "TS", text))

    assert "will not resume ID" in plain(ours)
    assert plain(ours) == plain(theirs)
