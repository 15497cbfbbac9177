"""The browser screen: the journals of a folder, newest first, appearing and changing live.

Forks sit under their parent as a tree (indented, with the seq they were forked at); Space folds
or unfolds a session's forks. A fork whose parent is not in the folder is at the top, its parent
said to be missing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType

from ...journal.errors import JournalError
from ...journal.lineage import TreeRow, fork_tree
from ...journal.locks import lock_holder
from ...journal.store import SessionInfo, describe_session, journal_paths, project_label, session_id_of
from ...search.sources import SearchSource
from ...search.wren_session import WrenSession
from ...sessions.tailing import WatchMode, watch_folder
from .. import strings
from ..text import shorten
from ..widgets.session_table import STATE_STYLE, UNKNOWN_STATE, SessionTable
from .results import Listing, OpenAt
from .session_list import SEARCH_KEYS, SessionList

OpenSession = Callable[[Path], None]
# Columns given up first when the terminal is too narrow for all of them; the rest always show.
_DROP_FIRST = ("tokens", "started", "duration", "project", "events")


class BrowserScreen(SessionList):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh", "Refresh"),
        *SEARCH_KEYS,
        Binding("space", "fold", strings.FOLD_FORKS),
    ]
    KEEP = ("quit", "toggle_help", "open", "search_all", "refresh", "fold")

    def __init__(
        self,
        folder: Path,
        *,
        open_session: OpenSession,
        watch_mode: WatchMode = "auto",
        open_at: OpenAt | None = None,
    ) -> None:
        named = shorten(str(folder), 200)
        table = SessionTable(
            strings.BROWSER_COLUMNS, drop_first=_DROP_FIRST, empty=strings.NO_JOURNALS.format(folder=named)
        )
        super().__init__(strings.BROWSER_TITLE.format(folder=named), table, open_at=open_at)
        # Absolute, because the watcher reports absolute paths.
        self.folder = Path(os.path.abspath(folder))
        self.open_session = open_session
        self.watch_mode = watch_mode
        # (size, mtime_ns) of each listed journal, so an unchanged file is not read again.
        self._seen: dict[Path, tuple[int, int]] = {}
        self._live: set[Path] = set()
        # Every row's cells, shown or folded away (the table holds the rows shown, placed in the tree).
        self._cells: dict[str, dict[str, Text]] = {}
        # Each row's listing (None: unreadable), the tree they make, folded sessions.
        self._infos: dict[str, SessionInfo | None] = {}
        self._tree: dict[str, TreeRow] = {}
        self._folded: set[str] = set()

    def on_mount(self) -> None:
        self.rescan()
        self.table.focus()
        self._watch_folder()

    @work(exclusive=True, group="browse")
    async def _watch_folder(self) -> None:
        await watch_folder(self.folder, self._changed, self.watch_mode)

    async def _changed(self, paths: set[Path]) -> None:
        if self.is_running:  # not a change that lands as the screen closes: its widgets are going
            self.sessions_changed()

    def rescan(self) -> None:
        """Add new journals, update changed ones, drop deleted ones; untouched files are not read."""
        try:
            paths = journal_paths(self.folder)
        except JournalError as exc:
            self.notify(str(exc), severity="error")
            return
        changed = False
        current = set(paths)
        for gone in set(self._seen) - current:
            del self._seen[gone]
            del self._cells[str(gone)]
            del self._infos[str(gone)]
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
            info: SessionInfo | None
            try:
                info = describe_session(path)
                cells = _cells(info)
            except (JournalError, OSError):
                info, cells = None, _unreadable(path)  # listed all the same: a journal hidden is a journal lost
            if cells["state"].plain == "live":
                self._live.add(path)
            else:
                self._live.discard(path)
            self._cells[str(path)], self._infos[str(path)] = cells, info
            self._seen[path] = stamp
            changed = True
        if changed:
            self._arrange()

    # --- the fork tree ----------------------------------------------------------------------

    def _arrange(self) -> None:
        """Place every row in the fork tree; the table changes only the rows that say something new."""
        rows = [info for info in self._infos.values() if info is not None]
        keys = {info.id: str(info.path) for info in rows}
        self._tree = {row.id: row for row in fork_tree(rows)}
        order: list[str] = []
        hidden_under: int | None = None  # the depth of a folded session while its forks are passed
        for row in self._tree.values():
            if hidden_under is not None and row.depth > hidden_under:
                continue
            hidden_under = row.depth if row.id in self._folded and row.children else None
            order.append(keys[row.id])
        # Unreadable journals have no id to place by: they follow, newest first.
        order.extend(sorted((k for k, info in self._infos.items() if info is None), reverse=True))
        for key in order:
            cells = self._decorated(key)
            if self.table.get(key) != cells:
                self.table.put(key, cells)
        self.table.settle(order)

    def _decorated(self, key: str) -> dict[str, Text]:
        """A row's cells with its place in the tree shown: indented under its parent, folded or not."""
        cells = self._cells[key]
        info = self._infos.get(key)
        row = self._tree.get(info.id) if info is not None else None
        if info is None or row is None:
            return cells
        glyph = ("▸ " if info.id in self._folded else "▾ ") if row.children else ""
        indent = "  " * max(row.depth - 1, 0) + ("└ " if row.depth else "")
        folded = f" (+{row.children})" if info.id in self._folded and row.children else ""
        ident = Text(indent, style="dim")
        ident.append(glyph + shorten(info.id, 40) + folded)
        origin = cells["forked from"].copy()
        if row.parent_missing:
            origin.append(strings.TREE_MISSING, style="italic yellow")
        return {**cells, "id": ident, "forked from": origin}

    def action_fold(self) -> None:
        """Fold (or unfold) the forks under the highlighted session."""
        key = self.table.cursor_key
        info = self._infos.get(key) if key is not None else None
        if info is None or not self._tree.get(info.id, TreeRow(info.id, 0, False, 0)).children:
            return
        self._folded.symmetric_difference_update({info.id})
        self._arrange()

    def on_session_table_opened(self, event: SessionTable.Opened) -> None:
        self.open_session(Path(event.key))

    def action_refresh(self) -> None:
        self.rescan()

    def listed_sources(self) -> tuple[Listing, int]:
        """The journals listed, newest first (as `wren search` lists them): the listing is kept up to date by
        the folder's watcher, so Enter reads no folder."""
        paths = list(self._seen)

        def listing() -> list[SearchSource]:
            return [WrenSession(path) for path in sorted(paths, key=lambda path: path.name, reverse=True)]

        return listing, len(paths)

    @property
    def search_index(self) -> Path:
        return self.folder


