"""The waterfall pane: every tool call as a bar on the session's time axis, and tokens per turn as a sparkline.

A Line-API ScrollView like the tool timings: one row per call, its bar placed where the call started
and as long as it ran (eighths of a cell), coloured by outcome; a running call's bar grows every
second. Only the rows on screen are decoded, so a million-event session costs no more to draw.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widgets import Sparkline

from ...journal.timing import duration, ts_ms
from .. import strings
from ..clock import Clock
from ..messages import Tick, TimelineGrew, TimelineReplaced
from ..text import shorten
from ..timeline import ROW_WORDS, RowState, Timeline, ToolRow
from .call_list import CallList
from .components import component_classes

_NAME = 12  # the tool's name, left of the axis
_LABEL = 12  # elapsed (or state), right of it
_EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(start: float, length: float, width: int) -> str:
    """A bar from cell `start` (a fraction of cells) `length` cells long, in a track `width` cells wide.

    It starts at the cell `start` falls in and is at least one eighth of a cell long, so even a call
    of a millisecond shows; its end is drawn to the eighth of a cell.
    """
    first = min(max(int(start), 0), max(width - 1, 0))
    eighths = max(round(length * 8), 1)
    eighths = min(eighths, (width - first) * 8)
    whole, part = divmod(eighths, 8)
    drawn = "█" * whole + (_EIGHTHS[part] if part else "")
    return (" " * first + drawn).ljust(width)[:width]


def axis(span_ms: int, width: int) -> str:
    """Labels under the track: the start, the middle and the end of the session's time."""
    if width < 12:
        return "".ljust(width)
    left, middle, right = "0", duration(span_ms // 2), duration(span_ms)
    line = [" "] * width
    for text, at in ((left, 0), (middle, width // 2 - len(middle) // 2), (right, width - len(right))):
        for offset, char in enumerate(text):
            if 0 <= at + offset < width:
                line[at + offset] = char
    return "".join(line)


class Waterfall(CallList):
    """Tool calls over the session's time: where each started, how long it ran, how it ended."""

    DEFAULT_CSS = """
    Waterfall {
        & > .calls--ok { color: $text-success; }
        & > .calls--unknown { color: $text-warning; text-style: bold; }
        & > .calls--name { color: $foreground; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = component_classes(DEFAULT_CSS)

    def __init__(self, timeline: Timeline, clock: Clock, *, id: str | None = None) -> None:
        super().__init__(timeline, clock, id=id)
        self._first_ms: int | None = None  # the session's first event, decoded once per timeline

    def timeline_replaced(self) -> None:
        self._first_ms = None

    def on_tick(self, message: Tick) -> None:
        if self.writer_alive and self.display:
            self.refresh()  # a running call grows, and so does the axis

    # --- the time axis --------------------------------------------------------------------

    def _span(self) -> tuple[int, int] | None:
        """The session's first moment and its last (now, while a writer runs), in milliseconds."""
        timeline = self.timeline
        if not len(timeline) or timeline.last_ts is None:
            return None
        if self._first_ms is None:
            self._first_ms = ts_ms(timeline.event(0).ts)
        last = ts_ms(timeline.last_ts)
        if self._first_ms is None or last is None:
            return None
        if self.writer_alive:
            last = max(last, int(self.clock().timestamp() * 1000))
        return self._first_ms, max(last, self._first_ms + 1)

    # --- drawing --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        track = max(width - _NAME - _LABEL - 2, 1)
        span = self._span()
        if y == 0:
            label = strings.WATERFALL_AXIS if span is None else axis(span[1] - span[0], track)
            return self.text_line(
                f"{strings.WATERFALL_NAME:<{_NAME}} {label} {strings.WATERFALL_LABEL:>{_LABEL}}", "header"
            )
        index = self.row_at(y)
        if isinstance(index, Strip):
            return index
        if span is None:
            return self.text_line(strings.NO_TOOLS if y == 1 else "", "muted")
        row = self.timeline.call(index)
        state = row.state(self.writer_alive)
        cls = self.state_style(state, index)
        drawn, label = self._bar(row, state, span, track)
        name_style: Style = self.style_of("name")
        if index == self.cursor:
            name_style += self.style_of("cursor")
        segments = [
            Segment(f"{shorten(row.name, _NAME):<{_NAME}} ", name_style),
            Segment(drawn, cls),
            Segment(f" {shorten(label, _LABEL):>{_LABEL}}", cls),
        ]
        return Strip(segments).crop_extend(0, width, self.rich_style)

    def _bar(self, row: ToolRow, state: RowState, span: tuple[int, int], track: int) -> tuple[str, str]:
        """The row's bar in a track `track` cells wide, and what is said beside it (elapsed, or the state)."""
        first, last = span
        start = ts_ms(row.start.ts) if row.start is not None else None
        if start is None:
            return " " * track, ROW_WORDS[state]  # asked for, never started: no place on the axis
        scale = track / (last - first)
        end = row.end
        if end is not None and end.elapsed_ms is not None:
            elapsed, label = end.elapsed_ms, duration(end.elapsed_ms)
        elif state == "running":
            elapsed = max(int(self.clock().timestamp() * 1000) - start, 0)
            label = f"{duration(elapsed)}…"
        else:
            elapsed, label = 0, ROW_WORDS[state]
        return bar((start - first) * scale, elapsed * scale, track), label


class TokenSparkline(Sparkline):
    """Tokens used per turn, as a sparkline (Textual's own), kept in step with the timeline while it is shown."""

    DEFAULT_CSS = """
    TokenSparkline { height: 1; margin: 0 1; }
    """

    def __init__(self, timeline: Timeline, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline = timeline

    def on_timeline_replaced(self, message: TimelineReplaced) -> None:
        self.timeline = message.timeline
        self.take()

    def on_timeline_grew(self, message: TimelineGrew) -> None:
        self.take()

    def take(self) -> None:
        """Copy the tokens per turn, if they changed and are shown (a hidden sparkline copies nothing)."""
        if not self.display:
            return
        tokens, data = self.timeline.turn_tokens, self.data
        if data is None or len(data) != len(tokens) or (tokens and data[-1] != tokens[-1]):
            self.data = tokens.tolist()
