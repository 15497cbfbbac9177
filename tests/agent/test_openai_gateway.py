"""The openai gateway against a real HTTP server on 127.0.0.1, streaming the way servers do."""

from __future__ import annotations

import asyncio
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.openai_server import (
    Answer,
    OpenAIServer,
    Status,
    Stream,
    call_chunk,
    finish_chunk,
    reply_stream,
    split_at,
    sse,
    text_chunk,
    usage_chunk,
)
from wren_tui.agent.models.base import GatewayError, Reply, RetryPart
from wren_tui.agent.models.openai import OpenAIGateway, SSEDecoder
from wren_tui.agent.tools import TOOLS
from wren_tui.journal.events import ChatMessage, Error, Message, ToolEnd

ASK = [ChatMessage(role="user", content="hello")]


def gateway(server: OpenAIServer, **kw: Any) -> OpenAIGateway:
    return OpenAIGateway(
        base_url=server.base_url, api_key="test-key-123", model="m", backoff=0.01, rng=random.Random(1), **kw
    )


async def collect(gw: OpenAIGateway) -> tuple[Reply, list[RetryPart]]:
    reply, retries = Reply(), []
    async for part in gw.stream(ASK, list(TOOLS.values())):
        if isinstance(part, RetryPart):
            reply, _ = Reply(), retries.append(part)
        else:
            reply.add(part)
    return reply, retries


async def test_tool_call_fragments_and_a_split_utf8_character_assemble_into_one_reply() -> None:
    data = sse(
        text_chunk("Café — "),
        text_chunk("ünïcode ✓"),
        call_chunk(0, '{"comm', call_id="call_a", name="run_command"),
        call_chunk(0, 'and": "python -m unit'),
        call_chunk(1, '{"path": "stats/', call_id="call_b", name="read_file"),
        call_chunk(0, 'test"}'),
        call_chunk(1, 'core.py"}'),
        finish_chunk("tool_calls"),
        usage_chunk(42, 17),
    )
    accent = data.index("é".encode()) + 1  # between the two bytes of é
    check = data.index("✓".encode()) + 2  # inside the three bytes of ✓
    arg = data.index(b"unit") + 2
    async with OpenAIServer(lambda body, headers: Stream(split_at(data, accent, check, arg, 3, len(data) - 5))) as srv:
        reply, retries = await collect(gateway(srv))
    assert retries == []
    assert reply.content == "Café — ünïcode ✓"
    calls = reply.tool_calls("x")
    assert [(c.id, c.name, c.args) for c in calls] == [
        ("call_a", "run_command", '{"command": "python -m unittest"}'),
        ("call_b", "read_file", '{"path": "stats/core.py"}'),
    ]
    assert (reply.input_tokens, reply.output_tokens, reply.finish) == (42, 17, "tool_calls")
    assert srv.headers[0]["authorization"] == "Bearer test-key-123"
    assert srv.requests[0]["stream"] is True and srv.requests[0]["tools"][0]["type"] == "function"


def test_sse_decoder_gives_the_same_events_however_the_bytes_are_cut() -> None:
    data = sse(text_chunk("naïve ☃ text"), finish_chunk("stop")).replace(b"\n", b"\r\n", 2)
    whole = SSEDecoder().feed(data)
    for cut in range(1, len(data)):
        decoder = SSEDecoder()
        assert decoder.feed(data[:cut]) + decoder.feed(data[cut:]) + decoder.end() == whole


async def test_a_429_is_retried_and_the_second_answer_is_used() -> None:
    answers: list[Answer] = [Status(429, {"error": {"message": "slow down"}}), reply_stream("done after a retry")]
    async with OpenAIServer(lambda body, headers: answers.pop(0)) as srv:
        reply, retries = await collect(gateway(srv))
    assert reply.content == "done after a retry"
    assert [(r.attempt, "429" in r.message, "slow down" in r.message) for r in retries] == [(1, True, True)]
    assert len(srv.requests) == 2


async def test_a_connection_dropped_mid_stream_is_retried_without_keeping_the_partial_reply() -> None:
    answers: list[Answer] = [
        Stream(split_at(sse(text_chunk("partial words that never"), finish_chunk("stop")), 10, 30), drop_after=2),
        reply_stream("the whole reply"),
    ]
    async with OpenAIServer(lambda body, headers: answers.pop(0)) as srv:
        reply, retries = await collect(gateway(srv))
    assert reply.content == "the whole reply"
    assert len(retries) == 1 and retries[0].attempt == 1


async def test_a_401_is_not_retried_and_says_what_to_check() -> None:
    async with OpenAIServer(lambda body, headers: Status(401, {"error": {"message": "bad key"}})) as srv:
        with pytest.raises(GatewayError) as caught:
            await collect(gateway(srv))
    assert "HTTP 401" in str(caught.value) and "bad key" in str(caught.value) and "WREN_API_KEY" in str(caught.value)
    assert not caught.value.retryable
    assert len(srv.requests) == 1


