"""Responses recorded from real servers (tests/fixtures/gateway), what each must become, and replies in their shape.

The oracles read a recording with nothing but `json` and the protocol's documented fields, apart
from Wren's gateways, so a test compares the journal with what the server really sent. The
composers build replies a test needs (the demo task, a slow command to kill) in the exact framing
of the recordings; the first Anthropic reply of a conversation carries a recorded thinking block
(its text and signature byte for byte), so a real signature goes back to the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.conftest import FIXTURES
from wren_tui.journal.events import ChatMessage, ToolCall

GATEWAY = FIXTURES / "gateway"
# What Anthropic counts as the prompt: fresh input and what was written to and read from the cache.
INPUT_COUNTS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def fixture(name: str) -> bytes:
    return (GATEWAY / name).read_bytes()


def cuts(data: bytes, every: int = 61) -> tuple[int, ...]:
    """Chunk boundaries every `every` bytes, and inside each multi-byte UTF-8 character (after its first byte)."""
    inside = [i + 1 for i, byte in enumerate(data) if byte >= 0xC0]
    return tuple(sorted({*range(every, len(data), every), *inside}))


def events(data: bytes) -> Iterator[dict[str, Any]]:
    """The JSON of each `data:` field of an SSE body, [DONE] left out."""
    for block in data.decode("utf-8").split("\n\n"):
        payload = "\n".join(line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:"))
        if payload and payload.strip() != "[DONE]":
            yield json.loads(payload)


@dataclass
class Expected:
    """What one recorded reply must become in the journal."""

    content: str = ""
    # (kind, text, signature, data) per piece of reasoning, in order.
    reasoning: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    # (id, name, args) per call, in order.
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    usage: tuple[int, int] | None = None


def openai_expected(data: bytes, *, document: bool = False) -> Expected:
    """A chat-completions recording: the deltas joined (or the whole message of a document)."""
    if document:
        whole = json.loads(data)
        message = whole["choices"][0]["message"]
        usage = whole.get("usage")
        calls = [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or ()]
        return Expected(message.get("content") or "", [], calls, (usage["prompt_tokens"], usage["completion_tokens"]))
    got = Expected()
    thoughts: dict[str, str] = {}
    drafts: dict[int, list[str]] = {}
    for chunk in events(data):
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            got.content += delta.get("content") or ""
            for key in ("reasoning_content", "reasoning"):
                if delta.get(key):
                    thoughts[key] = thoughts.get(key, "") + delta[key]
            for call in delta.get("tool_calls") or ():
                draft = drafts.setdefault(call["index"], ["", "", ""])
                draft[0] = draft[0] or call.get("id") or ""
                draft[1] = draft[1] or call.get("function", {}).get("name") or ""
                draft[2] += call.get("function", {}).get("arguments") or ""
        if chunk.get("usage"):
            got.usage = (chunk["usage"]["prompt_tokens"], chunk["usage"]["completion_tokens"])
    # A server that sends both fields sends the same reasoning twice: it is kept once, as reasoning_content.
    kind = "reasoning_content" if "reasoning_content" in thoughts else "reasoning"
    if thoughts:
        got.reasoning = [(kind, thoughts[kind], None, None)]
    got.calls = [(d[0], d[1], d[2] or "{}") for _, d in sorted(drafts.items())]
    return got


def anthropic_expected(data: bytes) -> Expected:
    """A Messages API recording: text blocks joined, thinking and tool_use blocks by index."""
    got = Expected()
    blocks: dict[int, dict[str, Any]] = {}
    inputs = output = 0
    for event in events(data):
        kind = event["type"]
        if kind == "message_start":
            usage = event["message"]["usage"]
            inputs = sum(usage.get(k) or 0 for k in INPUT_COUNTS)
        elif kind == "content_block_start":
            block = dict(event["content_block"])
            block.setdefault("partial", "")
            blocks[event["index"]] = block
            got.content += block.get("text", "") if block["type"] == "text" else ""
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            if delta["type"] == "text_delta":
                got.content += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            elif delta["type"] == "input_json_delta":
                block["partial"] += delta["partial_json"]
        elif kind == "message_delta":
            output = event["usage"]["output_tokens"]
    for _, block in sorted(blocks.items()):
        if block["type"] == "thinking":
            got.reasoning.append(("thinking", block["thinking"], block.get("signature") or None, None))
        elif block["type"] == "redacted_thinking":
            got.reasoning.append(("redacted_thinking", "", None, block["data"]))
        elif block["type"] == "tool_use":
            got.calls.append((block["id"], block["name"], block["partial"] or "{}"))
    got.usage = (inputs, output)
    return got


def journaled(message: ChatMessage) -> Expected:
    """What an assistant message of the journal holds, in the oracle's terms."""
    return Expected(
        message.content,
        [(r.kind, r.text, r.signature, r.data) for r in message.reasoning or ()],
        [(c.id, c.name, c.args) for c in message.tool_calls or ()],
    )


