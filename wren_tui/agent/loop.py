"""The turn loop: every step is appended to the journal before the state it describes changes.

Per tool call: assistant message with toolCalls -> tool_start -> run -> tool_end -> tool message.
A call that is not run (denied, a loop, over the limit, cancelled before it started) or is stopped
while it runs still gets a tool_end and a tool message (their words are in outcomes.py), so the
model always sees what happened and the journal never leaves it open.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TextIO, TypeVar

import msgspec

from ..journal.events import (
    INSTRUCTIONS_MARK,
    SUMMARY_MARK,
    ChatMessage,
    Compaction,
    Delta,
    Error,
    KnownEvent,
    Message,
    ToolCall,
    ToolEnd,
    ToolStart,
    Usage,
)
from ..journal.redact import Redactor
from ..journal.replay import compact
from ..journal.visible import valid_text, visible_text
from ..journal.writer import JournalWriter
from ..snapshots.store import SnapshotError
from . import outcomes
from .approval import ApprovalGate, preview_call
from .context import COMPACT_MARK, Gauge
from .errors import SnapshotStopped
from .models.base import (
    NOTHING,
    Gateway,
    GatewayError,
    ReasoningPart,
    Reply,
    RetryPart,
    StreamPart,
    TextPart,
    ToolCallPart,
)
from .snapshotting import Snapshotter
from .tools import TOOLS, Toolbox, ToolResult, holds_lone_surrogate

E = TypeVar("E", bound=KnownEvent)
EndReason = Literal["done", "limit"]
StoppedBy = Literal["approval", "loop", "timeout", "cancel"]

DELTA_INTERVAL = 0.1
DELTA_MAX_CHARS = 400
# A reply longer than this stops the turn (an endless or runaway stream would grow the journal without end).
MAX_REPLY = 16_000_000
# What `wren run` prints before the model's reasoning, and at the start of each of its lines.
REASONING_HEADER = "[thinking]"
REASONING_MARK = "┊ "
REASONING_SEALED = "[thinking: encrypted by the server; kept to send back, not shown]"


@dataclass(frozen=True)
class Limits:
    max_steps: int = 30
    max_calls: int = 16
    loop_repeats: int = 3
    # Characters of one reply (text, reasoning and tool-call arguments together); WREN_MAX_REPLY sets it.
    max_reply: int = MAX_REPLY
    # The share of the window past which the conversation is compacted before the next request (WREN_COMPACT_AT).
    compact_at: float = 0.8


# The last message of the request that asks the model for a summary (the scripted model knows it by its start).
COMPACT_REQUEST = (
    f"{COMPACT_MARK} Summarize this conversation so far for yourself, to continue the work from the summary "
    "alone: each request the user made, what was done (files read, changed, commands run and what they "
    "showed), what is decided, and what is left to do. Plain text, no tool calls."
)


class Printer:
    """What a person running `wren` sees: the reply as it streams and one line per tool call.

    Everything passes through `visible_text`, a character at a time, so no escape sequence, bell,
    backspace or lone CR from a model or a tool reaches the terminal, however the stream is cut.
    Newlines are the only control character written. Reasoning streams under a `[thinking]` line,
    each of its lines behind REASONING_MARK, so it never reads as the reply.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self._out = stream or sys.stdout
        self._mid_line = False
        self._thinking = False
        self._gone = False

    def text(self, fragment: str) -> None:
        if self._thinking:
            self._end_thinking()
        self._write(visible_text(fragment))
        self._mid_line = not fragment.endswith("\n")

    def reasoning(self, fragment: str) -> None:
        out: list[str] = []
        if not self._thinking:
            out.append(("\n" if self._mid_line else "") + REASONING_HEADER + "\n")
            self._thinking, self._mid_line = True, False
        for number, piece in enumerate(visible_text(fragment).split("\n")):
            if number:
                out.append("\n")
                self._mid_line = False
            if piece:
                # The mark is written with the line's first character, so a reasoning ending in a newline leaves none.
                out.append(piece if self._mid_line else REASONING_MARK + piece)
                self._mid_line = True
        self._write("".join(out))

    def line(self, text: str) -> None:
        self._thinking = False
        self._write(("\n" if self._mid_line else "") + visible_text(text) + "\n")
        self._mid_line = False

    def _end_thinking(self) -> None:
        self._thinking = False
        if self._mid_line:
            self._write("\n")
            self._mid_line = False

    def _write(self, text: str) -> None:
        if self._gone:
            return
        try:
            self._out.write(text)
            self._out.flush()
        except OSError as exc:
            # The terminal hung up (EIO) or the reader left (EPIPE): the journal keeps the record, the run goes on.
            if exc.errno not in (errno.EIO, errno.EPIPE, errno.ENXIO):
                raise
            self._gone = True


