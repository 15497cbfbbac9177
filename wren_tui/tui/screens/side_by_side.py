"""A fork beside its parent: the shared prefix folded into one line, then both sides turn by turn.

The rows are journal.compare's (the same as `wren diff` prints), drawn in two columns of one
Line-API ScrollView, so the columns scroll together by construction. A row whose sides differ is
marked, and the status line under it says what differs on the row the cursor is on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from ...journal.compare import Comparison, Row, compare, comparison_rows
from ...journal.errors import JournalError
from ...journal.lineage import fork_events, rows_of
from .. import strings
from ..text import shorten, visible, width_of
from ..widgets.components import component_classes
from ..widgets.key_footer import KeyFooter


class Columns(ScrollView, can_focus=True):
    """Rows of two columns and a mark between them; one scroll for both."""

    DEFAULT_CSS = """
    Columns {
        background: $surface;
        & > .columns--shared { color: $text-muted; text-style: italic; }
        & > .columns--turn { color: $text-accent; text-style: bold; }
        & > .columns--same { color: $foreground; }
        & > .columns--differs { color: $text-warning; }
        & > .columns--mark { color: $text-error; text-style: bold; }
        & > .columns--cursor { background: $boost; }
        &:focus > .columns--cursor { background: $block-cursor-blurred-background; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = component_classes(DEFAULT_CSS)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Previous row", show=False),
        Binding("down,j", "cursor_down", "Next row", show=False),
        Binding("n", "next_difference", "Next difference"),
        Binding("N", "prev_difference", "Prev difference", show=False),
    ]

    cursor: reactive[int] = reactive(0)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []

    def show(self, rows: list[Row]) -> None:
        self.rows = rows
        self.virtual_size = Size(self.scrollable_content_region.width, len(rows))
        self.cursor = 0
        self.refresh()

    def watch_cursor(self) -> None:
        self.refresh()
        self.scroll_to_region(Region(0, self.cursor, 1, 1), animate=False, immediate=True)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = self.scroll_offset.y + y
        if index >= len(self.rows):
            return Strip.blank(width, base)
        row = self.rows[index]
        style = self.get_component_rich_style
        column = max((width - 3) // 2, 4)
        if row.kind == "shared":
            text = f"── {row.left} ──"
            segments = [Segment(shorten(visible(text), width), style("columns--shared"))]
        else:
            cls: Style = style(
                "columns--turn" if row.kind == "turn" else "columns--differs" if row.marks else "columns--same"
            )
            left, right = _cell(row.left, column), _cell(row.right, column)
            mark = " ≠ " if row.marks else " │ "
            segments = [
                Segment(left, cls),
                Segment(mark, style("columns--mark") if row.marks else cls),
                Segment(right, cls),
            ]
        if index == self.cursor:
            cursor = Style(bgcolor=style("columns--cursor").bgcolor)
            segments = [Segment(s.text, (s.style or Style()) + cursor) for s in segments]
            strip = Strip(segments).extend_cell_length(width, cursor)
            return strip.crop_extend(0, width, base)
        return Strip(segments).crop_extend(0, width, base)

    def _move_to(self, index: int) -> None:
        if self.rows:
            self.cursor = min(max(index, 0), len(self.rows) - 1)

    def action_cursor_up(self) -> None:
        self._move_to(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self._move_to(self.cursor + 1)

    def action_next_difference(self) -> None:
        found = next((i for i in range(self.cursor + 1, len(self.rows)) if self.rows[i].marks), None)
        if found is None:
            self.notify(strings.NO_MORE.format(what="differences"), timeout=2)
        else:
            self._move_to(found)

    def action_prev_difference(self) -> None:
        found = next((i for i in range(self.cursor - 1, -1, -1) if self.rows[i].marks), None)
        if found is None:
            self.notify(strings.NO_MORE.format(what="differences"), timeout=2)
        else:
            self._move_to(found)


def _cell(text: str, width: int) -> str:
    shown = shorten(visible(text), width)
    return shown + " " * max(width - width_of(shown), 0)


class SideBySide(Screen[None]):
    """The parent on the left, the fork on the right, from the point where they part."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,d", "close", "Back")]
    DEFAULT_CSS = """
    SideBySide { layout: vertical; }
    SideBySide #heads { height: 2; background: $panel; padding: 0 1; }
    SideBySide #columns { height: 1fr; }
    SideBySide #differs { height: 1; background: $panel; color: $text-warning; padding: 0 1; }
    """

    def __init__(self, fork: Path, comparison: Comparison) -> None:
        super().__init__()
        self.fork = fork
        self.comparison = comparison

    def compose(self) -> ComposeResult:
        yield Static("", id="heads")
        yield Columns(id="columns")
        yield Static("", id="differs")
        yield KeyFooter(keep=("quit", "toggle_help", "close", "next_difference"))

    def on_mount(self) -> None:
        self.title = strings.SIDE_BY_SIDE_TITLE.format(session=self.fork.stem)
        self.query_one(Columns).focus()
        self.watch(self.query_one(Columns), "cursor", self._cursor_moved, init=False)
        found = self.comparison
        width = max((self.size.width - 5) // 2, 10)
        left = f"{found.left.id} (parent, {found.left.events} events)"
        right = f"{found.right.id} (fork, {found.right.events} events)"
        lines = [f"{_cell(left, width)} │ {_cell(right, width)}", visible(found.relation or "")]
        self.query_one("#heads", Static).update(Text("\n".join(lines)))
        self.query_one(Columns).show(comparison_rows(found))

    def _cursor_moved(self, cursor: int) -> None:
        columns = self.query_one(Columns)
        marks = columns.rows[cursor].marks if 0 <= cursor < len(columns.rows) else ()
        self.query_one("#differs", Static).update(Text(strings.DIFFERS.format(what=", ".join(marks)) if marks else ""))

    def action_close(self) -> None:
        self.dismiss(None)


def beside_parent(fork: Path, folders: Sequence[Path]) -> Comparison | str:
    """The comparison of a fork with its parent, or the sentence that says why there is none (read whole: a
    worker's)."""
    try:
        forks = fork_events(fork)
        if not forks:
            return strings.NOT_A_FORK.format(session=fork.stem)
        parent_id = forks[-1].from_
        parent = rows_of([fork.parent, *folders]).get(parent_id)
        if parent is None:
            where = ", ".join(sorted({str(f) for f in [fork.parent, *folders]}))
            return strings.PARENT_MISSING.format(parent=parent_id, folders=where)
        return compare(parent.path, fork)
    except (JournalError, OSError) as exc:
        return str(exc)
