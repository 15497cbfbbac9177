"""The `openai` gateway: OpenAI-compatible chat completions, streamed over SSE with httpx.

Works with any server that speaks the protocol (OpenAI, DeepSeek, Groq, OpenRouter, Ollama, vLLM,
llama.cpp). Reasoning a server streams (`reasoning_content`, or OpenRouter's `reasoning`) is kept
with the reply, and `reasoning_content` goes back to the server with every assistant message, as
DeepSeek's thinking mode requires. A server that answers with one JSON document instead of a stream is read
as that document. Retries and the sentences for failures are in `http.py`.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from ...journal.events import ChatMessage
from ..tools import Tool
from .base import (
    FinishPart,
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
    in_body_error,
    parts_of,
    text_field,
)

__all__ = [
    "OpenAIGateway",
    "SSEDecoder",
    "chunk_parts",
    "completion_parts",
    "create",
    "is_deepseek",
    "wire_messages",
    "wire_tools",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
# The field DeepSeek (and Qwen, Kimi, vLLM before 0.11) stream reasoning in, and want back once there was a tool call.
REASONING_CONTENT = "reasoning_content"
# OpenRouter's (and Ollama's, vLLM's from 0.11) field: shown and kept, never sent back (no server requires it).
REASONING = "reasoning"


def create(setup: ModelSetup) -> OpenAIGateway:
    """The gateway the registry makes for `--model openai`, configured from WREN_* variables."""
    if not setup.env.get("WREN_API_KEY") and not setup.env.get("WREN_BASE_URL"):
        raise ModelUnavailable(
            "--model openai needs WREN_API_KEY (or WREN_BASE_URL for a local server that needs no key)"
        )
    return OpenAIGateway.from_env(setup.system, setup.env)


def wire_messages(system: str, messages: Sequence[ChatMessage], *, thinking: bool = False) -> list[dict[str, Any]]:
    """Our messages in the chat-completions shape, after the system prompt.

    Once the server has sent `reasoning_content` in the conversation (or `thinking` says it is
    DeepSeek's), every assistant message carries its own, or an empty one: DeepSeek's thinking mode
    refuses a request in which a message of a turn that called tools lacks it, in every later turn
    too. A server that never sent the field never sees it.
    """
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    thinking = thinking or any(r.kind == REASONING_CONTENT for m in messages for r in m.reasoning or ())
    for m in messages:
        if m.role == "tool":
            wire.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content})
            continue
        if m.role != "assistant":
            wire.append({"role": m.role, "content": m.content})
            continue
        item: dict[str, Any] = {"role": "assistant", "content": m.content or (None if m.tool_calls else "")}
        if m.tool_calls:
            item["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args}}
                for c in m.tool_calls
            ]
        if thinking:
            item[REASONING_CONTENT] = "".join(r.text for r in m.reasoning or () if r.kind == REASONING_CONTENT)
        wire.append(item)
    return wire


def is_deepseek(base_url: str) -> bool:
    """DeepSeek's own API: it may think without saying so (a bare tool call), so the field goes from the start."""
    host = httpx.URL(base_url).host or ""
    return host == "deepseek.com" or host.endswith(".deepseek.com")


def wire_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """The tools as chat-completions function schemas."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def _reasoning_part(source: Mapping[str, Any]) -> ReasoningPart | None:
    """The reasoning in a delta or a message: `reasoning_content` first, so a server sending both is read once."""
    for field in (REASONING_CONTENT, REASONING):
        if text := text_field(source, field):
            return ReasoningPart(text, kind=field)
    return None


def _tool_call_part(call: Mapping[str, Any], position: int | None) -> ToolCallPart:
    fn = call.get("function") or {}
    index = call.get("index", position)
    arguments = fn.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)  # a server that sends the arguments as an object
    return ToolCallPart(
        index=None if index is None else int(index),
        id=text_field(call, "id") or None,
        name=text_field(fn, "name") or None,
        args=arguments or "",
    )


def _usage_part(usage: Any) -> UsagePart | None:
    if not isinstance(usage, Mapping):
        return None
    return UsagePart(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))


def chunk_parts(chunk: Mapping[str, Any]) -> list[StreamPart]:
    """The parts in one streamed chat-completion chunk."""
    parts: list[StreamPart] = []
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        if (thought := _reasoning_part(delta)) is not None:
            parts.append(thought)
        if text := text_field(delta, "content"):
            parts.append(TextPart(text))
        for call in delta.get("tool_calls") or ():
            # Without an index, calls are told apart by their ids (see ToolCallPart).
            parts.append(_tool_call_part(call, None))
        if choice.get("finish_reason"):
            parts.append(FinishPart(str(choice["finish_reason"])))
    if (usage := _usage_part(chunk.get("usage"))) is not None:
        parts.append(usage)
    return parts


def completion_parts(document: Mapping[str, Any]) -> list[StreamPart]:
    """The parts of a whole chat completion: a server (or proxy) that ignored `stream: true`."""
    parts: list[StreamPart] = []
    choices = document.get("choices") or ()
    if choices:
        choice = choices[0]
        message = choice.get("message") or {}
        if (thought := _reasoning_part(message)) is not None:
            parts.append(thought)
        if text := text_field(message, "content"):
            parts.append(TextPart(text))
        for position, call in enumerate(message.get("tool_calls") or ()):
            parts.append(_tool_call_part(call, position))
        parts.append(FinishPart(str(choice.get("finish_reason") or "stop")))
    if (usage := _usage_part(document.get("usage"))) is not None:
        parts.append(usage)
    return parts


class OpenAIGateway(HttpGateway):
    what = "reply"

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str = "",
        model: str = DEFAULT_MODEL,
        system: str = "",
        read_timeout: float = 120.0,
        max_attempts: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(
            Endpoint(base_url.rstrip("/") + "/chat/completions", "WREN_API_KEY", "WREN_BASE_URL"),
            api_key=api_key,
            model=model,
            system=system,
            read_timeout=read_timeout,
            max_attempts=max_attempts,
            backoff=backoff,
            max_backoff=max_backoff,
            rng=rng,
        )
        self._deepseek = is_deepseek(base_url)

    @classmethod
    def from_env(cls, system: str, env: Mapping[str, str] | None = None) -> OpenAIGateway:
        env = os.environ if env is None else env
        return cls(
            base_url=env.get("WREN_BASE_URL") or DEFAULT_BASE_URL,
            api_key=env.get("WREN_API_KEY", ""),
            model=env.get("WREN_MODEL") or DEFAULT_MODEL,
            system=system,
            read_timeout=float(env.get("WREN_TIMEOUT") or 120.0),
        )

    def stream(self, messages: Sequence[ChatMessage], tools: Sequence[Tool]) -> AsyncIterator[StreamPart]:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": wire_messages(self._system, messages, thinking=self._deepseek),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = wire_tools(tools)
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return self._post(body, headers)

    def _holds(self, document: Mapping[str, Any]) -> bool:
        return bool(document.get("choices"))

    def _document_parts(self, document: Mapping[str, Any]) -> list[StreamPart]:
        return completion_parts(document)

    async def _events(self, reply: Body, quiet: Quiet) -> AsyncIterator[StreamPart]:
        decoder = SSEDecoder()
        finished = False
        async for chunk in reply.chunks():
            for data in decoder.feed(chunk):
                if data.strip() == "[DONE]":
                    return
                for part in quiet.event(self._parts(data)):
                    finished = finished or isinstance(part, FinishPart)
                    yield part
            for part in quiet.lines(decoder.idle()):
                yield part
        for data in decoder.end():
            if data.strip() != "[DONE]":
                for part in self._parts(data):
                    finished = finished or isinstance(part, FinishPart)
                    yield part
        if not finished:
            raise _cut_short()

    def _parts(self, data: str) -> list[StreamPart]:
        chunk = event_data(self._endpoint, data)
        if (error := in_body_error(self._endpoint, chunk, "an error mid-stream")) is not None:
            raise error
        return parts_of(self._endpoint, chunk, chunk_parts)


def _cut_short() -> Retry:
    return Retry(
        "the model server closed the stream before the reply was finished",
        hint="Check that the server is up (WREN_BASE_URL) and try again.",
    )
