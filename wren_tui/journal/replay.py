"""Replay: the conversation rebuilt from `message` events (and the `compaction` events that replace a range of them).

The one rule: the messages are the message events in order, except that a compaction event replaces
the messages it names (from its firstSeq to its lastSeq, as rebuilt at that point) by the message
of the range it keeps (keepSeq: the project instructions) and its summary. `compact` is that rule;
the agent applies the same function to its own conversation when it compacts, so a resume rebuilds
what the run sent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from .calls import CallTracker, OpenCall
from .events import SUMMARY_MARK, ChatMessage, Compaction, Event, Message


def summary_message(event: Compaction) -> ChatMessage:
    """The user message a compaction puts where the messages it replaced were."""
    return ChatMessage(
        role="user",
        content=f"{SUMMARY_MARK} Wren replaced {event.replaced} earlier messages of this conversation by this "
        f"summary of them; go on from it.\n\n{event.summary}",
    )


def compact(messages: list[ChatMessage], seqs: list[int], event: Compaction) -> None:
    """Apply a compaction to a rebuilt conversation, in place: the one rule (see the module's doc).

    `seqs` holds each message's seq (a summary's is its compaction's). A range this conversation does
    not hold (a journal written by another program) changes nothing.
    """
    try:
        lo, hi = seqs.index(event.first_seq), seqs.index(event.last_seq) + 1
    except ValueError:
        return
    if hi <= lo:
        return
    instructions: list[tuple[ChatMessage, int]] = []
    if event.keep_seq:
        with contextlib.suppress(ValueError):
            at = seqs.index(event.keep_seq, lo, hi)
            instructions = [(messages[at], seqs[at])]
    messages[lo:hi] = [*(m for m, _ in instructions), summary_message(event)]
    seqs[lo:hi] = [*(s for _, s in instructions), event.seq]


@dataclass
class Replayed:
    """The conversation as the model saw it, and the calls it left open (see `calls` for their states)."""

    messages: list[ChatMessage]
    replayed: int
    skipped: int
    open_calls: list[OpenCall] = field(default_factory=list)
    # The seq of each message (a compaction's summary has the compaction's).
    seqs: list[int] = field(default_factory=list)

    @property
    def uncertain_calls(self) -> list[OpenCall]:
        """The open calls resume refuses to guess about."""
        return [c for c in self.open_calls if c.uncertain]


def replay(events: Iterable[Event]) -> Replayed:
    """Only message and compaction events rebuild the conversation; every other type is for people."""
    replayer = Replayer()
    replayer.feed(events)
    return replayer.result()


class Replayer:
    """Replay fed in runs of events as a reader streams them, so no run is kept after it is fed.

    `feed` has a reader's sink signature: `scan_events(path, replayer.feed)` replays a journal of
    any size holding only its messages.
    """

    def __init__(self) -> None:
        self.skipped = 0
        # The tracker follows every message for the calls anyway: it keeps them on the way.
        self._calls = CallTracker(keep_messages=True)
        assert self._calls.messages is not None
        self.messages: list[ChatMessage] = self._calls.messages

    def feed(self, events: Iterable[Event], _lines: object = None) -> None:
        """Take the next run of events (the second argument lets it serve as a reader's sink)."""
        run = events if isinstance(events, list) else list(events)
        kinds = list(map(type, run))
        self.skipped += len(run) - kinds.count(Message)
        if Compaction not in kinds:
            self._calls.feed(run, kinds)
            return
        start = 0
        for _ in range(kinds.count(Compaction)):
            index = kinds.index(Compaction, start)  # found in C: a run is mostly deltas and messages
            self._calls.feed(run[start:index], kinds[start:index])
            event = run[index]
            assert isinstance(event, Compaction)
            compact(self.messages, self._calls.seqs, event)
            start = index + 1
        self._calls.feed(run[start:], kinds[start:])

    def result(self) -> Replayed:
        return Replayed(
            self.messages, len(self.messages), self.skipped, self._calls.open_calls(), list(self._calls.seqs)
        )
