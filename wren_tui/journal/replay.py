"""Replay: the conversation rebuilt from `message` events alone, and the tool calls left open."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter

from .calls import CallTracker, OpenCall
from .events import ChatMessage, Event, Message

_is_message = frozenset({Message}).__contains__
_message_of = attrgetter("message")


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
        self.messages: list[ChatMessage] = []
        self.skipped = 0
        self.calls = CallTracker()

    def feed(self, events: Iterable[Event], _lines: object = None) -> None:
        """Take the next run of events (the second argument lets it serve as a reader's sink)."""
        run = events if isinstance(events, list) else list(events)
        kinds = list(map(type, run))
        # Messages are picked out, counted and unwrapped in C, with no Python frame per event.
        self.messages.extend(map(_message_of, compress(run, map(_is_message, kinds))))
        self.skipped += len(run) - kinds.count(Message)
        self.calls.feed(run, kinds)

    def result(self) -> Replayed:
        return Replayed(self.messages, len(self.messages), self.skipped, self.calls.open_calls())
