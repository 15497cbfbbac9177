"""A session as OpenTelemetry traces, following the GenAI semantic conventions (v1.41.0, in development).

`Spans` folds Wren's events into spans as they are read, and hands each span on when it closes:

- `invoke_agent wren` per run (run_start to run_end), the root of the session's trace;
- `chat {model}` per model call: from the event before it (the user's message or the last result)
  to its reply, with the usage that follows the reply;
- `execute_tool {name}` per tool call, from its start to its end, with its outcome; a failed or
  stopped call is an error span, and so is a call still open when its run died ("outcome unknown").

Ids are derived from the session and the events (a trace per session, a span per run, reply and
call), so sending the same session again gives the same spans, and a backend keeps one of each.
Message and tool content (texts, arguments, results) is put on spans only with `content`.
`OtlpSender` hands the spans to the OpenTelemetry SDK and its OTLP/HTTP exporter (the `otel` extra).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .. import __version__
from ..journal.calls import WORDS, open_state
from ..journal.events import Delta, Error, Event, Message, RunEnd, RunStart, ToolCall, ToolEnd, ToolStart, Usage
from ..journal.timing import ts_ms
from ..journal.turns import Note, Turns

SEMCONV = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV}"
AGENT = "wren"
_json = msgspec.json.Encoder()


@dataclass
class SpanRecord:
    """One closed span, as data: what the sender gives the SDK."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    error: str | None = None  # the status description of an error span; None: not an error
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)


def trace_id_of(session: str) -> int:
    return int.from_bytes(hashlib.sha256(f"wren trace {session}".encode()).digest()[:16], "big") or 1


def span_id_of(session: str, what: str) -> int:
    return int.from_bytes(hashlib.sha256(f"wren span {session} {what}".encode()).digest()[:8], "big") or 1


def _ns(ts: str, fallback: int) -> int:
    ms = ts_ms(ts) if ts else None
    return fallback if ms is None else ms * 1_000_000


@dataclass
class _Run:
    span_id: int
    seq: int
    start_ns: int
    model: str
    resumed: bool
    last_ns: int
    input_tokens: int = 0
    output_tokens: int = 0
    errors: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    # Opened by the first event of a session read without run_start (another agent's): no run_end will come.
    implicit: bool = False


@dataclass
class _Call:
    call: ToolCall
    number: int  # the fold's
    asked_seq: int
    asked_ns: int
    start: ToolStart | None = None
    end: ToolEnd | None = None
    result: str | None = None


@dataclass
class _Chat:
    reply: Message | None  # None: a reply cut off while streaming
    seq: int
    start_ns: int
    end_ns: int
    model: str
    inputs: list[dict[str, Any]]
    text: str = ""


