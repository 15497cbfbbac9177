"""What the three session lists' screens share: a title, the session table, the footer, Enter to open.

The journal browser (`browser.py`), the foreign agents' browser (`foreign.py`) and the fleet's
(`fleet_browser.py`) each say where their rows come from and what opening one does
(`on_session_table_opened`); the table (`widgets/session_table.py`) does the rest. A list that can
say which sessions it lists (`listed_sources`) and open one at a hit (`open_at`) gets `/`: search
every session listed, from the index `wren search` keeps (`search_index`), in `results.py`.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, Static

from ...search.query import BadPattern, Query
from .. import strings
from ..index_stream import WarmIndex
from ..widgets.key_footer import KeyFooter
from ..widgets.session_table import SessionTable
from .results import Listing, OpenAt, SearchResults

# The keys of the search box: a list with a search adds them to its BINDINGS.
SEARCH_KEYS: list[BindingType] = [
    Binding("/", "search_all", "Search all"),
    Binding("escape", "close_search", "Close search", show=False),
]


class SessionList(Screen[None]):
    """A session list under its title: `heading` says whose sessions, `table` holds them."""

    # The results' styles are read with the list's, when the app starts: read on the first search, they
    # would make every widget of the app be styled again between Enter and the first hit.
    CSS_PATH: ClassVar[list[str | PurePath]] = ["browser.tcss", "results.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "open", "Open", show=True)]
    # A list with a search binds these where its footer should show `/` (`SEARCH_KEYS`).
    # The footer's keys, by action, most important first (`KeyFooter`).
    KEEP: ClassVar[tuple[str, ...]] = ("quit", "toggle_help", "open")

    def __init__(self, heading: str, table: SessionTable, *, open_at: OpenAt | None = None) -> None:
        super().__init__()
        self.heading = heading
        self.table = table
        # Open a session at a search hit; None: this list has no search.
        self.open_at = open_at
        # The search box is closed when the list shows again (closed at Enter, it would cost the first hit a frame).
        self._searched = False
        self._index: WarmIndex | None = None  # opened at the first `/`, kept while the list is

    def compose(self) -> ComposeResult:
        yield Static(Text(self.heading), id="title")
        yield self.table
        yield from self.compose_below()
        if self.open_at is not None:
            yield Input(placeholder=strings.SEARCH_ALL_PLACEHOLDER, id="search-all")
        yield KeyFooter(keep=self.KEEP)

    def compose_below(self) -> ComposeResult:
        """What a screen shows between the table and the footer."""
        yield from ()

    def action_open(self) -> None:
        self.table.open_cursor()

    # --- searching every session listed ------------------------------------------------------

    def listed_sources(self) -> tuple[Listing, int]:
        """The sessions listed, as search reads them, in the order `wren search` gives its hits: a function
        that makes them (called on the search's thread, so Enter makes no session object) and how many."""
        return list, 0

    @property
    def search_index(self) -> Path | None:
        """The journals folder whose index (`wren search` keeps it) answers this list's search; None: none."""
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A list with no search offers no key for it.
        return self.open_at is not None or action not in ("search_all", "close_search")

    def action_search_all(self) -> None:
        if self.open_at is None:
            return
        if self._index is None:
            self._index = WarmIndex(self.search_index)
        self._index.warm()
        box = self.query_one("#search-all", Input)
        box.add_class("-shown")
        box.focus()

    def action_close_search(self) -> None:
        if self.open_at is None:
            return
        box = self.query_one("#search-all", Input)
        box.remove_class("-shown")
        self.table.focus()

    @on(Input.Submitted, "#search-all")
    def _search_all(self, event: Input.Submitted) -> None:
        """Search every session listed, newest first; the results screen shows the hits as they come."""
        assert self.open_at is not None
        try:
            query = Query.of(event.value)
        except BadPattern as exc:
            self.notify(str(exc), severity="error")
            return
        self._searched = True
        listing, total = self.listed_sources()
        if self._index is None:
            self._index = WarmIndex(self.search_index)
        results = SearchResults(listing, total, query, open_at=self.open_at, index=self._index)
        self.app.push_screen(results)

    def on_unmount(self) -> None:
        if self._index is not None:
            self._index.close()

    def on_screen_resume(self) -> None:
        if self._searched:
            self._searched = False
            self.action_close_search()
