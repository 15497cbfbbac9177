"""The conversation pane: every event in order, messages in full, the rest one line each.

A Line-API ScrollView over the timeline's index: a RowMap gives the item on each screen row, and
only the items on screen are decoded and laid out (an LRU of rendered strips); the heights of
items never drawn are estimated from their size hints and corrected when they are first drawn.
"""

from __future__ import annotations

import functools
import re
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

from ...journal.events import (
    INSTRUCTIONS_MARK,
    Compaction,
    Delta,
    Event,
    Message,
    UnknownEvent,
    describe,
    event_type,
)
from ...search.query import BadPattern, Query
from .. import strings
from ..filters import Only, revealed, shown
from ..messages import TimelineGrew, TimelineReplaced, WriterChanged
from ..rowmap import RowMap
from ..text import shorten, visible, width_of, wrap, wrap_spans
from ..timeline import KINDS, Clip, Item, Stream, Timeline
from .components import component_classes

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
        & > .conversation--partial { color: $text-warning; text-style: bold italic; }
        & > .conversation--body { color: $foreground; }
        & > .conversation--note { color: $text-muted; }
        & > .conversation--error { color: $text-error; }
        & > .conversation--fold { color: $text-muted; text-style: italic; }
        & > .conversation--stream { color: $text-success; text-style: italic; }
        & > .conversation--reasoning { color: $text-muted; text-style: italic; }
        & > .conversation--compaction { color: $text-accent; text-style: bold; }
        & > .conversation--match { text-style: bold reverse; }
        & > .conversation--cursor { background: $boost; }
        &:focus > .conversation--cursor { background: $block-cursor-blurred-background; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = component_classes(DEFAULT_CSS)
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
    # Whether a writer holds the journal: a reply streaming in without one was cut off.
    writer_alive: reactive[bool] = reactive(True)
    # The text search looks for, marked wherever it shows (matched as `wren search` matches it: smart case).
    highlight: reactive[str] = reactive("")
    # The filter on (None: every item); a hidden item takes no row, and the cursor steps over it.
    only: reactive[Only | None] = reactive(None)

    class Paused(TextualMessage):
        """The person moved away from the end: new events no longer scroll the pane."""

    class Hidden(TextualMessage):
        """New items were judged by the filter on: how many it hides changed, maybe."""

    def __init__(self, timeline: Timeline, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.timeline = timeline
        self._rows = RowMap()
        # Items whose height is measured (laid out), not estimated from their size hints.
        self._measured = bytearray()
        self._pending: dict[int, int] = {}  # heights measured while drawing, applied after the frame
        self._layout_width = 0
        self._stream: list[Strip] = []
        self._cache: LRUCache[tuple[int, int, bool, str], list[Strip]] = LRUCache(512)
        # With a filter on: per item, 1 if it shows (kept as long as the laid-out items).
        self._mask: bytearray | None = None

    # --- what the screen tells ------------------------------------------------------------

    def on_timeline_replaced(self, message: TimelineReplaced) -> None:
        """Show a new timeline; the same session read whole keeps its folds and, when paused, the cursor's item."""
        old, new, cursor = self.timeline, message.timeline, self.cursor
        keep = None
        if message.continues:
            new.expanded = {p for i in old.expanded if (p := new.position_at(old.place(i))) is not None}
            if not self.follow and 0 <= cursor < len(old):
                keep = new.position_at(old.place(cursor))
        self.timeline = new
        self.reset()
        if keep is not None:
            self.select(keep)

    def on_timeline_grew(self, message: TimelineGrew) -> None:
        self.items_added(message.first)

    def on_writer_changed(self, message: WriterChanged) -> None:
        self.writer_alive = message.alive

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
        if self.only is not None:
            self.post_message(self.Hidden())

    def reset(self) -> None:
        """Lay out `timeline` from scratch (a new journal, or the whole index in place of its tail)."""
        self._rows = RowMap()
        self._measured = bytearray()
        self._pending.clear()
        self._cache.clear()
        self._layout_width = 0
        if self._mask is not None:
            self._mask = bytearray()  # made again for the new timeline as it is laid out
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
        timeline = self.timeline
        count = len(timeline)
        mask = self._mask
        if mask is not None and self.only is not None:
            del mask[first:]
            mask.extend(shown(timeline, self.only, first, count))
        exact_from = max(first, count - _EXACT_TAIL)
        if exact_from > first:
            heights = estimate_heights(timeline, width, first, exact_from)
            if mask is not None:
                heights = array("i", (h if mask[first + i] else 0 for i, h in enumerate(heights)))
            self._rows.extend(heights)
            self._measured.extend(bytes(exact_from - first))
        self._rows.extend(
            len(_layout(timeline.item(index), width)) if mask is None or mask[index] else 0
            for index in range(exact_from, count)
        )
        self._measured.extend(b"\x01" * (count - exact_from))
        if mask is not None and self.only is not None:
            for index in revealed(timeline, self.only, first):
                if not mask[index]:
                    mask[index] = 1
                    self._rows.set(index, len(_layout(timeline.item(index), width)))

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
        stream = self.timeline.stream
        says = self.only in (None, "thinking")  # a reply streaming in is what the model says
        self._stream = (
            self._strips(_stream_layout(stream, width, self.writer_alive), width) if stream.deltas and says else []
        )
        self.virtual_size = Size(width, self._end + len(self._stream))
        self.refresh()

    def watch_writer_alive(self) -> None:
        if self._layout_width:
            self._update_stream(self._layout_width)

    def watch_highlight(self) -> None:
        self._cache.clear()
        if self._layout_width:
            self._update_stream(self._layout_width)
        self.refresh()

    def watch_only(self, only: Only | None) -> None:
        """Show only what the filter keeps (or everything): laid out again, the cursor on a shown item."""
        self._mask = None if only is None else bytearray()
        if not self._layout_width:
            return  # the first resize lays everything out with the filter
        self._relayout(self._layout_width)
        self._update_stream(self._layout_width)
        if self.follow:
            self.jump_to_live()
            return
        cursor: int | None = self.cursor
        if cursor is not None and cursor >= 0 and not self.shows(cursor):
            after = self._next_shown(cursor)
            cursor = after if after is not None else self._prev_shown(cursor)
        if cursor is None:
            self.cursor = -1
        else:
            self.cursor = cursor
            self._show_item(cursor)

    def shows(self, index: int) -> bool:
        """Whether item `index` is shown with the filter on (every item is, without one)."""
        mask = self._mask
        return mask is None or index >= len(mask) or bool(mask[index])

    @property
    def hidden(self) -> int:
        """How many items the filter hides (0 without one)."""
        mask = self._mask
        return 0 if mask is None else len(mask) - mask.count(1)

    def _next_shown(self, index: int) -> int | None:
        """The first shown item at or after `index`."""
        if self._mask is None:
            return index if 0 <= index < len(self.timeline) else None
        at = self._mask.find(1, max(index, 0))
        return None if at < 0 else at

    def _prev_shown(self, index: int) -> int | None:
        """The last shown item at or before `index`."""
        if index < 0:
            return None
        if self._mask is None:
            return min(index, len(self.timeline) - 1) if len(self.timeline) else None
        at = self._mask.rfind(1, 0, index + 1)
        return None if at < 0 else at

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
        key = (index, width, index in self.timeline.expanded, self.highlight)
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
        match = style("conversation--match")
        query = query_of(self.highlight)
        strips = []
        for text, cls in lines:
            segments = _marked(text, style(f"conversation--{cls}"), query, match) if query else None
            strips.append(Strip(segments or [Segment(text, style(f"conversation--{cls}"))], width_of(text)))
        return strips

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
            # On top of each segment's own style, whose background would otherwise win over the text.
            cursor = Style(bgcolor=self.get_component_rich_style("conversation--cursor").bgcolor)
            strip = strip.extend_cell_length(self._layout_width)
            strip = Strip(Segment.apply_style(iter(strip), post_style=cursor), strip.cell_length)
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
        """Put the cursor on item `index` and bring it into view; this pauses follow mode.

        An item the filter hides (a search's match, the next error) turns the filter off first.
        """
        if not 0 <= index < len(self.timeline):
            return
        if not self.shows(index):
            self.only = None
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
        last = self._prev_shown(len(self.timeline) - 1)
        self.cursor = -1 if last is None else last
        self._stick_to_end()
        # Again after the next layout, in case this widget's own height was not final yet.
        self.call_after_refresh(self._stick_to_end)

    def _stick_to_end(self) -> None:
        if self.follow:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)

    def action_cursor_up(self) -> None:
        target = self._prev_shown(self.cursor - 1 if self.cursor >= 0 else len(self.timeline) - 1)
        if target is None:
            target = self._next_shown(0)  # at the first shown item already: it stays selected
        if target is not None:
            self.select(target)

    def action_cursor_down(self) -> None:
        target = self._next_shown(self.cursor + 1)
        if target is None:
            self.jump_to_live()
        else:
            self.select(target)

    def action_page_up_pause(self) -> None:
        self.pause()
        self.scroll_page_up(animate=False)

    def action_page_down(self) -> None:
        self.scroll_page_down(animate=False)

    def action_top(self) -> None:
        first = self._next_shown(0)
        if first is not None:
            self.select(first)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.pause()

    def on_click(self, event: events.Click) -> None:
        row = self.scroll_offset.y + event.y
        index = self._rows.find(row)
        if 0 <= index < len(self._rows):
            self.select(index)

    def action_toggle_fold(self) -> None:
        index = self.cursor
        if not 0 <= index < len(self.timeline) or not _foldable(_layout(self.timeline.item(index), self._layout_width)):
            return
        self.timeline.expanded.symmetric_difference_update({index})
        self._relaid(index)
        if self.follow:
            self.jump_to_live()
        else:
            self._show_item(index)

    def _relaid(self, index: int) -> None:
        """Item `index` changed its look (folded or not): take its new height."""
        self._rows.set(index, len(self._lines(index, self._layout_width)))
        self.virtual_size = Size(self._layout_width, self._end + len(self._stream))
        self.refresh()

    def reveal(self, index: int, text: str) -> None:
        """Select item `index` and show its first row holding `text`, unfolding it if the fold hides that."""
        self.select(index)
        if not 0 <= index < len(self.timeline) or not self._layout_width:
            return
        query = query_of(text)
        lines = _layout(self.timeline.item(index), self._layout_width)
        holds = [row for row, (line, _cls) in enumerate(lines) if query and query.find(line)]
        if not holds and index not in self.timeline.expanded and _foldable(lines):
            self.timeline.expanded.add(index)
            self._relaid(index)
            lines = _layout(self.timeline.item(index), self._layout_width)
            holds = [row for row, (line, _cls) in enumerate(lines) if query and query.find(line)]
        if holds:
            row = self._rows.start(index) + holds[0]
            self.scroll_to_region(Region(0, row, 1, 1), animate=False, immediate=True)


# --- what an item looks like ------------------------------------------------------------------

Fold = tuple[int, int]
TOOL_FOLD: Fold = (8, 5)  # a tool result longer than 8 rows shows its first 5 and a "more" line
MESSAGE_FOLD: Fold = (40, 30)  # the same for what the user and the model say
CALL_FOLD: Fold = (8, 5)  # a tool call's arguments
REASONING_FOLD: Fold = (3, 2)  # the model's reasoning before its reply: folded early, it is not the reply
# What Wren put in (a compaction's summary, project instructions, files given by `@`): one row until opened.
GIVEN_FOLD: Fold = (1, 1)
# The first line of a file given by an `@` reference in a typed message (agent/injection.py writes them).
_GIVEN = re.compile(r"^--- @(\S.*?) ---$", re.M)
EXPANDED_ROWS = 2000  # an expanded text shows at most this many rows (search still finds the rest)
STREAM_ROWS = 12  # a reply streaming in shows its last rows


def _time(ts: str) -> str:
    return ts[11:19] if len(ts) >= 19 else ts


def _count(number: int, word: str) -> str:
    return f"{number:,} {word}" if number == 1 else f"{number:,} {word}s"


def _source_length(line: str, shown: int) -> int:
    """How many characters of `line` make the first `shown` characters of `visible(line)`."""
    if line.isprintable():
        return shown
    made = 0
    for index, char in enumerate(line):
        if made >= shown:
            return index
        made += len(visible(char))
    return len(line)


def _block(text: str, width: int, cls: str, fold: Fold, expanded: bool, clip: Clip | None = None) -> list[Line]:
    """`text` wrapped under a header, laid out only as far as it is shown.

    Folded, a text over `fold[0]` rows shows `fold[1]` of them; expanded, at most EXPANDED_ROWS.
    A last "fold" line then says what is hidden (from `clip`'s sizes when `text` is only the start
    of the whole) and which key shows it; its presence is what makes an item foldable.
    """
    over = EXPANDED_ROWS if expanded else fold[0]
    inner = max(width - len(_INDENT), 1)
    rows: list[Line] = []
    # Per row: its line's number and offset in `text`, where the row ends in the visible line, its length.
    marks: list[tuple[int, int, int, int]] = []
    position = number = 0
    cut = False
    while not cut:
        newline = text.find("\n", position)
        line = text[position : len(text) if newline < 0 else newline]
        shown = visible(line)
        for begin, end in wrap_spans(shown, inner):
            if len(rows) == over:
                cut = True
                break
            rows.append((_INDENT + shown[begin:end], cls))
            marks.append((number, position, end, len(shown)))
        if newline < 0:
            break
        position, number = newline + 1, number + 1
    whole_chars = clip.chars if clip else len(text)
    # None: a big line's newlines were not counted (that holds the GIL as long as decoding it).
    whole_lines = clip.lines if clip else text.count("\n")
    if cut and not expanded:
        del rows[fold[1] :], marks[fold[1] :]
    if cut:
        number, start, end, length = marks[-1]
        after = None if whole_lines is None else whole_lines - number  # lines after the one cut in
        if end >= length and after is not None:
            more = _count(after, "more line")
        else:
            newline = text.find("\n", start)
            line = text[start : len(text) if newline < 0 else newline]
            hidden = whole_chars - start - _source_length(line, end)
            more = _count(hidden, "more character") + (f", {_count(after, 'more line')}" if after else "")
    elif whole_chars > len(text):
        hidden_lines = None if whole_lines is None else whole_lines - text.count("\n")
        more = _count(whole_chars - len(text), "more character")
        more += f", {_count(hidden_lines, 'more line')}" if hidden_lines else ""
    elif expanded and len(rows) > fold[0]:
        return [*rows, (_INDENT + strings.UNFOLD_HINT, "fold")]
    else:
        return rows
    note = strings.NOT_SHOWN if expanded else strings.FOLDED
    return [*rows, (_INDENT + note.format(more=more), "fold")]


@functools.lru_cache(maxsize=8)
def query_of(text: str) -> Query | None:
    """The search for `text` as `wren search` makes it (smart case); None: nothing to look for."""
    try:
        return Query.of(text)
    except BadPattern:
        return None


def _marked(text: str, style: Style, query: Query, match: Style) -> list[Segment] | None:
    """`text` in `style` with every match of `query` in `match` on top; None if none."""
    found = query.find(text)
    if found is None:
        return None
    segments: list[Segment] = []
    done = 0
    while found is not None:
        start, end = found[0] + done, found[1] + done
        if start > done:
            segments.append(Segment(text[done:start], style))
        segments.append(Segment(text[start:end], style + match))
        done = end
        found = query.find(text[done:]) if end > start else None
    if done < len(text):
        segments.append(Segment(text[done:], style))
    return segments


def _foldable(lines: list[Line]) -> bool:
    return any(cls == "fold" for _text, cls in lines)


def _layout(item: Item, width: int) -> list[Line]:
    event = item.event
    if isinstance(event, Message):
        return _message_layout(event, item, width)
    if isinstance(event, Compaction):
        return _compaction_layout(event, item, width)
    if item.kind == "partial" and isinstance(event, Delta):
        return _partial_layout(event, item, width)
    if isinstance(event, UnknownEvent) and isinstance(event.fields.get("text"), str):
        return _text_note_layout(event, item, width)
    cls = "error" if item.kind == "error" else "note"
    mark = "!" if cls == "error" else "·"
    text = f"{mark} {event_type(event)} #{event.seq} {_time(event.ts)}  {describe(event)}"
    first, *rest = wrap(shorten(text, 10_000), width)
    return [(first, cls), *((_INDENT + piece, cls) for piece in wrap(" ".join(rest), width - len(_INDENT)) if rest)]


def _message_layout(event: Message, item: Item, width: int) -> list[Line]:
    msg = event.message
    role = msg.role
    header = f"▌ {strings.ROLE_LABEL[role]}"
    if msg.tool_call_id:
        header += f" [{shorten(msg.tool_call_id, 40)}]"
    lines: list[Line] = [(f"{header}  #{event.seq} {_time(event.ts)}", role)]
    if msg.reasoning:
        thought = "\n".join(r.text for r in msg.reasoning if r.text)
        if thought:
            lines.extend(_block(strings.THINKING + thought, width, "reasoning", REASONING_FOLD, item.expanded))
        if any(r.data for r in msg.reasoning):
            lines.extend(_block(strings.THINKING + strings.THINKING_SEALED, width, "reasoning", REASONING_FOLD, False))
    if role == "user" and msg.content.startswith(INSTRUCTIONS_MARK):
        lines[0] = (f"▌ {strings.INSTRUCTIONS_LABEL}  #{event.seq} {_time(event.ts)}", "note")
        lines.extend(_block(msg.content, width, "note", GIVEN_FOLD, item.expanded, item.clip))
    elif role == "user" and (given := _GIVEN.search(msg.content)) is not None:
        # What was typed, then the files its references gave, folded under one line that names them.
        typed = msg.content[: given.start()].rstrip("\n")
        refs = ", ".join(f"@{m.group(1)}" for m in _GIVEN.finditer(msg.content) if not m.group(1).startswith("end of "))
        if typed:
            lines.extend(_block(typed, width, "body", MESSAGE_FOLD, item.expanded))
        head = strings.REFERENCES.format(refs=shorten(refs, 200)) + "\n"
        lines.extend(_block(head + msg.content[given.start() :], width, "note", GIVEN_FOLD, item.expanded, item.clip))
    elif msg.content:
        fold = TOOL_FOLD if role == "tool" else MESSAGE_FOLD
        lines.extend(_block(msg.content, width, "body", fold, item.expanded, item.clip))
    for call in msg.tool_calls or ():
        lines.extend(_block(f"→ {call.name}({call.args})", width, "note", CALL_FOLD, item.expanded))
    lines.append(("", "body"))
    return lines


def _compaction_layout(event: Compaction, item: Item, width: int) -> list[Line]:
    """A divider across the pane where the summary replaced the messages before it; the summary folded under it."""
    said = strings.COMPACTED.format(messages=event.replaced, before=event.tokens_before, after=event.tokens_after)
    label = f" {said}  #{event.seq} {_time(event.ts)} "
    rule = max(width - len(label) - 2, 2)
    lines: list[Line] = [(shorten("──" + label + "─" * rule, max(width, 10)), "compaction")]
    lines.extend(_block(strings.SUMMARY + event.summary, width, "note", GIVEN_FOLD, item.expanded))
    lines.append(("", "body"))
    return lines


def _text_note_layout(event: UnknownEvent, item: Item, width: int) -> list[Line]:
    """A note that carries a text (another agent's thinking, a compaction's summary): its text folded under it."""
    rest = " ".join(f"{k}={v!r}" for k, v in event.fields.items() if k != "text")
    head = f"· {event.type} #{event.seq} {_time(event.ts)}" + (f"  {rest}" if rest else "")
    lines: list[Line] = [(shorten(visible(head), max(width, 10)), "note")]
    text = str(event.fields["text"])
    if text:
        lines.extend(_block(text, width, "note", TOOL_FOLD, item.expanded, item.clip))
    return lines


def _partial_layout(event: Delta, item: Item, width: int) -> list[Line]:
    """Streamed text no reply followed: shown, and said to be thrown away."""
    through = item.clip.last_seq if item.clip and item.clip.last_seq else event.seq
    seqs = f"#{event.seq}" if through == event.seq else f"#{event.seq}–#{through}"
    lines: list[Line] = [(f"▌ {strings.PARTIAL_REPLY}  {seqs} {_time(event.ts)}", "partial")]
    if event.text:
        lines.extend(_block(event.text, width, "body", MESSAGE_FOLD, item.expanded, item.clip))
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
    inner = max(width - len(_INDENT), 1)
    # A message is a header, its wrapped lines (and an assistant's calls, counted in breaks), a blank.
    rows = breaks + 1 + chars // inner if chars else breaks
    over, keep = TOOL_FOLD if kind == _TOOL else MESSAGE_FOLD
    return keep + 3 if rows > over else 2 + rows  # folded: a header, the first rows, the "more" line, a blank


def _stream_layout(stream: Stream, width: int, writer_alive: bool) -> list[Line]:
    """The last rows of a reply streaming in (or cut off, its writer gone), and how much came before them.

    Until its text begins, the reply's reasoning is what streams; then the text, under a line that
    says how long the model thought.
    """
    thinking = not stream.text.chars
    header = strings.STREAM_CUT_OFF if not writer_alive else strings.THINKING_NOW if thinking else strings.STREAMING
    part, cls = (stream.reasoning, "reasoning") if thinking else (stream.text, "stream")
    inner = max(width - len(_INDENT), 1)
    text = part.text(STREAM_ROWS * inner)
    rows: list[tuple[str, int]] = []  # a row, and where it starts in `text`
    position = 0
    for line in text.split("\n"):
        shown = visible(line)
        rows.extend(
            (shown[begin:end], position + _source_length(line, begin)) for begin, end in wrap_spans(shown, inner)
        )
        position += len(line) + 1
    rows = rows[-STREAM_ROWS:]
    lines: list[Line] = [(f"▌ {header}", "stream")]
    if not thinking and stream.reasoning.chars:
        lines.append((_INDENT + strings.THOUGHT.format(more=_count(stream.reasoning.chars, "character")), "fold"))
    before = part.chars - len(text) + (rows[0][1] if rows else len(text))
    if before > 0:
        lines.append((_INDENT + strings.STREAM_BEFORE.format(more=_count(before, "character")), "fold"))
    lines.extend((_INDENT + row, cls) for row, _start in rows)
    lines.append(("", "body"))
    return lines
