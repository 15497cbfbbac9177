"""The `anthropic` gateway: Anthropic's Messages API (`/v1/messages`), streamed over SSE with httpx.

Thinking blocks arrive with a signature (or encrypted, as redacted thinking); they are kept with the
reply and sent back unchanged, first in their assistant message, as the API requires in a tool loop.
Tool results go back as `tool_result` blocks of one user message. 429, 5xx, 529 (`overloaded_error`)
and an `error` event of those kinds mid-stream are retried; retries and sentences are in `http.py`.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ...journal.events import ChatMessage
from ..tools import Tool
from .base import (
    FinishPart,
    GatewayError,
    ModelSetup,
    ModelUnavailable,
    ReasoningPart,
    StreamPart,
    TextPart,
    ToolCallPart,
    UsagePart,
)
from .http import (
    Body,
    Endpoint,
    HttpGateway,
    Quiet,
    Retry,
    SSEDecoder,
    event_data,
    give_up_hint,
    in_body_error,
    parts_of,
    text_field,
)

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_MAX_TOKENS = 16000
API_VERSION = "2023-06-01"
THINKING, REDACTED_THINKING = "thinking", "redacted_thinking"
# Error types another attempt may get past (the API's own names).
_RETRY_TYPES = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429}
_INPUT_COUNTS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_TOOL_ID = re.compile(r"[^A-Za-z0-9_-]")


def create(setup: ModelSetup) -> AnthropicGateway:
    """The gateway the registry makes for `--model anthropic`, configured from ANTHROPIC_* and WREN_* variables."""
    env = setup.env
    if not env.get("ANTHROPIC_API_KEY") and not env.get("ANTHROPIC_BASE_URL"):
        raise ModelUnavailable(
            "--model anthropic needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a server that needs no key)"
        )
    max_tokens = _whole("WREN_MAX_TOKENS", env.get("WREN_MAX_TOKENS"), DEFAULT_MAX_TOKENS, least=1)
    budget = _whole("WREN_THINKING_BUDGET", env.get("WREN_THINKING_BUDGET"), 0, least=0)
    if budget and not 1024 <= budget < max_tokens:
        raise ModelUnavailable(
            f"WREN_THINKING_BUDGET={budget}: must be at least 1024 and less than WREN_MAX_TOKENS ({max_tokens}); "
            "leave it unset for no extended thinking"
        )
    return AnthropicGateway(
        base_url=env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL,
        api_key=env.get("ANTHROPIC_API_KEY", ""),
        model=env.get("WREN_MODEL") or DEFAULT_MODEL,
        system=setup.system,
        max_tokens=max_tokens,
        thinking_budget=budget,
        read_timeout=float(env.get("WREN_TIMEOUT") or 120.0),
    )


def _whole(name: str, value: str | None, default: int, *, least: int) -> int:
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        number = least - 1
    if number < least:
        raise ModelUnavailable(f"{name}={value}: must be a whole number of tokens, {least} or more")
    return number


def messages_url(base_url: str) -> str:
    """`/v1/messages` under the base URL, whether or not the base already ends in /v1."""
    base = base_url.rstrip("/")
    return base + ("/messages" if base.endswith("/v1") else "/v1/messages")


# --- what is sent -----------------------------------------------------------------------------------


def _tool_id(call_id: str | None) -> str:
    """An id the API accepts (letters, digits, _ and -): ids from another server's session may hold others."""
    return _TOOL_ID.sub("_", call_id or "") or "call"


