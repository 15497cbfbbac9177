"""The anthropic gateway's settings and what it sends: turns the Messages API accepts, built from any session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.openai_server import OpenAIServer, Recorded
from tests.agent.recorded import fixture
from tests.agent.test_recorded_servers import wren
from tests.conftest import run_wren
from wren_tui.agent.models import default_model
from wren_tui.agent.models.anthropic import create, messages_url, wire_messages
from wren_tui.agent.models.base import GatewayError, ModelSetup, ModelUnavailable, Reply
from wren_tui.agent.tools import TOOLS
from wren_tui.journal.events import ChatMessage, Reasoning, ToolCall


def setup(**env: str) -> ModelSetup:
    return ModelSetup(workspace=Path("/w"), system="You are Wren.", pace=0.0, env=env)


def test_the_messages_url_is_under_the_base_whether_or_not_it_ends_in_v1() -> None:
    assert messages_url("https://api.anthropic.com") == "https://api.anthropic.com/v1/messages"
    assert messages_url("http://127.0.0.1:9/v1/") == "http://127.0.0.1:9/v1/messages"


def test_wren_provider_names_the_default_model_and_a_lone_anthropic_key_does_not() -> None:
    assert default_model({"WREN_PROVIDER": "anthropic"}) == "anthropic"
    assert default_model({"ANTHROPIC_API_KEY": "sk-ant-x"}) == "scripted"
    assert default_model({"WREN_API_KEY": "k", "WREN_PROVIDER": "scripted"}) == "scripted"
    with pytest.raises(ModelUnavailable, match=r"WREN_PROVIDER=claude: there is no such model; choose one of: "):
        default_model({"WREN_PROVIDER": "claude"})


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({}, "--model anthropic needs ANTHROPIC_API_KEY"),
        (
            {"ANTHROPIC_API_KEY": "k", "WREN_THINKING_BUDGET": "lots"},
            "WREN_THINKING_BUDGET=lots: must be a whole number",
        ),
        ({"ANTHROPIC_API_KEY": "k", "WREN_THINKING_BUDGET": "500"}, "must be at least 1024"),
        ({"ANTHROPIC_API_KEY": "k", "WREN_MAX_TOKENS": "0"}, "WREN_MAX_TOKENS=0: must be a whole number"),
    ],
)
def test_settings_that_cannot_work_are_refused_before_anything_is_sent(env: dict[str, str], says: str) -> None:
    with pytest.raises(ModelUnavailable, match=says):
        create(setup(**env))


def test_a_bad_setting_is_exit_2_with_its_sentence_and_no_journal(workspace: Path) -> None:
    proc = run_wren(
        ["run", "--dir", "../journals", "hello"],
        cwd=workspace,
        env={"WREN_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "k-0123456789", "WREN_THINKING_BUDGET": "9"},
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("wren: WREN_THINKING_BUDGET=9: must be at least 1024") and "Traceback" not in proc.stderr
    )
    assert list(journals_of(workspace).glob("*.jsonl")) == []


async def test_the_thinking_budget_and_the_system_prompt_go_in_the_request() -> None:
    bodies: list[dict[str, Any]] = []

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Recorded:
        bodies.append(body)
        return Recorded(fixture("anthropic_thinking_text.sse"))

    async with OpenAIServer(answer) as srv:
        gateway = create(
            setup(ANTHROPIC_BASE_URL=srv.base_url, WREN_THINKING_BUDGET="2048", WREN_MAX_TOKENS="4096", WREN_MODEL="m")
        )
        reply = Reply()
        async for part in gateway.stream([ChatMessage(role="user", content="names?")], list(TOOLS.values())):
            reply.add(part)
    assert reply.content == "- Captain\n- Scoop"
    body = bodies[0]
    assert (body["model"], body["max_tokens"], body["thinking"]) == (
        "m",
        4096,
        {"type": "enabled", "budget_tokens": 2048},
    )
    assert body["system"] == "You are Wren." and body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "names?"}]}
    ]


def test_turns_sent_merge_tool_results_with_a_following_message_and_keep_only_anthropics_own_thinking() -> None:
    messages = [
        ChatMessage(role="user", content="go"),
        ChatMessage(
            role="assistant",
            content="",
            tool_calls=[
                ToolCall("functions.read:0", "read_file", '{"path": "a"}'),
                ToolCall("c2", "list_dir", "not json"),
            ],
            # Reasoning from an OpenAI-compatible server has no signature: Anthropic would refuse it.
            reasoning=[Reasoning("deepseek thought", "reasoning_content")],
        ),
        ChatMessage(role="tool", content="A", tool_call_id="functions.read:0"),
        ChatMessage(role="tool", content="B", tool_call_id="c2"),
        ChatMessage(role="user", content="and now?"),
        ChatMessage(role="assistant", content=""),  # an empty reply: the API refuses empty content
        ChatMessage(role="user", content="hello?"),
        ChatMessage(
            role="assistant",
            content="Hi.",
            reasoning=[Reasoning("t", "thinking", signature="sig"), Reasoning(kind="redacted_thinking", data="enc")],
        ),
    ]
    assert wire_messages(messages) == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "functions_read_0", "name": "read_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "c2", "name": "list_dir", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "functions_read_0", "content": "A"},
                {"type": "tool_result", "tool_use_id": "c2", "content": "B"},
                {"type": "text", "text": "and now?"},
                {"type": "text", "text": "hello?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t", "signature": "sig"},
                {"type": "redacted_thinking", "data": "enc"},
                {"type": "text", "text": "Hi."},
            ],
        },
    ]


async def test_an_error_event_mid_stream_that_no_retry_fixes_ends_the_reply_with_the_servers_words() -> None:
    start = fixture("anthropic_thinking_text.sse").split(b"\n\n")[0] + b"\n\n"
    refused = b'event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"bad turn"}}\n\n'
    async with OpenAIServer(lambda body, headers: Recorded(start + refused)) as srv:
        gateway = create(setup(ANTHROPIC_BASE_URL=srv.base_url))
        with pytest.raises(GatewayError) as caught:
            async for _part in gateway.stream([ChatMessage(role="user", content="hi")], []):
                pass
    assert len(srv.requests) == 1
    assert "reported invalid_request_error mid-stream: bad turn" in str(caught.value)


def _event(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


_START = fixture("anthropic_thinking_text.sse").split(b"\n\n")[0] + b"\n\n"
_TEXT_BLOCK = _event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})

MALFORMED: dict[str, bytes] = {
    "an input count that is not a number": _event(
        {"type": "message_start", "message": {"usage": {"input_tokens": "many", "output_tokens": 1}}}
    ),
    "a message_start without its message": _event({"type": "message_start"}),
    "a block without an index": _START + _event({"type": "content_block_start", "content_block": {"type": "text"}}),
    "a text delta that is a number": _START
    + _TEXT_BLOCK
    + _event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}}),
    "a text block whose text is a list": _START
    + _event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ["a"]}}),
    "a thinking delta that is an object": _START
    + _event({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": {"a": 1}}}),
    "an output count that is a list": _START
    + _event({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": [1]}}),
    "a tool_use block whose name is a number": _START
    + _event({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": 7}}),
    "a delta that is a list": _START + _event({"type": "content_block_delta", "index": 0, "delta": ["x"]}),
    "an event that is not JSON": _START + b"event: ping\ndata: {nope\n\n",
}


@pytest.mark.parametrize("name", list(MALFORMED))
async def test_a_malformed_anthropic_event_ends_the_run_with_one_sentence_and_run_end_error(
    name: str, workspace: Path
) -> None:
    async with OpenAIServer(lambda body, headers: Recorded(MALFORMED[name])) as srv:
        url = srv.base_url
        env = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k-0123456789"}
        code, out, err = await wren(["run", "--dir", "../journals", "--model", "anthropic", "hello"], workspace, env)
    assert code == 1 and "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wren: the model server at {url}/messages sent "), err
    assert len(srv.requests) == 1  # a server that sends what Wren cannot read is not asked again
    events = events_of(only_journal(journals_of(workspace)))
    assert [type(e).__name__ for e in events][-2:] == ["Error", "RunEnd"]
    assert events[-1].reason == "error"  # type: ignore[union-attr]
