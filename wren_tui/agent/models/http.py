"""What the gateways over HTTP share: server-sent events, retries with backoff, and a server's refusal in words.

A gateway module (`openai.py`, `anthropic.py`) turns its protocol's events into stream parts; this
module decides which failures are worth another attempt (429 but not a spent quota, 5xx, 529, a
dropped connection, a stream cut short), how long to wait (Retry-After in seconds or as an HTTP
date, else backoff with jitter), and says every failure in one sentence that names the server's
own message and what can fix it.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar

import httpx

from .base import NOTHING, GatewayError, ReasoningPart, RetryPart, StreamPart, TextPart, ToolCallPart

# Error codes and types no retry can fix, whatever the HTTP status says (OpenAI's spent quota).
_PERMANENT_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "account_deactivated"})
# A JSON document served in place of a stream is read whole, up to this size; so is one event of a stream.
_DOCUMENT_LIMIT = 32 << 20
EVENT_LIMIT = _DOCUMENT_LIMIT


@dataclass(frozen=True)
class Endpoint:
    """Where a gateway sends its requests, and the variables a person sets to change that."""

    url: str
    key_var: str
    base_var: str
    model_var: str = "WREN_MODEL"


class SSEDecoder:
    """Server-sent events from bytes in arbitrary chunks; lines are split as bytes, so a chunk
    boundary inside a UTF-8 character never breaks a character.

    What carries no data is counted (`idle`): a comment line (`: keepalive`), and an event with no data
    line (its event/id/retry fields and the blank line that ends it). One event is read to
    EVENT_LIMIT bytes at most: a server sending one line without end is stopped there.
    """

    def __init__(self) -> None:
        self._buf = b""
        self._data: list[bytes] = []
        self._size = 0  # bytes of the event being read (its data lines so far)
        self._fields = 0  # its lines that are not data (event, id, retry)
        self._idle = 0

    def idle(self) -> int:
        """How many lines without data came since the last call (for `Quiet`: each counts toward the cap)."""
        idle, self._idle = self._idle, 0
        return idle

    def feed(self, chunk: bytes) -> list[str]:
        buf = self._buf + chunk if self._buf else chunk
        events: list[str] = []
        start = 0  # the lines are sliced out of the chunk once each (a flood of short lines stays linear)
        while (end := buf.find(b"\n", start)) >= 0:
            line, start = buf[start:end].rstrip(b"\r"), end + 1
            if not line:
                if self._data:
                    events.append(b"\n".join(self._data).decode("utf-8", errors="replace"))
                    self._data, self._size = [], 0
                else:
                    self._idle += self._fields + 1
                self._fields = 0
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(b" ") else value)
                self._size += len(value)
                if self._size > EVENT_LIMIT:
                    raise _too_long()
            elif line.startswith(b":"):
                self._idle += 1  # a comment: a keep-alive
            else:
                # the event/id/retry fields: every protocol here repeats the event's type in its data
                self._fields += 1
                if self._fields > 64 and not self._data:  # fields without end, never an event
                    self._idle, self._fields = self._idle + self._fields, 0
        self._buf = buf[start:]
        if len(self._buf) > EVENT_LIMIT:
            raise _too_long()
        return events

    def end(self) -> list[str]:
        """Whatever a server left without the final blank line."""
        events = self.feed(b"\n\n") if self._buf else []
        if self._data:
            events.append(b"\n".join(self._data).decode("utf-8", errors="replace"))
            self._data = []
        return events


def carries(part: StreamPart) -> bool:
    """Whether a part holds a character of the reply (text, reasoning, a call's name, id or arguments)."""
    if isinstance(part, TextPart):
        return bool(part.text)
    if isinstance(part, ReasoningPart):
        return bool(part.text or part.signature or part.data)
    if isinstance(part, ToolCallPart):
        return bool(part.args or part.name or part.id)
    return False


# How many read timeouts a stream may go on with no character (only keep-alives or empty events).
QUIET_FACTOR = 10


class Quiet:
    """A stream that sends no character is cut like a silent one.

    A server can keep a stream open forever with what carries nothing (`: keepalive` comments, empty or
    role-only deltas, pings): the read timeout never fires. Each such event or line is handed on as
    NOTHING, which the agent counts as one character toward the reply's cap (WREN_MAX_REPLY), and a
    stream with no character for QUIET_FACTOR read timeouts (WREN_TIMEOUT; 20 minutes by default) ends
    in one sentence. Not one read timeout: a proxy keeps a stream open with comments while a model
    thinks without streaming its thoughts (OpenRouter's `: OPENROUTER PROCESSING`), for minutes.
    """

    def __init__(self, endpoint: Endpoint, read_timeout_s: float | None) -> None:
        self._endpoint = endpoint
        self._timeout_s = None if read_timeout_s is None else read_timeout_s * QUIET_FACTOR
        self._since = time.monotonic()

    def event(self, parts: list[StreamPart]) -> list[StreamPart]:
        """What one event gave, and a NOTHING when it carried no character."""
        if any(carries(part) for part in parts):
            self._since = time.monotonic()
            return parts
        self._check()
        return [*parts, NOTHING]

    def lines(self, count: int) -> list[StreamPart]:
        """A NOTHING for each of `count` lines that carried no data (comments)."""
        if not count:
            return []
        self._check()
        return [NOTHING] * count

    def _check(self) -> None:
        timeout = self._timeout_s
        if timeout is not None and time.monotonic() - self._since > timeout:
            raise GatewayError(
                f"the model server at {self._endpoint.url} sent no character of a reply for {timeout:g} s, only "
                f"keep-alives or empty events; the turn is stopped (it waits {QUIET_FACTOR} times WREN_TIMEOUT)"
            )


def _too_long() -> GatewayError:
    return GatewayError(
        f"the model server sent one stream event of more than {EVENT_LIMIT >> 20} MB; Wren does not read it"
    )


class Retry(Exception):
    """A failure another attempt may get past; `hint` is what to do if every attempt meets it."""

    def __init__(self, message: str, *, retry_after: float | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.hint = hint


@dataclass
class RetryPolicy:
    max_attempts: int = 4
    backoff: float = 0.5
    max_backoff: float = 20.0
    rng: random.Random | None = None

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff)
        ceiling: float = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        # Jitter (half fixed, half random), so clients that failed together do not retry together.
        return ceiling / 2 + (self.rng or random).uniform(0, ceiling / 2)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After as seconds to wait: a number (`2`, `1.5`) or an HTTP date; None when absent or unreadable."""
    if not value or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


async def with_retries(
    endpoint: Endpoint,
    policy: RetryPolicy,
    timeout: httpx.Timeout,
    attempt_once: Callable[[httpx.AsyncClient], AsyncIterator[StreamPart]],
) -> AsyncIterator[StreamPart]:
    """The parts of one reply; a failure worth retrying yields a RetryPart and starts the reply over."""
    attempt = 0
    async with httpx.AsyncClient(timeout=timeout) as client:
        while True:
            attempt += 1
            try:
                async for part in attempt_once(client):
                    yield part
                return
            except Retry as exc:
                problem, retry_after, hint = str(exc), exc.retry_after, exc.hint
            except httpx.TimeoutException:
                problem, retry_after = f"the model server at {endpoint.url} did not answer in time", None
                hint = f"Check that the server is up ({endpoint.base_var}) and try again."
            except httpx.TransportError as exc:
                problem, retry_after = f"the connection to {endpoint.url} failed ({_describe(exc)})", None
                hint = f"Check that the server is up ({endpoint.base_var}) and try again."
            if attempt >= policy.max_attempts:
                # Not retryable: this error ends the turn (the journal's earlier errors were the retries).
                raise GatewayError(f"{problem}; gave up after {attempt} attempts. {hint}", attempt=attempt)
            delay = policy.delay(attempt, retry_after)
            yield RetryPart(problem, attempt, delay)
            await asyncio.sleep(delay)


class Body:
    """A response body read as what it turns out to be: a stream of events, or one JSON document."""

    def __init__(self, response: httpx.Response) -> None:
        self._chunks = response.aiter_bytes()
        self._head = b""

    async def is_document(self) -> bool:
        """Whether the body is one JSON document (a server or proxy that ignored `stream`, or an error)."""
        async for chunk in self._chunks:
            self._head += chunk
            if self._head.strip():
                break
        return self._head.lstrip()[:1] in (b"{", b"[")

    async def chunks(self) -> AsyncIterator[bytes]:
        if self._head:
            yield self._head
        async for chunk in self._chunks:
            yield chunk

    async def document(self, endpoint: Endpoint) -> Any:
        data = bytearray()
        async for chunk in self.chunks():
            data += chunk
            if len(data) > _DOCUMENT_LIMIT:
                raise GatewayError(
                    f"the model server at {endpoint.url} sent a JSON document of more than "
                    f"{_DOCUMENT_LIMIT >> 20} MB instead of a stream; Wren does not read it"
                )
        try:
            return json.loads(data)
        except ValueError:
            raise GatewayError(
                f"the model server at {endpoint.url} sent a reply that is neither a stream nor JSON: "
                f"{bytes(data[:200])!r}"
            ) from None


def event_data(endpoint: Endpoint, data: str) -> dict[str, Any]:
    """One stream event's JSON object."""
    try:
        value = json.loads(data)
    except ValueError:
        raise GatewayError(
            f"the model server at {endpoint.url} sent a stream event that is not JSON: {data[:200]!r}"
        ) from None
    if not isinstance(value, dict):
        raise GatewayError(
            f"the model server at {endpoint.url} sent a stream event that is not an object: {data[:200]!r}"
        )
    return value


def parts_of(
    endpoint: Endpoint, value: Mapping[str, Any], parse: Callable[[Mapping[str, Any]], list[StreamPart]]
) -> list[StreamPart]:
    """`parse(value)`, with any shape it cannot read turned into one sentence instead of a traceback."""
    try:
        return parse(value)
    except (GatewayError, Retry):
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as exc:
        text = json.dumps(value, ensure_ascii=False)
        raise GatewayError(
            f"the model server at {endpoint.url} sent an event Wren cannot read ({_why(exc)}): {text[:200]!r}; "
            f"check that {endpoint.base_var} names a server of this protocol"
        ) from None


def text_field(source: Mapping[str, Any], key: str, *, required: bool = False) -> str:
    """A text field of an event: a string, or absent/null as "" unless `required`; anything else cannot be read (a
    TypeError, said by `parts_of`)."""
    value = source.get(key) if not required else source[key]
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{key} is a {type(value).__name__}, not a string")
    return value


def _why(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:120]


# --- what a server's error says --------------------------------------------------------------------


@dataclass(frozen=True)
class ServerError:
    """An error a server sent, in any of the shapes the protocols use."""

    message: str
    code: str = ""
    status: int | None = None  # an HTTP-like status found in the body (OpenRouter puts one in `code`)


def server_error(payload: Any) -> ServerError | None:
    """The error in a JSON body or event: {"error": {"message", "code" or "type", "metadata"}} or {"error": TEXT}."""
    if not isinstance(payload, Mapping):
        return None
    error = payload.get("error")
    if isinstance(error, str) and error:
        return ServerError(error)
    if not isinstance(error, Mapping):
        return None
    message = str(error.get("message") or "").strip()
    metadata = error.get("metadata")
    # OpenRouter: the provider's own words are in metadata.raw; "Provider returned error" alone says nothing.
    if isinstance(metadata, Mapping):
        raw = metadata.get("raw")
        provider = metadata.get("provider_name")
        if raw:
            raw_text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
            source = f"{provider}: " if isinstance(provider, str) and provider else ""
            message = f"{message} ({source}{raw_text.strip()[:400]})" if message else raw_text.strip()[:400]
    code_value = error.get("code")
    kind = error.get("type")
    status = code_value if isinstance(code_value, int) and 100 <= code_value < 600 else None
    code = str(code_value) if isinstance(code_value, str) else str(kind) if isinstance(kind, str) else ""
    if not message:
        message = code or json.dumps(error, ensure_ascii=False)[:300]
    return ServerError(message[:1000], code, status)


def refusal_hint(endpoint: Endpoint, status: int, error: ServerError | None) -> str:
    """What a person can do about a request the server refused for good."""
    code = error.code if error else ""
    if code in _PERMANENT_CODES:
        return (
            f"the account behind {endpoint.key_var} has no quota left: check its plan and billing (a retry cannot help)"
        )
    return {
        400: f"its message says what it did not accept (if it names the model, check {endpoint.model_var})",
        401: f"check {endpoint.key_var}",
        402: f"the account behind {endpoint.key_var} has no credit left: add credit or use another key",
        403: f"check that {endpoint.key_var} may use this model ({endpoint.model_var})",
        404: f"check {endpoint.base_var} and {endpoint.model_var}",
        413: "the conversation is too large for this server: start a new session or fork from an earlier point",
    }.get(status, f"check the request settings ({endpoint.model_var}, {endpoint.base_var})")


def retryable(status: int, error: ServerError | None) -> bool:
    """429 (unless the quota is spent), 5xx and Anthropic's 529 are worth another attempt; nothing else is."""
    if error is not None and error.code in _PERMANENT_CODES:
        return False
    return status == 429 or status >= 500


def give_up_hint(endpoint: Endpoint, status: int) -> str:
    if status == 429:
        return "The server is limiting requests: wait a while and try again, or check the rate limits of the account."
    if status == 529:
        return "The server is overloaded: try again later."
    return f"The server is failing: try again later, or check {endpoint.base_var}."


# How servers say a request passes the model's window (lowercased): OpenAI's code, OpenAI, vLLM, DeepSeek
# and OpenRouter ("maximum context length is"), Anthropic ("prompt is too long"), llama.cpp server
# ("exceeds the available context size"), Ollama and others ("exceed… context length / window").
_TOO_LONG = re.compile(
    r"context_length_exceeded|exceed_context_size|maximum context length|prompt is too long|"
    r"available context size|exceed\w*\b.{0,40}\bcontext (length|window|size)|"
    r"context (length|window|size)\b.{0,40}\bexceed",
    re.S,
)


def too_long(status: int, error: ServerError | None) -> bool:
    """Whether a refusal says the request passes the model's context window (HTTP 413, or the server's words)."""
    if status == 413:
        return True
    return error is not None and _TOO_LONG.search(f"{error.code} {error.message}".lower()) is not None


def fail(endpoint: Endpoint, status: int, error: ServerError | None, retry_after: float | None = None) -> Exception:
    """The exception for a failed request (an HTTP status, or an error a 200 body or stream carried)."""
    said = f" ({error.message})" if error else ""
    if retryable(status, error):
        hint = give_up_hint(endpoint, status)
        return Retry(f"the model server answered HTTP {status}{said}", retry_after=retry_after, hint=hint)
    return GatewayError(
        f"the model server at {endpoint.url} refused the request: HTTP {status}{said}; "
        f"{refusal_hint(endpoint, status, error)}",
        too_long=too_long(status, error),
    )


async def refuse(endpoint: Endpoint, response: httpx.Response) -> Exception:
    """The exception for a response whose status is not 200, with the server's own message."""
    raw = b""
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) >= 8000:
            break
    try:
        error = server_error(json.loads(raw))
    except ValueError:
        error = None
    if error is None:
        text = raw.decode("utf-8", errors="replace").strip()[:300] or response.reason_phrase
        error = ServerError(text) if text else None
    return fail(endpoint, response.status_code, error, retry_after_seconds(response.headers.get("retry-after")))


