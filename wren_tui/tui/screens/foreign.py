"""The browser of other agents' sessions (`wren watch --agent`): their folders, newest first, live.

The same screen as the journal browser, over the agents' own session folders (`foreign.FORMATS`;
nested: one folder per project or per day), or one folder of any agent's sessions, each file
summarised from its head and its tail (`foreign.listing`). New sessions appear as the agent creates
them: the folders are watched recursively (or polled where they cannot be), and a session stops
being live a few seconds after its last write. Enter opens one in the session screen, which
detects its format by its content.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import watchfiles
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from ...foreign import Format
from ...foreign.every_agent import every_session
from ...foreign.folders import split_member
from ...foreign.listing import AgentSession, describe_agent_session, describe_exported, marked, remembered
from ...foreign.live import FileKey, held_for_writing
from ...journal.store import project_label
from ...keep.found import Kept
from ...search.folder_index import Index
from ...search.foreign import ForeignSession
from ...search.listing_cache import ListingCache
from ...search.sources import SearchSource
from ...sessions.tailing import WatchMode
from .. import strings
from ..clock import Clock, utc_now
from ..text import shorten, visible
from ..widgets.session_table import STATE_STYLE, UNKNOWN_STATE, Cell, SessionTable
from .browser import OpenSession
from .results import Listing, OpenAt
from .session_list import SEARCH_KEYS, SessionList

log = logging.getLogger(__name__)

# With nothing seen, the folders are looked at again this often: a live session's state changes with
# time alone (a few seconds after its last write), and a folder that did not exist may appear.
WAKE_MS = 1000
_DEBOUNCE_MS = 50
# Session ids are uuids: their first characters tell them apart.
_ID_WIDTH = 18
# The states' colours: a Wren journal's, and the one state only another agent's session has.
_STYLE = {**STATE_STYLE, "stopped mid-call": "bold reverse yellow", "last: reply": ""}


@dataclass(frozen=True)
class ForeignFolder:
    """One agent's sessions folder, as browsed; with no format, a folder of any agent's sessions, each
    file's agent recognised by its content."""

    format: Format | None
    root: Path

    @property
    def label(self) -> str:
        return self.format.label if self.format is not None else strings.ANY_AGENT


