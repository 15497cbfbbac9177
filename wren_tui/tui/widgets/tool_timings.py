"""The tool-timings pane: one row per call, a running call's elapsed time ticking.

A Line-API ScrollView with a pinned header row; a row's events are decoded only when it is on screen.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import ClassVar

import msgspec
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...journal.store import parse_ts
from .. import strings
from ..messages import Tick, TimelineGrew, TimelineReplaced, WriterChanged
from ..text import shorten, width_of
from ..timeline import CallState, Timeline, ToolRow

Clock = Callable[[], datetime]
_STATE_CLASS: dict[CallState, str] = {
    "ok": "ok",
    "failed": "bad",
    "stopped": "bad",
    "output lost": "unknown",
    "outcome unknown": "unknown",
    "interrupted": "unknown",
    "never started": "muted",
    "no result recorded": "unknown",
    "waiting": "running",
    "running": "running",
}


class ToolTimings(ScrollView, can_focus=True):
    """Tool calls in the order the model asked for them, with elapsed, size and outcome."""

    DEFAULT_CSS = """
    ToolTimings {
        background: $surface;
        & > .tools--header { color: $text-muted; text-style: bold; }
        & > .tools--ok { color: $foreground; }
        & > .tools--bad { color: $text-error; }
        & > .tools--unknown { color: $text-warning; text-style: bold reverse; }
        & > .tools--running { color: $text-accent; text-style: bold; }
        & > .tools--muted { color: $text-muted; }
        & > .tools--cursor { background: $boost; }
        &:focus > .tools--cursor { background: $block-cursor-blurred-background; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tools--header",
        "tools--ok",
        "tools--bad",
        "tools--unknown",
        "tools--running",
        "tools--muted",
        "tools--cursor",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Previous call", show=False),
        Binding("down,j", "cursor_down", "Next call", show=False),
        Binding("enter", "choose", "Show in conversation", show=False),
    ]

    cursor: reactive[int] = reactive(-1)
    writer_alive: reactive[bool] = reactive(False)

    class Chosen(TextualMessage):
        """Enter on a row: show this call in the conversation."""

        def __init__(self, row: ToolRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, timeline: Timeline, clock: Clock, *, id: str | None = None, empty: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline = timeline
        self.clock = clock
        # Said with no call to show: none yet, or (an agent that records none) why there never is one.
        self.empty = empty or strings.NO_TOOLS

    def on_timeline_replaced(self, message: TimelineReplaced) -> None:
        self.timeline = message.timeline
        self.rows_changed()

    def on_timeline_grew(self, message: TimelineGrew) -> None:
        self.rows_changed()

    def on_writer_changed(self, message: WriterChanged) -> None:
        self.writer_alive = message.alive

    def on_tick(self, message: Tick) -> None:
        self.refresh()  # a running call's elapsed time

    def rows_changed(self) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, self.timeline.calls + 1)
        self.refresh()

    def watch_cursor(self) -> None:
        self.refresh()

    def watch_writer_alive(self) -> None:
        self.refresh()

    def _columns(self, width: int) -> tuple[int, int, int, int, int]:
        tool, elapsed, size, state = 11, 9, 6, 26
        return tool, max(width - tool - elapsed - size - state - 4, 8), elapsed, size, state

    def _cells(self, values: tuple[str, str, str, str, str], width: int) -> str:
        tool, args, elapsed, size, state = self._columns(width)
        name, arguments, ms, chars, outcome = values
        return (
            f"{shorten(name, tool):<{tool}} {shorten(arguments, args):<{args}} "
            f"{ms:>{elapsed}} {chars:>{size}} {shorten(outcome, state)}"
        )

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        style = self.get_component_rich_style
        if y == 0:
            text = self._cells(strings.TOOL_COLUMNS, width)
            return Strip([Segment(text, style("tools--header"))], width_of(text)).crop_extend(0, width, base)
        index = self.scroll_offset.y + y - 1
        if not self.timeline.calls:
            text = self.empty if y == 1 else ""
            return Strip([Segment(text, style("tools--muted"))], width_of(text)).crop_extend(0, width, base)
        if index >= self.timeline.calls:
            return Strip.blank(width, base)
        row = self.timeline.call(index)
        state = row.state(self.writer_alive)
        text = self._cells(self._values(row, state), width)
        line_style: Style = style(f"tools--{_STATE_CLASS[state]}")
        if index == self.cursor:
            line_style += style("tools--cursor")
        return Strip([Segment(text, line_style)], width_of(text)).crop_extend(0, width, base)

    def _values(self, row: ToolRow, state: CallState) -> tuple[str, str, str, str, str]:
        end = row.end
        elapsed = ""
        if end is not None and end.elapsedMs is not None:
            elapsed = f"{end.elapsedMs} ms"
        elif state == "running" and (started := _started(row)) is not None:
            seconds = (self.clock() - started).total_seconds()
            elapsed = f"{max(seconds, 0):.0f} s…"
        size = f"{end.chars}" if end is not None and end.chars is not None else ""
        notes: list[str] = [state]
        if end is not None and end.stoppedBy:
            notes = [f"stopped: {end.stoppedBy}"]
        if end is not None and end.truncated:
            notes.append("truncated")
        if row.start is not None and row.start.approval != "auto":
            notes.append(row.start.approval)
        return row.name, _summary(row.args), elapsed, size, ", ".join(notes)

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
            self.post_message(self.Chosen(self.timeline.call(self.cursor)))


def _started(row: ToolRow) -> datetime | None:
    """When a running call began: its tool_start, or (another agent's call) its asking."""
    if row.start is not None:
        return parse_ts(row.start.ts)
    return parse_ts(row.asked_ts) if row.foreign and row.asked_ts else None


def _summary(args: str) -> str:
    """`key=value, ...` for JSON object arguments; the raw text otherwise."""
    try:
        data = msgspec.json.decode(args)
    except msgspec.DecodeError:
        return args
    if isinstance(data, dict):
        return ", ".join(f"{k}={v if isinstance(v, str) else msgspec.json.encode(v).decode()}" for k, v in data.items())
    return args
