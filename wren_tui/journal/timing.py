"""Where a session's time went: waiting for the model, running tools, or waiting for a person.

Every event moves the session into a phase; the time until the next change of phase is added to
the phase it was in. A user message or a tool's result sends the agent to the model; an assistant
message asking for calls waits for their approval (a person), a tool_start runs a tool; an answer
with no call, a run's end, or a process that was not running (the gap before a run_start or a
fork event) is a person's time. The viewer's status line and the exports sum the same phases.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from .events import Error, Event, Fork, Message, RunEnd, RunStart, ToolEnd, ToolStart

Phase = Literal["model", "tools", "person"]


def _minute_ms(prefix: str) -> int | None:
    try:
        moment = datetime.fromisoformat(prefix + ":00+00:00")
    except ValueError:
        return None
    return int(moment.replace(tzinfo=moment.tzinfo or UTC).timestamp()) * 1000


_MINUTES: dict[str, int | None] = {}


def ts_ms(ts: str) -> int | None:
    """A journal ts (2025-03-01T09:30:01.250Z) in milliseconds since the epoch; None for another shape.

    The minute is parsed once and cached, so a million stamps cost little more than slicing them.
    """
    if len(ts) == 24 and ts[23] == "Z" and ts[19] == ".":
        prefix = ts[:16]
        base = _MINUTES.get(prefix, -1)
        if base == -1:
            if len(_MINUTES) > 4096:
                _MINUTES.clear()
            base = _MINUTES[prefix] = _minute_ms(prefix)
        digits = ts[17:19] + ts[20:23]  # seconds and milliseconds: a number of milliseconds
        if base is not None and digits.isdigit():
            return base + int(digits)
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int(moment.replace(tzinfo=moment.tzinfo or UTC).timestamp() * 1000)


@dataclass
class TimeSpent:
    """Milliseconds in each phase, summed as events are added in order."""

    model_ms: int = 0
    tools_ms: int = 0
    person_ms: int = 0
    phase: Phase = "person"
    since_ms: int | None = None  # when the current phase began
    # Another agent's session records no tool_start: its calls' time is what each tool_end says it took
    # (the sum of the tool table's times), not a phase.
    ends_timed: bool = False

    def add(self, event: Event) -> None:
        kind = type(event)
        if self.ends_timed and kind is ToolEnd and event.elapsed_ms:  # type: ignore[union-attr]
            self.tools_ms += event.elapsed_ms  # type: ignore[union-attr]
        nxt = _PHASE_OF.get(kind)
        if nxt is None:
            if kind is not Message:
                return  # a delta (streaming is the model's time), usage, recovery: the phase stays
            nxt = "person" if event.message.role == "assistant" else "model"  # type: ignore[union-attr]
        elif kind is ToolStart and event.approval == "denied":  # type: ignore[union-attr]
            nxt = "person"
        if nxt == self.phase and kind is not RunStart and kind is not Fork:
            return
        now = ts_ms(event.ts)
        if now is None:
            return
        if self.since_ms is not None and now > self.since_ms:
            if kind is RunStart or kind is Fork or (self.phase == "tools" and _from_a_person(event)):
                # No process was running (or, for a person's message over a call left open, none was left
                # to finish it): nobody's time but a person's.
                self.person_ms += now - self.since_ms
            else:
                self._spend(now - self.since_ms)
        self.phase, self.since_ms = nxt, now

    def until(self, now_ms: int | None) -> TimeSpent:
        """The sums with the phase under way counted up to `now_ms` (a live session's clock), as a copy."""
        spent = TimeSpent(self.model_ms, self.tools_ms, self.person_ms, self.phase, self.since_ms, self.ends_timed)
        if now_ms is not None and self.since_ms is not None and now_ms > self.since_ms:
            spent._spend(now_ms - self.since_ms)
            spent.since_ms = now_ms
        return spent

    def _spend(self, ms: int) -> None:
        if self.phase == "model":
            self.model_ms += ms
        elif self.phase == "tools":
            self.tools_ms += ms
        else:
            self.person_ms += ms


def _from_a_person(event: Event) -> bool:
    return type(event) is Message and event.message.role == "user"


# The phase each kind of event starts (a message's depends on its role: see `add`). A reply waits
# for a person (to approve its calls, or to read its answer); a user's message or a tool's result
# goes to the model; an error is retried, waiting for the model again.
_PHASE_OF: dict[type, Phase] = {
    ToolStart: "tools",
    ToolEnd: "model",
    Error: "model",
    RunEnd: "person",
    RunStart: "person",
    Fork: "person",
}


def duration(ms: int) -> str:
    """A span as a person reads it: 850 ms, 4.2 s, 3m07s, 2h05m."""
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"
