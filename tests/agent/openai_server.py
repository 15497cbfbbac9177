"""A real HTTP server on 127.0.0.1 that answers the way streaming model servers do.

Each request is answered by a function of its JSON body: an HTTP status with a body, an SSE stream
sent as HTTP chunks split wherever the test says (inside a UTF-8 character, inside tool-call
arguments), optionally dropping the connection before the end, or a recorded response served byte
for byte (`Recorded`). It speaks no protocol of its own, so it stands for an OpenAI-compatible
server and for Anthropic's alike; it keeps each request's path, headers and body to assert on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Status:
    code: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stream:
    # Any iterable: an endless generator stands for a server that never stops (it is read as the client reads).
    pieces: Iterable[bytes]
    drop_after: int | None = None
    # After this many pieces the server holds the stream open, sending nothing more, until it is closed
    # (`holding` is set then): a client killed there was killed in the middle of the reply.
    hang_after: int | None = None


@dataclass
class Recorded:
    """A response recorded from a real server: its body served exactly, as HTTP chunks cut at `cuts`."""

    body: bytes
    status: int = 200
    content_type: str = "text/event-stream"
    cuts: tuple[int, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)


Answer = Status | Stream | Recorded


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    data = b"".join(b"data: " + json.dumps(c, ensure_ascii=False).encode() + b"\n\n" for c in chunks)
    return data + (b"data: [DONE]\n\n" if done else b"")


def text_chunk(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


def call_chunk(index: int, args: str, call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id:
        call["id"], call["type"] = call_id, "function"
    if name:
        call["function"]["name"] = name
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


def finish_chunk(reason: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def usage_chunk(prompt: int, completion: int) -> dict[str, Any]:
    return {"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}


def split_at(data: bytes, *offsets: int) -> list[bytes]:
    cuts = [0, *sorted(offsets), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(cuts) if b > a]


def reply_stream(text: str, pieces: int = 7) -> Stream:
    """A plain text reply, its bytes cut into `pieces` at even offsets (which land inside characters)."""
    data = sse(text_chunk(text), finish_chunk("stop"), usage_chunk(10, 5))
    step = max(1, len(data) // pieces)
    return Stream(split_at(data, *range(step, len(data), step)))


class OpenAIServer:
    def __init__(self, answer: Callable[[dict[str, Any], dict[str, str]], Answer]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        # Each request's body as the bytes received.
        self.raw: list[bytes] = []
        self.holding = asyncio.Event()
        self._closing = asyncio.Event()
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/v1"

    async def __aenter__(self) -> OpenAIServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._closing.set()
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            self.paths.append(lines[0].split(" ")[1])
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
            raw = await reader.readexactly(int(headers.get("content-length", "0")))
            body = json.loads(raw)
            self.raw.append(raw)
            self.requests.append(body)
            self.headers.append(headers)
            answer = self.answer(body, headers)
            if isinstance(answer, Status):
                payload = json.dumps(answer.body).encode()
                extra = "".join(f"{k}: {v}\r\n" for k, v in answer.headers.items())
                writer.write(
                    f"HTTP/1.1 {answer.code} Status\r\nContent-Type: application/json\r\n{extra}"
                    f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()
                return
            if isinstance(answer, Recorded):
                extra = "".join(f"{k}: {v}\r\n" for k, v in answer.headers.items())
                writer.write(
                    f"HTTP/1.1 {answer.status} Recorded\r\nContent-Type: {answer.content_type}\r\n{extra}"
                    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode()
                )
                pieces, drop_after = split_at(answer.body, *answer.cuts), None
            else:
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                    b"Connection: close\r\n\r\n"
                )
                pieces, drop_after = answer.pieces, answer.drop_after
            hang_after = answer.hang_after if isinstance(answer, Stream) else None
            for number, piece in enumerate(pieces):
                if drop_after is not None and number >= drop_after:
                    writer.transport.abort()
                    return
                if hang_after is not None and number >= hang_after:
                    self.holding.set()
                    await self._closing.wait()
                    writer.transport.abort()
                    return
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                try:
                    await writer.drain()
                except ConnectionError:
                    return  # the client stopped reading (an endless stream it cut)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        finally:
            writer.close()
