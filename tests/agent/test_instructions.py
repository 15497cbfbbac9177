"""Project instructions (AGENTS.md, CLAUDE.md): read at each run's start, journaled before the request, replayed.

Each test runs `wren` as a separate process; the requests are read where the model gets them (a
local OpenAI-compatible server that keeps every request's body), or from the journal.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.agent.conftest import events_of, only_journal
from tests.agent.openai_server import Answer, OpenAIServer, reply_stream
from tests.conftest import run_wren
from wren_tui.agent.injection import INSTRUCTIONS_LIMIT, INSTRUCTIONS_MARK
from wren_tui.journal.events import Event, Injected, Message, RunStart


def repository(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with AGENTS.md at its root and a workspace two folders down; and the journals folder."""
    root = tmp_path / "repo"
    workspace = root / "pkg" / "app"
    workspace.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "AGENTS.md").write_text("ROOT RULE: use tabs.\n")
    return workspace, tmp_path / "journals"


async def wren(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")} | (env or {})
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "wren_tui", *args, cwd=cwd, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return subprocess.CompletedProcess(args, proc.returncode, out.decode(), err.decode())


def injected(events: list[Event]) -> list[Injected]:
    return [e for e in events if isinstance(e, Injected)]


def user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_each_folder_from_the_repository_root_gives_its_agents_md_and_agents_md_wins_over_claude_md(
    tmp_path: Path,
) -> None:
    workspace, journals = repository(tmp_path)
    (workspace.parent / "CLAUDE.md").write_text("PKG RULE from CLAUDE.md\n")
    (workspace / "AGENTS.md").write_text("APP RULE from AGENTS.md\n")
    (workspace / "CLAUDE.md").write_text("NEVER GIVEN: AGENTS.md wins in this folder\n")
    (tmp_path / "AGENTS.md").write_text("NEVER GIVEN: above the repository root\n")
    done = run_wren(["run", "--dir", str(journals), "--yes", "list the files"], cwd=workspace)
    assert done.returncode == 0, done.stderr
    events = events_of(only_journal(journals))
    given = injected(events)
    assert [Path(e.path) for e in given] == [
        tmp_path / "repo" / "AGENTS.md",
        workspace.parent / "CLAUDE.md",
        workspace / "AGENTS.md",
    ]
    for event in given:
        data = Path(event.path).read_bytes()
        assert (event.sha256, event.size) == (hashlib.sha256(data).hexdigest(), len(data))
        assert event.tokens == (len(data.decode()) + 3) // 4 and not event.refused
    messages = [e for e in events if isinstance(e, Message)]
    first = messages[0].message
    assert first.role == "user" and first.content.startswith(INSTRUCTIONS_MARK)
    assert first.content.index("ROOT RULE") < first.content.index("PKG RULE") < first.content.index("APP RULE")
    assert "NEVER GIVEN" not in first.content
    # Journaled before the message that carries the text, and that before the task.
    last_given = max(e.seq for e in given)
    assert messages[0].seq == last_given + 1 and messages[1].message.content == "list the files"
    assert "instructions: 3 files" in done.stdout and "AGENTS.md  21 chars, ~6 tokens" in done.stdout


async def test_a_resume_sends_the_text_first_given_and_a_changed_agents_md_once_more(tmp_path: Path) -> None:
    workspace, journals = repository(tmp_path)

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        return reply_stream("Noted.")

    async with OpenAIServer(answer) as server:
        env = {"WREN_BASE_URL": server.base_url, "WREN_API_KEY": "not-a-real-key-0000"}
        first = await wren(["run", "--dir", str(journals), "--model", "openai", "hello"], workspace, env)
        assert first.returncode == 0, first.stderr
        (tmp_path / "repo" / "AGENTS.md").write_text("ROOT RULE, CHANGED: use spaces.\n")
        second = await wren(["resume", "--dir", str(journals), "--model", "openai", "again"], workspace, env)
        assert second.returncode == 0, second.stderr
        third = await wren(["resume", "--dir", str(journals), "--model", "openai", "once more"], workspace, env)
        assert third.returncode == 0, third.stderr
    assert len(server.requests) == 3
    sent = [user_texts(r) for r in server.requests]
    assert sent[0][0].startswith(INSTRUCTIONS_MARK) and "use tabs" in sent[0][0] and sent[0][1] == "hello"
    # The resume sends what the first run sent (the old text), then the changed file once, then its message.
    assert sent[1][:2] == sent[0] and "CHANGED: use spaces" in sent[1][2] and sent[1][3] == "again"
    assert sent[2][:4] == sent[1] and sent[2][4] == "once more"
    assert "instructions: changed since they were given" in second.stdout
    assert "instructions: unchanged since they were given" in third.stdout
    events = events_of(only_journal(journals))
    runs = [e.seq for e in events if isinstance(e, RunStart)]
    ends = [*runs[1:], 10**9]
    per_run = [[e for e in injected(events) if start < e.seq < end] for start, end in zip(runs, ends, strict=True)]
    assert [len(given) for given in per_run] == [1, 1, 0]


async def test_a_fork_from_before_the_change_resumed_sends_the_text_its_parent_sent_then_the_new(
    tmp_path: Path,
) -> None:
    workspace, journals = repository(tmp_path)

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        return reply_stream("Noted.")

    async with OpenAIServer(answer) as server:
        env = {"WREN_BASE_URL": server.base_url, "WREN_API_KEY": "not-a-real-key-0000"}
        first = await wren(["run", "--dir", str(journals), "--model", "openai", "hello"], workspace, env)
        assert first.returncode == 0, first.stderr
        parent = only_journal(journals)
        reply = next(e for e in events_of(parent) if isinstance(e, Message) and e.message.role == "assistant")
        made = await wren(["fork", parent.stem, str(reply.seq), "--dir", str(journals), "--json"], workspace, env)
        assert made.returncode == 0, made.stderr
        (tmp_path / "repo" / "AGENTS.md").write_text("ROOT RULE, CHANGED: use spaces.\n")
        forked = json.loads(made.stdout)["id"]
        resumed = await wren(["resume", forked, "--dir", str(journals), "--model", "openai", "go on"], workspace, env)
        assert resumed.returncode == 0, resumed.stderr
    sent = [user_texts(r) for r in server.requests]
    assert sent[1][:2] == sent[0] and "CHANGED" in sent[1][2] and sent[1][3] == "go on"


def test_an_agents_md_that_is_a_fifo_is_refused_in_a_sentence_and_the_run_goes_on(tmp_path: Path) -> None:
    workspace, journals = repository(tmp_path)
    os.mkfifo(workspace / "AGENTS.md")
    done = run_wren(["run", "--dir", str(journals), "--yes", "list the files"], cwd=workspace, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "AGENTS.md: not given: it is not a regular file (a FIFO, a device or a socket)" in done.stdout
    given = injected(events_of(only_journal(journals)))
    assert [(Path(e.path).name, e.refused) for e in given] == [("AGENTS.md", False), ("AGENTS.md", True)]


def test_an_agents_md_linked_out_of_the_repository_is_refused_and_its_text_never_sent(tmp_path: Path) -> None:
    workspace, journals = repository(tmp_path)
    secret = tmp_path / "elsewhere.md"
    secret.write_text("OUTSIDE TEXT\n")
    (workspace / "AGENTS.md").symlink_to(secret)
    done = run_wren(["run", "--dir", str(journals), "--yes", "list the files"], cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert f"it is a link to {secret}, outside the repository {tmp_path / 'repo'}" in done.stdout
    assert b"OUTSIDE TEXT" not in only_journal(journals).read_bytes()


def test_a_huge_agents_md_is_clipped_and_the_clip_is_said(tmp_path: Path) -> None:
    workspace, journals = repository(tmp_path)
    (workspace / "AGENTS.md").write_bytes(b"HEAD RULE\n" + b"y" * (INSTRUCTIONS_LIMIT * 3))
    done = run_wren(["run", "--dir", str(journals), "--yes", "list the files"], cwd=workspace)
    assert done.returncode == 0, done.stderr
    clipped = f"clipped: the first {INSTRUCTIONS_LIMIT:,} bytes of {INSTRUCTIONS_LIMIT * 3 + 10:,}"
    assert clipped in done.stdout
    events = events_of(only_journal(journals))
    given = injected(events)[-1]
    assert given.note == clipped and given.chars == INSTRUCTIONS_LIMIT
    text = next(e.message.content for e in events if isinstance(e, Message))
    assert text.count("y") < INSTRUCTIONS_LIMIT + 200


def test_an_agents_md_of_a_gigabyte_is_read_no_further_than_the_limit(tmp_path: Path) -> None:
    workspace, journals = repository(tmp_path)
    with (workspace / "AGENTS.md").open("wb") as out:
        out.write(b"HEAD RULE\n")
        out.truncate(1 << 30)  # sparse: the NULs past the head would make it binary if they were read as text
    done = run_wren(["run", "--dir", str(journals), "--yes", "list the files"], cwd=workspace)
    assert done.returncode == 0, done.stderr
    # The first 32 KiB holds NULs after the head: refused as binary, in a sentence, never read whole.
    assert "AGENTS.md: not given: it is binary (it holds NUL bytes)" in done.stdout
