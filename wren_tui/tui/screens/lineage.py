"""The lineage of a session: its ancestors above it, its forks below it, each one Enter away.

Ancestors come from the session's own fork events (journal/lineage.py), so one whose journal is
gone is still listed, said to be missing; descendants are the sessions of the folders looked in
whose fork event names it. Both are read off the UI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...journal.errors import JournalError
from ...journal.lineage import Lineage, Relative, lineage
from .. import strings
from ..text import shorten, visible

OpenSession = Callable[[Path], None]


class LineageScreen(ModalScreen[None]):
    """Ancestors (up), the session, its descendants (down); Enter opens the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,g", "close", "Back")]
    DEFAULT_CSS = """
    LineageScreen #dialog { width: 100; }
    LineageScreen #relatives { height: auto; max-height: 24; }
    """

    def __init__(self, path: Path, folders: Sequence[Path], *, open_session: OpenSession) -> None:
        super().__init__(classes="dialog")
        self.path = path
        self.folders = list(folders)
        self.open_session = open_session
        self.lineage: Lineage | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(strings.LINEAGE_TITLE.format(session=shorten(self.path.stem, 40))), id="title")
            yield OptionList(id="relatives")
            yield Static(Text(strings.LINEAGE_HELP), id="help")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.add_option(Option(Text(strings.READING_LINEAGE), disabled=True))
        options.focus()
        self._read()

    @work(thread=True, exclusive=True)
    def _read(self) -> None:
        try:
            found: Lineage | str = lineage(self.path, self.folders)
        except (JournalError, OSError) as exc:
            found = str(exc)
        self.app.call_from_thread(self._show, found)

    def _show(self, found: Lineage | str) -> None:
        if not self.is_running:
            return
        options = self.query_one(OptionList)
        options.clear_options()
        if isinstance(found, str):
            options.add_option(Option(Text(visible(found)), disabled=True))
            return
        self.lineage = found
        for relative in found.relatives:
            options.add_option(Option(_prompt(relative), id=relative.id, disabled=relative.missing))
        options.highlighted = next(i for i, r in enumerate(found.relatives) if r.depth == 0)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if self.lineage is None:
            return
        relative = self.lineage.relatives[event.option_index]
        if relative.depth == 0 or relative.path is None:
            self.dismiss(None)
            return
        path = relative.path
        self.dismiss(None)
        self.open_session(path)

    def action_close(self) -> None:
        self.dismiss(None)


def _prompt(relative: Relative) -> Text:
    """One relative: indented by its distance, with where it was forked, marked if it is this session or missing."""
    text = Text(no_wrap=True, overflow="ellipsis")
    depth = relative.depth
    if depth < 0:
        text.append(strings.LINEAGE_UP.format(n=-depth), "dim")
    elif depth == 0:
        text.append(strings.LINEAGE_HERE, "bold")
    else:
        text.append("  " * (depth - 1) + "└ ", "dim")
    text.append(visible(relative.id), "bold" if depth == 0 else "")
    if relative.at_seq is not None:
        text.append(strings.LINEAGE_AT.format(seq=relative.at_seq), "dim")
    if relative.missing:
        text.append(strings.LINEAGE_MISSING, "italic yellow")
    return text
