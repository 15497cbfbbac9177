"""Every recorded server response, replayed byte for byte through a loopback server into the real CLI.

Each recording in tests/fixtures/gateway (SOURCES.md says where each came from) is served exactly as
recorded, cut into HTTP chunks every 61 bytes and inside every multi-byte character, to `wren run
--model openai` or `--model anthropic`. A reply gives an exact journal (text, reasoning and tool-call
arguments as the chunks concatenate, usage as counted) and exit 0; a refusal gives one sentence with
the server's own words, an `error` event, `run_end error`, exit 1, and a retry only where one can help.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.openai_server import Answer, OpenAIServer, Recorded, Status
from tests.agent.recorded import (
    GATEWAY,
    Expected,
    anthropic_expected,
    cuts,
    error_message,
    fixture,
    journaled,
    openai_expected,
)
from wren_tui.agent.tools import TOOLS
from wren_tui.journal.events import Delta, Error, Event, Message, RunEnd, ToolStart, Usage

ANTHROPIC_KEY = "sk-ant-api03-" + "k" * 24


@dataclass(frozen=True)
class Serve:
    """One answer of the server: a recording, with the status and type it is served with."""

    fixture: str
    status: int = 200
    content_type: str = "text/event-stream"
    headers: tuple[tuple[str, str], ...] = ()
    # A 200 that carries an error (a proxy's JSON error, an error event mid-stream): no reply comes of it.
    fails: bool = False


@dataclass(frozen=True)
class Row:
    model: str
    serves: tuple[Serve, ...]
    status: int = 0
    # For a refusal: what its one sentence must say besides the server's own words, and how many requests it took.
    says: tuple[str, ...] = ()
    requests: int = 0


JSON = "application/json"
QUICK_RETRY = (("Retry-After", "0.01"),)

ROWS: dict[str, Row] = {
    "openai tool call, then text": Row(
        "openai", (Serve("openai_toolcall_get_capital.sse"), Serve("openai_text_after_tool.sse"))
    ),
    "groq whole call in one chunk, usage in the finish chunk": Row(
        "openai", (Serve("groq_toolcall_weather.sse"), Serve("openai_text_after_tool.sse"))
    ),
    "deepseek reasoning, tool call, reasoning, answer": Row(
        "openai", (Serve("deepseek_toolcall.sse"), Serve("deepseek_reasoning_answer.sse"))
    ),
    "ollama parallel calls, then a whole JSON reply to a streaming request": Row(
        "openai",
        (Serve("ollama_parallel_run_command.sse"), Serve("ollama_nonstream_completion.json", content_type=JSON)),
    ),
    "openrouter JSON error with HTTP 200, retried, then a reply": Row(
        "openai",
        (Serve("openrouter_429.json", content_type=JSON, fails=True), Serve("openai_text_after_tool.sse")),
    ),
    "openrouter error event mid-stream": Row(
        "openai", (Serve("openrouter_stream_error.sse"),), status=1, says=("mid-stream",), requests=1
    ),
    "openai 401": Row(
        "openai", (Serve("openai_401.json", 401, JSON),), status=1, says=("HTTP 401", "check WREN_API_KEY"), requests=1
    ),
    "openrouter 429 every time": Row(
        "openai",
        (Serve("openrouter_429.json", 429, JSON, QUICK_RETRY),) * 4,
        status=1,
        says=("HTTP 429", "Google", "gave up after 4 attempts", "limiting requests"),
        requests=4,
    ),
    "openai 429 insufficient_quota": Row(
        "openai",
        (Serve("openai_429_insufficient_quota.json", 429, JSON, QUICK_RETRY),),
        status=1,
        says=("HTTP 429", "no quota left"),
        requests=1,
    ),
    "deepseek 400 reasoning_content": Row(
        "openai",
        (Serve("deepseek_400_reasoning_content.json", 400, JSON),),
        status=1,
        says=("HTTP 400", "reasoning"),
        requests=1,
    ),
    "anthropic thinking, tool use, then text": Row(
        "anthropic", (Serve("anthropic_thinking_tool_use.sse"), Serve("anthropic_text_after_thinking_tool.sse"))
    ),
    "anthropic text and two tool uses, then text": Row(
        "anthropic", (Serve("anthropic_parallel_tool_use.sse"), Serve("anthropic_text_after_tools.sse"))
    ),
    "anthropic thinking, then text": Row("anthropic", (Serve("anthropic_thinking_text.sse"),)),
    "anthropic redacted thinking, then text": Row("anthropic", (Serve("anthropic_redacted_thinking.sse"),)),
    "anthropic 529 overloaded, retried, then a reply": Row(
        "anthropic",
        (Serve("anthropic_529_overloaded.json", 529, JSON, QUICK_RETRY), Serve("anthropic_thinking_text.sse")),
    ),
    "anthropic overloaded_error event, retried, then a reply": Row(
        "anthropic", (Serve("anthropic_overloaded_event.sse", fails=True), Serve("anthropic_thinking_text.sse"))
    ),
    "anthropic 401": Row(
        "anthropic",
        (Serve("anthropic_401.json", 401, JSON),),
        status=1,
        says=("HTTP 401", "check ANTHROPIC_API_KEY"),
        requests=1,
    ),
}


def test_every_recorded_response_has_a_row() -> None:
    recorded = {p.name for p in GATEWAY.iterdir() if p.suffix in (".sse", ".json")}
    served = {s.fixture for row in ROWS.values() for s in row.serves}
    assert recorded == served


async def wren(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("WREN_", "ANTHROPIC_"))} | env
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
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def model_env(model: str, server: OpenAIServer) -> dict[str, str]:
    if model == "anthropic":
        return {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    return {"WREN_BASE_URL": server.base_url, "WREN_API_KEY": "test-key-0123456789"}


def serving(serves: tuple[Serve, ...], every: int = 61) -> tuple[OpenAIServer, list[Answer]]:
    answers: list[Answer] = [
        Recorded(fixture(s.fixture), s.status, s.content_type, cuts(fixture(s.fixture), every), dict(s.headers))
        for s in serves
    ]
    queue = list(answers)

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        if not queue:
            return Status(400, {"error": {"message": "the test server has no recorded reply left"}})
        return queue.pop(0)

    return OpenAIServer(answer), answers


def expected_of(serve: Serve) -> Expected:
    data = fixture(serve.fixture)
    if serve.fixture.startswith("anthropic"):
        return anthropic_expected(data)
    return openai_expected(data, document=serve.content_type == JSON)


async def run_row(row: Row, workspace: Path, every: int = 61) -> tuple[int, str, str, list[Event], OpenAIServer]:
    server, _ = serving(row.serves, every)
    async with server as srv:
        status, out, err = await wren(
            ["run", "--dir", "../journals", "--model", row.model, "what is the capital of France?"],
            workspace,
            model_env(row.model, srv),
        )
    return status, out, err, events_of(only_journal(journals_of(workspace))), srv


@pytest.mark.parametrize("name", list(ROWS))
async def test_a_recorded_response_gives_an_exact_journal_or_one_sentence_with_the_servers_words(
    name: str, workspace: Path
) -> None:
    row = ROWS[name]
    status, out, err, events, srv = await run_row(row, workspace)
    assert "Traceback" not in err + out
    ends = [e for e in events if isinstance(e, RunEnd)]
    errors = [e for e in events if isinstance(e, Error)]
    expected_path = "/v1/messages" if row.model == "anthropic" else "/v1/chat/completions"
    assert set(srv.paths) == {expected_path}
    # A call to a tool Wren does not have never starts (none of the recordings asks for one of ours but Ollama).
    assert all(e.name in TOOLS for e in events if isinstance(e, ToolStart))
    assert all(e.text for e in events if isinstance(e, Delta))
    if row.status == 0:
        assert status == 0, err
        replies = [s for s in row.serves if s.status == 200 and not s.fails]
        said = [e.message for e in events if isinstance(e, Message) and e.message.role == "assistant"]
        expected = [expected_of(s) for s in replies]
        assert [journaled(m) for m in said] == [Expected(x.content, x.reasoning, x.calls) for x in expected]
        assert [(u.input_tokens, u.output_tokens) for u in events if isinstance(u, Usage)] == [
            x.usage for x in expected if x.usage is not None
        ]
        # Each failed answer was one retry, journaled as such, with the server's own words.
        failed = [s for s in row.serves if s.status != 200 or s.fails]
        assert [(e.retryable, e.attempt) for e in errors] == [(True, n + 1) for n in range(len(failed))]
        assert len(srv.requests) == len(row.serves)
        assert [e.reason for e in ends] == ["done"]
        return
    assert status == row.status
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wren: "), err
    sentence = lines[0].removeprefix("wren: ")
    data = fixture(row.serves[0].fixture)
    own = "Token limit reached" if row.serves[0].fixture.endswith(".sse") else error_message(data)
    assert own in sentence
    for words in row.says:
        assert words in sentence
    assert len(srv.requests) == row.requests
    assert errors[-1].message == sentence and not errors[-1].retryable
    assert [e.retryable for e in errors[:-1]] == [True] * (row.requests - 1)
    assert [e.reason for e in ends] == ["error"]


async def test_a_deepseek_tool_loop_journals_both_reasonings_and_sends_the_first_back(workspace: Path) -> None:
    row = ROWS["deepseek reasoning, tool call, reasoning, answer"]
    status, out, err, events, srv = await run_row(row, workspace)
    assert status == 0, err
    first, answer = (expected_of(s) for s in row.serves)
    assert first.reasoning[0][1].startswith("The user is asking for the weather in San Francisco.")
    # The second request carries the first reply's reasoning, its call, and what Wren answered for it.
    sent = [m for m in srv.requests[1]["messages"] if m["role"] == "assistant"]
    call_id, name, args = first.calls[0]
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
    assert name == "weather"
    assert sent == [
        {"role": "assistant", "content": None, "tool_calls": [call], "reasoning_content": first.reasoning[0][1]}
    ]
    assert srv.requests[1]["messages"][-1]["content"].startswith("not run: there is no tool named 'weather'")
    # The first request held no reasoning: there was none yet.
    assert not any("reasoning_content" in m for m in srv.requests[0]["messages"])
    final = [e.message for e in events if isinstance(e, Message)][-1]
    assert final.content == answer.content == 'The word "strawberry" contains three "r"s.'
    assert final.reasoning is not None and final.reasoning[0].text == answer.reasoning[0][1]
    # The terminal showed both reasonings as they streamed, apart from the answer.
    assert out.count("[thinking]\n┊ ") == 2 and "┊ The user is asking for the weather" in out
    assert "\n" + answer.content in out
    # wren log folds each reasoning to its size and first words, after the reply it belongs to.
    _status, logged, _err = await wren(["log", str(only_journal(journals_of(workspace)))], workspace, {})
    lines = [line for line in logged.splitlines() if "  message     assistant: " in line]
    start = "'The user is asking for the weather in San Francisco. I need …'"
    assert lines[0].endswith(f"-> weather({first.calls[0][2]})  · reasoning: 191 chars {start}")
    assert f"· reasoning: {len(answer.reasoning[0][1])} chars 'We need to count" in lines[1]


async def test_anthropic_thinking_goes_back_first_in_its_turn_with_its_signature(workspace: Path) -> None:
    row = ROWS["anthropic thinking, tool use, then text"]
    status, _out, err, _events, srv = await run_row(row, workspace)
    assert status == 0, err
    first = expected_of(row.serves[0])
    kind, text, signature, _ = first.reasoning[0]
    assert kind == "thinking" and signature and signature.startswith("EoQDCm0I")
    second = srv.requests[1]
    call_id = first.calls[0][0]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": text, "signature": signature},
                {"type": "tool_use", "id": call_id, "name": "fixed_version", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": second["messages"][2]["content"][0]["content"],
                }
            ],
        },
    ]
    assert second["messages"][2]["content"][0]["content"].startswith("not run: there is no tool named 'fixed_version'")
    assert second["tools"][0] == {
        "name": "read_file",
        "description": srv.requests[0]["tools"][0]["description"],
        "input_schema": srv.requests[0]["tools"][0]["input_schema"],
    }
    headers = srv.headers[0]
    assert headers["x-api-key"] == ANTHROPIC_KEY and headers["anthropic-version"] == "2023-06-01"
    assert srv.requests[0]["stream"] is True and srv.requests[0]["max_tokens"] > 0
    # The key is a secret by its name and shape: never in the journal.
    assert ANTHROPIC_KEY.encode() not in only_journal(journals_of(workspace)).read_bytes()


@pytest.mark.parametrize("name", ["anthropic thinking, tool use, then text", "openai tool call, then text"])
async def test_a_recording_cut_at_every_byte_gives_the_same_journal(name: str, workspace: Path) -> None:
    row = ROWS[name]
    status, _out, err, events, _srv = await run_row(row, workspace, every=1)
    assert status == 0, err
    said = [journaled(e.message) for e in events if isinstance(e, Message) and e.message.role == "assistant"]
    assert said == [Expected(x.content, x.reasoning, x.calls) for x in map(expected_of, row.serves)]
    assert any("😄" in m.content for m in said) or name.startswith("openai")


async def test_the_same_429_body_served_as_a_proxys_200_names_the_provider_and_is_retried(workspace: Path) -> None:
    row = ROWS["openrouter JSON error with HTTP 200, retried, then a reply"]
    status, _out, err, events, _srv = await run_row(row, workspace)
    assert status == 0, err
    retry = next(e for e in events if isinstance(e, Error))
    raw = json.loads(fixture("openrouter_429.json"))["error"]["metadata"]["raw"]
    assert "Provider returned error (Google: " in retry.message and raw in retry.message


def deepseek_refuses(body: dict[str, Any]) -> bool:
    """DeepSeek's thinking-mode rule: in a user turn that called tools, every assistant message carries
    `reasoning_content`, in that turn's requests and in every later one."""
    turns: list[list[dict[str, Any]]] = [[]]
    for m in body["messages"]:
        if m["role"] == "user":
            turns.append([])
        elif m["role"] == "assistant":
            turns[-1].append(m)
    return any(
        any(m.get("tool_calls") for m in said) and not all("reasoning_content" in m for m in said) for said in turns
    )