class _DeltaBatcher:
    """Streamed text as delta events, at most one per DELTA_INTERVAL (or DELTA_MAX_CHARS).

    With `interval=0` it is the terminal's feed: every safe piece at once, each redacted by `emit`.
    """

    def __init__(self, emit: Callable[[str], None], redactor: Redactor, interval: float = DELTA_INTERVAL) -> None:
        self._emit = emit
        self._interval = interval
        self._pending = ""
        self._last = time.monotonic()
        # Each delta is redacted alone, so a secret split across two would escape: keep a possibly
        # unfinished word back, and never cut inside a secret (one whole in the text, or one beginning at its end).
        self._hold_back = max(redactor.longest_secret(), 64)
        self._safe_cut = redactor.safe_cut

    def add(self, text: str) -> None:
        self._pending += text
        if time.monotonic() - self._last >= self._interval or len(self._pending) >= DELTA_MAX_CHARS:
            cut = max(self._pending.rfind(" "), self._pending.rfind("\n")) + 1
            if cut == 0 and len(self._pending) > self._hold_back:
                cut = len(self._pending) - self._hold_back
            cut = self._safe_cut(self._pending, cut)
            if cut > 0:
                self._emit(self._pending[:cut])
                self._pending = self._pending[cut:]
                self._last = time.monotonic()

    def flush(self) -> None:
        """Send what is held back: its piece of the stream is over (the reasoning, when the text begins)."""
        if self._pending:
            self._emit(self._pending)
            self._pending = ""
            self._last = time.monotonic()

    def discard(self) -> None:
        """The rest is not sent as a delta: the whole message follows (or the attempt is retried)."""
        self._pending = ""


@dataclass
class _Shown:
    """What the terminal shows of a streaming reply: its text and its reasoning, each held back as a delta is."""

    text: _DeltaBatcher
    reasoning: _DeltaBatcher

    def flush(self) -> None:
        self.reasoning.flush()
        self.text.flush()

    def discard(self) -> None:
        """An attempt given up: a held-back piece may be the start of a secret the rest never came to finish."""
        self.reasoning.discard()
        self.text.discard()


def _size(part: StreamPart) -> int:
    """What a part counts toward the reply's cap: its characters (a call's name and id too, a signature), and at
    least one, so a stream of parts that carry nothing (keep-alives, empty deltas) reaches the cap too."""
    if isinstance(part, TextPart):
        return len(part.text) or 1
    if isinstance(part, ReasoningPart):
        return len(part.text) + len(part.signature or "") + len(part.data or "") or 1
    if isinstance(part, ToolCallPart):
        return len(part.args) + len(part.name or "") + len(part.id or "") or 1
    return 1


class _Pairs:
    """Stream fragments with a surrogate pair cut between two of them joined (its first half waits for the second)."""

    def __init__(self) -> None:
        self._held: dict[object, str] = {}

    def join(self, key: object, text: str) -> str:
        text = self._held.pop(key, "") + text
        if text and "\ud800" <= text[-1] <= "\udbff":
            self._held[key], text = text[-1], text[:-1]
        return valid_text(text)

    def mend(self, part: StreamPart) -> StreamPart:
        if isinstance(part, TextPart):
            return TextPart(self.join("text", part.text))
        if isinstance(part, ReasoningPart) and part.text:
            return dataclasses.replace(part, text=self.join(("reasoning", part.block), part.text))
        return part

    def rest(self) -> list[StreamPart]:
        """What is still held when the stream ends: lone first halves, each shown as U+FFFD."""
        parts: list[StreamPart] = []
        for key in list(self._held):
            del self._held[key]
            if key == "text":
                parts.append(TextPart("\ufffd"))
            elif isinstance(key, tuple):
                parts.append(ReasoningPart("\ufffd", block=key[1]))
        return parts