class Spans:
    """Wren events in (in order, as read); `emit(span)` for each span as it closes.

    A sink of the one fold (journal/turns.py), which places each event; its calls by the fold's number.

    `finish(writer_alive)` at the end of what there is to read: with no writer left, the run still
    open died, and its open calls' outcomes are unknown; with one, what is open stays open.
    """

    def __init__(
        self, session: str, emit: Callable[[SpanRecord], object], *, content: bool = False, agent: str | None = None
    ) -> None:
        self.session = session
        # Another agent's session (claude, codex, pi, atif): its runs have no run_start or run_end.
        self.agent = agent
        self.trace_id = trace_id_of(session)
        self.emit = emit
        self.content = content
        self.sent = 0
        self._run: _Run | None = None
        self._calls: dict[int, _Call] = {}
        self._chat: _Chat | None = None
        self._boundary_ns = 0
        self._inputs: list[dict[str, Any]] = []
        self._deltas: list[Delta] = []
        self._ended_calls: list[_Call] = []  # ended, waiting for their result (with content only)
        self._last_ns = 0
        self._now = 0  # the time of the event being placed
        self._model = ""
        self._turns = Turns(self)

    # --- events in ---------------------------------------------------------------------------

    def take(self, events: list[Event]) -> None:
        self._turns.feed(events)

    def _at(self, event: Event) -> int:
        """The time of the event being placed: its ts, else the time of the last event that had one."""
        now = self._now = self._last_ns = _ns(event.ts, self._last_ns)
        return now

    # The fold's sink (turns.TurnSink).

    def delta(self, event: Delta) -> None:
        self._now = self._last_ns = _ns(event.ts, self._last_ns)
        if not self._deltas and self._chat is not None:
            self._send_chat()
        self._deltas.append(event)

    def partial(self, instead: Event | None) -> None:
        self._cut_off(self._last_ns if instead is None else self._at(instead))
        self._deltas.clear()

    def streamed(self) -> None:
        self._deltas.clear()

    def each(self, event: Event) -> None:
        """What each event closes first: the reply before it (but for its usage), ended calls (but for a result)."""
        now = self._now = self._last_ns = _ns(event.ts, self._last_ns)
        kind = type(event)
        if kind is not Usage and self._chat is not None:
            self._send_chat()
        if self._ended_calls and not (isinstance(event, Message) and event.message.role == "tool"):
            self._send_ended()
        if kind is not RunStart:
            run = self._run
            if run is None:
                run = self._ensure_run(event, now)
            run.last_ns = now

    def user(self, event: Message) -> None:
        self._message(event)

    def reply(self, event: Message, first: int) -> None:
        now = self._now
        self._chat = _Chat(event, event.seq, self._boundary_ns, now, self._model, self._inputs)
        self._inputs = []
        for number, call in enumerate(event.message.tool_calls or (), first):
            self._calls[number] = _Call(call, number, event.seq, now)
        self._boundary_ns = now

    def answer(self, event: Message, number: int | None) -> None:
        answered = None if number is None else self._calls.get(number)
        if answered is not None:
            answered.result = event.message.content
            if answered in self._ended_calls:
                self._ended_calls.remove(answered)
                self._send_call(answered, answered.end)
                self._calls.pop(answered.number, None)
        self._message(event)

    def unasked(self, number: int, event: ToolStart | ToolEnd) -> None:
        pass  # a start makes its call in `tool_start`; an end of a call never asked for or started is no span

    def tool_start(self, event: ToolStart, number: int) -> None:
        call = self._calls.get(number)
        if call is None:
            call = self._calls[number] = _Call(ToolCall(event.id, event.name, ""), number, event.seq, self._now)
        call.start = event

    def tool_end(self, event: ToolEnd, number: int) -> None:
        call = self._calls.get(number)
        if call is None:
            return
        call.end = event
        if self.content and call.result is None:
            self._ended_calls.append(call)  # sent with its result, which comes next
            return
        self._send_call(call, event)
        self._calls.pop(number, None)

    def usage(self, event: Usage) -> None:
        run = self._run
        assert run is not None
        run.input_tokens += event.input_tokens
        run.output_tokens += event.output_tokens
        if event.model:
            self._model = event.model
        if self._chat is not None:
            self._send_chat(event)

    def note(self, event: Note) -> None:
        match event:
            case RunStart():
                self._start_run(event, self._now)
            case Error():
                self._ensure_run(event, self._now).errors.append(
                    ("wren.error", self._now, {"message": event.message, "wren.seq": event.seq})
                )
            case RunEnd():
                self._end_run(self._now, event.reason)
            case _:
                pass

    def _start_run(self, event: RunStart, now: int) -> None:
        if self._run is not None:
            self._end_run(now, None)  # a run that never ended: it died, and this one resumes the session
        self._model = event.model or self._model
        self._run = _Run(span_id_of(self.session, f"run {event.seq}"), event.seq, now, event.model, event.resumed, now)
        self._boundary_ns = now

    def _ensure_run(self, event: Event, now: int) -> _Run:
        """The run an event belongs to; a session read without its run_start (another agent's) gets one."""
        if self._run is None:
            span_id = span_id_of(self.session, f"run {event.seq}")
            self._run = _Run(span_id, event.seq, now, self._model, False, now, implicit=True)
            self._boundary_ns = now
        return self._run

    def _message(self, event: Message) -> None:
        """A user message or a tool's result: an input of the next model call, which starts now."""
        msg = event.message
        if self.content:
            if msg.role == "tool":
                self._inputs.append({"role": "tool", "parts": [_part_result(msg.tool_call_id, msg.content)]})
            else:
                self._inputs.append({"role": msg.role, "parts": [{"type": "text", "content": msg.content}]})
        self._boundary_ns = self._now

    def _send_ended(self) -> None:
        ended, self._ended_calls = self._ended_calls, []
        for call in ended:
            self._send_call(call, call.end)
            self._calls.pop(call.number, None)

    def _cut_off(self, now: int) -> None:
        deltas = self._deltas
        chat = _Chat(None, deltas[0].seq, self._boundary_ns, now, self._model, self._inputs)
        chat.text = "".join(d.text for d in deltas if not d.reasoning)
        self._inputs = []
        self._chat = chat
        self._send_chat()

    # --- spans out ---------------------------------------------------------------------------

    def _common(self, operation: str) -> dict[str, Any]:
        return {
            "gen_ai.operation.name": operation,
            "gen_ai.conversation.id": self.session,
            "gen_ai.agent.name": self.agent or AGENT,
        }

    def _send_chat(self, usage: Usage | None = None) -> None:
        chat, self._chat = self._chat, None
        run = self._run
        assert chat is not None and run is not None
        model = (usage.model if usage is not None and usage.model else "") or chat.model or "unknown"
        attrs = self._common("chat")
        attrs.update({"gen_ai.request.model": chat.model or model, "wren.seq": chat.seq})
        attrs.update({"openinference.span.kind": "LLM", "llm.model_name": model})
        if usage is not None:
            attrs.update(
                {
                    "gen_ai.response.model": model,
                    "gen_ai.usage.input_tokens": usage.input_tokens,
                    "gen_ai.usage.output_tokens": usage.output_tokens,
                    "llm.token_count.prompt": usage.input_tokens,
                    "llm.token_count.completion": usage.output_tokens,
                    "llm.token_count.total": usage.input_tokens + usage.output_tokens,
                    "wren.usage_seq": usage.seq,
                }
            )
        error = None
        if chat.reply is None:
            error = "the reply was cut off while streaming"
            attrs["error.type"] = "reply_cut_off"
        else:
            msg = chat.reply.message
            attrs["gen_ai.response.finish_reasons"] = ["tool_calls" if msg.tool_calls else "stop"]
        if self.content:
            attrs["gen_ai.input.messages"] = _json.encode(chat.inputs).decode()
            attrs["gen_ai.output.messages"] = _json.encode([_output(chat)]).decode()
        name = f"chat {model}"
        self._send(SpanRecord(name, self.trace_id, span_id_of(self.session, f"chat {chat.seq}"), run.span_id,
                              chat.start_ns, chat.end_ns, attrs, error))  # fmt: skip

    def _send_call(self, call: _Call, end: ToolEnd | None) -> None:
        run = self._run
        assert run is not None
        start = call.start
        attrs = self._common("execute_tool")
        attrs.update(
            {
                "gen_ai.tool.name": call.call.name,
                "gen_ai.tool.call.id": call.call.id,
                "gen_ai.tool.type": "function",
                "wren.seq": start.seq if start is not None else call.asked_seq,
                "openinference.span.kind": "TOOL",
                "tool.name": call.call.name,
            }
        )
        if start is not None:
            attrs["wren.tool.read_only"] = start.read_only
            attrs["wren.tool.approval"] = start.approval
        error = None
        if end is not None:
            outcome = (
                f"stopped: {end.stopped_by}" if end.stopped_by else {True: "ok", False: "failed", None: "ended"}[end.ok]
            )
            if end.elapsed_ms is not None:
                attrs["wren.tool.elapsed_ms"] = end.elapsed_ms
            if end.stopped_by is not None:
                error = f"stopped by {end.stopped_by}"
                attrs["error.type"] = f"stopped_by_{end.stopped_by}"
            elif end.ok is False:
                error = "the tool failed"
                attrs["error.type"] = "tool_failed"
            end_ns = _ns(end.ts, run.last_ns)
        else:
            outcome = WORDS[open_state(start, None)]
            error = {
                "interrupted": "interrupted: the run ended while this read-only call was running",
                "outcome unknown": "outcome unknown: the run ended while this call was running",
                "never started": "never started: the run ended before this call ran",
            }[outcome]
            attrs["error.type"] = outcome.replace(" ", "_")
            end_ns = run.last_ns
        attrs["wren.tool.outcome"] = outcome
        if self.content:
            attrs["gen_ai.tool.call.arguments"] = call.call.args
            if call.result is not None:
                attrs["gen_ai.tool.call.result"] = call.result
        start_ns = _ns(start.ts, call.asked_ns) if start is not None else call.asked_ns
        span_id = span_id_of(self.session, f"tool {call.asked_seq} {call.call.id}")
        self._send(SpanRecord(f"execute_tool {call.call.name}", self.trace_id, span_id, run.span_id,
                              start_ns, max(end_ns, start_ns), attrs, error))  # fmt: skip

    def _end_run(self, now: int, reason: str | None) -> None:
        """Close the run: its reply and ended calls first, then every call left open, then the run's span."""
        if self._chat is not None:
            self._send_chat()
        self._turns.close()  # a reply cut off while streaming, when reading ends here
        self._send_ended()
        run = self._run
        assert run is not None
        run.last_ns = max(run.last_ns, now)
        for call in list(self._calls.values()):
            self._send_call(call, call.end)
        self._calls.clear()
        attrs = self._common("invoke_agent")
        attrs.update(
            {
                "gen_ai.request.model": run.model or "unknown",
                "gen_ai.usage.input_tokens": run.input_tokens,
                "gen_ai.usage.output_tokens": run.output_tokens,
                "wren.seq": run.seq,
                "wren.run.resumed": run.resumed,
                "wren.run.end_reason": reason or "died",
                **({"wren.agent": self.agent} if self.agent else {}),
                "openinference.span.kind": "AGENT",
                "llm.token_count.prompt": run.input_tokens,
                "llm.token_count.completion": run.output_tokens,
            }
        )
        error = None
        if reason is None:
            error = "the run died without ending (killed or crashed)"
            attrs["error.type"] = "run_died"
        elif reason == "error":
            error = str(run.errors[-1][2]["message"]) if run.errors else "the run ended in an error"
            attrs["error.type"] = "run_error"
        record = SpanRecord(f"invoke_agent {self.agent or AGENT}", self.trace_id, run.span_id, None, run.start_ns,
                            max(run.last_ns, run.start_ns), attrs, error, run.errors)  # fmt: skip
        self._send(record)
        self._run = None

    def _send(self, record: SpanRecord) -> None:
        self.sent += 1
        self.emit(record)

    def finish(self, writer_alive: bool) -> None:
        """The end of what there is to read: with no writer, what is open closes (a run that died)."""
        if writer_alive:
            return
        if self._chat is not None:
            self._send_chat()
        if self._run is not None:
            self._end_run(self._last_ns, "ended" if self._run.implicit else None)

    @property
    def open(self) -> bool:
        return self._run is not None


