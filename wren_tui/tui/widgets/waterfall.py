"""The waterfall pane: every tool call as a bar on the session's time axis, and tokens per turn as a sparkline.

A Line-API ScrollView like the tool timings: one row per call, its bar placed where the call started
and as long as it ran (eighths of a cell), coloured by outcome; a running call's bar grows every
second. Only the rows on screen are decoded, so a million-event session costs no more to draw.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Sparkline

from ...journal.timing import duration, ts_ms
from .. import strings
from ..messages import Tick, TimelineGrew, TimelineReplaced, WriterChanged
from ..text import shorten, width_of
from ..timeline import CallState, Timeline, ToolRow
from .tool_timings import ToolTimings

Clock = Callable[[], datetime]
_NAME = 12  # the tool's name, left of the axis
_LABEL = 12  # elapsed (or state), right of it
_EIGHTHS = " ▏▎▍▌▋▊▉█"
_CLASS: dict[CallState, str] = {
    "ok": "ok",
    "failed": "bad",
    "stopped": "bad",
    "output lost": "unknown",
    "outcome unknown": "unknown",
    "interrupted": "unknown",
    "never started": "muted",
    "waiting": "running",
    "running": "running",
}


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


class Waterfall(ScrollView, can_focus=True):
    """Tool calls over the session's time: where each started, how long it ran, how it ended."""

    DEFAULT_CSS = """
    Waterfall {
        background: $surface;
        & > .waterfall--header { color: $text-muted; text-style: bold; }
        & > .waterfall--ok { color: $text-success; }
        & > .waterfall--bad { color: $text-error; }
        & > .waterfall--unknown { color: $text-warning; text-style: bold; }
        & > .waterfall--running { color: $text-accent; text-style: bold; }
        & > .waterfall--muted { color: $text-muted; }
        & > .waterfall--name { color: $foreground; }
        & > .waterfall--cursor { background: $boost; }
        &:focus > .waterfall--cursor { background: $block-cursor-blurred-background; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "waterfall--header",
        "waterfall--ok",
        "waterfall--bad",
        "waterfall--unknown",
        "waterfall--running",
        "waterfall--muted",
        "waterfall--name",
        "waterfall--cursor",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Previous call", show=False),
        Binding("down,j", "cursor_down", "Next call", show=False),
        Binding("enter", "choose", "Show in conversation", show=False),
    ]

    cursor: reactive[int] = reactive(-1)
    writer_alive: reactive[bool] = reactive(False)

    def __init__(self, timeline: Timeline, clock: Clock, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline = timeline
        self.clock = clock
        self._first_ms: int | None = None  # the session's first event, decoded once per timeline

    # --- what the screen tells ------------------------------------------------------------

    def on_timeline_replaced(self, message: TimelineReplaced) -> None:
        self.timeline = message.timeline
        self._first_ms = None
        self.rows_changed()

    def on_timeline_grew(self, message: TimelineGrew) -> None:
        self.rows_changed()

    def on_writer_changed(self, message: WriterChanged) -> None:
        self.writer_alive = message.alive

    def on_tick(self, message: Tick) -> None:
        if self.writer_alive and self.display:
            self.refresh()  # a running call grows, and so does the axis

    def rows_changed(self) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, self.timeline.calls + 1)
        self.refresh()

    def watch_cursor(self) -> None:
        self.refresh()

    def watch_writer_alive(self) -> None:
        self.refresh()

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
        base = self.rich_style
        style = self.get_component_rich_style
        track = max(width - _NAME - _LABEL - 2, 1)
        span = self._span()
        if y == 0:
            label = strings.WATERFALL_AXIS if span is None else axis(span[1] - span[0], track)
            text = f"{strings.WATERFALL_NAME:<{_NAME}} {label} {strings.WATERFALL_LABEL:>{_LABEL}}"
            return Strip([Segment(text, style("waterfall--header"))], width_of(text)).crop_extend(0, width, base)
        index = self.scroll_offset.y + y - 1
        if not self.timeline.calls or span is None:
            text = strings.NO_TOOLS if y == 1 else ""
            return Strip([Segment(text, style("waterfall--muted"))], width_of(text)).crop_extend(0, width, base)
        if index >= self.timeline.calls:
            return Strip.blank(width, base)
        row = self.timeline.call(index)
        state = row.state(self.writer_alive)
        cls = style(f"waterfall--{_CLASS[state]}")
        drawn, label = self._bar(row, state, span, track)
        name_style: Style = style("waterfall--name")
        if index == self.cursor:
            cursor = style("waterfall--cursor")
            name_style, cls = name_style + cursor, cls + cursor
        segments = [
            Segment(f"{shorten(row.name, _NAME):<{_NAME}} ", name_style),
            Segment(drawn, cls),
            Segment(f" {shorten(label, _LABEL):>{_LABEL}}", cls),
        ]
        return Strip(segments).crop_extend(0, width, base)

    def _bar(self, row: ToolRow, state: CallState, span: tuple[int, int], track: int) -> tuple[str, str]:
        """The row's bar in a track `track` cells wide, and what is said beside it (elapsed, or the state)."""
        first, last = span
        start = ts_ms(row.start.ts) if row.start is not None else None
        if start is None:
            return " " * track, state  # asked for, never started: no place on the axis
        scale = track / (last - first)
        end = row.end
        if end is not None and end.elapsedMs is not None:
            elapsed, label = end.elapsedMs, duration(end.elapsedMs)
        elif state == "running":
            elapsed = max(int(self.clock().timestamp() * 1000) - start, 0)
            label = f"{duration(elapsed)}…"
        else:
            elapsed, label = 0, state
        return bar((start - first) * scale, elapsed * scale, track), label

    # --- the cursor -----------------------------------------------------------------------

    def _move(self, delta: int) -> None:
        count = self.timeline.calls
        if not count:
            return
        self.cursor = min(max(self.cursor + delta, 0), count - 1) if self.cursor >= 0 else count - 1
        height = self.scrollable_content_region.height - 1
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)

    def action_cursor_up(self) -> None:
        self._move(-1)

    def action_cursor_down(self) -> None:
        self._move(1)

    def action_choose(self) -> None:
        if 0 <= self.cursor < self.timeline.calls:
            self.post_message(ToolTimings.Chosen(self.timeline.call(self.cursor)))


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