class Agent:
    def __init__(
        self,
        writer: JournalWriter,
        gateway: Gateway,
        toolbox: Toolbox,
        gate: ApprovalGate,
        *,
        redactor: Redactor | None = None,
        limits: Limits | None = None,
        printer: Printer | None = None,
        on_append: Callable[[int], None] | None = None,
        messages: list[ChatMessage] | None = None,
        snapshots: Snapshotter | None = None,
        gauge: Gauge | None = None,
        seqs: list[int] | None = None,
    ) -> None:
        self.writer = writer
        self.gateway = gateway
        self.toolbox = toolbox
        self.gate = gate
        self.redactor = redactor or Redactor()
        self.limits = limits or Limits()
        self.printer = printer or Printer()
        self.on_append = on_append
        self.messages: list[ChatMessage] = list(messages or [])
        # The seq of each message (a compaction names the range it replaces by them).
        self.seqs: list[int] = list(seqs) if seqs is not None else [0] * len(self.messages)
        self.snapshots = snapshots
        # The size of the next request against the model's window (None: not kept).
        self.gauge = gauge
        self._estimated = 0
        # Loop detection looks at this process's calls only: a resumed history is not held against it.
        self._own_from = len(self.messages)

    # --- the journal --------------------------------------------------------------------------

    def append(self, event: E) -> E:
        """Redact, append (durable on return), then tell whoever watches the seq."""
        stamped = self.writer.append(self._redacted(event))
        if self.on_append is not None:
            self.on_append(stamped.seq)
        return stamped

    def _redacted(self, event: E) -> E:
        # Every text field of every event type, nested ones too: nothing to add here for a new type.
        return self.redactor.clean_fields(event)

    def say(self, message: ChatMessage) -> ChatMessage:
        """Append a message and add it to the conversation exactly as the journal holds it."""
        stamped = self.append(Message(message=message))
        self.messages.append(stamped.message)
        self.seqs.append(stamped.seq)
        if self.gauge is not None:
            self.gauge.add(stamped.message)
        return stamped.message

    # --- a turn -------------------------------------------------------------------------------

    async def turn(self) -> EndReason:
        """Model replies and tool calls until a reply asks for no tool, or the step limit."""
        for _ in range(self.limits.max_steps):
            if self._over_threshold():
                await self.compact(keep_from=self._cut())
            try:
                reply = await self._reply()
            except GatewayError as exc:
                # Refused as longer than the window: compacted once, the request goes again.
                if not exc.too_long:
                    raise
                self.append(Error(message=str(exc), retryable=True))
                if not await self.compact(keep_from=self._cut()):
                    raise
                self.printer.line("[the server refused the request as too long; compacted, sending it again]")
                reply = await self._reply()
            # A call the model sent without an id is named after the seq of the message before it: unique in the
            # journal, where the conversation's length repeats once a compaction has shortened it.
            calls = reply.tool_calls(f"call_{self.seqs[-1] if self.seqs else 0}")
            said = self.say(
                ChatMessage(
                    role="assistant", content=reply.content, tool_calls=calls or None, reasoning=reply.reasoning
                )
            )
            if reply.input_tokens is not None:
                self.append(
                    Usage(
                        input_tokens=reply.input_tokens,
                        output_tokens=reply.output_tokens or 0,
                        model=self.gateway.model,
                        estimated=self._estimated,
                        window=(self.gauge.window or 0) if self.gauge is not None else 0,
                    )
                )
                if self.gauge is not None:
                    self.gauge.reported(reply.input_tokens)
            if not said.tool_calls:
                self.snapshot(None)
                return "done"
            await self.run_calls(said.tool_calls, originals=calls)
        self.snapshot(None)
        self.printer.line(f"[stopped: {self.limits.max_steps} model steps in one turn is the limit]")
        return "limit"

    # --- compaction ---------------------------------------------------------------------------

    def _over_threshold(self) -> bool:
        gauge = self.gauge
        return gauge is not None and bool(gauge.window) and gauge.used() > self.limits.compact_at * (gauge.window or 0)

    def _last_request(self) -> int:
        """The index of the person's last message: the turn in progress starts there and is kept whole."""
        for index in range(len(self.messages) - 1, -1, -1):
            message = self.messages[index]
            if message.role == "user" and not message.content.startswith((INSTRUCTIONS_MARK, SUMMARY_MARK)):
                return index
        return len(self.messages)

    def _cut(self) -> int:
        """Where a compaction before the next request ends: at the person's last request, so the turn in
        progress is kept whole; but when that turn alone is past the threshold (a long task), at its last
        step (the last assistant message), so everything replaced has its results and the step the model
        just took stays in view with them."""
        last = self._last_request()
        gauge = self.gauge
        if gauge is None or not gauge.window:
            return last
        if gauge.rebuilt(self.messages[last:]).used() <= self.limits.compact_at * gauge.window:
            return last
        for index in range(len(self.messages) - 1, last, -1):
            if self.messages[index].role == "assistant":
                return index
        return last

    def _clean_cut(self, end: int) -> int | None:
        """A point near the middle of the first `end` messages where a step or a request begins (every call
        before it has its result), with at least two messages worth a summary before it; None if none."""
        worth, points = 0, []
        for i, message in enumerate(self.messages[:end]):
            starts = message.role == "assistant" or (
                message.role == "user" and not message.content.startswith(SUMMARY_MARK)
            )
            if starts and worth >= 2:
                points.append(i)
            worth += not message.content.startswith((INSTRUCTIONS_MARK, SUMMARY_MARK))
        return min(points, key=lambda i: abs(i - end // 2), default=None)

    async def _summary(self, messages: list[ChatMessage]) -> str:
        """The model's summary of `messages`, asked for with a request of its own and collected whole."""
        request = [*messages, ChatMessage(role="user", content=COMPACT_REQUEST)]
        pieces: list[str] = []
        size = 0
        async for part in self.gateway.stream(request, []):
            if isinstance(part, RetryPart):
                self.printer.line(f"[{part.message}; retry {part.attempt} in {part.delay:.1f} s]")
                pieces, size = [], 0
            elif isinstance(part, TextPart):
                pieces.append(part.text)
                size += len(part.text)
                if size > self.limits.max_reply:
                    raise GatewayError(
                        f"the model's summary passed {self.limits.max_reply:,} characters, the limit for one reply "
                        "(WREN_MAX_REPLY); nothing was compacted"
                    )
        return self.redactor.clean(valid_text("".join(pieces))).strip()

    async def compact(self, *, keep_from: int | None = None) -> bool:
        """Replace the messages before `keep_from` (all: None) by the model's summary of them, journal first.

        The summary is asked for with a request of its own; only once it is whole is the `compaction`
        event written, and only then does the conversation change (by the replay's one rule), so a
        kill during the summary leaves nothing and the next run tries again. False when there is
        nothing worth replacing (the instructions and an earlier summary alone).

        Raises:
            GatewayError: the summary request failed; nothing was written.
        """
        end = len(self.messages) if keep_from is None else keep_from
        worth = [m for m in self.messages[:end] if not m.content.startswith((INSTRUCTIONS_MARK, SUMMARY_MARK))]
        if len(worth) < 2:
            return False
        before = self.gauge.used() if self.gauge is not None else 0
        self.printer.line(f"[compacting {end} messages (~{before:,} tokens): asking the model for a summary]")
        try:
            summary = await self._summary(self.messages[:end])
        except GatewayError as exc:
            # The range alone passes the window (the server refused the request that carried it): its first
            # part is summarized first (a compaction of its own), then the rest with that summary.
            half = self._clean_cut(end) if exc.too_long else None
            if half is None:
                raise
            self.printer.line("[the summary request was refused as too long; summarizing the first part alone]")
            had = len(self.messages)
            if not await self.compact(keep_from=half):
                raise
            return await self.compact(keep_from=end - (had - len(self.messages)))
        if not summary:
            raise GatewayError("the model sent an empty summary; nothing was compacted")
        # The project instructions stay ahead of the summary: the last ones given in the range.
        keep = next(
            (self.seqs[i] for i in range(end - 1, -1, -1) if self.messages[i].content.startswith(INSTRUCTIONS_MARK)), 0
        )
        draft = Compaction(
            summary=summary, first_seq=self.seqs[0], last_seq=self.seqs[end - 1], replaced=end, keep_seq=keep
        )
        after_messages, after_seqs = list(self.messages), list(self.seqs)
        compact(after_messages, after_seqs, draft)
        after = self.gauge.rebuilt(after_messages).used() if self.gauge is not None else 0
        event = self.append(msgspec.structs.replace(draft, tokens_before=before, tokens_after=after))
        compact(self.messages, self.seqs, event)
        if self.gauge is not None:
            self.gauge = self.gauge.rebuilt(self.messages)
        self.printer.line(f"[compacted {end} messages into a summary: ~{before:,} -> ~{after:,} tokens]")
        return True

    def snapshot(self, before: ToolCall | None) -> None:
        """Snapshot the workspace and journal it (before `before` starts, or at a turn's end), when snapshots are on.

        Raises:
            SnapshotStopped: it could not be taken; the call (if any) is recorded as not run first.
        """
        if self.snapshots is None:
            return
        try:
            event = self.snapshots.take(before.id if before else None)
        except SnapshotError as exc:
            why = str(exc)
            self.append(Error(message=f"snapshot failed: {why}"))
            if before is not None:
                self.printer.line(f"  -> {preview_call(before)} [not run: the workspace could not be snapshotted]")
                self._finish(before, ToolResult(False, outcomes.snapshot_failed(why)), 0, None)
            store = self.snapshots.store.path
            raise SnapshotStopped(
                f"stopped: the workspace could not be snapshotted into {store} ({why}); nothing ran"
            ) from None
        if event is not None:
            self.append(event)

    async def _reply(self) -> Reply:
        reply = Reply()
        batcher = _DeltaBatcher(self._delta, self.redactor)
        thinking = _DeltaBatcher(self._reasoning_delta, self.redactor)
        # The terminal is fed as the deltas are, so a secret split across two parts is not shown in pieces.
        shown = _Shown(
            _DeltaBatcher(lambda text: self.printer.text(self.redactor.clean(text)), self.redactor, interval=0),
            _DeltaBatcher(lambda text: self.printer.reasoning(self.redactor.clean(text)), self.redactor, interval=0),
        )
        pairs, size = _Pairs(), 0
        self._estimated = self.gauge.sending() if self.gauge is not None else 0
        async for raw in self.gateway.stream(self.messages, list(TOOLS.values())):
            part = pairs.mend(raw)
            size += _size(part)
            if size > self.limits.max_reply:
                batcher.discard()
                thinking.discard()
                shown.discard()
                raise GatewayError(
                    f"the model's reply passed {self.limits.max_reply:,} characters, the limit for one reply "
                    "(WREN_MAX_REPLY); the turn is stopped, and what streamed before is in its deltas"
                )
            if isinstance(part, RetryPart):
                self.append(
                    Error(
                        message=f"{part.message}; retrying in {part.delay:.1f} s", retryable=True, attempt=part.attempt
                    )
                )
                self.printer.line(f"[{part.message}; retry {part.attempt} in {part.delay:.1f} s]")
                reply = Reply()
                batcher.discard()
                thinking.discard()
                shown.discard()
                pairs, size = _Pairs(), 0
                continue
            if raw is NOTHING:
                continue  # counted toward the cap, and nothing else
            self._take(part, reply, batcher, thinking, shown)
        for part in pairs.rest():
            self._take(part, reply, batcher, thinking, shown)
        batcher.discard()
        thinking.discard()
        # The reply is whole: what the terminal held back is shown (redacted as one piece).
        shown.flush()
        if reply.content or reply.thoughts:
            self.printer.line("")
        return reply

    def _take(
        self, part: StreamPart, reply: Reply, batcher: _DeltaBatcher, thinking: _DeltaBatcher, shown: _Shown
    ) -> None:
        """One part of the reply: kept, streamed as a delta, shown."""
        reply.add(part)
        if isinstance(part, ReasoningPart):
            if part.text:
                thinking.add(part.text)
                shown.reasoning.add(part.text)
            elif part.data:
                shown.reasoning.flush()
                self.printer.line(REASONING_SEALED)
        else:
            thinking.flush()
            shown.reasoning.flush()
        if isinstance(part, TextPart):
            batcher.add(part.text)
            shown.text.add(part.text)

    def _delta(self, text: str) -> None:
        self.append(Delta(text=text))

    def _reasoning_delta(self, text: str) -> None:
        self.append(Delta(text=text, reasoning=True))

    async def run_calls(self, calls: list[ToolCall], *, originals: list[ToolCall] | None = None) -> None:
        """Run the calls of one assistant message in order; a cancel closes the ones not yet run."""
        for index, call in enumerate(calls):
            # The tool runs with the arguments the model sent; the journal holds them redacted.
            original = originals[index] if originals and index < len(originals) else call
            if index >= self.limits.max_calls:
                self._not_run(call, None)
                continue
            try:
                await self.run_call(call, original)
            except SnapshotStopped as exc:
                answered = {m.tool_call_id for m in self.messages if m.role == "tool"}
                for rest in calls[index:]:
                    if rest.id not in answered:
                        self._finish(rest, ToolResult(False, outcomes.snapshot_failed(str(exc))), 0, None)
                raise
            except asyncio.CancelledError as exc:
                # The current call too, when the cancel came before it started (at the approval prompt).
                answered = {m.tool_call_id for m in self.messages if m.role == "tool"}
                for rest in calls[index:]:
                    if rest.id not in answered:
                        self._not_run(rest, "cancel", cancel_cause(exc))
                raise

    async def run_call(self, call: ToolCall, original: ToolCall | None = None, *, note: str = "") -> None:
        tool = TOOLS.get(call.name)
        if tool is None:
            # Nothing to approve or run: it is not a read-only call, nor one with side effects.
            self._not_run(call, None)
            return
        if holds_lone_surrogate((original or call).args):
            # Refused before it is asked for or started: nothing could run it as the model wrote it.
            self._not_run(call, None)
            return
        if self._repeats(call) >= self.limits.loop_repeats - 1:
            self._not_run(call, "loop")
            return
        verdict = await self.gate.decide(call, tool)
        if not tool.read_only and verdict.approval != "denied":
            self.snapshot(call)
        self.append(ToolStart(id=call.id, name=call.name, read_only=tool.read_only, approval=verdict.approval))
        self.printer.line(
            f"  -> {preview_call(call)}{note}{f' [{verdict.label}]' if verdict.approval == 'denied' else ''}"
        )
        if verdict.approval == "denied":
            self._finish(call, ToolResult(False, verdict.reason), 0, "approval")
            return
        started = time.monotonic()
        try:
            result = await self.toolbox.run(call.name, (original or call).args)
        except asyncio.CancelledError as exc:
            elapsed = _ms(started)
            self._finish(call, ToolResult(False, outcomes.interrupted(elapsed, cancel_cause(exc))), elapsed, "cancel")
            raise
        self._finish(call, result, _ms(started), result.stopped_by)

    def _finish(self, call: ToolCall, result: ToolResult, elapsed: int, stopped: StoppedBy | None) -> None:
        content, redacted = self.redactor.redact(result.content)
        self.append(
            ToolEnd(
                id=call.id,
                ok=result.ok,
                elapsed_ms=elapsed,
                chars=len(content),
                truncated=result.truncated,
                stopped_by=stopped,
                redacted=redacted,
            )
        )
        self.say(ChatMessage(role="tool", content=content, tool_call_id=call.id))
        status = "ok" if result.ok else (f"stopped by {stopped}" if stopped else "failed")
        extra = ", truncated" if result.truncated else ""
        self.printer.line(f"  <- {status}, {elapsed} ms, {len(content)} chars{extra}")

    def _not_run(self, call: ToolCall, stopped: StoppedBy | None, cause: str | None = None) -> None:
        """A call that never started: no tool_start, only its end and the reason the model reads."""
        self.printer.line(f"  -> {preview_call(call)} [not run: {not_run_label(call, stopped)}]")
        self._finish(call, ToolResult(False, self.not_run_message(call, stopped, cause)), 0, stopped)

    def not_run_message(self, call: ToolCall, stopped: StoppedBy | None, cause: str | None = None) -> str:
        """What the model reads for a call that never started: the turn stopped, a loop, or over the limit (None)."""
        if stopped == "cancel":
            return outcomes.stopped_before_start(cause)
        if stopped == "loop":
            return outcomes.repeated(self.limits.loop_repeats, call.name)
        if call.name not in TOOLS:
            return outcomes.no_such_tool(call.name, list(TOOLS))
        if holds_lone_surrogate(call.args):  # the journal keeps the escape, so resume says the same
            return outcomes.unholdable_text(call.name)
        return outcomes.over_limit(self.limits.max_calls)

    def _repeats(self, call: ToolCall) -> int:
        """How many calls right before this one, in this turn of this process, asked for the same tool and arguments."""
        history: list[ToolCall] = []
        for index in range(len(self.messages) - 1, self._own_from - 1, -1):
            message = self.messages[index]
            if message.role == "user":
                break
            if message.role == "assistant" and message.tool_calls:
                history[:0] = message.tool_calls
        position = next((i for i, c in enumerate(history) if c.id == call.id), len(history))
        count = 0
        for earlier in reversed(history[:position]):
            if (earlier.name, earlier.args) != (call.name, call.args):
                break
            count += 1
        return count


def not_run_label(call: ToolCall, stopped: StoppedBy | None) -> str:
    """Why a call was not run, in a word or two (what `wren run` prints beside it)."""
    if stopped:
        return stopped
    if call.name not in TOOLS:
        return "no such tool"
    return "a lone surrogate in its arguments" if holds_lone_surrogate(call.args) else "limit"


def cancel_cause(exc: asyncio.CancelledError) -> str | None:
    """Why the turn was cancelled, when the canceller said (run_until_signal names the signal)."""
    return exc.args[0] if exc.args and isinstance(exc.args[0], str) else None


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
