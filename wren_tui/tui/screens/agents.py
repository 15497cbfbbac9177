"""The browser of other agents' sessions (`wren watch --agent`): their folders, newest first, live.

The same screen as the journal browser, over Claude Code's, Codex's or pi's own session folders
(nested: one folder per project or per day), each file summarised from its head and its tail
(`formats.listing`). New sessions appear as the agent creates them: the folders are watched
recursively (or polled where they cannot be), and a session stops being live a few seconds after
its last write. Enter opens one in the session screen, which detects its format by its content.
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
from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from ...formats import FORMATS, Format, detect
from ...formats.listing import AgentSession, describe_agent_session, session_files
from ...formats.live import FileKey, held_for_writing
from ...journal.store import project_label
from .. import strings
from ..tailing import WatchMode
from ..text import shorten
from ..widgets.key_footer import KeyFooter
from .browser import _STATE_STYLE, _UNKNOWN_STATE, BrowserScreen, OpenSession

log = logging.getLogger(__name__)

# With nothing seen, the folders are looked at again this often: a live session's state changes with
# time alone (a few seconds after its last write), and a folder that did not exist may appear.
WAKE_MS = 1000
_DEBOUNCE_MS = 50
# Session ids are uuids: their first characters tell them apart.
_ID_WIDTH = 18
# A format that takes every .jsonl file for a session (pi's): each is then recognised by its content.
_EVERY_FILE = FORMATS["pi"]


@dataclass(frozen=True)
class AgentFolder:
    """One agent's sessions folder, as browsed; with no format, a folder of any agent's sessions, each
    file's agent recognised by its content."""

    format: Format | None
    root: Path

    @property
    def label(self) -> str:
        return self.format.label if self.format is not None else strings.ANY_AGENT


class AgentBrowser(BrowserScreen):
    COLUMNS: ClassVar[tuple[str, ...]] = strings.AGENT_COLUMNS
    # The start time is never given up: the rows are sorted by it.
    DROP_FIRST: ClassVar[tuple[str, ...]] = ("tokens", "duration", "project", "lines", "agent")

    def __init__(self, folders: Sequence[AgentFolder], *, open_session: OpenSession, watch_mode: WatchMode = "auto"):
        self.folders = list(folders)
        # Which agent wrote each file listed, and when its row was made.
        self._formats: dict[Path, Format] = {}
        self._held: set[FileKey] | None = None
        super().__init__(self.folders[0].root if self.folders else Path("."), open_session=open_session)
        self.watch_mode = watch_mode
        if len(self.folders) == 1 and self.folders[0].format is not None:
            self.columns = self._shown = tuple(c for c in self.COLUMNS if c != "agent")  # one agent: no column for it

    def compose(self) -> ComposeResult:
        names = ", ".join(f"{f.label} ({shorten(str(f.root), 80)})" for f in self.folders)
        yield Static(Text(strings.AGENT_TITLE.format(agents=names)), id="title")
        yield DataTable(id="journals", cursor_type="row", zebra_stripes=True)
        yield Static(Text(strings.NO_AGENT_SESSIONS.format(agents=names)), id="empty")
        yield KeyFooter(keep=("quit", "toggle_help", "open", "refresh"))

    # --- what is listed ----------------------------------------------------------------------

    def _paths(self) -> list[Path]:
        paths: list[Path] = []
        for folder in self.folders:
            for path in session_files(folder.format or _EVERY_FILE, folder.root):
                fmt = folder.format or self._formats.get(path) or detect(path)
                if fmt is None:
                    continue  # not a session of any agent (yet: an empty file is looked at again)
                self._formats[path] = fmt
                paths.append(path)
        return paths

    def rescan(self) -> None:
        # One look at every process's open files for the whole pass, not one per session.
        self._held = None
        super().rescan()
        self._held = None

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

    def _row(self, path: Path) -> dict[str, Text]:
        return _cells(describe_agent_session(path, self._formats[path], held=self._held_now()))

    def _still_live(self, path: Path) -> bool:
        return False  # read again: live ends with time, a few seconds after the last write

    def _sort(self) -> None:
        # Start times are ISO-8601 UTC, so they sort as text, newest first.
        self.table.sort("started", key=lambda cell: cell.plain, reverse=True)

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
                    self.rescan()
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
            self.rescan()
            await asyncio.sleep(WAKE_MS / 1000)


class _Cell(Text):
    """A cell of one line, whose width is its length: the table measures every cell it is given, and
    a Text measures itself for wrapping, which a listing of thousands cannot wait for."""

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        width = self.cell_len
        return Measurement(width, width)


@functools.lru_cache(maxsize=4096)
def _project(project: str | None) -> str:
    return shorten(project_label(project, 40), 40)  # many sessions share a project


def _cells(info: AgentSession) -> dict[str, Text]:
    duration = f"{info.duration_s:.1f}s" if info.duration_s is not None else "-"
    started = info.started.replace("T", " ")[:19] if info.started else "-"
    lines = str(info.lines) if info.exact else f"~{info.lines}"
    tokens = str(info.tokens) if info.tokens_exact else f"~{info.tokens}"
    state = info.state
    values = {
        "agent": _Cell(info.agent),
        "id": _Cell(shorten(info.id, _ID_WIDTH)),
        "started": _Cell(shorten(started, 19)),
        "lines": _Cell(lines, justify="right"),
        "duration": _Cell(duration, justify="right"),
        "tokens": _Cell(tokens, justify="right"),
        "state": _Cell(shorten(state, 20), style=_STATE_STYLE.get(state, _UNKNOWN_STATE)),
        "project": _Cell(_project(info.project)),
    }
    return {column: values[column] for column in strings.AGENT_COLUMNS}
