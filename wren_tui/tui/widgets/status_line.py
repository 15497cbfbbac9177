"""The session's status line: id, events, tokens, age of the last event, live/paused/ended, integrity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from .. import strings
from ..text import shorten
from .components import component_classes


@dataclass(frozen=True)
class Status:
    session: str = ""
    events: int = 0
    tokens: int = 0
    age_s: float | None = None
    mode: str = strings.ENDED
    unseen: int = 0
    # "stopped at line N: reason" when the journal cannot be read to its end.
    integrity: str | None = None
    # Background work a person may wait on: "indexing 40%…", "searching 10%…".
    busy: str | None = None
    # Where search is: "match 2 of 7".
    match: str | None = None
    # The filter on: "only tool calls: 12 hidden (0: all)".
    only: str | None = None
    # Where the time went: "model 1m12s · tools 8.2 s".
    spent: str | None = None
    # The context gauge of the last usage: (estimated tokens of the last request, the model's window).
    gauge: tuple[int, int] | None = None


# Modes whose words are not their style's name: the listing's states of a Wren session and endings of another
# agent's, shown in the mode's place.
_MODE_CLASS = {
    strings.STOPPED_MID_CALL: "stopped",
    "interrupted": "stopped",
    "outcome unknown": "stopped",
    "last: reply": "ended",
    "done": "ended",
    "cancelled": "ended",
    "limit": "ended",
    "forked": "ended",
    "empty": "ended",
    "error": "problem",
    "torn tail": "problem",
    "corrupt": "problem",
}


def _age(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"
    if seconds < 86400:
        return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"
    return f"{seconds // 86400:.0f}d"


class StatusLine(Widget):
    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $panel;
        color: $foreground;
        & > .status--live { color: $text-success; text-style: bold; }
        & > .status--paused { color: $text-warning; text-style: bold; }
        & > .status--ended { color: $text-muted; text-style: bold; }
        & > .status--moved { color: $text-warning; text-style: bold reverse; }
        & > .status--deleted { color: $text-error; text-style: bold reverse; }
        & > .status--stopped { color: $text-warning; text-style: bold reverse; }
        & > .status--silent { color: $text-warning; text-style: bold reverse; }
        & > .status--problem { color: $text-error; text-style: bold; }
        & > .status--unseen { color: $text-warning; }
        & > .status--only { color: $text-accent; text-style: bold; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = component_classes(DEFAULT_CSS)

    status: reactive[Status] = reactive(Status, layout=False)

    def render(self) -> Text:
        # What needs a person's attention comes before the counts, so a narrow terminal cuts the counts.
        s = self.status
        style = self.get_component_rich_style
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f" {s.mode} ", style(f"status--{_MODE_CLASS.get(s.mode, s.mode)}"))
        text.append(f" {shorten(s.session, 40)}")
        text.append(f" · {s.events} events")
        if s.integrity:
            text.append(" · ")
            text.append(shorten(s.integrity, 200), style("status--problem"))
        if s.only:
            text.append(" · ")
            text.append(s.only, style("status--only"))
        if s.match:
            text.append(" · " + s.match)
        if s.unseen:
            text.append(" · ")
            text.append(strings.NEW_EVENTS.format(count=s.unseen, key="L"), style("status--unseen"))
        if s.busy:
            text.append(" · " + s.busy)
        text.append(f" · {s.tokens} tokens")
        if s.gauge is not None:
            used, window = s.gauge
            text.append(" · " + strings.GAUGE.format(used=used, window=window, percent=used / window))
        if s.age_s is not None:
            text.append(" · " + strings.AGO.format(age=_age(s.age_s)))
        if s.spent:
            text.append(" · " + s.spent)
        return text
