"""The `openai` gateway: OpenAI-compatible chat completions, streamed over SSE with httpx.

Works with any server that speaks the protocol (hosted, Ollama, vLLM, llama.cpp). Retries 429, 5xx
and connection failures with exponential backoff and jitter; anything else is a sentence.
"""

from __future__ import annotations

import asyncio
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
    GatewayError,
    ModelSetup,
    ModelUnavailable,
    RetryPart,
    StreamPart,
    TextPart,
    ToolCallPart,
    UsagePart,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"


def create(setup: ModelSetup) -> OpenAIGateway:
    """The gateway the registry makes for `--model openai`, configured from WREN_* variables."""
    if not setup.env.get("WREN_API_KEY") and not setup.env.get("WREN_BASE_URL"):
        raise ModelUnavailable(
            "--model openai needs WREN_API_KEY (or WREN_BASE_URL for a local server that needs no key)"
        )
    return OpenAIGateway.from_env(setup.system, setup.env)


class SSEDecoder:
    """Server-sent events from bytes in arbitrary chunks; lines are split as bytes, so a chunk
    boundary inside a UTF-8 character never breaks a character."""

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[str]:
        self._buf += chunk
        events: list[str] = []
        while (end := self._buf.find(b"\n")) >= 0:
            line, self._buf = self._buf[:end].rstrip(b"\r"), self._buf[end + 1 :]
            if not line:
                if self._data:
                    events.append(b"\n".join(self._data).decode("utf-8", errors="replace"))
                    self._data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(b" ") else value)
            # comments (":") and the event/id/retry fields carry nothing this protocol uses
        return events

    def end(self) -> list[str]:
        """Whatever a server left without the final blank line."""
        events = self.feed(b"\n\n") if self._buf else []
        if self._data:
            events.append(b"\n".join(self._data).decode("utf-8", errors="replace"))
            self._data = []
        return events


class _Retry(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def wire_messages(system: str, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Our messages in the chat-completions shape, after the system prompt."""
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m.role == "tool":
            wire.append({"role": "tool", "tool_call_id": m.toolCallId or "", "content": m.content})
        elif m.role == "assistant" and m.toolCalls:
            wire.append(
                {
                    "role": "assistant",
                    "content": m.content or None,
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args}}
                        for c in m.toolCalls
                    ],
                }
            )
        else:
            wire.append({"role": m.role, "content": m.content})
    return wire


def wire_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """The tools as chat-completions function schemas."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def chunk_parts(chunk: Mapping[str, Any]) -> list[StreamPart]:
    """The parts in one streamed chat-completion chunk."""
    if isinstance(chunk.get("error"), dict):
        raise GatewayError(f"the model server reported an error mid-stream: {_error_text(chunk)}")
    parts: list[StreamPart] = []
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        if isinstance(delta.get("content"), str) and delta["content"]:
            parts.append(TextPart(delta["content"]))
        for position, call in enumerate(delta.get("tool_calls") or ()):
            fn = call.get("function") or {}
            parts.append(
                ToolCallPart(
                    index=int(call.get("index", position)),
                    id=call.get("id"),
                    name=fn.get("name"),
                    args=fn.get("arguments") or "",
                )
            )
        if choice.get("finish_reason"):
            parts.append(FinishPart(str(choice["finish_reason"])))
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        parts.append(UsagePart(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)))
    return parts


def _error_text(payload: Any) -> str:
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return str(payload)[:300]


class OpenAIGateway:
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
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = api_key
        self._model = model
        self._system = system
        self._timeout = httpx.Timeout(connect=15.0, read=read_timeout, write=30.0, pool=15.0)
        self._max_attempts = max(1, max_attempts)
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._rng = rng or random.Random()

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

    @property
    def model(self) -> str:
        return self._model

    async def stream(self, messages: Sequence[ChatMessage], tools: Sequence[Tool]) -> AsyncIterator[StreamPart]:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": wire_messages(self._system, messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = wire_tools(tools)
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        attempt = 0
        async with httpx.AsyncClient(timeout=self._timeout) as client:
            while True:
                attempt += 1
                try:
                    async for part in self._once(client, body, headers):
                        yield part
                    return
                except _Retry as exc:
                    problem, retry_after = str(exc), exc.retry_after
                except httpx.TimeoutException:
                    problem, retry_after = f"the model server at {self._url} did not answer in time", None
                except httpx.TransportError as exc:
                    problem, retry_after = f"the connection to {self._url} failed ({_describe(exc)})", None
                if attempt >= self._max_attempts:
                    raise GatewayError(
                        f"{problem}; gave up after {attempt} attempts. Check that the server is up "
                        "(WREN_BASE_URL) and try again.",
                        retryable=True,
                        attempt=attempt,
                    )
                delay = self._delay(attempt, retry_after)
                yield RetryPart(problem, attempt, delay)
                await asyncio.sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return float(min(retry_after, self._max_backoff))
        ceiling: float = min(self._max_backoff, self._backoff * 2.0 ** (attempt - 1))
        # Jitter (half fixed, half random), so clients that failed together do not retry together.
        return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    async def _once(
        self, client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[StreamPart]:
        async with client.stream("POST", self._url, json=body, headers=headers) as response:
            if response.status_code != 200:
                await self._refuse(response)
            decoder = SSEDecoder()
            finished = False
            async for chunk in response.aiter_bytes():
                for data in decoder.feed(chunk):
                    if data.strip() == "[DONE]":
                        return
                    for part in chunk_parts(_json(data)):
                        finished = finished or isinstance(part, FinishPart)
                        yield part
            for data in decoder.end():
                if data.strip() != "[DONE]":
                    for part in chunk_parts(_json(data)):
                        finished = finished or isinstance(part, FinishPart)
                        yield part
            if not finished:
                raise _Retry("the model server closed the stream before the reply was finished")

    async def _refuse(self, response: httpx.Response) -> None:
        raw = (await response.aread())[:4000]
        try:
            detail = _error_text(json.loads(raw))
        except ValueError:
            detail = raw.decode("utf-8", errors="replace").strip()[:300] or response.reason_phrase
        status = response.status_code
        if status == 429 or status >= 500:
            retry_after = response.headers.get("retry-after")
            seconds = float(retry_after) if retry_after and retry_after.isdigit() else None
            raise _Retry(f"the model server answered HTTP {status} ({detail})", seconds)
        hint = {
            401: "check WREN_API_KEY",
            403: "check that WREN_API_KEY may use this model",
            404: "check WREN_BASE_URL and WREN_MODEL",
        }.get(status, "check the request settings (WREN_MODEL, WREN_BASE_URL)")
        raise GatewayError(f"the model server at {self._url} refused the request: HTTP {status} ({detail}); {hint}")


def _json(data: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except ValueError:
        raise GatewayError(f"the model server sent a stream event that is not JSON: {data[:200]!r}") from None
    if not isinstance(value, dict):
        raise GatewayError(f"the model server sent a stream event that is not an object: {data[:200]!r}")
    return value


def _describe(exc: httpx.TransportError) -> str:
    text = str(exc) or type(exc).__name__
    return text[:200]