async def test_a_server_that_keeps_failing_is_given_up_after_the_last_attempt() -> None:
    async with OpenAIServer(lambda body, headers: Status(503, {"error": {"message": "overloaded"}})) as srv:
        with pytest.raises(GatewayError) as caught:
            await collect(gateway(srv, max_attempts=3))
    assert "gave up after 3 attempts" in str(caught.value)
    assert len(srv.requests) == 3


# --- through the CLI, as a user runs it ---------------------------------------------------------


async def wren(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
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


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_a_run_records_each_retry_as_an_error_event_then_the_reply(workspace: Path) -> None:
    answers: list[Answer] = [Status(500, {"error": {"message": "boom"}}), reply_stream("Hello from the server.")]
    async with OpenAIServer(lambda body, headers: answers.pop(0)) as srv:
        code, out, err = await wren(
            ["run", "--dir", "../journals", "say hello"],
            workspace,
            {"WREN_BASE_URL": srv.base_url, "WREN_API_KEY": "k-0123456789"},
        )
    assert code == 0, err
    events = events_of(only_journal(journals_of(workspace)))
    errors = [e for e in events if isinstance(e, Error)]
    assert [(e.retryable, e.attempt) for e in errors] == [(True, 1)] and "HTTP 500" in errors[0].message
    last = [e for e in events if isinstance(e, Message)][-1].message
    assert last.role == "assistant" and last.content == "Hello from the server."
    assert "Hello from the server." in out


async def test_the_api_key_never_reaches_the_journal_even_when_the_model_and_a_tool_echo_it(workspace: Path) -> None:
    key = "sk-test-" + "Zq8" * 10

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        if not tool_results(body):
            return Stream(
                [
                    sse(
                        text_chunk(f"I will print {key} now."),
                        call_chunk(0, '{"command": "env"}', call_id="c1", name="run_command"),
                        finish_chunk("tool_calls"),
                    )
                ]
            )
        return reply_stream(f"The environment held {key}.")

    async with OpenAIServer(answer) as srv:
        code, _out, err = await wren(
            ["run", "--dir", "../journals", "--yes", "show the environment"],
            workspace,
            {"WREN_BASE_URL": srv.base_url, "WREN_API_KEY": key},
        )
    assert code == 0, err
    assert srv.headers[0]["authorization"] == f"Bearer {key}"
    # The tool really saw the key: the model was sent the output, redacted.
    assert "[redacted]" in tool_results(srv.requests[1])[0]
    journal = only_journal(journals_of(workspace))
    assert key.encode() not in journal.read_bytes()
    assert key[8:20].encode() not in journal.read_bytes()
    ends = [e for e in events_of(journal) if isinstance(e, ToolEnd)]
    assert ends[0].redacted >= 1


async def test_the_same_call_three_times_in_a_row_is_stopped_as_a_loop(workspace: Path) -> None:
    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        results = tool_results(body)
        if results and results[-1].startswith("not run:"):
            return reply_stream("I see, I was looping.")
        n = len(results)
        return Stream(
            [sse(call_chunk(0, '{"path": "README.md"}', call_id=f"c{n}", name="read_file"), finish_chunk("tool_calls"))]
        )

    async with OpenAIServer(answer) as srv:
        code, _out, err = await wren(
            ["run", "--dir", "../journals", "--model", "openai", "read the readme"],
            workspace,
            {"WREN_BASE_URL": srv.base_url},
        )
    assert code == 0, err
    ends = [e for e in events_of(only_journal(journals_of(workspace))) if isinstance(e, ToolEnd)]
    assert [e.stoppedBy for e in ends] == [None, None, "loop"]
    assert "in a row" in tool_results(srv.requests[-1])[-1]


async def test_a_refusing_server_ends_the_run_with_a_sentence_and_keeps_the_earlier_events(workspace: Path) -> None:
    async with OpenAIServer(lambda body, headers: Status(404, {"error": {"message": "no model m"}})) as srv:
        code, _out, err = await wren(
            ["run", "--dir", "../journals", "--model", "openai", "hello"], workspace, {"WREN_BASE_URL": srv.base_url}
        )
    assert code == 1
    assert "HTTP 404" in err and "WREN_MODEL" in err
    events = events_of(only_journal(journals_of(workspace)))
    assert [type(e).__name__ for e in events] == ["RunStart", "Message", "Error", "RunEnd"]
    assert events[1].message.content == "hello"  # type: ignore[union-attr]
    assert events[-1].reason == "error"  # type: ignore[union-attr]
