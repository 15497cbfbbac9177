"""Rebuilding the model's messages of a 1,000,000-event journal with compactions, against the same journal without.

The events are made in memory (runs of 1,000, as a reader hands them over), the same objects in both
journals; the compacted one also holds a `compaction` event after every 2,000 messages, each
replacing everything before the person's last request, as the agent writes them. The rebuild is
`Replayer.feed` run by run (what resume and fork do). Its size is bounded by what came after the
last compaction, not by the journal.
"""

from __future__ import annotations

from typing import Literal

from tests.bench import BenchRow, best_of, compare
from wren_tui.journal.events import ChatMessage, Compaction, Delta, Event, Message, Usage
from wren_tui.journal.replay import Replayer

EVENTS = 1_000_000
RUN = 1_000
EVERY = 2_000  # messages between two compactions
TS = "2026-12-07T07:00:00.000Z"


def _journals() -> tuple[list[list[Event]], list[list[Event]]]:
    plain: list[Event] = []
    compacted: list[Event] = []
    seq = 0
    requests = 0
    first_seq = 1
    last_reply = 0
    held = 0  # messages in the rebuild so far: what the next compaction replaces (but the request)
    while seq < EVENTS:
        seq += 1
        kind = seq % 5
        event: Event
        if kind in (1, 3):
            role: Literal["user", "assistant"] = "user" if kind == 1 else "assistant"
            event = Message(seq=seq, ts=TS, message=ChatMessage(role=role, content=f"message {seq} " + "x" * 80))
            held += 1
        elif kind == 4:
            event = Usage(seq=seq, ts=TS, input_tokens=seq, output_tokens=20, model="bench")
        else:
            event = Delta(seq=seq, ts=TS, text="y" * 40)
        plain.append(event)
        compacted.append(event)
        if kind == 3:
            last_reply = seq
        if kind == 1:
            requests += 1
            if requests % (EVERY // 2) == 0:
                # Everything before this request, from the first message (or the last summary) to the last reply.
                seq += 1
                summary = "summary " * 50
                held -= 1  # the request just said is kept
                compacted.append(
                    Compaction(seq=seq, ts=TS, summary=summary, first_seq=first_seq, last_seq=last_reply, replaced=held)
                )
                plain.append(Delta(seq=seq, ts=TS, text="y" * 40))  # the same number of events
                first_seq = seq  # the summary carries the compaction's seq in the rebuild
                held = 2  # the summary and the request
    return _runs(plain), _runs(compacted)


def _runs(events: list[Event]) -> list[list[Event]]:
    return [events[i : i + RUN] for i in range(0, len(events), RUN)]


def _rebuild(runs: list[list[Event]]) -> int:
    replayer = Replayer()
    for run in runs:
        replayer.feed(run)
    return len(replayer.result().messages)


def run() -> list[BenchRow]:
    plain, compacted = _journals()
    held = [0, 0]

    def rebuild_plain() -> None:
        held[0] = _rebuild(plain)

    def rebuild_compacted() -> None:
        held[1] = _rebuild(compacted)

    ours = best_of(rebuild_compacted, repeat=3)
    baseline = best_of(rebuild_plain, repeat=3)
    assert held[1] < EVERY + 2 < held[0], f"the compacted rebuild holds {held[1]} messages, the plain {held[0]}"
    return [
        compare(
            f"rebuild of a {EVENTS:,}-event journal with a compaction every {EVERY:,} messages "
            f"({held[1]:,} messages rebuilt) vs without ({held[0]:,})",
            ours,
            baseline,
            at_most=1.1,  # no slower: the margin is this shared machine's noise between two runs
        )
    ]
