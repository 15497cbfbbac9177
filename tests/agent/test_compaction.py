"""Compaction, journal first: a `compaction` event holding the summary is written before any request uses it,
and a resume or a fork rebuilds what the run sent (the one rule in `journal.replay.compact`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.agent.conftest import events_of, only_journal
from tests.agent.hostile_streams import anthropic_call, anthropic_text, env_for
from tests.agent.openai_server import (
    Answer,
    OpenAIServer,
    Status,
    Stream,
    call_chunk,
    finish_chunk,
    reply_stream,
    sse,
    usage_chunk,
)
from tests.agent.test_instructions import wren
from tests.conftest import run_wren
from wren_tui.agent.models.http import ServerError, too_long
from wren_tui.agent.models.scripted import summarize
from wren_tui.journal.events import (
    SUMMARY_MARK,
    ChatMessage,
    Compaction,
    Error,
    Event,
    Message,
    RunStart,
    ToolEnd,
    ToolStart,
    Usage,
)
from wren_tui.journal.replay import Replayer, replay, summary_message

SMALL = {"WREN_CONTEXT_WINDOW": "3000", "WREN_COMPACT_AT": "40"}


def two_files(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("".join(f"alpha line {n}\n" for n in range(200)))
    (workspace / "b.txt").write_text("".join(f"beta line {n}\n" for n in range(200)))
    return workspace, tmp_path / "journals"


def wire(messages: list[ChatMessage]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


def sent(request: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in request["messages"] if m["role"] != "system"]


def compactions(events: list[Event]) -> list[Compaction]:
    return [e for e in events if isinstance(e, Compaction)]


async def test_past_the_threshold_a_summary_is_journaled_before_the_request_and_resume_and_forks_send_as_the_run(
    tmp_path: Path,
) -> None:
    workspace, journals = two_files(tmp_path)
    first = run_wren(["run", "--dir", str(journals), "what is in @a.txt"], cwd=workspace, env=SMALL)
    assert first.returncode == 0, first.stderr
    second = run_wren(["resume", "--dir", str(journals), "and @b.txt?"], cwd=workspace, env=SMALL)
    assert second.returncode == 0, second.stderr
    assert "[compacted 2 messages into a summary" in second.stdout
    journal = only_journal(journals)
    events = events_of(journal)
    (compaction,) = compactions(events)
    said = [e for e in events if isinstance(e, Message)]
    task1, reply1, task2, reply2 = said
    assert (compaction.first_seq, compaction.last_seq, compaction.replaced) == (task1.seq, reply1.seq, 2)
    # Journal first: after the message it keeps, before the reply of the request that used it.
    assert task2.seq < compaction.seq < reply2.seq
    assert compaction.tokens_after < compaction.tokens_before
    assert "Request 1: 'what is in @a.txt'" in compaction.summary
    rebuilt = replay(events).messages
    assert wire(rebuilt) == wire([summary_message(compaction), task2.message, reply2.message])
    # `wren fork ID` marks the first point after the compaction.
    listed = run_wren(["fork", journal.stem, "--dir", str(journals)], cwd=workspace).stdout.splitlines()
    marked = [line for line in listed if "after the compaction" in line]
    assert len(marked) == 1 and marked[0].strip().startswith(f"{reply2.seq}  assistant:")
    assert f"after the compaction at seq {compaction.seq}" in marked[0]

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        return reply_stream("Fine.")

    async with OpenAIServer(answer) as server:
        env = {"WREN_BASE_URL": server.base_url, "WREN_API_KEY": "not-a-real-key-0000"}
        resumed = await wren(["resume", "--dir", str(journals), "--model", "openai", "third"], workspace, env)
        assert resumed.returncode == 0, resumed.stderr
        before = await wren(["fork", journal.stem, str(reply1.seq), "--dir", str(journals), "--json"], workspace, env)
        after = await wren(["fork", journal.stem, str(reply2.seq), "--dir", str(journals), "--json"], workspace, env)
        assert before.returncode == 0 and after.returncode == 0, before.stderr + after.stderr
        for made in (before, after):
            fork_id = json.loads(made.stdout)["id"]
            done = await wren(["resume", fork_id, "--dir", str(journals), "--model", "openai", "go on"], workspace, env)
            assert done.returncode == 0, done.stderr
    resume_request, before_request, after_request = (sent(r) for r in server.requests)
    # The resume sends exactly the rebuilt conversation (the summary, what came after), then its message.
    assert resume_request == [*wire(rebuilt), ("user", "third")]
    # A fork before the compaction has the full messages; a fork after it has the summary.
    assert before_request == [*wire([task1.message, reply1.message]), ("user", "go on")]
    assert after_request == [*wire(rebuilt), ("user", "go on")]
    assert all(SUMMARY_MARK not in content for _, content in before_request)


async def test_a_summary_request_that_fails_leaves_no_compaction_and_the_next_run_compacts(tmp_path: Path) -> None:
    workspace, journals = two_files(tmp_path)
    failing = [True]

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        if body["messages"][-1]["content"].startswith("[compaction]"):
            if failing[0]:
                return Status(400, {"error": {"message": "bad request", "type": "invalid_request_error"}})
            return reply_stream("Summary: the user asked about a.txt and it was read.")
        return reply_stream("Fine.")

    async with OpenAIServer(answer) as server:
        # The server counts 10 tokens a request: the gauge passes half of 1000 on what came after it.
        env = {"WREN_BASE_URL": server.base_url, "WREN_API_KEY": "not-a-real-key-0000"}
        env |= {"WREN_CONTEXT_WINDOW": "1000", "WREN_COMPACT_AT": "50"}
        first = await wren(["run", "--dir", str(journals), "--model", "openai", "see @a.txt"], workspace, env)
        assert first.returncode == 0, first.stderr
        second = await wren(["resume", "--dir", str(journals), "--model", "openai", "and @b.txt"], workspace, env)
        assert second.returncode != 0
        events = events_of(only_journal(journals))
        assert not compactions(events), "a failed summary left a compaction"
        failing[0] = False
        third = await wren(["resume", "--dir", str(journals), "--model", "openai", "go on"], workspace, env)
        assert third.returncode == 0, third.stderr
    events = events_of(only_journal(journals))
    (compaction,) = compactions(events)
    assert compaction.summary == "Summary: the user asked about a.txt and it was read."
    last = sent(server.requests[-1])
    assert last[0] == ("user", summary_message(compaction).content)
    assert last[-1] == ("user", "go on")
    assert sum(isinstance(e, RunStart) for e in events) == 3


def test_chat_compact_replaces_the_conversation_by_a_summary_the_model_reads_back(tmp_path: Path) -> None:
    workspace, journals = two_files(tmp_path)
    typed = "what is in @a.txt\nand @b.txt?\n/compact\nwhat did I ask first?\n/quit\n"
    done = run_wren(["chat", "--dir", str(journals), "--yes"], cwd=workspace, input=typed)
    assert done.returncode == 0, done.stderr
    assert "[compacted 4 messages into a summary" in done.stdout
    assert "First you asked: 'what is in @a.txt'." in done.stdout  # read back from the summary
    events = events_of(only_journal(journals))
    (compaction,) = compactions(events)
    assert compaction.replaced == 4
    messages = replay(events).messages
    assert messages[0].content.startswith(SUMMARY_MARK) and len(messages) == 3


def test_a_second_compaction_replaces_the_first_summary_too_and_keeps_the_project_instructions() -> None:
    def said(seq: int, role: Literal["user", "assistant"], content: str) -> Message:
        return Message(seq=seq, ts="2026-12-07T07:00:00.000Z", message=ChatMessage(role=role, content=content))

    instructions = said(1, "user", "[project instructions] Use tabs.")
    events: list[Event] = [
        instructions,
        said(2, "user", "one"),
        said(3, "assistant", "did one"),
        said(4, "user", "two"),
        Compaction(seq=5, ts="2026-12-07T07:00:00.000Z", summary="S1", first_seq=1, last_seq=3, replaced=3, keep_seq=1),
        said(6, "assistant", "did two"),
        said(7, "user", "three"),
        Compaction(seq=8, ts="2026-12-07T07:00:00.000Z", summary="S2", first_seq=1, last_seq=6, replaced=4, keep_seq=1),
        said(9, "assistant", "did three"),
    ]
    result = replay(events)
    second = events[7]
    assert isinstance(second, Compaction)
    assert wire(result.messages) == [
        ("user", instructions.message.content),
        ("user", summary_message(second).content),
        ("user", "three"),
        ("assistant", "did three"),
    ]
    assert result.seqs == [1, 8, 7, 9]
    # Fed in runs cut anywhere, the rebuild is the same.
    for cut in range(len(events) + 1):
        replayer = Replayer()
        replayer.feed(events[:cut])
        replayer.feed(events[cut:])
        assert wire(replayer.result().messages) == wire(result.messages)


def test_a_kill_while_the_summary_streams_leaves_no_compaction_and_the_next_resume_compacts(tmp_path: Path) -> None:
    workspace, journals = two_files(tmp_path)
    first = run_wren(["run", "--dir", str(journals), "what is in @a.txt"], cwd=workspace, env=SMALL)
    assert first.returncode == 0, first.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")} | SMALL
    env.setdefault("XDG_STATE_HOME", str(tmp_path / "state"))
    # Paced, the scripted model thinks 20 s before it streams the summary: the kill lands inside it.
    slow = subprocess.Popen(
        [sys.executable, "-m", "wren_tui", "resume", "--dir", str(journals), "--pace-factor", "20", "and @b.txt?"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert slow.stdout is not None
        for line in slow.stdout:
            if line.startswith("[compacting"):
                break
        else:
            raise AssertionError(f"the resume never began compacting: {slow.stderr.read() if slow.stderr else ''}")
        journal = only_journal(journals)
        size = journal.stat().st_size
        slow.send_signal(signal.SIGKILL)
        slow.wait(30)
    finally:
        if slow.poll() is None:
            slow.kill()
            slow.wait(30)
    assert journal.stat().st_size == size
    assert not compactions(events_of(journal))
    again = run_wren(["resume", "--dir", str(journals), "what did I ask first?"], cwd=workspace, env=SMALL)
    assert again.returncode == 0, again.stderr
    events = events_of(journal)
    (compaction,) = compactions(events)
    # The killed run's message is kept, and the summary holds every request before the last one.
    assert "Request 2: 'and @b.txt?'" in compaction.summary
    assert "First you asked: 'what is in @a.txt'." in again.stdout


LIMIT = 5000  # characters of messages the fake server takes in one request

TOO_LONG_BODIES: dict[str, dict[str, Any]] = {
    "openai": {
        "error": {
            "message": "This model's maximum context length is 1250 tokens. However, your messages resulted in "
            "1400 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
    "vllm": {
        "object": "error",
        "message": "This model's maximum context length is 1250 tokens. However, you requested 1400 tokens "
        "(1400 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    },
    "llama.cpp": {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 1400,
            "n_ctx": 1250,
        }
    },
    "ollama": {"error": "input length exceeds the context length (1400 > 1250)"},
    "deepseek": {
        "error": {
            "message": "This model's maximum context length is 1250 tokens. However, you requested 1400 tokens "
            "(1400 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_request_error",
        }
    },
    "openrouter": {
        "error": {
            "message": "This endpoint's maximum context length is 1250 tokens. However, you requested about 1400 "
            'tokens. Please reduce the length of either one, or use the "middle-out" transform.',
            "code": 400,
        }
    },
    "anthropic-shape": {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "prompt is too long: 1400 tokens > 1250 maximum"},
    },
}


@pytest.mark.parametrize("server", sorted(TOO_LONG_BODIES))
async def test_a_request_the_server_refuses_as_too_long_is_compacted_and_sent_again(
    tmp_path: Path, server: str
) -> None:
    workspace, journals = two_files(tmp_path)
    accepted: list[int] = []

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        size = sum(len(m["content"] or "") for m in body["messages"] if m["role"] != "system")
        if size > LIMIT:
            return Status(400, TOO_LONG_BODIES[server])
        accepted.append(size)
        if body["messages"][-1]["content"].startswith("[compaction]"):
            return reply_stream("Summary: a.txt was read.")
        return reply_stream("Read.")

    async with OpenAIServer(answer) as fake:
        env = {"WREN_BASE_URL": fake.base_url, "WREN_API_KEY": "not-a-real-key-0000"}
        first = await wren(["run", "--dir", str(journals), "--model", "openai", "see @a.txt"], workspace, env)
        assert first.returncode == 0, first.stderr
        second = await wren(["resume", "--dir", str(journals), "--model", "openai", "and @b.txt?"], workspace, env)
        assert second.returncode == 0, second.stderr
    assert "[the server refused the request as too long; compacted, sending it again]" in second.stdout
    events = events_of(only_journal(journals))
    (compaction,) = compactions(events)
    assert compaction.summary == "Summary: a.txt was read."
    refused = [e for e in events if isinstance(e, Error)]
    assert len(refused) == 1 and refused[0].seq < compaction.seq
    assert len(accepted) == 3 and max(accepted) <= LIMIT
    last = replay(events).messages
    assert last[0].content.startswith(SUMMARY_MARK) and last[-1].content == "Read."


def test_a_refusal_that_is_not_about_length_is_not_taken_for_one() -> None:
    assert not too_long(400, ServerError("Invalid model name", "invalid_request_error"))
    assert not too_long(400, ServerError("max_tokens must be at most 4096", "invalid_request_error"))
    assert too_long(413, None)


def test_the_project_instructions_stay_ahead_of_the_summary_and_are_not_summarized(tmp_path: Path) -> None:
    workspace, journals = two_files(tmp_path)
    (workspace / ".git").mkdir()
    (workspace / "AGENTS.md").write_text("Answer in one line.\n")
    typed = "what is in @a.txt\nand @b.txt?\n/compact\n/quit\n"
    done = run_wren(["chat", "--dir", str(journals), "--yes"], cwd=workspace, input=typed)
    assert done.returncode == 0, done.stderr
    events = events_of(only_journal(journals))
    (compaction,) = compactions(events)
    instructions = next(e for e in events if isinstance(e, Message))
    assert compaction.keep_seq == instructions.seq and compaction.first_seq == instructions.seq
    rebuilt = replay(events).messages
    assert wire(rebuilt) == wire([instructions.message, summary_message(compaction)])
    assert "Answer in one line" not in compaction.summary


def test_the_scripted_summary_of_a_long_conversation_is_bounded_and_keeps_the_first_request() -> None:
    said = [ChatMessage(role="user", content=f"request number {n}") for n in range(1, 101)]
    summary = summarize(said)
    assert summary.count("Request ") == 30
    assert "Request 1: 'request number 1'" in summary and "Request 100: 'request number 100'" in summary
    assert "(70 requests between these are left out)" in summary


def test_a_rewind_to_a_point_before_a_compaction_is_refused_naming_the_fork_that_rebuilds_it(tmp_path: Path) -> None:
    workspace, journals = two_files(tmp_path)
    typed = "what is in @a.txt\nand @b.txt?\n/compact\nwhat did I ask first?\n/quit\n"
    assert run_wren(["chat", "--dir", str(journals), "--yes"], cwd=workspace, input=typed).returncode == 0
    journal = only_journal(journals)
    (compaction,) = compactions(events_of(journal))
    points = json.loads(run_wren(["fork", "--dir", str(journals), journal.stem, "--json"], cwd=tmp_path).stdout)
    before = [p["seq"] for p in points if p["seq"] < compaction.seq]
    assert before, points
    lines = journal.read_bytes()
    done = run_wren(["rewind", "--dir", str(journals), journal.stem, str(before[-1]), "--yes"], cwd=workspace)
    assert done.returncode == 2, done.stderr
    assert f"is before the compaction at seq {compaction.seq}" in done.stderr
    assert f"fork there instead (wren fork --dir {journals} {journal.stem} {before[-1]})" in done.stderr
    assert journal.read_bytes() == lines  # nothing journaled, nothing changed


STEPS = 30  # model steps (the default limit of one turn): 29 files read, then the answer
WINDOW_CHARS = 12_000  # what each fake server takes in one request: its messages as JSON, in characters


class LongTask:
    """A model server of a small window that works a 30-step task: it reads f00.txt … f28.txt, one a step, then answers.

    It refuses a request whose messages pass its window with that server's own error body, and measures
    each request it accepts. Its progress is its own (the calls it has sent), so a compaction that lost a
    step's result would show as a file read twice or never. The OpenAI one reports honest usage (a token a
    4 characters); the Anthropic one 5 input tokens whatever it got, as a server that counts wrong."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.step = 0
        self.accepted: list[int] = []
        self.refused = 0
        self.summaries = 0

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> Answer:
        size = len(json.dumps(body["messages"]))
        if size > WINDOW_CHARS:
            self.refused += 1
            if self.model == "anthropic":
                return Status(400, TOO_LONG_BODIES["anthropic-shape"])
            return Status(400, TOO_LONG_BODIES["openai"])
        self.accepted.append(size)
        if "[compaction]" in json.dumps(body["messages"][-1]):
            self.summaries += 1
            return self._text(f"Summary {self.summaries}: the task is to read f00.txt to f28.txt; {self.step} read.")
        if self.step == STEPS - 1:
            return self._text(f"All {self.step} files read.")
        name, self.step = f"f{self.step:02}.txt", self.step + 1
        return self._call(f"call_{self.step}", json.dumps({"path": name}), size // 4)

    def _text(self, text: str) -> Answer:
        if self.model == "anthropic":
            return Stream([anthropic_text([text])])
        return reply_stream(text)

    def _call(self, call_id: str, args: str, tokens: int) -> Answer:
        if self.model == "anthropic":
            return Stream([anthropic_call(call_id, "read_file", args)])
        call = call_chunk(0, args, call_id=call_id, name="read_file")
        return Stream([sse(call, finish_chunk("tool_calls"), usage_chunk(tokens, 9))])


@pytest.mark.parametrize("model", ["openai", "anthropic"])
async def test_a_thirty_step_task_far_past_a_small_window_finishes_with_compactions_and_no_request_past_it(
    tmp_path: Path, model: str
) -> None:
    workspace, journals = long_task_files(tmp_path)
    task = LongTask(model)
    async with OpenAIServer(task.answer) as server:
        env = env_for(model, server.base_url) | {"WREN_CONTEXT_WINDOW": "3000", "WREN_COMPACT_AT": "80"}
        done = await wren(["run", "--dir", str(journals), "--model", model, "read every f*.txt"], workspace, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert f"All {STEPS - 1} files read." in done.stdout, done.stdout[-3000:]
    events = events_of(only_journal(journals))
    each_file_read_once_past_two_compactions(events, workspace)
    assert max(task.accepted) <= WINDOW_CHARS
    if model == "anthropic":
        # Its usage says 5 tokens a request, so Wren's gauge trusts too little: the refusals (the server's own
        # body) are what compact, and a summary request refused in turn is summarized in two parts.
        assert task.refused >= 2 and "[the server refused the request as too long; compacted" in done.stdout
        assert "[the summary request was refused as too long; summarizing the first part alone]" in done.stdout
    rebuilt = replay(events).messages
    assert rebuilt[-1].content == f"All {STEPS - 1} files read."


def test_a_thirty_step_task_of_the_scripted_model_past_a_small_window_finishes_with_compactions(
    tmp_path: Path,
) -> None:
    workspace, journals = long_task_files(tmp_path)
    env = {"WREN_CONTEXT_WINDOW": "3000", "WREN_COMPACT_AT": "80"}
    done = run_wren(["run", "--dir", str(journals), "read every file here"], cwd=workspace, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    # The scripted model knows where it stands after a compaction from the summary it wrote (its files read).
    assert f"I read all {STEPS - 1} files, one a step: {40 * (STEPS - 1)} lines in all." in done.stdout
    events = events_of(only_journal(journals))
    each_file_read_once_past_two_compactions(events, workspace)
    usages = [e for e in events if isinstance(e, Usage)]
    assert usages and all(u.estimated <= 3000 and u.window == 3000 for u in usages)


def long_task_files(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for n in range(STEPS - 1):
        (workspace / f"f{n:02}.txt").write_text("".join(f"file {n} line {k} of the long task\n" for k in range(40)))
    return workspace, tmp_path / "journals"


def each_file_read_once_past_two_compactions(events: list[Event], workspace: Path) -> None:
    # Far more than the window went through the task: 29 files of ~1,300 characters each.
    assert sum(len(f.read_text()) for f in workspace.iterdir()) > 3 * WINDOW_CHARS
    assert len(compactions(events)) >= 2
    # Each file was read once, in order: no step lost to a compaction, none run twice.
    started = [e for e in events if isinstance(e, ToolStart)]
    calls = {
        c.id: json.loads(c.args)["path"] for e in events if isinstance(e, Message) for c in e.message.tool_calls or []
    }
    assert [calls[s.id] for s in started] == [f"f{n:02}.txt" for n in range(STEPS - 1)]
    assert all(e.ok for e in events if isinstance(e, ToolEnd))
    # The journal rebuilds what the run sent last: a summary, then what came after it.
    rebuilt = replay(events).messages
    assert rebuilt[0].content.startswith(SUMMARY_MARK)
