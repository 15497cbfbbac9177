"""What the tool timings and the waterfall share: the session's tool calls as rows under a pinned header.

A Line-API ScrollView: one row per call in the order the model asked for them, a row's events decoded
only when it is on screen, a cursor (`up`/`down`), and Enter to show that call in the conversation.
Each subclass draws a row its own way (`render_line`) in the component classes `calls--ok`, `calls--bad`... named
by what `STATE_CLASS` says of the call's state: styled here where both draw them alike, in the subclass where not.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .. import strings
from ..clock import Clock
from ..messages import Tick, TimelineGrew, TimelineReplaced, WriterChanged
from ..text import width_of
from ..timeline import RowState, Timeline, ToolRow
from .components import component_classes

# How each state a call can be in is drawn: the suffix of the component class of its row.
STATE_CLASS: dict[RowState, str] = {
    "ok": "ok",
    "failed": "bad",
    "stopped": "bad",
    "not_run": "bad",
    "output_lost": "unknown",
    "outcome_unknown": "unknown",
    "read_only_started": "unknown",
    "never_started": "muted",
    "no_result_recorded": "unknown",
    "waiting": "running",
    "running": "running",
}


class CallList(ScrollView, can_focus=True):
    """The session's tool calls, a row each under a header row (y == 0), with a cursor."""

    DEFAULT_CSS = """
    CallList {
        background: $surface;
        & > .calls--header { color: $text-muted; text-style: bold; }
        & > .calls--bad { color: $text-error; }
        & > .calls--running { color: $text-accent; text-style: bold; }
        & > .calls--muted { color: $text-muted; }
        & > .calls--cursor { background: $boost; }
        &:focus > .calls--cursor { background: $block-cursor-blurred-background; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = component_classes(DEFAULT_CSS)  # and each subclass's own
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

    # --- what the screen tells ------------------------------------------------------------

    def on_timeline_replaced(self, message: TimelineReplaced) -> None:
        self.timeline = message.timeline
        self.timeline_replaced()
        self.rows_changed()

    def timeline_replaced(self) -> None:
        """A subclass forgets what it worked out from the old timeline."""

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

    # --- drawing helpers ------------------------------------------------------------------

    def style_of(self, name: str) -> Style:
        """The rich style of the component class `calls--name`."""
        return self.get_component_rich_style(f"calls--{name}")

    def state_style(self, state: RowState, index: int) -> Style:
        """The style of a row in `state`, with the cursor's when the row at `index` is under it."""
        style = self.style_of(STATE_CLASS[state])
        return style + self.style_of("cursor") if index == self.cursor else style

    def text_line(self, text: str, name: str) -> Strip:
        """A whole line of `text` in the component class `name`, cut or padded to the width."""
        return self.styled_line(text, self.style_of(name))

    def styled_line(self, text: str, style: Style) -> Strip:
        """A whole line of `text` in `style`, cut or padded to the width."""
        width = self.scrollable_content_region.width
        return Strip([Segment(text, style)], width_of(text)).crop_extend(0, width, self.rich_style)

    def row_at(self, y: int) -> int | Strip:
        """The index of the call drawn on line `y` (> 0), or the line itself when there is no call there."""
        index = self.scroll_offset.y + y - 1
        if not self.timeline.calls:
            return self.text_line(self.empty if y == 1 else "", "muted")
        if index >= self.timeline.calls:
            return Strip.blank(self.scrollable_content_region.width, self.rich_style)
        return index

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
            self.post_message(self.Chosen(self.timeline.call(self.cursor)))
