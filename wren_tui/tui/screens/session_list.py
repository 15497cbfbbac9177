"""What the three session lists' screens share: a title, the session table, the footer, Enter to open.

The journal browser (`browser.py`), the foreign agents' browser (`foreign.py`) and the fleet's
(`fleet_browser.py`) each say where their rows come from and what opening one does
(`on_session_table_opened`); the table (`widgets/session_table.py`) does the rest.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from ..widgets.key_footer import KeyFooter
from ..widgets.session_table import SessionTable


class SessionList(Screen[None]):
    """A session list under its title: `heading` says whose sessions, `table` holds them."""

    CSS_PATH = "browser.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "open", "Open", show=True)]
    # The footer's keys, by action, most important first (`KeyFooter`).
    KEEP: ClassVar[tuple[str, ...]] = ("quit", "toggle_help", "open")

    def __init__(self, heading: str, table: SessionTable) -> None:
        super().__init__()
        self.heading = heading
        self.table = table

    def compose(self) -> ComposeResult:
        yield Static(Text(self.heading), id="title")
        yield self.table
        yield from self.compose_below()
        yield KeyFooter(keep=self.KEEP)

    def compose_below(self) -> ComposeResult:
        """What a screen shows between the table and the footer (the journal browser's search box)."""
        yield from ()

    def action_open(self) -> None:
        self.table.open_cursor()
