"""The one session table of the three session lists: a journals folder's, the foreign agents' folders', a fleet's.

A row per session, keyed by the screen's name for it (a path, `host/session`), in one of two orders:
newest first by the text of some columns (`newest_first`), or the order the screen gives (the
journal browser's fork tree). The screen tells it what each row says (`put`, `drop`) as sessions
appear, grow and end, then `settle`s: the rows change in place where they can, the columns that fit
the width are shown (lesser ones given up first, `drop_first`), and the cursor stays on its session
(on the top row, it follows the newest).
Each column is as wide as its widest cell or its name, told to the table rather than measured by it.
Enter or a click on a row posts `Opened` with its key; with no row, the empty text is shown instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.text import Text
from textual.app import ComposeResult
from textual.message import Message as TextualMessage
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.widgets.data_table import ColumnKey, RowKey

from ...forwarding import Forward

# How each state a session can be in is drawn, in every list.
STATE_STYLE = {
    "live": "bold green",
    "done": "",
    "cancelled": "magenta",
    "limit": "cyan",
    "error": "red",
    "interrupted": "yellow",
    "outcome unknown": "bold reverse yellow",
    "forked": "blue",
    "torn tail": "dark_orange",
    "corrupt": "bold red",
    "unreadable": "bold reverse red",
    "empty": "dim",
}
UNKNOWN_STATE = "italic"  # a state this version has no colour for is still shown
CELL_PADDING = 2  # DataTable's cell_padding, on both sides


class CellLike(Protocol):
    """What the table reads of a cell besides drawing it: its text, and how wide it is."""

    @property
    def plain(self) -> str: ...

    @property
    def cell_len(self) -> int: ...


class Cell:
    """A cell of one line, drawn as its Text. It has no `__rich_measure__`: the table would measure each
    of thousands of cells through the console's size (a system call or three each); the session table
    tells every column its width instead, from the cells' lengths."""

    __slots__ = ("text",)

    def __init__(self, text: str, *, justify: JustifyMethod | None = None, style: str = "") -> None:
        self.text = Text(text, justify=justify, style=style, end="")

    plain: Forward[str] = Forward("text.plain")
    cell_len: Forward[int] = Forward("text.cell_len")

    def __str__(self) -> str:
        return self.text.plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.text


Row = Mapping[str, CellLike]