def _part_result(call_id: str | None, text: str) -> dict[str, Any]:
    return {"type": "tool_call_response", "id": call_id, "response": text}


def _output(chat: _Chat) -> dict[str, Any]:
    if chat.reply is None:
        return {"role": "assistant", "parts": [{"type": "text", "content": chat.text}], "finish_reason": "error"}
    msg = chat.reply.message
    parts: list[dict[str, Any]] = []
    for piece in msg.reasoning or ():
        if piece.text:
            parts.append({"type": "reasoning", "content": piece.text})
    if msg.content:
        parts.append({"type": "text", "content": msg.content})
    for call in msg.tool_calls or ():
        parts.append({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.args})
    return {"role": "assistant", "parts": parts, "finish_reason": "tool_calls" if msg.tool_calls else "stop"}


# --- the OpenTelemetry SDK ------------------------------------------------------------------------


class OtelMissing(Exception):
    """The OpenTelemetry SDK is not installed: `pip install 'wren-tui[otel]'`."""


class SendFailed(Exception):
    """The backend did not take the spans; the message says where and why."""


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of an endpoint given as its base (http://host:4318) or in full."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else f"{endpoint}/v1/traces"


# How long one export may take, every answer and retry included (a total, not per socket read), and
# how much of an answer is read: an OTLP endpoint answers a few bytes (ExportTraceServiceResponse).
DEADLINE_S = 10.0
ANSWER_CAP = 1 << 20
# Answers a collector gives when it is busy or restarting: asked again, within the deadline.
_RETRY = frozenset({429, 502, 503, 504})


class OtlpSender:
    """Spans handed to the SDK with the ids and times they have, exported over OTLP/HTTP in batches on `flush`.

    The SDK builds the spans and encodes them (protobuf); the request is Wren's own: one deadline for the
    whole export (`deadline_s`, retries included), an answer read up to ANSWER_CAP, and a redirect is an
    error, never followed (the headers, which may hold a key, go only where --endpoint says).
    """

    def __init__(self, endpoint: str, *, deadline_s: float = DEADLINE_S) -> None:
        try:
            from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
            from opentelemetry.sdk.trace.id_generator import IdGenerator
        except ImportError:
            raise OtelMissing(
                "wren otel needs the OpenTelemetry SDK and its OTLP exporter: pip install 'wren-tui[otel]'"
            ) from None

        class Ids(IdGenerator):
            """The ids each span was given from its session and events (never random)."""

            def __init__(self) -> None:
                self.trace_id = 1
                self.span_id = 1

            def generate_span_id(self) -> int:
                return self.span_id

            def generate_trace_id(self) -> int:
                return self.trace_id

        class Keep(SpanProcessor):
            def __init__(self) -> None:
                self.ended: list[ReadableSpan] = []

            def on_end(self, span: ReadableSpan) -> None:
                self.ended.append(span)

        self.url = traces_url(endpoint)
        self._encode = encode_spans
        self._post = _Post(self.url, deadline_s)
        self._ids = Ids()
        self._kept = Keep()
        resource = Resource.create({"service.name": AGENT, "service.version": __version__})
        self._provider = TracerProvider(resource=resource, id_generator=self._ids)
        self._provider.add_span_processor(self._kept)
        self._tracer = self._provider.get_tracer("wren", __version__, schema_url=SCHEMA_URL)
        self.exported = 0

    def add(self, record: SpanRecord) -> None:
        from opentelemetry import trace
        from opentelemetry.context import Context
        from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

        context = Context()
        if record.parent_id is not None:
            parent = SpanContext(record.trace_id, record.parent_id, is_remote=False, trace_flags=TraceFlags(1))
            context = trace.set_span_in_context(NonRecordingSpan(parent), context)
        self._ids.trace_id, self._ids.span_id = record.trace_id, record.span_id
        kind = SpanKind.CLIENT if record.attributes.get("gen_ai.operation.name") == "chat" else SpanKind.INTERNAL
        span = self._tracer.start_span(
            record.name, context=context, kind=kind, attributes=record.attributes, start_time=record.start_ns
        )
        for name, at, attrs in record.events:
            span.add_event(name, attrs, timestamp=at)
        if record.error is not None:
            span.set_status(Status(StatusCode.ERROR, record.error))
        span.end(end_time=record.end_ns)

    def flush(self, *, stopping: bool = False) -> int:
        """Export every span added and not yet taken; how many. SendFailed when the backend did not take them
        (those spans are kept, and the next flush sends them again). `stopping`: the last flush, after a Ctrl+C:
        the next one stops it at once (no request is let finish: none comes after it to send a batch twice)."""
        spans, self._kept.ended = self._kept.ended, []
        with contextlib.nullcontext() if stopping else _ctrl_c_after_each_export():
            for at in range(0, len(spans), 512):
                batch = spans[at : at + 512]
                try:
                    self._post(self._encode(batch).SerializePartialToString())
                except BaseException:
                    self._kept.ended = spans[at:] + self._kept.ended  # kept for the next flush: nothing is lost
                    raise
                self.exported += len(batch)
        return len(spans)

    def close(self) -> None:
        self._provider.shutdown()


@contextlib.contextmanager
def _ctrl_c_after_each_export() -> Iterator[None]:
    """Ctrl+C while a batch is being sent lets that request finish (its deadline bounds it) before it stops the
    command: a request cut after the backend took it would leave its spans kept, and sent a second time by the
    last flush. A second Ctrl+C stops at once. Only in the main thread, and only over Python's own handler."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    pressed: list[int] = []

    def held(signum: int, _frame: object) -> None:
        if pressed:
            raise KeyboardInterrupt
        pressed.append(signum)

    signal.signal(signal.SIGINT, held)
    try:
        yield
    except Exception:
        if pressed:
            raise KeyboardInterrupt from None  # the failure is kept for the last flush; the person asked to stop
        raise
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if pressed:
        raise KeyboardInterrupt


def _env(name: str) -> str:
    """An OTLP exporter setting: the traces one (OTEL_EXPORTER_OTLP_TRACES_X), else the general one."""
    import os

    return os.environ.get(f"OTEL_EXPORTER_OTLP_TRACES_{name}") or os.environ.get(f"OTEL_EXPORTER_OTLP_{name}", "")


def _headers(text: str) -> dict[str, str]:
    """OTEL_EXPORTER_OTLP_HEADERS: `name=value` pairs split by commas, each %-encoded (the OTLP exporter spec)."""
    from urllib.parse import unquote

    headers: dict[str, str] = {}
    for pair in text.split(","):
        if not pair.strip():
            continue
        name, sep, value = pair.partition("=")
        name, value = unquote(name).strip(), unquote(value).strip()
        if not sep or not name or not all(ord(c) < 256 and c.isprintable() for c in name + value):
            raise SendFailed(
                f"OTEL_EXPORTER_OTLP_HEADERS: {pair.strip()!r} is not a name=value an HTTP header can carry (printable "
                "Latin-1 once %-decoded); nothing was sent"
            )
        headers[name.lower()] = value
    return headers


class _Post:
    """One OTLP/HTTP export request, as the OTLP exporter variables say (OTEL_EXPORTER_OTLP_[TRACES_]HEADERS,
    _COMPRESSION gzip, _CERTIFICATE, _CLIENT_CERTIFICATE and _CLIENT_KEY).

    The whole exchange (connecting, sending, every byte of the answer, and the retries of a busy
    collector's 429/502/503/504) ends by the deadline: a watchdog shuts the socket when it passes, so a
    server that answers one byte a second is cut like one that never answers.
    """

    def __init__(self, url: str, deadline_s: float) -> None:
        from urllib.parse import urlsplit

        self.url = url
        self.deadline_s = deadline_s
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
            raise SendFailed(f"{url}: not an http:// or https:// address (give --endpoint the collector's URL)")
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, port
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._headers = {"Content-Type": "application/x-protobuf", "User-Agent": f"wren/{__version__}"}
        self._headers.update(_headers(_env("HEADERS")))
        self._gzip = _env("COMPRESSION").strip().lower() == "gzip"
        if self._gzip:
            self._headers["Content-Encoding"] = "gzip"
        self._context = self._tls() if self._https else None

    def _tls(self) -> Any:
        """The TLS settings: a CA certificate to trust, and a client certificate and key (mTLS), when set."""
        import ssl

        certificate = _env("CLIENT_CERTIFICATE") or None
        try:
            context = ssl.create_default_context(cafile=_env("CERTIFICATE") or None)
            if certificate is not None:
                context.load_cert_chain(certificate, _env("CLIENT_KEY") or None)
        except (OSError, ssl.SSLError) as exc:
            raise SendFailed(
                f"the TLS files the OTEL_EXPORTER_OTLP_*CERTIFICATE / *CLIENT_KEY variables name could not be read "
                f"({exc}); nothing was sent"
            ) from None
        return context

    def __call__(self, body: bytes) -> None:
        import gzip
        import random
        import time

        if self._gzip:
            body = gzip.compress(body)
        deadline = time.monotonic() + self.deadline_s
        attempt = 0
        while True:
            status, reason, said = self._once(body, deadline)
            if 200 <= status < 300:
                return
            if 300 <= status < 400:
                where = f" to {said}" if said else ""
                raise SendFailed(
                    f"the endpoint {self.url} answered {status} {reason} (a redirect{where}, which wren otel does "
                    "not follow); nothing was sent: give --endpoint the collector's own address"
                )
            pause = min(0.5 * 2**attempt, 4.0) * (0.8 + 0.4 * random.random())  # jitter
            if status not in _RETRY or time.monotonic() + pause >= deadline:
                tail = f": {said}" if said else ""
                raise SendFailed(f"{self.url} did not take the spans: it answered {status} {reason}{tail}")
            time.sleep(pause)
            attempt += 1

    def _once(self, body: bytes, deadline: float) -> tuple[int, str, str]:
        """(status, reason, what it said: a redirect's Location, or the start of an error's text)."""
        import http.client
        import socket
        import ssl
        import threading
        import time

        left = deadline - time.monotonic()
        if left <= 0:
            raise self._late()
        conn: http.client.HTTPConnection
        if self._https:
            conn = http.client.HTTPSConnection(self._host, self._port, timeout=left, context=self._context)
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=left)
        late = threading.Event()
        held: list[socket.socket] = []  # the connection's socket (it hands it to the answer and forgets it)

        def cut() -> None:
            late.set()
            for sock in held:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

        watchdog = threading.Timer(left, cut)
        watchdog.daemon = True
        watchdog.start()
        try:
            conn.connect()
            held.append(conn.sock)
            if late.is_set():
                raise self._late()
            # A server may answer (a redirect, a refusal) before it reads the body: its answer says why.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                conn.request("POST", self._path, body=body, headers=self._headers)
            answer = conn.getresponse()
            size = answer.getheader("Content-Length")
            if size is not None and size.isdigit() and int(size) > ANSWER_CAP:
                raise self._huge()
            read = 0
            start = b""
            while chunk := answer.read1(65536):
                read += len(chunk)
                if read > ANSWER_CAP:
                    raise self._huge()
                if len(start) < 300:
                    start += chunk[: 300 - len(start)]
            if late.is_set():
                raise self._late()
            if 300 <= answer.status < 400:
                said = answer.getheader("Location") or ""
            elif answer.status >= 400:
                text = " ".join(start.decode("utf-8", "replace").split())
                said = "".join(c for c in text if c.isprintable())[:200]
            else:
                said = ""
            return answer.status, answer.reason, said
        except SendFailed:
            raise
        except (OSError, http.client.HTTPException) as exc:
            if late.is_set() or isinstance(exc, TimeoutError):
                raise self._late() from None
            if isinstance(exc, ssl.SSLError):
                raise SendFailed(f"{self.url} did not take the spans: {exc.reason or exc}") from None
            raise SendFailed(f"{self.url} did not take the spans (is an OTLP/HTTP endpoint listening there?)") from None
        finally:
            watchdog.cancel()
            conn.close()

    def _late(self) -> SendFailed:
        return SendFailed(
            f"{self.url} did not answer within {self.deadline_s:g} s; the spans are not counted as sent "
            "(is an OTLP/HTTP endpoint listening there?)"
        )

    def _huge(self) -> SendFailed:
        return SendFailed(
            f"{self.url} answered with more than {ANSWER_CAP >> 20} MB (an OTLP endpoint answers a few bytes); "
            "the spans are not counted as sent"
        )