def error_message(data: bytes) -> str:
    """The server's own words in a recorded error body."""
    return str(json.loads(data)["error"]["message"])


# --- composed replies, in the recordings' shape ---------------------------------------------------


def _recorded_thinking() -> list[bytes]:
    """The thinking block of a real reply (anthropic_thinking_tool_use.sse), its events byte for byte."""
    blocks = fixture("anthropic_thinking_tool_use.sse").split(b"\n\n")
    return [b for b in blocks if b'"index":0' in b and b"content_block" in b]


RECORDED_THINKING = anthropic_expected(fixture("anthropic_thinking_tool_use.sse")).reasoning[0]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _block(index: int, block: dict[str, Any], deltas: Sequence[dict[str, Any]]) -> list[bytes]:
    start = {"type": "content_block_start", "index": index, "content_block": block}
    out = [_sse("content_block_start", start)]
    out.extend(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas)
    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    return out


def anthropic_reply(text: str, calls: Sequence[tuple[str, str, str]], *, think: bool = False) -> bytes:
    """A streamed message in the recorded events' framing: thinking (recorded), text, then tool_use blocks."""
    usage = {"input_tokens": 598, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 8}
    message = {
        "model": "claude-haiku-4-5-20251001",
        "id": "msg_composed",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    out = [_sse("message_start", {"type": "message_start", "message": message}), _sse("ping", {"type": "ping"})]
    index = 0
    if think:
        out.extend(block + b"\n\n" for block in _recorded_thinking())
        index = 1
    if text:
        deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(text)]
        out.extend(_block(index, {"type": "text", "text": ""}, deltas))
        index += 1
    for call_id, name, args in calls:
        use = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        out.extend(_block(index, use, [{"type": "input_json_delta", "partial_json": p} for p in ["", *_pieces(args)]]))
        index += 1
    end = {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None}
    out.append(_sse("message_delta", {"type": "message_delta", "delta": end, "usage": {"output_tokens": 40}}))
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def openai_reply(text: str, calls: Sequence[tuple[str, str, str]]) -> bytes:
    """A streamed chat completion in the recorded chunks' framing: text pieces, then each call's arguments in pieces."""
    head = {"id": "chatcmpl-composed", "object": "chat.completion.chunk", "created": 1782955817, "model": "gpt-4o-mini"}

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
        body = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        if usage is not None:
            body = {**head, "choices": [], "usage": usage}
        return f"data: {json.dumps(body, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()

    out = [chunk({"role": "assistant", "content": ""})]
    out.extend(chunk({"content": piece}) for piece in _pieces(text))
    for index, (call_id, name, args) in enumerate(calls):
        first = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        out.append(chunk({"tool_calls": [first]}))
        out.extend(chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in _pieces(args))
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    out.append(chunk({}, usage={"prompt_tokens": 210, "completion_tokens": 15, "total_tokens": 225}))
    return b"".join(out) + b"data: [DONE]\n\n"


# --- what a server received, as Wren's messages -------------------------------------------------


def anthropic_conversation(body: dict[str, Any]) -> list[ChatMessage]:
    """The Messages API request read back as a conversation (tool_result blocks become tool messages)."""
    messages: list[ChatMessage] = []
    for turn in body["messages"]:
        blocks = turn["content"] if isinstance(turn["content"], list) else [{"type": "text", "text": turn["content"]}]
        if turn["role"] == "user":
            for block in blocks:
                if block["type"] == "tool_result":
                    messages.append(
                        ChatMessage(role="tool", content=block["content"], tool_call_id=block["tool_use_id"])
                    )
                else:
                    messages.append(ChatMessage(role="user", content=block["text"]))
        else:
            text = "".join(b["text"] for b in blocks if b["type"] == "text")
            calls = [ToolCall(b["id"], b["name"], json.dumps(b["input"])) for b in blocks if b["type"] == "tool_use"]
            messages.append(ChatMessage(role="assistant", content=text, tool_calls=calls or None))
    return messages


def openai_conversation(body: dict[str, Any]) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    for m in body["messages"]:
        if m["role"] == "tool":
            messages.append(ChatMessage(role="tool", content=m["content"], tool_call_id=m["tool_call_id"]))
        elif m["role"] == "assistant":
            calls = [
                ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m.get("tool_calls") or ()
            ]
            messages.append(ChatMessage(role="assistant", content=m["content"] or "", tool_calls=calls or None))
        elif m["role"] == "user":
            messages.append(ChatMessage(role="user", content=m["content"]))
    return messages
