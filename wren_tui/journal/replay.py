"""Replay: the conversation rebuilt from `message` events alone, and the tool calls left open."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .calls import CallTracker, OpenCall
from .events import ChatMessage, Event, Message


@dataclass
class Replayed:
    """The conversation as the model saw it, and the calls it left open (see `calls` for their states)."""

    messages: list[ChatMessage]
    replayed: int
    skipped: int
    open_calls: list[OpenCall] = field(default_factory=list)

    @property
    def uncertain_calls(self) -> list[OpenCall]:
        """The open calls resume refuses to guess about."""
        return [c for c in self.open_calls if c.uncertain]


def replay(events: Iterable[Event]) -> Replayed:
    """Only message events rebuild the conversation; every other type is for people."""
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
        self._calls.feed(run, kinds)

    def result(self) -> Replayed:
        return Replayed(self.messages, len(self.messages), self.skipped, self._calls.open_calls())