class SessionTable(Widget):
    """The sessions as rows under a header, or a sentence when there is none."""

    DEFAULT_CSS = """
    SessionTable {
        height: 1fr;
    }
    SessionTable > DataTable {
        height: 1fr;
    }
    SessionTable > .empty {
        height: 1fr;
        padding: 1 2;
        color: $text-muted;
    }
    """

    class Opened(TextualMessage):
        """Enter (or a click) on a row: open this session."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(
        self,
        columns: Sequence[str],
        *,
        drop_first: Sequence[str],
        empty: str,
        newest_first: Sequence[str] = (),
        id: str | None = None,
    ) -> None:
        """`drop_first`: the columns given up, in this order, when the width is too small for all of them
        (the rest always show). `newest_first`: the columns whose text, descending, orders the rows; with
        none, the order is the one `settle` is given."""
        super().__init__(id=id)
        if set(newest_first) & set(drop_first):
            raise ValueError(f"the rows are sorted by {newest_first}: none of them can be given up")
        self.columns = tuple(columns)
        self.drop_first = tuple(c for c in drop_first if c in self.columns)
        self.newest_first = tuple(newest_first)
        # What every row says, in every column (shown or not: the columns shown change with the width).
        self._cells: dict[str, Row] = {}
        # Each column's width: its widest cell or its name; columns whose widest cell went are worked out again.
        self._widths = {column: len(column) for column in self.columns}
        self._stale: set[str] = set()
        # Rows put (in the order they were: new ones go in so, ties keep it) or dropped since the table last settled.
        self._dirty: dict[str, None] = {}
        self._gone: set[str] = set()
        self._shown = self.columns
        # With no `newest_first`: the order the screen gave, and the order the rows are in.
        self._order: list[str] = []
        self._placed: list[str] = []
        # The session under the cursor before this round of changes (None: no row), looked up at its first change.
        self._before: str | None = None
        self._changing = False
        self._rows: DataTable[CellLike] = DataTable(cursor_type="row", zebra_stripes=True)
        self._rows.display = False
        self._said = Static(Text(empty), classes="empty")

    def compose(self) -> ComposeResult:
        yield self._rows
        yield self._said

    @property
    def rows(self) -> DataTable[CellLike]:
        """The DataTable the rows are in."""
        return self._rows

    def focus(self, scroll_visible: bool = True) -> SessionTable:
        """Focus goes to the rows (Enter, the arrows)."""
        self._rows.focus(scroll_visible)
        return self

    # --- what the screen tells --------------------------------------------------------------

    def say_empty(self, text: str) -> None:
        """What is said while there is no row (why there is none)."""
        self._said.update(Text(text))

    def put(self, key: str, cells: Row) -> None:
        """Add a row or change one (shown at the next `settle`); `cells` has a cell for every column."""
        self._remember_cursor()
        old = self._cells.get(key)
        self._cells[key] = cells
        for column in self.columns:
            width = cells[column].cell_len
            if width > self._widths[column]:
                self._widths[column] = width
            elif old is not None and width < old[column].cell_len == self._widths[column]:
                self._stale.add(column)
        self._dirty[key] = None
        self._gone.discard(key)

    def drop(self, key: str) -> None:
        """Take a row away (at the next `settle`); a key not listed is no error."""
        old = self._cells.pop(key, None)
        if old is None:
            return
        self._remember_cursor()
        self._stale.update(c for c in self.columns if old[c].cell_len == self._widths[c])
        self._dirty.pop(key, None)
        self._gone.add(key)

    def get(self, key: str) -> Row | None:
        """What a row says, as it was last put."""
        return self._cells.get(key)

    @property
    def cursor_key(self) -> str | None:
        """The session under the cursor (None: no row)."""
        rows = self.rows
        if not rows.row_count:
            return None
        return rows.coordinate_to_cell_key(rows.cursor_coordinate).row_key.value

    def open_cursor(self) -> None:
        """Open the session under the cursor, as Enter on it does."""
        key = self.cursor_key
        if key is not None:
            self.post_message(self.Opened(key))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.Opened(event.row_key.value))

    def on_resize(self) -> None:
        self.settle()

    # --- showing it -------------------------------------------------------------------------

    def settle(self, order: Sequence[str] | None = None) -> None:
        """Show what was put and dropped since the last time, and the columns that fit the width.

        `order` (with no `newest_first`): the rows to show, top first; a row not in it is dropped.
        """
        if order is not None:
            assert not self.newest_first, "the rows are sorted by their columns"
            for key in set(self._cells) - set(order):
                self.drop(key)
            self._order = list(order)
        rows = self.rows
        if not rows.columns:
            self._add_columns()
        before = self._before if self._changing else self.cursor_key
        index = rows.cursor_row
        self._changing = False
        for column in self._stale:
            self._widths[column] = max([len(column), *(cells[column].cell_len for cells in self._cells.values())])
        self._stale.clear()
        shown = self._fitting()
        rebuild = shown != self._shown or (not self.newest_first and self._order != self._placed)
        self._shown = shown
        if rebuild:
            self._rebuild()
        else:
            self._update()
        changed = rebuild or bool(self._dirty or self._gone)
        self._dirty.clear()
        self._gone.clear()
        if changed:
            self._keep_cursor(before, index, moved=rebuild)
        if rows.display != bool(self._cells):
            rows.display = bool(self._cells)
            self._said.display = not self._cells

    def _remember_cursor(self) -> None:
        if not self._changing:
            self._before = self.cursor_key
            self._changing = True

    def _fitting(self) -> tuple[str, ...]:
        """The columns that fit the width, lesser ones given up first (all of them before the table has a width)."""
        width = self.size.width - CELL_PADDING  # room for a scrollbar
        if width <= 0:
            return self._shown
        shown = list(self.columns)
        for column in self.drop_first:
            if sum(self._widths[c] + CELL_PADDING for c in shown) <= width:
                break
            shown.remove(column)
        return tuple(shown)

    def _add_columns(self) -> None:
        for column in self._shown:
            self.rows.add_column(column, key=column, width=self._widths[column])

    def _rebuild(self) -> None:
        """The table made again: its columns, then every row in order."""
        rows = self.rows
        rows.clear(columns=True)
        self._add_columns()
        keys = self._order if not self.newest_first else list(self._cells)
        for key in keys:
            cells = self._cells[key]
            rows.add_row(*(cells[column] for column in self._shown), key=key)
        self._placed = list(keys)
        self._sort()

    def _update(self) -> None:
        """Only the rows put or dropped since the last time, changed in place (new ones sorted into place)."""
        rows = self.rows
        resized = False  # a width told to a column shows once the table is laid out again, as a row changes
        for column in self._shown:
            if rows.columns[ColumnKey(column)].width != self._widths[column]:
                rows.columns[ColumnKey(column)].width = self._widths[column]
                resized = True
        for key in self._gone:
            if RowKey(key) in rows.rows:
                rows.remove_row(key)
        for key in self._dirty:
            cells = self._cells[key]
            if RowKey(key) not in rows.rows:
                rows.add_row(*(cells[column] for column in self._shown), key=key)
                continue
            for column in self._shown:
                rows.update_cell(key, column, cells[column], update_width=resized)
        if self._dirty or self._gone:
            self._sort()

    def _sort(self) -> None:
        if self.newest_first:
            self.rows.sort(*self.newest_first, key=_text_of, reverse=True)

    def _keep_cursor(self, before: str | None, index: int, *, moved: bool) -> None:
        """The cursor on the top row, following the newest session, if it was there (or there was no row);
        elsewhere, on the session it was on; that session gone, on the row where it was."""
        rows = self.rows
        if not rows.row_count:
            return
        if before is None or index == 0:
            index = 0
        elif RowKey(before) in rows.rows:
            index = rows.get_row_index(before)
        index = min(index, rows.row_count - 1)
        if moved or index != rows.cursor_row:
            rows.move_cursor(row=index)


def _text_of(value: CellLike | tuple[CellLike, ...]) -> tuple[str, ...]:
    """A row's sort key: the text of its sort columns (one column's cell comes alone, not in a tuple)."""
    cells = value if isinstance(value, tuple) else (value,)
    return tuple(cell.plain for cell in cells)