def _cells(info: SessionInfo) -> dict[str, Text]:
    duration = f"{info.duration_s:.1f}s" if info.duration_s is not None else "-"
    started = info.started.replace("T", " ")[:16] if info.started else "-"
    origin = f"{info.forked_from}@{info.fork_at}" if info.forked_from else ""
    state = str(info.state)
    values = (
        Text(shorten(info.id, 40)),
        Text(shorten(started, 16)),
        Text(str(info.events), justify="right"),
        Text(duration, justify="right"),
        Text(str(info.tokens), justify="right"),
        Text(shorten(state, 20), style=STATE_STYLE.get(state, UNKNOWN_STATE)),
        Text(shorten(origin, 40)),
        Text(shorten(project_label(info.project, 32), 32)),
    )
    return dict(zip(strings.BROWSER_COLUMNS, values, strict=True))


def _unreadable(path: Path) -> dict[str, Text]:
    """The row of a journal that cannot be read at all (no permission, gone between listing and reading)."""
    cells = {column: Text("-", justify="right") for column in strings.BROWSER_COLUMNS}
    cells["id"] = Text(shorten(session_id_of(path), 40))
    cells["state"] = Text("unreadable", style=STATE_STYLE["unreadable"])
    cells["forked from"] = Text("")
    cells["project"] = Text("")
    return cells
