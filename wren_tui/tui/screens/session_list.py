"""What the three session lists' screens share: a title, the session table, the footer, Enter to open.

The journal browser (`browser.py`), the foreign agents' browser (`foreign.py`) and the fleet's
(`fleet_browser.py`) each say where their rows come from and what opening one does
(`on_session_table_opened`); the table (`widgets/session_table.py`) does the rest. A list that can
say which sessions it lists (`listed_sources`) and open one at a hit (`open_at`) gets `/`: search
every session listed, from the index `wren search` keeps (`search_index`); the hits are listed in
place of the table (`results.py`), until Esc.
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
from ...search.streamed import WarmIndex
from .. import strings
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

    # The results list is composed (hidden) and styled with the screen: Enter only shows it.
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
        self._index: WarmIndex | None = None  # opened at the first `/`, kept while the list is
        self._behind = False  # the sessions changed while the table was not shown

    def compose(self) -> ComposeResult:
        yield Static(Text(self.heading), id="title")
        yield self.table
        if self.open_at is not None:
            yield SearchResults(open_at=self.open_at)
        yield from self.compose_below()
        if self.open_at is not None:
            yield Input(placeholder=strings.SEARCH_ALL_PLACEHOLDER, id="search-all")
        yield KeyFooter(keep=(*self.KEEP, "back"))

    def compose_below(self) -> ComposeResult:
        """What a screen shows between the table and the footer."""
        yield from ()

    def action_open(self) -> None:
        self.table.open_cursor()

    # --- keeping the list up to date ---------------------------------------------------------

    def rescan(self) -> None:
        """Bring the rows up to date with what is listed (a list that watches its sessions says how)."""

    def sessions_changed(self) -> None:
        """The sessions changed: rescan now if the table is on screen, else once it shows again (under a
        session or the search's results, a rescan every quarter second would slow what is drawn instead)."""
        if self.is_current and not self.results_shown:
            self.rescan()
        else:
            self._behind = True

    def _caught_up(self) -> None:
        if self._behind and not self.results_shown:
            self._behind = False
            self.rescan()

    def on_screen_resume(self) -> None:
        self._caught_up()

    # --- searching every session listed ------------------------------------------------------

    def listed_sources(self) -> tuple[Listing, int]:
        """The sessions listed, as search reads them, in the order `wren search` gives its hits: a function
        that makes them (called on the search's thread, so Enter makes no session object) and how many."""
        return list, 0

    @property
    def search_index(self) -> Path | None:
        """The journals folder whose index (`wren search` keeps it) answers this list's search; None: none."""
        return None

    @property
    def results(self) -> SearchResults:
        return self.query_one(SearchResults)

    @property
    def results_shown(self) -> bool:
        """The search's results are shown in place of the table."""
        return self.open_at is not None and self.results.shown

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A list with no search offers no key for it; with the results shown, only theirs are offered (and the app's).
        if action in ("search_all", "close_search") and self.open_at is None:
            return False
        return not self.results_shown

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
        self.results.stop()  # one submitted but not yet shown
        if self._index is not None:
            self._index.cool()  # the read begun for the next search is not needed
        box = self.query_one("#search-all", Input)
        box.remove_class("-shown")
        self.table.focus()

    @on(Input.Submitted, "#search-all")
    def _search_all(self, event: Input.Submitted) -> None:
        """Search every session listed, newest first; the results list, in place of the table, shows the hits
        as they come. Only widgets already mounted and styled change: the box closes, the table hides."""
        assert self.open_at is not None
        try:
            query = Query.of(event.value)
        except BadPattern as exc:
            self.notify(str(exc), severity="error")
            return
        listing, total = self.listed_sources()
        if self._index is None:
            self._index = WarmIndex(self.search_index)
        self.results.start(listing, total, query, self._index, shown=self._results_shown)

    def _results_shown(self) -> None:
        self.table.display = False
        # The box closes once the results are drawn (closed before, it would restyle before the frame).
        box = self.query_one("#search-all", Input)
        self.call_after_refresh(box.remove_class, "-shown")

    @on(SearchResults.Closed)
    def _results_closed(self) -> None:
        self.table.display = True
        self.table.focus()
        self._caught_up()

    def on_unmount(self) -> None:
        if self._index is not None:
            self._index.close()