class ForeignBrowser(SessionList):
    """The sessions of the agents' folders as one table, newest first (no fork tree: these agents fork none)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh", "Refresh"),
        Binding("f", "folders", "Folders"),
        *SEARCH_KEYS,
    ]
    DEFAULT_CSS = """
    ForeignBrowser #folders { height: auto; max-height: 50%; background: $panel; padding: 0 1; display: none; }
    ForeignBrowser #folders.-shown { display: block; }
    """
    KEEP = ("quit", "toggle_help", "open", "search_all", "refresh")
    # Given up first on a narrow terminal; the start time never is (the rows are sorted by it).
    DROP_FIRST: ClassVar[tuple[str, ...]] = ("tokens", "duration", "project", "lines", "agent")

    def __init__(
        self,
        folders: Sequence[ForeignFolder],
        *,
        open_session: OpenSession,
        watch_mode: WatchMode = "auto",
        store: Path | None = None,
        open_at: OpenAt | None = None,
        clock: Clock = utc_now,
    ):
        self.folders = list(folders)
        # What "live" (a file changed in the last few seconds) is judged against: the app's clock.
        self.clock = clock
        # The journals folder whose store (`wren ls --agent` keeps it) gives the rows of unchanged sessions.
        self.store = store
        self.open_session = open_session
        self.watch_mode = watch_mode
        # Which agent wrote each file listed.
        self._formats: dict[Path, Format] = {}
        # (size, mtime_ns) of each file listed, so an unchanged one is not read again.
        self._seen: dict[Path, tuple[int, ...]] = {}
        self._live: set[Path] = set()
        # The rows of a file that holds several sessions (OpenCode's database), by their keys.
        self._rows: dict[Path, set[str]] = {}
        self._held: set[FileKey] | None = None
        # The sessions Wren kept (`wren keep`), read again at each look: those the agents lost are listed too.
        self._kept = Kept()
        one_agent = len(self.folders) == 1 and self.folders[0].format is not None
        self.columns = tuple(c for c in strings.AGENT_COLUMNS if c != "agent" or not one_agent)
        names = ", ".join(f"{f.label} ({shorten(str(f.root), 80)})" for f in self.folders)
        if len(self.folders) == 1:
            title = strings.AGENT_TITLE.format(agents=names)
        else:  # their names alone: the folders would not fit, `f` shows them a line each
            labels = ", ".join(f.label for f in self.folders)
            title = strings.AGENTS_TITLE.format(count=len(self.folders), key="f", agents=labels)
        # Start times are ISO-8601 UTC, so they sort as text, newest first.
        table = SessionTable(
            self.columns,
            drop_first=self.DROP_FIRST,
            newest_first=("started",),
            empty=strings.NO_AGENT_SESSIONS.format(agents=names),
        )
        super().__init__(title, table, open_at=open_at)

    def compose_below(self) -> ComposeResult:
        # The folders read, one line each, whole: `f` shows and hides them.
        lines = [strings.AGENT_FOLDERS, *(f"  {f.label}: {visible(str(f.root))}" for f in self.folders)]
        yield Static(Text("\n".join(lines)), id="folders")

    def action_folders(self) -> None:
        self.query_one("#folders").toggle_class("-shown")

    def on_mount(self) -> None:
        self.rescan()
        self.table.focus()
        self._watch_folder()

    # --- what is listed ----------------------------------------------------------------------

    def _paths(self) -> list[Path]:
        paths: list[Path] = []
        for folder in self.folders:
            if folder.format is None:  # any agent's: each file by its content (an empty one looked at again)
                found = every_session(folder.root, known=self._formats)
                paths += [path for kind, path in found if isinstance(kind, Format)]
                continue
            for path in self._kept.files(folder.format, folder.root):
                self._formats[path] = folder.format
                paths.append(path)
        return paths

    def rescan(self) -> None:
        """Add new sessions, update changed ones and live ones (live ends with time), drop deleted ones."""
        self._held = None  # one look at every process's open files for the whole pass, not one per session
        self._kept = Kept()
        paths = self._paths()
        changed = False
        for gone in set(self._seen) - set(paths):
            for key in self._rows.pop(gone, {str(gone)}):
                self.table.drop(key)
            del self._seen[gone]
            self._formats.pop(gone, None)
            self._live.discard(gone)
            changed = True
        known = self._known() if not self._seen else None  # the first listing: unchanged rows from the store
        now = self.clock().timestamp()
        for path in paths:
            stamp = _stamp(path)
            if stamp is None:
                continue
            if self._seen.get(path) == stamp and path not in self._live:
                continue
            fmt = self._formats[path]
            if fmt.export_all is not None:
                rows = describe_exported(path, fmt, now)
                live = {session for row in rows if (session := split_member(row.path)[1]) is not None}
                for member in self._kept.lost_members(fmt, path, live):  # deleted from the database it still has
                    rows += describe_exported(member, fmt, now)
                self._show_all(path, [marked(row, self._kept) for row in rows])
            elif known is not None:
                row = remembered(path, fmt, _stat(path), self._held_now(), known, now)
                self._show(path, _cells(marked(row, self._kept)))
            else:
                row = describe_agent_session(path, fmt, held=self._held_now(), now=now)
                self._show(path, _cells(marked(row, self._kept)))
            self._seen[path] = stamp
            changed = True
        if known is not None:
            known.close()
        self._held = None
        if changed:
            self.table.settle()

    def _known(self) -> ListingCache | None:
        """The rows `wren ls --agent` kept, opened read-only (the viewer never writes them); None: none kept."""
        return None if self.store is None else Index(self.store).listing_cache()

    def _held_now(self) -> set[FileKey]:
        if self._held is None:
            keys = []
            for path in self._formats:
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                keys.append((st.st_dev, st.st_ino))
            self._held = held_for_writing(keys)
        return self._held

    def _show_all(self, path: Path, rows: list[AgentSession]) -> None:
        """The rows of every session a file holds (OpenCode's database): one row each, keyed `DB#ID`."""
        keys = {str(row.path) for row in rows}
        for key in self._rows.get(path, set()) - keys:
            self.table.drop(key)
        self._rows[path] = keys
        live = False
        for row in rows:
            cells = _cells(row)
            live = live or cells["state"].plain == "live"
            self._show(row.path, cells)
            self._live.discard(row.path)
        if live:
            self._live.add(path)
        else:
            self._live.discard(path)

    def _show(self, path: Path, cells: dict[str, Cell]) -> None:
        if cells["state"].plain == "live":
            self._live.add(path)
        else:
            self._live.discard(path)
        self.table.put(str(path), cells)

    def on_session_table_opened(self, event: SessionTable.Opened) -> None:
        self.open_session(Path(event.key))

    def action_refresh(self) -> None:
        self.rescan()

    # --- searching what is listed ------------------------------------------------------------

    def listed_sources(self) -> tuple[Listing, int]:
        """The sessions listed, newest first by when each file last changed (as `wren search --agent` orders
        them), from the listing's own look at each file: Enter reads no folder and stats no file."""
        listed: list[tuple[int, Format, Path]] = []
        for path, stamp in self._seen.items():
            fmt = self._formats.get(path)
            if fmt is None:
                continue
            if fmt.export_all is not None and path in self._rows:  # a database: each of its sessions, DB#ID
                listed += [(stamp[1], fmt, Path(key)) for key in sorted(self._rows[path])]
            else:
                listed.append((stamp[1], fmt, path))

        def listing() -> list[SearchSource]:
            listed.sort(key=lambda row: row[0], reverse=True)
            return [ForeignSession(path, fmt) for _mtime, fmt, path in listed]

        return listing, len(listed)

    @property
    def search_index(self) -> Path | None:
        """The journals folder whose index `wren search --agent` keeps (the listing's store is in it)."""
        return self.store

    # --- watching ----------------------------------------------------------------------------

    @work(exclusive=True, group="browse")
    async def _watch_folder(self) -> None:
        roots = [f.root for f in self.folders if f.root.is_dir()]
        if self.watch_mode != "poll" and roots:
            try:
                async for _changes in watchfiles.awatch(
                    *roots,
                    debounce=_DEBOUNCE_MS,
                    rust_timeout=WAKE_MS,
                    yield_on_timeout=True,
                    recursive=True,
                    watch_filter=None,
                ):
                    if not self.is_running:
                        return
                    self.sessions_changed()
                    if len(roots) < sum(f.root.is_dir() for f in self.folders):
                        break  # a folder appeared: watch it too
            except (OSError, RuntimeError) as exc:
                if self.watch_mode == "watch":
                    raise
                log.warning("cannot watch %s (%s); polling instead", roots, exc)
            else:
                if self.is_running:
                    self._watch_folder()
                return
        while self.is_running:
            self.sessions_changed()
            await asyncio.sleep(WAKE_MS / 1000)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _stamp(path: Path) -> tuple[int, ...] | None:
    """What a listed file is now, to tell whether to read it again: its size and time (a database's WAL's too)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    try:
        wal = os.stat(f"{path}-wal")
    except OSError:
        return (st.st_size, st.st_mtime_ns)
    return (st.st_size, st.st_mtime_ns, wal.st_size, wal.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _project(project: str | None) -> str:
    return shorten(project_label(project, 40), 40)  # many sessions share a project


def _cells(info: AgentSession) -> dict[str, Cell]:
    duration = f"{info.duration_s:.1f}s" if info.duration_s is not None else "-"
    started = info.started.replace("T", " ")[:19] if info.started else "-"
    lines = str(info.lines) if info.exact else f"~{info.lines}"
    tokens = str(info.tokens) if info.tokens_exact else f"~{info.tokens}"
    state = info.state
    # A session its agent lost: what the store says of it ("kept; deleted by its agent on DATE"), its state after.
    shown = state if info.kept is None else f"{info.kept} · {state}"
    values = {
        "agent": Cell(info.agent),
        "id": Cell(shorten(info.id, _ID_WIDTH)),
        "started": Cell(shorten(started, 19)),
        "lines": Cell(lines, justify="right"),
        "duration": Cell(duration, justify="right"),
        "tokens": Cell(tokens, justify="right"),
        "state": Cell(shorten(shown, 20 if info.kept is None else 80), style=_STYLE.get(state, UNKNOWN_STATE)),
        "project": Cell(_project(info.project)),
    }
    return {column: values[column] for column in strings.AGENT_COLUMNS}
