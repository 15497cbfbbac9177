"""The openai gateway against a real HTTP server on 127.0.0.1, streaming the way servers do."""

from __future__ import annotations

import asyncio
import os
import random
import sys
from datetime import UTC, datetime
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
from wren_tui.agent.models.http import retry_after_seconds
from wren_tui.agent.models.openai import OpenAIGateway, SSEDecoder, is_deepseek, wire_messages
from wren_tui.agent.tools import TOOLS
from wren_tui.journal.events import ChatMessage, Error, Message, Reasoning, ToolCall, ToolEnd

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
    assert [e.stopped_by for e in ends] == [None, None, "loop"]
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


# --- what real servers do that the happy path does not ---------------------------------------------


def test_retry_after_is_read_as_seconds_with_a_fraction_or_as_an_http_date() -> None:
    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("2", now) == 2.0
    assert retry_after_seconds("1.5", now) == 1.5
    assert retry_after_seconds("Mon, 30 Nov 2026 12:00:07 GMT", now) == 7.0
    assert retry_after_seconds("Mon, 30 Nov 2026 11:59:00 GMT", now) == 0.0  # already past: no wait
    assert [retry_after_seconds(v, now) for v in (None, "", "soon", "nan", "-3")] == [None, None, None, None, 0.0]


async def test_a_fractional_retry_after_is_the_wait_before_the_next_attempt() -> None:
    answers: list[Answer] = [
        Status(429, {"error": {"message": "slow down"}}, {"Retry-After": "0.25"}),
        reply_stream("ok"),
    ]
    async with OpenAIServer(lambda body, headers: answers.pop(0)) as srv:
        reply, retries = await collect(gateway(srv))
    assert reply.content == "ok" and [r.delay for r in retries] == [0.25]


async def test_a_spent_quota_429_is_not_retried_and_says_no_retry_helps() -> None:
    quota = {
        "error": {
            "message": "You exceeded your current quota.",
            "type": "insufficient_quota",
            "code": "insufficient_quota",
        }
    }
    async with OpenAIServer(lambda body, headers: Status(429, quota)) as srv:
        with pytest.raises(GatewayError) as caught:
            await collect(gateway(srv))
    assert len(srv.requests) == 1
    assert "You exceeded your current quota." in str(caught.value) and "no quota left" in str(caught.value)


async def test_tool_call_chunks_without_an_index_are_told_apart_by_their_ids() -> None:
    def call(call_id: str | None, args: str, name: str | None = None) -> dict[str, Any]:
        chunk = call_chunk(0, args, call_id=call_id, name=name)
        chunk["choices"][0]["delta"]["tool_calls"][0]["index"] = None
        return chunk

    data = sse(
        call("c1", '{"path": ', "read_file"),
        call(None, '"a.py"}'),
        call("c2", '{"path": "b.py"}', "read_file"),
        finish_chunk("tool_calls"),
    )
    async with OpenAIServer(lambda body, headers: Stream([data])) as srv:
        reply, _ = await collect(gateway(srv))
    assert [(c.id, c.args) for c in reply.tool_calls("x")] == [("c1", '{"path": "a.py"}'), ("c2", '{"path": "b.py"}')]


async def test_reasoning_content_is_kept_apart_from_the_text_and_sent_back_with_every_assistant_message() -> None:
    thinking = {"choices": [{"index": 0, "delta": {"content": None, "reasoning_content": "Think first."}}]}
    data = sse(thinking, text_chunk("Answer."), finish_chunk("stop"))
    async with OpenAIServer(lambda body, headers: Stream([data])) as srv:
        reply, _ = await collect(gateway(srv))
    assert reply.content == "Answer."
    assert [(r.kind, r.text) for r in reply.reasoning or ()] == [("reasoning_content", "Think first.")]
    earlier = ChatMessage(role="assistant", content="Old.", reasoning=[Reasoning("old thought", "reasoning_content")])
    bare = ChatMessage(role="assistant", content="", tool_calls=[ToolCall("c0", "read_file", "{}")])
    now = ChatMessage(
        role="assistant",
        content="",
        tool_calls=[ToolCall("c1", "read_file", "{}")],
        reasoning=[Reasoning("new thought", "reasoning_content"), Reasoning("openrouter's", "reasoning")],
    )
    again = ChatMessage(role="user", content="again")
    wire = wire_messages("", [ASK[0], earlier, again, bare, now])
    # Earlier turns too (DeepSeek refuses a later request without them); a reply without any sends an empty one.
    assert [m["reasoning_content"] for m in wire if m["role"] == "assistant"] == ["old thought", "", "new thought"]


