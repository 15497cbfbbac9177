"""A session as one ATIF trajectory (Agent Trajectory Interchange Format, ATIF-v1.8), streamed as it is read.

ATIF is the transcript format Harbor, Phoenix, Docent and other tools read: steps from the user, the
agent and the system; an agent step holds the model's reply, its reasoning, the tool calls it asked
for, the observation (each result tied to its call's id) and the step's token counts; the trajectory
ends with its totals. Wren's events map onto it one by one (docs/tracing.md has the table):

- a user message is a user step; an assistant message opens an agent step, which takes the calls'
  starts, ends and results and the usage that follow it until the next user or assistant message;
- run starts and ends, errors, recoveries and forks are system steps, each with its event in `extra`
  (one that comes while an agent step is open follows that step, so its results stay tied to it);
- a reply cut off while streaming is an agent step marked partial;
- a call with no result says why in its observation: outcome unknown, interrupted, never started,
  stopped (cancel, timeout, approval, loop) or still running, never success;
- a journal that stops at damage says where and why in `notes` and `extra.wren.stopped`.

Every step carries Wren's seq in `extra.wren_seq`; a fork (whose journal begins with its parent's
events) is its path from the root, with its lineage in `extra.wren.lineage`, since ATIF has no
branch. Only the step being built is held: the rest is written as it comes (`AtomicOutput`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from .. import __version__
from ..journal.events import (
    Delta,
    Event,
    Fork,
    Message,
    RunEnd,
    RunStart,
    ToolEnd,
    ToolStart,
    UnknownEvent,
    Usage,
    describe,
    event_type,
    to_builtins,
)
from ..journal.locks import lock_holder
from ..journal.reader import scan_events
from ..journal.store import session_id_of
from ..journal.turns import Note, Turns
from ..journal.verdict import Stop
from ..journal.visible import escaped_json
from .atomic import AtomicOutput
from .reading import CallRow, stop_sentence

SCHEMA_VERSION = "ATIF-v1.8"
# The note another agent's reading gives for a thinking block (foreign.make.THINKING).
THINKING = "thinking"

_json = msgspec.json.Encoder()
_args = msgspec.json.Decoder()

# What an observation says for a call that has no result, by its state (`reading.CallRow.state`).
_NO_RESULT = {
    "outcome unknown": "[no result: the run ended while this call was running; whether it took effect is unknown]",
    "interrupted": "[no result: this read-only call was interrupted when the run ended]",
    "never started": "[no result: this call never started]",
    "running": "[no result yet: this call is still running]",
}


class _Step:
    """The agent step being built: the reply, then its calls' fates, results and usage as they come."""

    __slots__ = ("calls", "completion", "event", "llm_calls", "model", "prompt", "results", "thinking", "usage_seqs")

    def __init__(self, event: Message, model: str | None) -> None:
        self.event = event
        self.model = model
        self.calls: dict[int, CallRow] = {}  # by the fold's call number
        self.results: dict[int, tuple[str, int]] = {}  # call number -> (content, the tool message's seq)
        self.prompt = self.completion = self.llm_calls = 0
        self.usage_seqs: list[int] = []
        self.thinking: list[UnknownEvent] = []  # another agent's thinking notes, before this reply


