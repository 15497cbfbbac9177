"""The browser screen: the journals of a folder, newest first, appearing and changing live."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from ...journal.reader import JournalError
from ...journal.store import SessionInfo, describe, journal_paths, lock_holder, project_label
from .. import strings
from ..tailing import WatchMode, watch_folder
from ..text import shorten

Clock = Callable[[], datetime]
OpenSession = Callable[[Path], None]
_STATE_STYLE = {
    "live": "bold green",
    "done": "",
    "interrupted": "yellow",
    "outcome unknown": "bold reverse yellow",
    "torn tail": "yellow",
    "corrupt": "bold red",
    "empty": "dim",
}


class BrowserScreen(Screen[None]):
    CSS_PATH = "browser.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", show=True),
        Binding("r", "refresh", "Refresh"),
    ]

    def __init__(self, folder: Path, *, open_session: OpenSession, watch_mode: WatchMode = "auto") -> None:
        super().__init__()
        self.shown_folder = folder
        # Absolute, because the watcher reports absolute paths.
        self.folder = Path(os.path.abspath(folder))
        self.open_session = open_session
        self.watch_mode = watch_mode
        # (size, mtime_ns) of each listed journal, so an unchanged file is not read again.
        self._seen: dict[Path, tuple[int, int]] = {}
        self._live: set[Path] = set()

    def compose(self) -> ComposeResult:
        yield Static(Text(strings.BROWSER_TITLE.format(folder=shorten(str(self.shown_folder), 200))), id="title")
        yield DataTable(id="journals", cursor_type="row", zebra_stripes=True)
        yield Static(Text(strings.NO_JOURNALS.format(folder=shorten(str(self.shown_folder), 200))), id="empty")
        yield Footer()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one(DataTable)

    def on_mount(self) -> None:
        for label in strings.BROWSER_COLUMNS:
            self.table.add_column(label, key=label)
        self.rescan()
        self.table.focus()
        self._watch_folder()

    @work(exclusive=True, group="browse")
    async def _watch_folder(self) -> None:
        await watch_folder(self.folder, self._changed, self.watch_mode)

    async def _changed(self, paths: set[Path]) -> None:
        self.rescan()

    def rescan(self) -> None:
        """Add new journals, update changed ones, drop deleted ones; untouched files are not read."""
        try:
            paths = journal_paths(self.folder)
        except JournalError as exc:
            self.notify(str(exc), severity="error")
            return
        table = self.table
        changed = False
        current = set(paths)
        for gone in set(self._seen) - current:
            table.remove_row(str(gone))
            del self._seen[gone]
            self._live.discard(gone)
            changed = True
        for path in paths:
            try:
                st = os.stat(path)
            except OSError:
                continue
            stamp = (st.st_size, st.st_mtime_ns)
            # A live journal's state changes when its writer exits, which touches no byte of it.
            still_live = path in self._live and lock_holder(path) is not None
            if self._seen.get(path) == stamp and (path not in self._live or still_live):
                continue
            try:
                info = describe(path)
            except JournalError:
                continue
            self._show(info, new=path not in self._seen)
            self._seen[path] = stamp
            changed = True
        if changed:
            # Session ids begin with their UTC start time, so by id is newest first.
            table.sort("id", key=lambda cell: cell.plain, reverse=True)
        self.query_one("#empty").display = not self._seen
        table.display = bool(self._seen)

    def _show(self, info: SessionInfo, *, new: bool) -> None:
        if info.state == "live":
            self._live.add(info.path)
        else:
            self._live.discard(info.path)
        cells = _cells(info)
        key = str(info.path)
        if new:
            self.table.add_row(*cells, key=key)
            return
        for column, value in zip(self.table.columns, cells, strict=True):
            self.table.update_cell(key, column, value, update_width=True)

    def action_open(self) -> None:
        table = self.table
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        if key.value is not None:
            self.open_session(Path(key.value))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.open_session(Path(event.row_key.value))

    def action_refresh(self) -> None:
        self.rescan()


def _cells(info: SessionInfo) -> list[Text]:
    duration = f"{info.duration_s:.1f}s" if info.duration_s is not None else "-"
    started = info.started.replace("T", " ")[:16] if info.started else "-"
    origin = f"{info.forked_from}@{info.fork_at}" if info.forked_from else ""
    return [
        Text(shorten(info.id, 40)),
        Text(shorten(started, 16)),
        Text(str(info.events), justify="right"),
        Text(duration, justify="right"),
        Text(str(info.tokens), justify="right"),
        Text(info.state, style=_STATE_STYLE.get(info.state, "")),
        Text(shorten(origin, 40)),
        Text(shorten(project_label(info.project, 32), 32)),
    ]
