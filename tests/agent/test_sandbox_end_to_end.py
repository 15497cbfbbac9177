"""Path tricks end to end: `wren run --model openai` against a fake server on 127.0.0.1, then the journal read back.

The model asks for the tricks of the QA pass (grep through a symlinked file, write_file ".", a write
over a hard link planted at the old temporary name, a FIFO, the journals folder put inside the
workspace with --dir); nothing outside the workspace may change, and no outside byte may reach the
journal or the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.agent.conftest import events_of
from tests.agent.openai_server import Answer, OpenAIServer, Stream, call_chunk, finish_chunk, reply_stream, sse
from tests.reliability.sandbox import SECRET, layout, snapshot
from wren_tui.journal.events import Message, ToolEnd

SID = "s-20260110-000000-sbox"
CALLS: list[tuple[str, dict[str, str]]] = [
    ("grep", {"pattern": "SECRET", "path": "."}),
    ("write_file", {"path": ".", "content": "clobbered by the model"}),
    ("write_file", {"path": "", "content": "clobbered by the model"}),
    ("write_file", {"path": "victim.txt", "content": "OVERWRITTEN"}),
    ("read_file", {"path": "link.txt"}),
    ("read_file", {"path": "pipe"}),
    ("read_file", {"path": f"journals/{SID}.jsonl"}),
    ("list_dir", {"path": "journals"}),
    ("read_file", {"path": "a\x00b"}),
]


def _answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if done == len(CALLS):
        return reply_stream("I looked around.")
    name, arguments = CALLS[done]
    chunk = call_chunk(0, json.dumps(arguments), call_id=f"c{done}", name=name)
    return Stream([sse(chunk, finish_chunk("tool_calls"))])


async def _wren(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")} | env
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "wren_tui",
        *args,
        cwd=cwd,
        env=full,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_path_tricks_from_a_model_change_nothing_outside_and_leak_nothing_into_the_journal(
    tmp_path: Path,
) -> None:
    ws, outside = layout(tmp_path)
    os.symlink(outside / "secret.txt", ws / "link.txt")
    (ws / "victim.txt").write_text("v\n")
    os.link(outside / "target.txt", ws / ".victim.txt.wren-tmp")
    os.mkfifo(ws / "pipe")
    before = snapshot(tmp_path, ws)
    async with OpenAIServer(_answer) as srv:
        code, out, err = await _wren(
            ["run", "--dir", "journals", "--yes", "--model", "openai", "--session-id", SID, "look around"],
            ws,
            {"WREN_BASE_URL": srv.base_url, "WREN_API_KEY": "k-0123456789"},
        )
    assert code == 0, err
    assert snapshot(tmp_path, ws) == before  # .ws.wren-tmp beside the workspace still says KEEP ME
    journal = ws / "journals" / f"{SID}.jsonl"
    assert SECRET.encode() not in journal.read_bytes()
    assert not any(SECRET in json.dumps(request) for request in srv.requests)
    results = [e.message.content for e in events_of(journal) if isinstance(e, Message) and e.message.role == "tool"]
    ends = [e for e in events_of(journal) if isinstance(e, ToolEnd)]
    assert [e.ok for e in ends] == [True, False, False, True, False, False, False, False, False]
    assert results[0] == "no match for 'SECRET'"
    for refusal in results[1:3] + results[4:]:
        assert "\n" not in refusal and "Traceback" not in refusal  # one sentence each
    assert "is the workspace folder itself" in results[1] and "is the workspace folder itself" in results[2]
    assert results[3] == "overwrote victim.txt (11 characters)" and (ws / "victim.txt").read_text() == "OVERWRITTEN"
    assert "outside the workspace" in results[4]
    assert results[5].startswith("pipe: is a FIFO (named pipe), not a regular file")
    assert "journals folder" in results[6] and "journals folder" in results[7]
    assert "contains a NUL byte" in results[8]
    assert sorted(p.name for p in ws.iterdir()) == [
        ".victim.txt.wren-tmp",
        "journals",
        "link.txt",
        "pipe",
        "victim.txt",
    ]
    assert "I looked around." in out
