"""Model streams a hostile or broken server could send, in both protocols' framing, to serve with OpenAIServer.

Text goes out JSON-escaped (`ensure_ascii`), so a lone surrogate travels as `\\ud83d`, the way a server
that cut an emoji's UTF-16 pair between two events sends it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

ANTHROPIC_KEY = "sk-ant-api03-" + "h" * 24
OPENAI_KEY = "test-key-0123456789"


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode()


# --- OpenAI-compatible chat completions ------------------------------------------------------------


def openai_event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return b"data: " + _json({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + b"\n\n"


def openai_text(pieces: Sequence[str], *, reasoning: Sequence[str] = ()) -> bytes:
    out = [openai_event({"reasoning_content": p}) for p in reasoning]
    out += [openai_event({"content": p}) for p in pieces]
    return b"".join([*out, openai_event({}, "stop"), b"data: [DONE]\n\n"])


def openai_call(call_id: str, name: str, args_pieces: Sequence[str]) -> bytes:
    first = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    out = [openai_event({"tool_calls": [first]})]
    out += [openai_event({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in args_pieces]
    return b"".join([*out, openai_event({}, "tool_calls"), b"data: [DONE]\n\n"])


def openai_endless(piece: str, *, reasoning: bool = False) -> Iterator[bytes]:
    """Deltas without end (the server never finishes)."""
    return itertools.repeat(openai_event({"reasoning_content" if reasoning else "content": piece}))


# --- Anthropic Messages ---------------------------------------------------------------------------------


def _sse(kind: str, data: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + _json({"type": kind, **data}) + b"\n\n"


def anthropic_head() -> bytes:
    message = {"id": "msg_hostile", "type": "message", "role": "assistant", "model": "claude-hostile", "content": []}
    return _sse("message_start", {"message": {**message, "usage": {"input_tokens": 5, "output_tokens": 1}}})


def anthropic_text_deltas(pieces: Iterable[str], index: int = 0) -> Iterator[bytes]:
    yield _sse("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
    for piece in pieces:
        yield _sse("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": piece}})


def anthropic_tail(index: int = 0) -> bytes:
    return (
        _sse("content_block_stop", {"index": index})
        + _sse("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}})
        + _sse("message_stop", {})
    )


def anthropic_text(pieces: Sequence[str]) -> bytes:
    return anthropic_head() + b"".join(anthropic_text_deltas(pieces)) + anthropic_tail()


def anthropic_endless(piece: str) -> Iterator[bytes]:
    return itertools.chain([anthropic_head()], anthropic_text_deltas(itertools.repeat(piece)))


def env_for(model: str, base_url: str) -> dict[str, str]:
    if model == "anthropic":
        return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    return {"WREN_BASE_URL": base_url, "WREN_API_KEY": OPENAI_KEY}


# --- streams that carry no character ------------------------------------------------------------------


def openai_charless(kind: str) -> Iterator[bytes]:
    """An OpenAI-compatible stream that never ends and never says a character: empty deltas, role-only deltas,
    or `: keepalive` comments."""
    if kind == "keepalive":
        return itertools.repeat(b": keepalive\n\n")
    delta: dict[str, Any] = {} if kind == "empty" else {"role": "assistant"}
    return itertools.repeat(openai_event(delta))


def anthropic_charless(kind: str) -> Iterator[bytes]:
    """An Anthropic stream that starts a message and then never says a character: pings, empty text deltas,
    or `: keepalive` comments."""
    if kind == "keepalive":
        return itertools.chain([anthropic_head()], itertools.repeat(b": keepalive\n\n"))
    if kind == "empty":
        return anthropic_text_deltas(itertools.repeat(""))
    return itertools.chain([anthropic_head()], itertools.repeat(_sse("ping", {})))


def anthropic_call(call_id: str, name: str, args: str) -> bytes:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return (
        anthropic_head()
        + _sse("content_block_start", {"index": 0, "content_block": block})
        + _sse("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": args}})
        + _sse("content_block_stop", {"index": 0})
        + _sse("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}})
        + _sse("message_stop", {})
    )