class AtifWriter:
    """Wren events in, ATIF steps out to `out`'s body; `finish` writes the head and the totals around them.

    It is a sink of the one fold (journal/turns.py), which places each event.

    `writer_alive`: whether something still writes the session (then a call without a result is running).
    """

    def __init__(self, out: AtomicOutput, *, writer_alive: bool = False) -> None:
        self.out = out
        self.writer_alive = writer_alive
        self.steps = 0
        self.events = 0
        self.model: str | None = None
        self.first_model: str | None = None
        self.cwd: str | None = None
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.lineage: list[dict[str, Any]] = []
        self.ended: str | None = None
        self.calls = 0
        self.outcomes: dict[str, int] = {}
        self._open: _Step | None = None
        # System steps that came while an agent step was open: written right after it.
        self._held: list[tuple[dict[str, Any], int | None]] = []
        self._deltas: list[Delta] = []
        self._pending_usage: list[Usage] = []
        self._thinking: list[UnknownEvent] = []
        self._written: list[bytes] = []
        self._started = False
        self._turns = Turns(self)

    # --- events in ---------------------------------------------------------------------------

    def take(self, events: list[Event]) -> None:
        self.events += len(events)
        self._turns.feed(events)
        self._write()

    # The fold's sink (turns.TurnSink).

    def delta(self, event: Delta) -> None:
        self._deltas.append(event)

    def partial(self, instead: Event | None) -> None:
        deltas, self._deltas = self._deltas, []
        self._partial(deltas)

    def streamed(self) -> None:
        self._deltas = []

    def each(self, event: Event) -> None:
        pass

    def user(self, event: Message) -> None:
        self._close()
        self._flush_thinking()
        self._emit({"source": "user", "timestamp": event.ts or None, "message": event.message.content}, event.seq)

    def reply(self, event: Message, first: int) -> None:
        self._close()
        step = self._open = _Step(event, self.model)
        step.thinking, self._thinking = self._thinking, []
        for number, call in enumerate(event.message.tool_calls or (), first):
            step.calls[number] = CallRow(0, call.id, call.name, call.args, event.seq)
        if self._pending_usage:
            for usage in self._pending_usage:
                self._count(step, usage)
            self._pending_usage.clear()

    def answer(self, event: Message, number: int | None) -> None:
        call_id = event.message.tool_call_id or ""
        step = self._open
        if step is not None and number is not None and number in step.calls:
            step.calls[number].answered = True
            step.results[number] = (event.message.content, event.seq)
            return
        # A result whose call is in no open step (its reply was lost to damage, or an older run's).
        result = {"content": event.message.content, "extra": {"wren_seq": event.seq, "wren_tool_call_id": call_id}}
        self._hold_or_emit(
            {
                "source": "system",
                "timestamp": event.ts or None,
                "message": f"a tool result for call {call_id}, whose request is not in this trajectory",
                "observation": {"results": [result]},
            },
            event.seq,
        )

    def unasked(self, number: int, event: ToolStart | ToolEnd) -> None:
        pass  # in no step: `tool_start` or `tool_end` keeps it as a system step

    def tool_start(self, event: ToolStart, number: int) -> None:
        row = self._row(number, event)
        if row is not None:
            row.start = event

    def tool_end(self, event: ToolEnd, number: int) -> None:
        row = self._row(number, event)
        if row is not None:
            row.end = event

    def _row(self, number: int, event: ToolStart | ToolEnd) -> CallRow | None:
        """The open step's row of the call a start or end is of; one of no open step is kept as a system step."""
        step = self._open
        row = None if step is None else step.calls.get(number)
        if row is None:
            self._system(event)
        return row

    def usage(self, event: Usage) -> None:
        self.prompt_tokens += event.input_tokens
        self.completion_tokens += event.output_tokens
        if event.model:
            self.model = event.model
        if self._open is None:
            self._pending_usage.append(event)  # a model call whose reply comes next
        else:
            self._count(self._open, event)

    def note(self, event: Note) -> None:
        self._system(event)

    def _partial(self, deltas: list[Delta]) -> None:
        self._close()
        text = "".join(d.text for d in deltas if not d.reasoning)
        thought = "".join(d.text for d in deltas if d.reasoning)
        step: dict[str, Any] = {"source": "agent", "timestamp": deltas[0].ts or None, "message": text}
        if self.model:
            step["model_name"] = self.model
        if thought:
            step["reasoning_content"] = thought
        step["extra"] = {
            "wren_seq": deltas[0].seq,
            "wren_partial": f"a reply cut off while streaming (seq {deltas[0].seq} to {deltas[-1].seq})",
        }
        self._emit(step)

    @staticmethod
    def _count(step: _Step, usage: Usage) -> None:
        step.prompt += usage.input_tokens
        step.completion += usage.output_tokens
        step.llm_calls += 1
        step.usage_seqs.append(usage.seq)
        if usage.model:
            step.model = usage.model

    def _system(self, event: Event) -> None:
        if isinstance(event, UnknownEvent) and event.type == THINKING and isinstance(event.fields.get("text"), str):
            self._thinking.append(event)  # another agent's thinking, before the reply it leads to
            return
        self._flush_thinking()
        self._note(event)

    def _flush_thinking(self) -> None:
        """Thinking that no reply followed: kept as the notes they were."""
        thinking, self._thinking = self._thinking, []
        for event in thinking:
            self._note(event)

    def _note(self, event: Event) -> None:
        if isinstance(event, RunStart):
            self.model = event.model or self.model
            self.first_model = self.first_model or event.model or None
            self.cwd = self.cwd or event.cwd or None
            self.ended = None
        elif isinstance(event, RunEnd):
            self.ended = event.reason
        elif isinstance(event, Fork):
            self.lineage.append({"parent": event.from_, "at_seq": event.at_seq, "wren_seq": event.seq})
        kind = event_type(event)
        fields = to_builtins(event)
        step = {
            "source": "system",
            "timestamp": event.ts or None,
            "message": f"{kind}: {describe(event)}",
            "extra": {"wren_seq": event.seq, "wren_event": fields},
        }
        self._hold_or_emit(step, None)

    def _hold_or_emit(self, step: dict[str, Any], seq: int | None) -> None:
        if self._open is not None:
            self._held.append((step, seq))
        else:
            self._emit(step, seq)

    # --- steps out ---------------------------------------------------------------------------

    def _emit(self, step: dict[str, Any], seq: int | None = None) -> None:
        self.steps += 1
        if seq is not None:
            extra = step.setdefault("extra", {})
            extra["wren_seq"] = seq
        if step.get("timestamp") is None:
            step.pop("timestamp", None)
        body = {"step_id": self.steps, **step}
        self._written.append(escaped_json(_json.encode(body)))
        if len(self._written) >= 4096:
            self._write()

    def _write(self) -> None:
        """The steps encoded so far, to the body in one write: one per chunk of the journal, not per step."""
        if self._written:
            self.out.write_raw((b"," if self._started else b"") + b",".join(self._written))
            self._started = True
            self._written.clear()

    def _close(self) -> None:
        """Write the open agent step, with a result or the reason for none for each of its calls."""
        step, self._open = self._open, None
        if step is None:
            return
        msg = step.event.message
        out: dict[str, Any] = {"source": "agent", "timestamp": step.event.ts or None, "message": msg.content}
        if step.model:
            out["model_name"] = step.model
        thoughts = [str(note.fields["text"]) for note in step.thinking]
        thought = "\n".join([*thoughts, *(r.text for r in msg.reasoning or () if r.text)])
        if thought:
            out["reasoning_content"] = thought
        extra: dict[str, Any] = {"wren_seq": step.event.seq}
        if step.thinking:
            extra["wren_thinking_seqs"] = [note.seq for note in step.thinking]
        sealed = sum(1 for r in msg.reasoning or () if r.data)
        if sealed:
            extra["wren_encrypted_reasoning"] = sealed
        if step.calls:
            out["tool_calls"] = [_tool_call(row) for row in step.calls.values()]
            out["observation"] = {"results": [self._observed(number, row, step) for number, row in step.calls.items()]}
        if step.llm_calls:
            out["metrics"] = {"prompt_tokens": step.prompt, "completion_tokens": step.completion}
            out["llm_call_count"] = step.llm_calls
            extra["wren_usage_seqs"] = step.usage_seqs
        out["extra"] = extra
        self._emit(out)
        held, self._held = self._held, []
        for body, seq in held:
            self._emit(body, seq)

    def _observed(self, number: int, row: CallRow, step: _Step) -> dict[str, Any]:
        self.calls += 1
        state = row.state(self.writer_alive)
        self.outcomes[state] = self.outcomes.get(state, 0) + 1
        extra: dict[str, Any] = {"wren_status": state}
        if row.start is not None:
            extra["wren_start_seq"] = row.start.seq
        end = row.end
        if end is not None:
            extra["wren_end_seq"] = end.seq
            if end.ok is not None:
                extra["ok"] = end.ok
            if end.elapsed_ms is not None:
                extra["elapsed_ms"] = end.elapsed_ms
            if end.stopped_by is not None:
                extra["stopped_by"] = end.stopped_by
            if end.truncated:
                extra["truncated"] = True
            if end.redacted:
                extra["redacted"] = end.redacted
        found = step.results.get(number)
        if found is not None:
            content, seq = found
            extra["wren_seq"] = seq
        elif end is not None and end.stopped_by is not None:
            content = f"[no result: stopped by {end.stopped_by}]"
        elif end is not None:
            content = "[no result: the call ended but its output was lost]"
        else:
            content = _NO_RESULT.get(state, f"[no result: {state}]")
        return {"source_call_id": row.id, "content": content, "extra": extra}

    # --- the document ----------------------------------------------------------------------------

    def finish(
        self,
        *,
        session_id: str,
        agent: str = "wren",
        agent_version: str = __version__,
        stop: Stop | None = None,
        source: dict[str, Any] | None = None,
    ) -> None:
        """Close what is open and give the file its name: the head, the steps, the totals."""
        self._turns.close()
        self._close()
        self._flush_thinking()
        self._pending_usage.clear()  # usage no reply followed: counted in the totals only
        self._write()
        wren: dict[str, Any] = {"session": session_id, "exported_by": f"wren {__version__}", "events": self.events}
        if source:
            wren.update(source)
        if self.cwd:
            wren["cwd"] = self.cwd
        if self.lineage:
            wren["lineage"] = self.lineage
        if self.ended is not None:
            wren["ended"] = self.ended
        wren["writer_alive"] = self.writer_alive
        notes = None
        if stop is not None:
            wren["stopped"] = {"line": stop.line, "offset": stop.offset, "why": stop.why, "torn": stop.torn}
            notes = stop_sentence(stop)
        agent_obj: dict[str, Any] = {"name": agent, "version": agent_version}
        if self.first_model or self.model:
            agent_obj["model_name"] = self.first_model or self.model
        # What is known only once the journal is read comes first all the same: the head is written last.
        head: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "session_id": session_id, "agent": agent_obj}
        if notes:
            head["notes"] = notes
        head["extra"] = {"wren": wren}
        foot: dict[str, Any] = {
            "final_metrics": {
                "total_prompt_tokens": self.prompt_tokens,
                "total_completion_tokens": self.completion_tokens,
                "total_steps": self.steps,
                "extra": {"wren_tool_calls": self.calls, "wren_call_outcomes": self.outcomes},
            }
        }
        head_text = escaped_json(_json.encode(head))[:-1].decode() + ',"steps":['
        foot_text = "]," + escaped_json(_json.encode(foot))[1:].decode() + "\n"
        self.out.finish(head_text, foot_text)


def _tool_call(row: CallRow) -> dict[str, Any]:
    call: dict[str, Any] = {"tool_call_id": row.id, "function_name": row.name}
    try:
        args = _args.decode(row.args) if row.args else {}
    except msgspec.DecodeError:
        args = None
    if isinstance(args, dict):
        call["arguments"] = args
    else:
        # ATIF's arguments are an object: what the model wrote is kept as it was, beside an empty one.
        call["arguments"] = {}
        call["extra"] = {"wren_arguments_text": row.args}
    start = row.start
    if start is not None:
        call.setdefault("extra", {}).update({"wren_read_only": start.read_only, "wren_approval": start.approval})
    return call


def write_atif(path: Path, out: AtomicOutput) -> Stop | None:
    """The Wren journal at `path` as an ATIF trajectory in `out`; where reading stopped, if it did."""
    writer = AtifWriter(out, writer_alive=lock_holder(path) is not None)
    take = writer.take
    verdict = scan_events(path, lambda events, _lines: take(events))
    writer.finish(session_id=session_id_of(path), stop=verdict.stop)
    return verdict.stop