def _input(args: str) -> dict[str, Any]:
    """The arguments as the object `tool_use.input` must be; arguments that are not one were answered as such."""
    try:
        value = json.loads(args or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def wire_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Our messages as Messages API turns: tool results become blocks of a user turn; same-role turns merge."""
    wire: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})

    for m in messages:
        if m.role == "tool":
            add("user", [{"type": "tool_result", "tool_use_id": _tool_id(m.tool_call_id), "content": m.content}])
        elif m.role == "user":
            add("user", [{"type": "text", "text": m.content}] if m.content else [])
        else:
            blocks: list[dict[str, Any]] = []
            # Thinking goes back exactly as it came and first; reasoning another server produced is not Anthropic's.
            for piece in m.reasoning or ():
                if piece.kind == THINKING and piece.signature:
                    blocks.append({"type": THINKING, "thinking": piece.text, "signature": piece.signature})
                elif piece.kind == REDACTED_THINKING and piece.data:
                    blocks.append({"type": REDACTED_THINKING, "data": piece.data})
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            for call in m.tool_calls or ():
                use = {"type": "tool_use", "id": _tool_id(call.id), "name": call.name, "input": _input(call.args)}
                blocks.append(use)
            add("assistant", blocks)
    return wire


def wire_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """The tools in the Messages API shape: the same name, description and JSON schema as every gateway's."""
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


# --- what comes back ----------------------------------------------------------------------------------


class MessageStream:
    """The parts of one streamed message, event by event (the usage is split between its start and its end)."""

    def __init__(self) -> None:
        self.input_tokens = 0
        self.finished = False  # the message said how it ended (message_delta), so it is whole
        self.stopped = False  # message_stop: nothing after it is read

    def parts(self, event: Mapping[str, Any]) -> list[StreamPart]:
        kind = event.get("type")
        if kind == "message_start":
            self.input_tokens = _input_tokens(event["message"].get("usage") or {})
            return []
        if kind == "content_block_start":
            return _block_start(int(event["index"]), event["content_block"])
        if kind == "content_block_delta":
            return _block_delta(int(event["index"]), event["delta"])
        if kind == "message_delta":
            parts: list[StreamPart] = []
            usage = event.get("usage") or {}
            if usage:
                # Newer servers repeat the input in message_delta; older ones count it only at the start.
                inputs = _input_tokens(usage) if "input_tokens" in usage else self.input_tokens
                parts.append(UsagePart(inputs, int(usage.get("output_tokens") or 0)))
            stop = (event.get("delta") or {}).get("stop_reason")
            if stop:
                self.finished = True
                parts.append(FinishPart(str(stop)))
            return parts
        if kind == "message_stop":
            self.finished = self.stopped = True
        # ping, content_block_stop, and event types added after this was written carry nothing to keep
        return []


def _input_tokens(usage: Mapping[str, Any]) -> int:
    """The whole prompt: the tokens read fresh, and those written to and read from the cache."""
    return sum(int(usage.get(k) or 0) for k in _INPUT_COUNTS)


def _block_start(index: int, block: Mapping[str, Any]) -> list[StreamPart]:
    kind = block.get("type")
    if kind == "text":
        text = text_field(block, "text")
        return [TextPart(text)] if text else []
    if kind == "tool_use":
        given = block.get("input")
        args = json.dumps(given, ensure_ascii=False) if given else ""
        call_id, name = text_field(block, "id", required=True), text_field(block, "name", required=True)
        return [ToolCallPart(index=index, id=call_id, name=name, args=args)]
    if kind == THINKING:
        signature = text_field(block, "signature") or None
        return [ReasoningPart(text_field(block, "thinking"), block=index, kind=THINKING, signature=signature)]
    if kind == REDACTED_THINKING:
        return [ReasoningPart(block=index, kind=REDACTED_THINKING, data=text_field(block, "data", required=True))]
    return []  # server tools' blocks: Wren offers none


def _block_delta(index: int, delta: Mapping[str, Any]) -> list[StreamPart]:
    kind = delta.get("type")
    if kind == "text_delta":
        text = text_field(delta, "text", required=True)
        return [TextPart(text)] if text else []
    if kind == "input_json_delta":
        return [ToolCallPart(index=index, args=text_field(delta, "partial_json"))]
    if kind == "thinking_delta":
        thought = text_field(delta, "thinking", required=True)
        return [ReasoningPart(thought, block=index, kind=THINKING)] if thought else []
    if kind == "signature_delta":
        return [ReasoningPart(block=index, kind=THINKING, signature=text_field(delta, "signature", required=True))]
    return []  # citations and later additions


def message_parts(document: Mapping[str, Any]) -> list[StreamPart]:
    """The parts of a whole (non-streamed) message: a proxy that ignored `stream: true`."""
    parts: list[StreamPart] = []
    for index, block in enumerate(document.get("content") or ()):
        parts.extend(_block_start(index, block))
    usage = document.get("usage") or {}
    parts.append(UsagePart(_input_tokens(usage), int(usage.get("output_tokens") or 0)))
    parts.append(FinishPart(str(document.get("stop_reason") or "end_turn")))
    return parts


class AnthropicGateway(HttpGateway):
    what = "message"

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str = "",
        model: str = DEFAULT_MODEL,
        system: str = "",
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking_budget: int = 0,
        read_timeout: float = 120.0,
        max_attempts: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(
            Endpoint(messages_url(base_url), "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
            api_key=api_key,
            model=model,
            system=system,
            read_timeout=read_timeout,
            max_attempts=max_attempts,
            backoff=backoff,
            max_backoff=max_backoff,
            rng=rng,
        )
        self._max_tokens = max_tokens
        self._thinking_budget = thinking_budget

    def stream(self, messages: Sequence[ChatMessage], tools: Sequence[Tool]) -> AsyncIterator[StreamPart]:
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "messages": wire_messages(messages),
            "stream": True,
        }
        if self._system:
            body["system"] = self._system
        if tools:
            body["tools"] = wire_tools(tools)
        if self._thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self._thinking_budget}
        headers = {"Accept": "text/event-stream", "anthropic-version": API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return self._post(body, headers)

    def _holds(self, document: Mapping[str, Any]) -> bool:
        return document.get("type") == "message"

    def _document_parts(self, document: Mapping[str, Any]) -> list[StreamPart]:
        return message_parts(document)

    async def _events(self, reply: Body, quiet: Quiet) -> AsyncIterator[StreamPart]:
        decoder, state = SSEDecoder(), MessageStream()
        async for chunk in reply.chunks():
            for data in decoder.feed(chunk):
                for part in quiet.event(self._parts(state, data)):
                    yield part
                if state.stopped:
                    return
            for part in quiet.lines(decoder.idle()):
                yield part
        for data in decoder.end():
            for part in self._parts(state, data):
                yield part
        if not state.finished:
            raise Retry(
                "the model server closed the stream before the message was finished",
                hint=f"Check that the server is up ({self._endpoint.base_var}) and try again.",
            )

    def _parts(self, state: MessageStream, data: str) -> list[StreamPart]:
        event = event_data(self._endpoint, data)
        if event.get("type") == "error":
            raise _stream_error(self._endpoint, event)
        return parts_of(self._endpoint, event, state.parts)


def _stream_error(endpoint: Endpoint, event: Mapping[str, Any]) -> Exception:
    """An `error` event mid-stream: overloaded, rate-limited or an API error is retried; anything else ends the turn."""
    error = event.get("error")
    kind = str(error.get("type") or "error") if isinstance(error, Mapping) else "error"
    status = _RETRY_TYPES.get(kind)
    if status is not None:
        message = str(error.get("message") or kind) if isinstance(error, Mapping) else kind
        return Retry(f"the model server reported {kind} mid-stream ({message})", hint=give_up_hint(endpoint, status))
    return in_body_error(endpoint, event, f"{kind} mid-stream") or GatewayError(
        f"the model server at {endpoint.url} reported an error mid-stream: {json.dumps(event)[:300]}"
    )