@pytest.mark.parametrize(
    "answer",
    ["deepseek_reasoning_answer.sse", "openai_text_after_tool.sse"],
    ids=["the answer reasoned", "the answer came without reasoning"],
)
async def test_a_second_message_after_a_deepseek_tool_loop_sends_every_reasoning_of_the_session_back(
    answer: str, workspace: Path
) -> None:
    replies = [fixture(name) for name in ("deepseek_toolcall.sse", answer, "deepseek_reasoning_answer.sse")]
    refusal = fixture("deepseek_400_reasoning_content.json")

    def reply(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        if deepseek_refuses(body):
            return Recorded(refusal, 400, JSON)
        data = replies[min(len(srv.requests), len(replies)) - 1]
        return Recorded(data, cuts=cuts(data))

    async with OpenAIServer(reply) as srv:
        env = model_env("openai", srv)
        status, out, err = await wren(["run", "--dir", "../journals", "--model", "openai", "weather?"], workspace, env)
        assert status == 0, err
        sid = out.split()[0]
        status, out, err = await wren(
            ["resume", "--dir", "../journals", "--model", "openai", sid, "and tomorrow?"], workspace, env
        )
    assert status == 0, err
    assert len(srv.requests) == 3
    said = [m for m in srv.requests[2]["messages"] if m["role"] == "assistant"]
    first = openai_expected(replies[0]).reasoning[0][1]
    second = [text for _kind, text, _sig, _data in openai_expected(replies[1]).reasoning]
    # Each reply's own reasoning goes back; one that came without any goes back empty, as DeepSeek accepts.
    assert [m["reasoning_content"] for m in said] == [first, *(second or [""])]
