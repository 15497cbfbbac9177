"""The conversation pane: every event in order, messages in full, the rest one line each.

A Line-API ScrollView over the timeline's index: a RowMap gives the item on each screen row, and
only the items on screen are decoded and laid out (an LRU of rendered strips); the heights of
items never drawn are estimated from their size hints and corrected when they are first drawn.
"""

from __future__ import annotations

from array import array
from itertools import repeat
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...journal.events import Event, Message, describe, event_type
from .. import strings
from ..rowmap import RowMap
from ..text import shorten, visible_lines, width_of, wrap
from ..timeline import KINDS, Item, Timeline

FOLD_OVER = 8  # a tool result longer than this many lines is folded...
FOLD_TO = 5  # ...to its first lines and a "more" line
_EXACT_TAIL = 2000  # items laid out exactly before the first frame
_INDENT = "  "

Line = tuple[str, str]  # text, component class


class ConversationView(ScrollView, can_focus=True):
    """The session's events as a scrollable transcript with a cursor on one item."""

    DEFAULT_CSS = """
    ConversationView {
        background: $surface;
        scrollbar-gutter: stable;
        & > .conversation--user { color: $text-accent; text-style: bold; }
        & > .conversation--assistant { color: $text-success; text-style: bold; }
        & > .conversation--tool { color: $text-warning; text-style: bold; }
        & > .conversation--body { color: $foreground; }
        & > .conversation--note { color: $text-muted; }
        & > .conversation--error { color: $text-error; }
        & > .conversation--fold { color: $text-muted; text-style: italic; }
        & > .conversation--stream { color: $text-success; text-style: italic; }
        & > .conversation--cursor { background: $boost; }
        &:focus > .conversation--cursor { background: $block-cursor-blurred-background; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "conversation--user",
        "conversation--assistant",
        "conversation--tool",
        "conversation--body",
        "conversation--note",
        "conversation--error",
        "conversation--fold",
        "conversation--stream",
        "conversation--cursor",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Previous item", show=False),
        Binding("down,j", "cursor_down", "Next item", show=False),
        Binding("enter", "toggle_fold", "Expand/fold", show=False),
        Binding("pageup", "page_up_pause", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "top", "Top", show=False),
    ]

    follow: reactive[bool] = reactive(True)
    cursor: reactive[int] = reactive(-1, always_update=True)

    class Paused(TextualMessage):
        """The person moved away from the end: new events no longer scroll the pane."""

    def __init__(self, timeline: Timeline, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline = timeline
        self._rows = RowMap()
        # Items whose height is measured (laid out), not estimated from their size hints.
        self._measured = bytearray()
        self._pending: dict[int, int] = {}  # heights measured while drawing, applied after the frame
        self._layout_width = 0
        self._stream: list[Strip] = []
        self._cache: LRUCache[tuple[int, int, bool], list[Strip]] = LRUCache(512)

    # --- the index ------------------------------------------------------------------------

    @property
    def _width(self) -> int:
        return max(self.scrollable_content_region.width, 10)

    @property
    def _end(self) -> int:
        return self._rows.rows

    def items_added(self, first: int) -> None:
        """Index items from `first` on (after the timeline grew, or all of them after a reset)."""
        if not self.size.width:
            return  # not laid out yet: the first resize indexes everything at the real width
        width = self._width
        if width != self._layout_width:
            self._relayout(width)
        else:
            self._rows.truncate(first)
            del self._measured[first:]
            self._index_from(first, width)
        self._update_stream(width)
        if self.follow:
            self.jump_to_live()

    def reset(self) -> None:
        """Lay out `timeline` from scratch (a new journal, or the whole index in place of its tail)."""
        self._rows = RowMap()
        self._measured = bytearray()
        self._pending.clear()
        self._cache.clear()
        self._layout_width = 0
        self.cursor = -1
        self.items_added(0)

    def _relayout(self, width: int) -> None:
        self._layout_width = width
        self._cache.clear()
        self._pending.clear()
        self._rows = RowMap()
        self._measured = bytearray()
        self._index_from(0, width)

    def _index_from(self, first: int, width: int) -> None:
        # Only the end of a long history is laid out exactly at first; the rest is estimated from
        # its size hints and measured when it is first drawn.
        count = len(self.timeline)
        exact_from = max(first, count - _EXACT_TAIL)
        if exact_from > first:
            self._rows.extend(estimate_heights(self.timeline, width, first, exact_from))
            self._measured.extend(bytes(exact_from - first))
        timeline = self.timeline
        self._rows.extend(len(_layout(timeline.item(index), width)) for index in range(exact_from, count))
        self._measured.extend(b"\x01" * (count - exact_from))

    def _apply_measured(self) -> None:
        """Put heights measured while drawing in place of their estimates, keeping the view still."""
        if not self._pending:
            return
        rows = self._rows
        top = rows.find(self.scroll_offset.y)
        into = self.scroll_offset.y - rows.start(top) if 0 <= top < len(rows) else 0
        for index, height in self._pending.items():
            rows.set(index, height)
        self._pending.clear()
        self.virtual_size = Size(self._layout_width, self._end + len(self._stream))
        if self.follow:
            self._stick_to_end()
        elif 0 <= top < len(rows):
            self.scroll_to(y=rows.start(top) + into, animate=False, immediate=True, force=True)
        self.refresh()

    def _update_stream(self, width: int) -> None:
        text = self.timeline.stream_text
        self._stream = self._strips(_stream_layout(text, width), width) if text else []
        self.virtual_size = Size(width, self._end + len(self._stream))
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        if self._width != self._layout_width:
            self._relayout(self._width)
            self._update_stream(self._width)
        if self.follow:
            self.jump_to_live()
        elif self.cursor >= 0:
            self._show_item(self.cursor)

    # --- rendering ------------------------------------------------------------------------

    def _lines(self, index: int, width: int) -> list[Strip]:
        key = (index, width, index in self.timeline.expanded)
        strips = self._cache.get(key)
        if strips is None:
            strips = self._strips(_layout(self.timeline.item(index), width), width)
            self._cache[key] = strips
            if not self._measured[index]:
                self._measured[index] = 1
                if len(strips) != self._rows.heights[index]:
                    if not self._pending:
                        self.call_after_refresh(self._apply_measured)
                    self._pending[index] = len(strips)
        return strips

    def _strips(self, lines: list[Line], width: int) -> list[Strip]:
        style = self.get_component_rich_style
        return [Strip([Segment(text, style(f"conversation--{cls}"))], width_of(text)) for text, cls in lines]

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        strip = self._row(row)
        if strip is None:
            return Strip.blank(width, base)
        return strip.crop_extend(scroll_x, scroll_x + width, base).apply_offsets(scroll_x, row)

    def _row(self, row: int) -> Strip | None:
        if row >= self._end:
            offset = row - self._end
            return self._stream[offset] if offset < len(self._stream) else None
        index = self._rows.find(row)
        if not 0 <= index < len(self._rows):
            return None
        lines = self._lines(index, self._layout_width)
        offset = row - self._rows.start(index)
        if offset >= len(lines):
            return None  # an estimated height, larger than the item: corrected after this frame
        strip = lines[offset]
        if index == self.cursor:
            cursor_style: Style = self.get_component_rich_style("conversation--cursor")
            strip = strip.extend_cell_length(self._layout_width).apply_style(cursor_style)
        return strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    # --- cursor and follow ----------------------------------------------------------------

    @property
    def selected_event(self) -> Event | None:
        if 0 <= self.cursor < len(self.timeline):
            return self.timeline.event(self.cursor)
        return None

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()

    def select(self, index: int) -> None:
        """Put the cursor on item `index` and bring it into view; this pauses follow mode."""
        if not 0 <= index < len(self.timeline):
            return
        self.pause()
        self.cursor = index
        self._show_item(index)

    def _show_item(self, index: int) -> None:
        if index >= len(self._rows):
            return
        top = self._rows.start(index)
        self.scroll_to_region(Region(0, top, 1, self._rows.heights[index]), animate=False, immediate=True)

    def pause(self) -> None:
        if self.follow:
            self.follow = False
            self.post_message(self.Paused())

    def jump_to_live(self) -> None:
        self.follow = True
        self.cursor = len(self.timeline) - 1
        self._stick_to_end()
        # Again after the next layout, in case this widget's own height was not final yet.
        self.call_after_refresh(self._stick_to_end)

    def _stick_to_end(self) -> None:
        if self.follow:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)

    def action_cursor_up(self) -> None:
        self.select(max(self.cursor - 1, 0) if self.cursor >= 0 else len(self.timeline) - 1)

    def action_cursor_down(self) -> None:
        if self.cursor + 1 >= len(self.timeline):
            self.jump_to_live()
        else:
            self.select(self.cursor + 1)

    def action_page_up_pause(self) -> None:
        self.pause()
        self.scroll_page_up(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_top(self) -> None:
        self.select(0)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.pause()

    def on_click(self, event: events.Click) -> None:
        row = self.scroll_offset.y + event.y
        index = self._rows.find(row)
        if 0 <= index < len(self._rows):
            self.select(index)

    def action_toggle_fold(self) -> None:
        index = self.cursor
        if not 0 <= index < len(self.timeline) or not _foldable(self.timeline.event(index)):
            return
        self.timeline.expanded.symmetric_difference_update({index})
        self._rows.set(index, len(self._lines(index, self._layout_width)))
        self.virtual_size = Size(self._layout_width, self._end + len(self._stream))
        if self.follow:
            self.jump_to_live()
        else:
            self._show_item(index)
        self.refresh()


# --- what an item looks like ------------------------------------------------------------------


def _time(ts: str) -> str:
    return ts[11:19] if len(ts) >= 19 else ts


def _wrapped(text: str, width: int, cls: str, indent: str = _INDENT) -> list[Line]:
    inner = max(width - len(indent), 1)
    return [(indent + piece, cls) for line in visible_lines(text) for piece in wrap(line, inner)]


def _foldable(event: Event) -> bool:
    if not isinstance(event, Message) or event.message.role != "tool":
        return False
    return event.message.content.count("\n") >= FOLD_OVER


def _layout(item: Item, width: int) -> list[Line]:
    event = item.event
    if isinstance(event, Message):
        return _message_layout(event, item, width)
    cls = "error" if item.kind == "error" else "note"
    mark = "!" if cls == "error" else "·"
    text = f"{mark} {event_type(event)} #{event.seq} {_time(event.ts)}  {describe(event)}"
    first, *rest = wrap(shorten(text, 10_000), width)
    return [(first, cls), *((_INDENT + piece, cls) for piece in wrap(" ".join(rest), width - len(_INDENT)) if rest)]


def _message_layout(event: Message, item: Item, width: int) -> list[Line]:
    msg = event.message
    role = msg.role
    header = f"▌ {strings.ROLE_LABEL[role]}"
    if msg.toolCallId:
        header += f" [{shorten(msg.toolCallId, 40)}]"
    lines: list[Line] = [(f"{header}  #{event.seq} {_time(event.ts)}", role)]
    if role == "tool" and _foldable(event):
        source_lines = msg.content.split("\n", FOLD_TO if not item.expanded else -1)
        if item.expanded:
            body = [*_wrapped(msg.content, width, "body"), (_INDENT + strings.UNFOLD_HINT, "fold")]
        else:
            hidden = msg.content.count("\n") + 1 - FOLD_TO
            body = _wrapped("\n".join(source_lines[:FOLD_TO]), width, "body")
            body.append((_INDENT + strings.FOLDED.format(hidden=hidden), "fold"))
    else:
        body = _wrapped(msg.content, width, "body") if msg.content else []
    lines.extend(body)
    for call in msg.toolCalls or ():
        lines.extend(_wrapped(f"→ {call.name}({call.args})", width, "note"))
    lines.append(("", "body"))
    return lines


def estimate_heights(timeline: Timeline, width: int, start: int, stop: int) -> array[int]:
    """Rows of items `start..stop` guessed from their size hints, without decoding them."""
    lo = slice(start, stop)
    return array("i", map(_estimate, timeline.kinds[lo], timeline.chars[lo], timeline.breaks[lo], repeat(width)))


_TOOL, _NOTE = KINDS.index("tool"), KINDS.index("note")


def _estimate(kind: int, chars: int, breaks: int, width: int) -> int:
    if kind >= _NOTE:
        return 1 + chars // max(width, 1)
    if kind == _TOOL and breaks >= FOLD_OVER:
        return FOLD_TO + 3  # header, the first lines, the "more" line, a blank
    inner = max(width - len(_INDENT), 1)
    # A message is a header, its wrapped lines (and an assistant's calls, counted in breaks), a blank.
    return 2 + (breaks + 1 + chars // inner if chars else breaks)


def _stream_layout(text: str, width: int) -> list[Line]:
    return [(f"▌ {strings.STREAMING}", "stream"), *_wrapped(text, width, "stream"), ("", "body")]
