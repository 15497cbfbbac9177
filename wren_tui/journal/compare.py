"""Two sessions compared: the events they share, then their turns side by side, differences marked.

A fork copies its parent's bytes up to the fork point, so what two sessions share is their common
byte prefix, found without decoding it. From there each side is summarised turn by turn (a turn
opens with a user message): the user's words, each tool call (name, arguments, outcome, elapsed)
and the final answer. Turns are paired by number, calls by their place in the turn. `wren diff`
prints `comparison_rows`; the viewer's side-by-side screen draws the same rows.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from ..portable import pread
from .events import Event, Fork, Message, RunEnd, RunStart, ToolEnd, ToolStart
from .reader import open_for_reading, scan_events
from .store import session_id_of
from .verdict import ReadVerdict, Stop

_CHUNK = 1 << 20


class Call(msgspec.Struct, rename="camel"):
    """One tool call of a turn, as the model asked for it and as it ended."""

    id: str
    name: str
    args: str
    seq: int
    outcome: str = "not started"
    elapsed_ms: int | None = None


class Turn(msgspec.Struct, rename="camel"):
    """What happened from one user message to the next (`number` counts user messages from the start)."""

    number: int
    first_seq: int
    last_seq: int
    # The user's message opening it; None for the part of a turn that began before the two sessions parted.
    user: str | None
    continued: bool = False
    calls: list[Call] = msgspec.field(default_factory=list)
    answer: str | None = None
    ended: str | None = None  # the reason of a run_end in the turn


class Side(msgspec.Struct, frozen=True, rename="camel"):
    """One of the two sessions: which, how much of it was read, and where and why reading stopped."""

    id: str
    path: str
    events: int
    stopped: str | None
    stop: Stop | None = None  # the same, as the reader found it (line, offset, why, torn)


class TurnPair(msgspec.Struct, rename="camel"):
    number: int
    left: Turn | None
    right: Turn | None
    differences: list[str]


class Comparison(msgspec.Struct, rename="camel"):
    left: Side
    right: Side
    # Seq 1..shared are the same bytes in both (0: nothing is shared).
    shared: int
    # "B is a fork of A at seq N" (either way round), or None for two sessions not forked from each other.
    relation: str | None
    pairs: list[TurnPair]

    @property
    def same(self) -> bool:
        return not any(pair.differences for pair in self.pairs)


RowKind = Literal["shared", "turn", "user", "call", "answer", "end"]


@dataclass(frozen=True)
class Row:
    """One line of a side-by-side reading: the left text, the right text, and what differs between them."""

    kind: RowKind
    left: str
    right: str
    marks: tuple[str, ...] = ()


def common_prefix(a: Path, b: Path) -> int:
    """How many leading bytes the two files have in common."""
    fa, fb = open_for_reading(a), open_for_reading(b)
    try:
        offset = 0
        while True:
            x, y = pread(fa, _CHUNK, offset), pread(fb, _CHUNK, offset)
            if x != y:
                n = min(len(x), len(y))
                return offset + next((i for i in range(n) if x[i] != y[i]), n)
            if not x:
                return offset
            offset += len(x)
    finally:
        os.close(fa)
        os.close(fb)


class _Summary:
    """Events in, turns out: a side's events after the shared prefix (and the prefix's turn count)."""

    def __init__(self, number: int = 0, user: str | None = None, first_seq: int = 0) -> None:
        self.turns: list[Turn] = []
        self.number = number
        self._open = Turn(number, first_seq, first_seq, user, continued=True) if number else None
        self._fresh = self._open is not None  # the continued turn has no event of its own yet
        self._calls: dict[str, Call] = {}
        self.forked: list[Fork] = []

    def add(self, event: Event) -> None:
        if isinstance(event, Fork):
            self.forked.append(event)
            return
        if isinstance(event, Message) and event.message.role == "user":
            self.number += 1
            self._close()
            self._open = Turn(self.number, event.seq, event.seq, event.message.content)
            return
        if self._fresh and isinstance(event, RunStart):
            return  # a resume or a fork starting: not an event of the turn it continues
        turn = self._open
        if turn is None:
            if isinstance(event, RunStart):
                return  # a run starting before any user message: nothing to compare yet
            turn = self._open = Turn(self.number, event.seq, event.seq, None, continued=True)
        if self._fresh:
            turn.first_seq, self._fresh = event.seq, False
        turn.last_seq = event.seq
        if isinstance(event, Message) and event.message.role == "assistant":
            msg = event.message
            for asked in msg.tool_calls or ():
                call = Call(asked.id, asked.name, asked.args, event.seq)
                self._calls[asked.id] = call
                turn.calls.append(call)
            if not msg.tool_calls and msg.content:
                turn.answer = msg.content
        elif isinstance(event, ToolStart):
            started = self._calls.get(event.id)
            if started is not None:
                started.outcome = "denied" if event.approval == "denied" else "no outcome"
        elif isinstance(event, ToolEnd):
            ended = self._calls.get(event.id)
            if ended is not None:
                ended.elapsed_ms = event.elapsed_ms
                if event.stopped_by is not None:
                    ended.outcome = f"stopped ({event.stopped_by})"
                else:
                    ended.outcome = {True: "ok", False: "failed", None: "ended"}[event.ok]
        elif isinstance(event, RunEnd):
            turn.ended = event.reason

    def _close(self) -> None:
        turn = self._open
        # A continued turn shows its user message for context; it is kept only for what happened in it.
        if turn is not None and (turn.calls or turn.answer or turn.ended or not turn.continued):
            self.turns.append(turn)
        self._open, self._fresh = None, False

    def finish(self) -> list[Turn]:
        self._close()
        return self.turns


@dataclass
class _Prefix:
    """The shared events, as far as a turn count and the open turn's user message go."""

    seq: int = 0
    turns: int = 0
    user: str | None = None