def test_reasoning_fields_go_only_to_a_server_that_sent_reasoning_content_or_is_deepseeks() -> None:
    routed = ChatMessage(role="assistant", content="Hi.", reasoning=[Reasoning("openrouter's", "reasoning")])
    plain = ChatMessage(role="assistant", content="Hi.")
    for wire in (wire_messages("", [ASK[0], routed]), wire_messages("", [ASK[0], plain])):
        assert not any("reasoning_content" in m or "reasoning" in m for m in wire)
    assert wire_messages("", [ASK[0], plain], thinking=True)[-1]["reasoning_content"] == ""
    assert is_deepseek("https://api.deepseek.com") and is_deepseek("https://api.deepseek.com/v1")
    assert not is_deepseek("https://api.groq.com/openai/v1") and not is_deepseek("https://notdeepseek.com/v1")


MALFORMED: dict[str, bytes] = {
    "a usage count that is not a number": sse(
        text_chunk("Hi."),
        finish_chunk("stop"),
        {"choices": [], "usage": {"prompt_tokens": "many", "completion_tokens": 1}},
    ),
    "a tool call index that is not a number": sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "first", "function": {"arguments": "{}"}}]}}]}
    ),
    "a tool call whose name is a number": sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": 7}}]}}]}
    ),
    "a tool call whose id is an object": sse(
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": {}, "function": {"name": "x"}}]}}]}
    ),
    "a whole message whose content is a list": b'{"choices": [{"message": {"content": ["Hi"]}}]}',
    "choices that are not a list of objects": sse({"choices": "none"}),
    "a delta that is a list": sse({"choices": [{"index": 0, "delta": ["Hi"]}]}),
    "an event that is not JSON": b"data: {not json\n\n",
    "an event that is a JSON list": b"data: [1, 2]\n\n",
}


@pytest.mark.parametrize("name", list(MALFORMED))
async def test_a_malformed_stream_event_ends_the_run_with_one_sentence_and_run_end_error(
    name: str, workspace: Path
) -> None:
    async with OpenAIServer(lambda body, headers: Stream([MALFORMED[name]])) as srv:
        url = srv.base_url
        code, out, err = await wren(
            ["run", "--dir", "../journals", "--model", "openai", "hello"], workspace, {"WREN_BASE_URL": url}
        )
    assert code == 1 and "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wren: the model server at {url}/chat/completions sent "), err
    assert len(srv.requests) == 1  # a server that sends what Wren cannot read is not asked again
    events = events_of(only_journal(journals_of(workspace)))
    assert [type(e).__name__ for e in events][-2:] == ["Error", "RunEnd"]
    assert events[-1].reason == "error"  # type: ignore[union-attr]


async def test_giving_up_after_the_last_attempt_is_one_sentence_that_wren_log_shows_without_a_retry_count(
    workspace: Path,
) -> None:
    failing = Status(503, {"error": {"message": "upstream connect error"}}, {"Retry-After": "0"})
    async with OpenAIServer(lambda body, headers: failing) as srv:
        code, _out, err = await wren(
            ["run", "--dir", "../journals", "--model", "openai", "hello"], workspace, {"WREN_BASE_URL": srv.base_url}
        )
    assert code == 1 and len(srv.requests) == 4
    sentence = err.strip().removeprefix("wren: ")
    assert sentence == (
        "the model server answered HTTP 503 (upstream connect error); gave up after 4 attempts. "
        "The server is failing: try again later, or check WREN_BASE_URL."
    )
    journal = only_journal(journals_of(workspace))
    logged = await wren(["log", str(journal)], workspace, {})
    last_error = [line for line in logged[1].splitlines() if "  error  " in line][-1]
    assert last_error.endswith(sentence) and ", retry" not in last_error


async def test_a_json_error_in_a_200_reply_is_the_servers_sentence_not_a_cut_stream(workspace: Path) -> None:
    async with OpenAIServer(lambda body, headers: Status(200, {"error": {"message": "No such model: m2"}})) as srv:
        code, _out, err = await wren(
            ["run", "--dir", "../journals", "--model", "openai", "hello"], workspace, {"WREN_BASE_URL": srv.base_url}
        )
    assert code == 1 and len(srv.requests) == 1
    assert "No such model: m2" in err and "closed the stream" not in err
