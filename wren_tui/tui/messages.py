"""What the session screen tells its panes: small messages, posted from one place when the timeline changes.

A pane is any widget of the screen that handles one of `PANE_MESSAGES` (an `on_timeline_grew`
method, or `@on(TimelineGrew)`): the screen finds it and posts it every one of them, in order. So a
new pane is one widget and one line in `SessionScreen.compose`. A pane holds the timeline it was
last given and reads it when it draws; it never reads the journal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from textual.message import Message
from textual.widget import Widget

from .timeline import Timeline


@dataclass
class PaneMessage(Message, bubble=False):
    """A change of the session that every pane hears about."""


@dataclass
class TimelineReplaced(PaneMessage):
    """The screen holds a new timeline: a journal opened (again), or the whole index in place of its tail."""

    timeline: Timeline
    # The same session read whole in place of its tail: a pane may keep its place (by line, not by position).
    continues: bool = False


@dataclass
class TimelineGrew(PaneMessage):
    """Lines were read on: items from `first` on are new (or grew), and `added` more events were read."""

    timeline: Timeline
    first: int
    added: int


@dataclass
class WriterChanged(PaneMessage):
    """A writer started or stopped holding the journal: without one, what was under way was cut off."""

    alive: bool

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, WriterChanged)  # only the latest matters


@dataclass
class Tick(PaneMessage):
    """A second passed: what shows an elapsed time draws again."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Tick)


PANE_MESSAGES: tuple[type[PaneMessage], ...] = (TimelineReplaced, TimelineGrew, WriterChanged, Tick)


@cache
def is_pane(widget_type: type[Widget]) -> bool:
    """Whether widgets of this class handle a pane message, by method name or by an `@on` handler."""
    names = {kind.handler_name for kind in PANE_MESSAGES}
    for cls in widget_type.__mro__:
        if names & vars(cls).keys():
            return True
        # Textual's table of `@on(...)` handlers of the class, by message type: a private name (textual is capped
        # in pyproject.toml; tests/test_private_api_fences.py holds it).
        decorated = vars(cls).get("_decorated_handlers") or {}
        if any(kind in decorated for kind in PANE_MESSAGES):
            return True
    return False


def tell_panes(root: Widget, message: PaneMessage) -> None:
    """Post `message` to every pane under `root`: each gets its own copy, so none can stop it for the others."""
    for widget in root.query(Widget):
        if is_pane(type(widget)):
            widget.post_message(replace(message))