def _read_side(path: Path, shared_bytes: int, prefix: _Prefix | None) -> tuple[ReadVerdict, _Summary, int]:
    """Read one side: the events within the shared bytes only count turns (into `prefix`, if given);
    the rest are summarised, continuing the turn the prefix left open."""
    offset = 0
    summary: _Summary | None = None
    counted = _Prefix()

    def take(events: list[Event], lines: bytes | memoryview) -> None:
        nonlocal offset, summary
        data = bytes(lines) if offset < shared_bytes < offset + len(lines) else b""
        ends: Iterator[int] = _line_ends(data, offset) if data else iter(())
        for event in events:
            end = next(ends) if data else offset + len(lines)
            if summary is None and end <= shared_bytes:
                counted.seq = event.seq
                if isinstance(event, Message) and event.message.role == "user":
                    counted.turns += 1
                    counted.user = event.message.content
                continue
            if summary is None:
                summary = _Summary(counted.turns, counted.user, counted.seq)
            summary.add(event)
        offset += len(lines)

    verdict = scan_events(path, take)
    if prefix is not None:
        prefix.seq, prefix.turns, prefix.user = counted.seq, counted.turns, counted.user
    return verdict, summary or _Summary(counted.turns, counted.user, counted.seq), verdict.lines


def _line_ends(data: bytes, base: int) -> Iterator[int]:
    at = data.find(b"\n")
    while at >= 0:
        yield base + at + 1
        at = data.find(b"\n", at + 1)


def compare(a: Path, b: Path) -> Comparison:
    """Compare session `a` (the left) with `b` (the right); each is read once, neither is written."""
    shared_bytes = common_prefix(a, b)
    prefix = _Prefix()
    left_verdict, left, left_events = _read_side(a, shared_bytes, prefix)
    right_verdict, right, right_events = _read_side(b, shared_bytes, None)
    left_turns, right_turns = left.finish(), right.finish()
    a_id, b_id = session_id_of(a), session_id_of(b)
    relation = None
    if right.forked and right.forked[-1].from_ == a_id:
        relation = f"{b_id} is a fork of {a_id} at seq {right.forked[-1].at_seq}"
    elif left.forked and left.forked[-1].from_ == b_id:
        relation = f"{a_id} is a fork of {b_id} at seq {left.forked[-1].at_seq}"
    return Comparison(
        left=Side(a_id, str(a), left_events, _stopped(left_verdict), left_verdict.stop),
        right=Side(b_id, str(b), right_events, _stopped(right_verdict), right_verdict.stop),
        shared=prefix.seq,
        relation=relation,
        pairs=_pair(left_turns, right_turns),
    )


def _stopped(verdict: ReadVerdict) -> str | None:
    stop = verdict.stop
    if stop is None:
        return None
    kind = "torn tail" if stop.torn else "corrupt"
    return f"reading stopped at line {stop.line} (byte {stop.offset}), {kind}: {stop.why}"


