"""`wren run` against a real local server streaming random and hostile shapes, in both protocols.

Each example is one reply made of random pieces: text with lone or split surrogates, huge deltas, tool
calls with any arguments, events of the wrong JSON shape, lines that are not JSON, and an ending that is
clean, missing (the stream cut), or never comes (endless). Whatever it is, the run ends with a journaled
outcome (the journal is valid UTF-8 and its last event is run_end) and exit 0 or 1 with at most one
sentence on stderr: never a traceback, never a hang. WREN_MAX_REPLY is small so an endless stream ends soon.
A few examples by default; WREN_TORTURE=1 runs many more.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.agent.hostile_streams import (
    anthropic_head,
    anthropic_tail,
    env_for,
    openai_event,
    openai_text,
)
from tests.agent.openai_server import OpenAIServer, Stream
from tests.agent.test_recorded_servers import wren
from tests.reliability.dial import scaled
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import RunEnd
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import journal_paths

LIMIT = 300_000
SURROGATES = ["\ud83d", "\ude00", "\ud83d\ude00", "x\ud83d", "\udfff", "\ud800\ud800"]

text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(SURROGATES),
    st.builds(lambda n: "h" * n, st.integers(1_000, 120_000)),
)
# OpenAI-compatible: (kind, value) pieces turned into events below.
openai_piece = st.one_of(
    st.tuples(st.just("text"), text),
    st.tuples(st.just("reasoning"), text),
    st.tuples(
        st.just("call"), st.tuples(st.integers(-1, 3), st.sampled_from(["list_dir", "read_file", "nope", ""]), text)
    ),
    st.tuples(
        st.just("raw"),
        st.sampled_from(
            [
                b'data: {"choices": 5}\n\n',
                b"data: [1, 2]\n\n",
                b'data: "a string"\n\n',
                b"data: null\n\n",
                b'data: {"choices": [{"delta": {"content": 5}}]}\n\n',
                b'data: {"choices": [{"delta": {"content": {"a": 1}}}]}\n\n',
                b'data: {"choices": [{"delta": {"tool_calls": [{"index": "x"}]}}]}\n\n',
                b'data: {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": {}}}]}}]}\n\n',
                b'data: {"choices": [{"delta": {"tool_calls": 7}}]}\n\n',
                b'data: {"choices": [{"delta": {"reasoning_content": []}}]}\n\n',
                b'data: {"choices": [], "usage": {"prompt_tokens": "many"}}\n\n',
                b'data: {"error": {"message": "boom \\u001b[2J"}}\n\n',
                b"data: not json at all\n\n",
                b'data: {"unterminated\n\n',
                b": a comment\n\n",
                b"event: odd\n\n",
                b"\xff\xfe\n\n",
                b'data: {"choices": [{"delta": {"content": "\\ud83d"}}]}\n\n',
            ]
        ),
    ),
)


def _a(kind: str, **data: Any) -> bytes:
    """One Anthropic event, JSON-escaped (a lone surrogate travels as its escape)."""
    return b"event: " + kind.encode() + b"\ndata: " + json.dumps({"type": kind, **data}).encode() + b"\n\n"


_TOOL_USE = {"type": "tool_use", "id": "t1", "name": "list_dir", "input": {}}
anthropic_piece = st.one_of(
    st.tuples(st.just("text"), text),
    st.tuples(st.just("thinking"), text),
    st.tuples(
        st.just("raw"),
        st.sampled_from(
            [
                _a("content_block_delta", index=0, delta=5),
                _a("content_block_delta", index=0, delta={"type": "text_delta", "text": 5}),
                _a("content_block_delta", index="0", delta={"type": "text_delta"}),
                _a("content_block_start", index=9, content_block={"type": "tool_use"}),
                _a("content_block_start", index=1, content_block=_TOOL_USE),
                _a(
                    "content_block_delta",
                    index=1,
                    delta={"type": "input_json_delta", "partial_json": '{"path": "\ud83d'},
                ),
                _a("message_delta", delta=[], usage=None),
                _a("error", error={"type": "overloaded_error", "message": "x"}),
                _a("error", error={"type": "invalid_request_error", "message": "no"}),
                b"data: []\n\n",
                b"data: not json\n\n",
                b"\xff\n\n",
            ]
        ),
    ),
)

ending = st.sampled_from(["clean", "cut", "endless"])


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True).encode()


def openai_stream(pieces: list[tuple[str, Any]], end: str) -> Iterable[bytes]:
    out: list[bytes] = []
    for kind, value in pieces:
        if kind == "text":
            out.append(openai_event({"content": value}))
        elif kind == "reasoning":
            out.append(openai_event({"reasoning_content": value}))
        elif kind == "call":
            index, name, args = value
            call = {
                "index": index,
                "id": f"c{index}",
                "type": "function",
                "function": {"name": name, "arguments": args},
            }
            out.append(openai_event({"tool_calls": [call]}))
        else:
            out.append(value)
    if end == "clean":
        return [*out, openai_event({}, "stop"), b"data: [DONE]\n\n"]
    if end == "cut":
        return out
    return itertools.chain(out, itertools.repeat(openai_event({"content": "more and more "})))


def anthropic_stream(pieces: list[tuple[str, Any]], end: str) -> Iterable[bytes]:
    def block(kind: str, value: str) -> Iterator[bytes]:
        start = {"type": "text", "text": ""} if kind == "text" else {"type": "thinking", "thinking": ""}
        delta = (
            {"type": "text_delta", "text": value} if kind == "text" else {"type": "thinking_delta", "thinking": value}
        )
        yield (
            b"event: content_block_start\ndata: "
            + _json({"type": "content_block_start", "index": 0, "content_block": start})
            + b"\n\n"
        )
        yield (
            b"event: content_block_delta\ndata: "
            + _json({"type": "content_block_delta", "index": 0, "delta": delta})
            + b"\n\n"
        )

    out: list[bytes] = [anthropic_head()]
    for kind, value in pieces:
        out.extend(block(kind, value) if kind in ("text", "thinking") else [value])
    if end == "clean":
        return [*out, anthropic_tail()]
    if end == "cut":
        return out
    more = _json({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "more and more "}})
    return itertools.chain(out, itertools.repeat(b"event: content_block_delta\ndata: " + more + b"\n\n"))


def _check(workspace: Path, code: int, err: str) -> None:
    shown = f"exit {code}\n{err[-3000:]}"
    assert code in (0, 1), shown
    assert "Traceback" not in err and err.count("\n") <= 1, shown
    paths = journal_paths(workspace.parent / "journals")
    assert len(paths) == 1, shown
    data = paths[0].read_bytes()
    data.decode("utf-8")  # strict
    result = read_events(paths[0])
    assert result.stop is None, result.stop
    assert isinstance(result.events[-1], RunEnd), (result.events[-1], shown)
    assert (result.events[-1].reason == "error") == (code == 1), shown


@pytest.mark.parametrize("model", ["openai", "anthropic"])
def test_any_stream_ends_in_a_journaled_outcome_and_at_most_one_sentence(
    tmp_path_factory: pytest.TempPathFactory, model: str
) -> None:
    piece = openai_piece if model == "openai" else anthropic_piece
    build = openai_stream if model == "openai" else anthropic_stream

    @settings(
        max_examples=scaled(5, 80),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )
    @given(pieces=st.lists(piece, max_size=6), end=ending)
    def check(pieces: list[tuple[str, Any]], end: str) -> None:
        workspace = prepare_workspace(tmp_path_factory.mktemp(f"stream-{model}") / "ws")
        first = [True]

        def answer(body: dict[str, Any], headers: dict[str, str]) -> Stream:
            if first[0] or end != "cut":
                first[0] = False
                return Stream(build(pieces, end))
            return Stream([openai_text(["fine"])] if model == "openai" else build([("text", "fine")], "clean"))

        async def go() -> tuple[int, str, str]:
            async with OpenAIServer(answer) as srv:
                env = env_for(model, srv.base_url) | {"WREN_MAX_REPLY": str(LIMIT), "WREN_TIMEOUT": "20"}
                return await wren(["run", "--dir", "../journals", "--model", model, "go"], workspace, env)

        code, _, err = asyncio.run(go())
        _check(workspace, code, err)

    check()
