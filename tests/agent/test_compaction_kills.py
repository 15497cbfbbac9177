"""The kill loop across compaction: a run killed -9 while the summary streams, right after the compaction event,
or while the next request's reply streams, resumes and finishes; no tool call runs twice, every journal reads
whole, and the request the resume sends is, byte for byte, the one the uninterrupted run sent at that point."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import events_of, only_journal
from tests.agent.openai_server import (
    Answer,
    OpenAIServer,
    Stream,
    call_chunk,
    finish_chunk,
    sse,
    text_chunk,
    usage_chunk,
)
from tests.agent.test_instructions import wren
from wren_tui.journal.events import Compaction, Message, ToolStart
from wren_tui.journal.replay import replay

FILES = 10
ENV = {"WREN_CONTEXT_WINDOW": "3000", "WREN_COMPACT_AT": "80", "WREN_API_KEY": "not-a-real-key-0000"}
_SAID = re.compile(r"Summary: (\d+) files read\.")


def done_so_far(messages: list[dict[str, Any]]) -> int:
    """The files read, from the request alone: the last summary's count, then the tool results after it."""
    count, since = 0, 0
    for m in messages:
        found = _SAID.search(m["content"] or "") if m["role"] == "user" else None
        if found:
            count, since = int(found.group(1)), 0
        elif m["role"] == "tool":
            since += 1
    return count + since


def reply(body: dict[str, Any], hang_after: int | None = None) -> Answer:
    """What a model of a small window would answer, decided by the request alone (so a resume gets the same)."""
    messages = body["messages"]
    size = len(json.dumps(messages))
    if (messages[-1]["content"] or "").startswith("[compaction]"):
        data = sse(text_chunk(f"Summary: {done_so_far(messages[:-1])} files read."), finish_chunk("stop"))
        return Stream([data[: len(data) // 2], data[len(data) // 2 :]], hang_after=hang_after)
    n = done_so_far(messages)
    if n == FILES:
        return Stream([sse(text_chunk(f"All {FILES} files read."), finish_chunk("stop"), usage_chunk(size // 4, 5))])
    call = call_chunk(0, json.dumps({"path": f"f{n:02}.txt"}), call_id=f"call_{n}", name="read_file")
    data = sse(call, finish_chunk("tool_calls"), usage_chunk(size // 4, 9))
    return Stream([data[:40], data[40:]], hang_after=hang_after)


def files(tmp_path: Path, journals: str) -> tuple[Path, Path]:
    """The workspace both runs read (the same folder: it is named in the system prompt), and a journals folder."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    for n in range(FILES):
        (workspace / f"f{n:02}.txt").write_text("".join(f"file {n} line {k} of the task\n" for k in range(40)))
    return workspace, tmp_path / journals


async def uninterrupted(tmp_path: Path) -> list[bytes]:
    workspace, journals = files(tmp_path, "whole")
    async with OpenAIServer(lambda body, headers: reply(body)) as server:
        done = await wren(
            ["run", "--dir", str(journals), "--model", "openai", "read every file"], workspace, env(server)
        )
    assert done.returncode == 0, done.stderr
    assert len([e for e in events_of(only_journal(journals)) if isinstance(e, Compaction)]) >= 1
    return server.raw


def env(server: OpenAIServer) -> dict[str, str]:
    return ENV | {"WREN_BASE_URL": server.base_url}


def is_summary_request(raw: bytes) -> bool:
    return json.loads(raw)["messages"][-1]["content"].startswith("[compaction]")


# Where the kill lands: the request held (counted from the first summary request) and the pieces sent first.
KILL_POINTS = {
    "while the summary streams": (0, 1),
    "after the compaction event, before the next reply": (1, 0),
    "while the next reply streams": (1, 1),
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
async def test_a_run_killed_across_a_compaction_resumes_sending_what_the_whole_run_sent_and_runs_no_call_twice(
    tmp_path: Path, point: str
) -> None:
    reference = await uninterrupted(tmp_path)
    after, pieces = KILL_POINTS[point]
    held = next(i for i, raw in enumerate(reference) if is_summary_request(raw)) + after
    workspace, journals = files(tmp_path, "killed")
    received = [0]

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        received[0] += 1
        return reply(body, hang_after=pieces if received[0] == held + 1 else None)

    async with OpenAIServer(answer) as server:
        full = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")} | env(server)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *["-m", "wren_tui", "run", "--dir", str(journals), "--model", "openai", "read every file"],
            cwd=workspace,
            env=full,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            await asyncio.wait_for(server.holding.wait(), 60)
            journal = only_journal(journals)
            size = journal.stat().st_size
            proc.kill()
            await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        # Everything the killed run sent until the kill is what the whole run sent.
        assert server.raw == reference[: held + 1]
        assert journal.stat().st_size == size
        killed = events_of(journal)  # reads whole: every line a complete event
        assert (point == "while the summary streams") != any(isinstance(e, Compaction) for e in killed)
        resumed = await wren(["resume", "--dir", str(journals), "--model", "openai"], workspace, env(server))
        assert resumed.returncode == 0, resumed.stderr
        assert f"All {FILES} files read." in resumed.stdout
    # The resume's first request is the one the whole run sent at the point of the kill, byte for byte, and
    # so is every request after it.
    assert server.raw[held + 1] == reference[held]
    assert server.raw[held + 1 :] == reference[held:]
    events = events_of(journal)
    calls = {}
    started = []
    for event in events:
        if isinstance(event, Message):
            calls |= {c.id: json.loads(c.args)["path"] for c in event.message.tool_calls or []}
        elif isinstance(event, ToolStart):
            started.append(calls[event.id])
    assert started == [f"f{n:02}.txt" for n in range(FILES)]
    assert replay(events).messages[-1].content == f"All {FILES} files read."