def _pair(left: list[Turn], right: list[Turn]) -> list[TurnPair]:
    by_left = {t.number: t for t in left}
    by_right = {t.number: t for t in right}
    pairs = []
    for number in sorted(by_left.keys() | by_right.keys()):
        one, other = by_left.get(number), by_right.get(number)
        pairs.append(TurnPair(number, one, other, _differences(one, other)))
    return pairs


def _differences(left: Turn | None, right: Turn | None) -> list[str]:
    if left is None or right is None:
        return ["only on the " + ("right" if left is None else "left")]
    found = []
    if left.user != right.user:
        found.append("user message")
    for place in range(max(len(left.calls), len(right.calls))):
        found.extend(f"call {place + 1}: {what}" for what in call_differences(left.calls, right.calls, place))
    if left.answer != right.answer:
        found.append("answer")
    if left.ended != right.ended:
        found.append("how the run ended")
    return found


def call_differences(left: list[Call], right: list[Call], place: int) -> list[str]:
    """What differs between the calls at `place` of two turns: name, arguments, outcome, elapsed."""
    one = left[place] if place < len(left) else None
    other = right[place] if place < len(right) else None
    if one is None or other is None:
        return ["only on the " + ("right" if one is None else "left")]
    found = []
    if one.name != other.name:
        found.append("name")
    if one.args != other.args:
        found.append("arguments")
    if one.outcome != other.outcome:
        found.append("outcome")
    if one.elapsed_ms != other.elapsed_ms:
        found.append("elapsed")
    return found


def describe_call(call: Call) -> str:
    elapsed = "" if call.elapsed_ms is None else f" {call.elapsed_ms} ms"
    return f"{call.name}({call.args}) {call.outcome}{elapsed}"


def one_line(text: str | None) -> str:
    return "" if text is None else " ".join(text.split())


def comparison_rows(cmp: Comparison) -> list[Row]:
    """The comparison as aligned rows: the shared prefix folded into one, then each turn's rows."""
    shared = f"seq 1-{cmp.shared} shared" if cmp.shared else "nothing shared"
    rows = [Row("shared", shared, shared)]
    for pair in cmp.pairs:
        left, right = pair.left, pair.right
        rows.append(Row("turn", _turn_title(left, pair.number), _turn_title(right, pair.number)))
        rows.extend(_text_row(pair, "user", "user message", _user, lambda text: f"you: {one_line(text)}"))
        left_calls, right_calls = (left.calls if left else []), (right.calls if right else [])
        for place in range(max(len(left_calls), len(right_calls))):
            rows.append(
                Row(
                    "call",
                    describe_call(left_calls[place]) if place < len(left_calls) else "",
                    describe_call(right_calls[place]) if place < len(right_calls) else "",
                    tuple(call_differences(left_calls, right_calls, place)) if left and right else (),
                )
            )
        rows.extend(_text_row(pair, "answer", "answer", _answer, lambda text: f"answer: {one_line(text)}"))
        rows.extend(_text_row(pair, "end", "how the run ended", _ended, lambda text: f"run ended: {text}"))
    return rows


def _user(turn: Turn) -> str | None:
    return turn.user


def _answer(turn: Turn) -> str | None:
    return turn.answer or None  # an empty answer is not shown


def _ended(turn: Turn) -> str | None:
    return turn.ended or None


def _text_row(
    pair: TurnPair, kind: RowKind, what: str, text_of: Callable[[Turn], str | None], said: Callable[[str], str]
) -> list[Row]:
    """The row of one text of a pair of turns (none when neither side has it): each side's as `said` says it, and
    `what` differs when both turns are there and their texts are not the same."""
    left, right = pair.left, pair.right
    one = text_of(left) if left is not None else None
    other = text_of(right) if right is not None else None
    if one is None and other is None:
        return []
    differs = (what,) if left is not None and right is not None and one != other else ()
    return [Row(kind, "" if one is None else said(one), "" if other is None else said(other), differs)]


def _turn_title(turn: Turn | None, number: int) -> str:
    if turn is None:
        return f"(no turn {number})"
    more = " (continued)" if turn.continued else ""
    return f"turn {number}{more} · seq {turn.first_seq}-{turn.last_seq}"