def in_body_error(endpoint: Endpoint, payload: Any, where: str) -> Exception | None:
    """The exception for an error a 200 response carried in its body or in a stream event, if it holds one."""
    error = server_error(payload)
    if error is None:
        return None
    status = error.status
    if status is not None and status != 200:
        exc = fail(endpoint, status, error)
        if isinstance(exc, Retry):
            return Retry(f"the model server reported {where}: {error.message} (code {status})", hint=exc.hint)
    hint = f"; {refusal_hint(endpoint, 0, error)}" if error.code in _PERMANENT_CODES else ""
    return GatewayError(
        f"the model server at {endpoint.url} reported {where}: {error.message}{hint}",
        too_long=too_long(status or 0, error),
    )


def _describe(exc: httpx.TransportError) -> str:
    text = str(exc) or type(exc).__name__
    return text[:200]


class HttpGateway(ABC):
    """What a gateway over HTTP is, whatever its protocol: a request posted to its endpoint with retries, its
    answer read as a stream of events (`_events`, the protocol's) or, from a server that sends one JSON document
    instead, as that document (`_holds`, `_document_parts`)."""

    what: ClassVar[str]  # what a document of the protocol holds: "message"

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        api_key: str,
        model: str,
        system: str,
        read_timeout: float,
        max_attempts: int,
        backoff: float,
        max_backoff: float,
        rng: random.Random | None,
    ) -> None:
        self._endpoint = endpoint
        self._api_key = api_key
        self._model = model
        self._system = system
        self._timeout = httpx.Timeout(connect=15.0, read=read_timeout, write=30.0, pool=15.0)
        self._policy = RetryPolicy(max(1, max_attempts), backoff, max_backoff, rng or random.Random())

    @property
    def model(self) -> str:
        return self._model

    def _post(self, body: dict[str, Any], headers: dict[str, str]) -> AsyncIterator[StreamPart]:
        """The parts of the answer to `body`, the request retried as `with_retries` decides."""
        return with_retries(
            self._endpoint, self._policy, self._timeout, lambda client: self._once(client, body, headers)
        )

    async def _once(
        self, client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[StreamPart]:
        endpoint = self._endpoint
        async with client.stream("POST", endpoint.url, json=body, headers=headers) as response:
            if response.status_code != 200:
                raise await refuse(endpoint, response)
            reply = Body(response)
            if await reply.is_document():
                document = await reply.document(endpoint)
                if (error := in_body_error(endpoint, document, "an error in place of a reply")) is not None:
                    raise error
                if not isinstance(document, Mapping) or not self._holds(document):
                    raise GatewayError(
                        f"the model server at {endpoint.url} answered with a JSON document that holds no {self.what}: "
                        f"{json.dumps(document)[:200]!r}"
                    )
                for part in parts_of(endpoint, document, self._document_parts):
                    yield part
                return
            async for part in self._events(reply, Quiet(endpoint, self._timeout.read)):
                yield part

    @abstractmethod
    def _holds(self, document: Mapping[str, Any]) -> bool:
        """Whether a JSON document the server answered with is a reply of the protocol."""

    @abstractmethod
    def _document_parts(self, document: Mapping[str, Any]) -> list[StreamPart]:
        """The parts of a reply sent whole, as one JSON document."""

    @abstractmethod
    def _events(self, reply: Body, quiet: Quiet) -> AsyncIterator[StreamPart]:
        """The parts of a reply streamed as server-sent events, each event's parts given to `quiet` as they come."""
