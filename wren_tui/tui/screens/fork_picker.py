"""The fork picker: the clean fork points of a session in an OptionList; Enter picks one.

For a Wren journal it also shows, beside each point, how many files changed since it, and the
diff of the highlighted point's files to the last snapshot, both read from the snapshot store by
the viewer's child (`tui/write_child.py`); `f` forks with the files (the session screen asks the
child for `fork_with_files`), `r` rewinds the session there in place (`wren rewind`, its preview
shown first; the viewer writes nothing itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...journal.forking import ForkPoint
from ...journal.visible import visible
from .. import strings
from ..text import shorten
from ..write import Diff
from ..write_child import diff_files, files_changed

_DIFF_LINES = 400


@dataclass(frozen=True)
class WithFiles(ForkPoint):
    """A point chosen to fork with its files (`f` in the picker)."""


@dataclass(frozen=True)
class RewindTo(ForkPoint):
    """A point chosen to rewind the session to, in place (`r` in the picker: `wren rewind` runs it)."""


class ForkPicker(ModalScreen[ForkPoint | None]):
    """Dismissed with the chosen point (a WithFiles for a fork with its files), or None on Esc."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back"),
        Binding("f", "with_files", "Fork with files"),
        Binding("r", "rewind", "Rewind here"),
    ]

    def __init__(self, session: str, points: list[ForkPoint], *, pick: bool, journal: Path | None = None) -> None:
        super().__init__(classes="dialog")
        self.session = session
        self.points = points
        self.pick = pick
        # A Wren journal whose snapshots can be read (by `wren` children); None: another agent's, or --pick.
        self.journal = journal if not pick else None
        self.changed: dict[int, int | None] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="picker"):
            yield Static(Text(strings.FORK_TITLE.format(session=shorten(self.session, 40))), id="title")
            if self.points:
                options = OptionList(*(Option(_prompt(p), id=str(p.seq)) for p in self.points), id="points")
                if self.journal is None:
                    yield options
                else:
                    with Horizontal(id="fork-panes"):
                        yield options
                        with VerticalScroll(id="fork-diff-pane"):
                            yield Static(Text(strings.READING_SNAPSHOTS), id="fork-diff")
            else:
                yield Static(Text(strings.NO_FORK_POINTS), id="empty")
            help_text = strings.PICK_HELP if self.pick else strings.FORK_HELP
            if self.journal is not None:
                help_text = strings.FORK_FILES_HELP
            yield Static(Text(help_text), id="help")

    def on_mount(self) -> None:
        if self.points:
            options = self.query_one(OptionList)
            options.highlighted = len(self.points) - 1
            options.focus()
            if self.journal is not None:
                self._counts(self.journal)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.points[event.option_index])

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.journal is not None and event.option_index < len(self.points):
            self._diff(self.journal, self.points[event.option_index].seq)

    def action_with_files(self) -> None:
        point = self._point_with_files(strings.NO_FILES_AT)
        if point is not None:
            self.dismiss(WithFiles(point.seq, point.role, point.preview))

    def action_rewind(self) -> None:
        point = self._point_with_files(strings.NO_FILES_TO_REWIND)
        if point is not None:
            self.dismiss(RewindTo(point.seq, point.role, point.preview))

    def _point_with_files(self, without: str) -> ForkPoint | None:
        """The highlighted point, if the session's snapshots hold its files; else None, `without` said."""
        if self.journal is None or not self.points:
            return None
        at = self.query_one(OptionList).highlighted
        if at is None:
            return None
        point = self.points[at]
        if self.changed.get(point.seq, 0) is None:
            self.notify(without.format(seq=point.seq), severity="warning", timeout=4)
            return None
        return point

    def action_cancel(self) -> None:
        self.dismiss(None)

    # --- what changed since each point (read by `wren` children, off the UI) --------------

    @work(thread=True, exclusive=True, group="fork-counts")
    def _counts(self, journal: Path) -> None:
        self.app.call_from_thread(self._show_counts, files_changed(journal))

    def _show_counts(self, changed: dict[int, int | None]) -> None:
        if not self.is_running:
            return
        self.changed = changed
        options = self.query_one(OptionList)
        for point in self.points:
            options.replace_option_prompt(str(point.seq), _prompt(point, changed.get(point.seq)))

    @work(thread=True, exclusive=True, group="fork-diff")
    def _diff(self, journal: Path, seq: int) -> None:
        done = diff_files(journal, seq)
        ok = isinstance(done, Diff)
        self.app.call_from_thread(self._show_diff, seq, ok, done.text if isinstance(done, Diff) else done.said)

    def _show_diff(self, seq: int, ok: bool, text: str) -> None:
        if not self.is_running:
            return
        at = self.query_one(OptionList).highlighted
        if at is None or self.points[at].seq != seq:
            return  # another point is highlighted by now: its own diff is on its way
        shown = Text(no_wrap=True, overflow="ellipsis")
        if not ok:
            shown.append(strings.NO_DIFF.format(seq=seq, why=text), "dim")
        elif not text:
            shown.append(strings.FILES_AS_NOW.format(seq=seq), "dim")
        else:
            lines = text.splitlines()
            for line in lines[:_DIFF_LINES]:
                style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
                style = "bold" if line.startswith(("diff --git", "+++", "---")) else style
                shown.append(visible(line) + "\n", style)
            if len(lines) > _DIFF_LINES:
                shown.append(strings.DIFF_CUT.format(n=len(lines) - _DIFF_LINES), "dim")
        self.query_one("#fork-diff", Static).update(shown)


def _prompt(point: ForkPoint, changed: int | None = None) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{point.seq:>6}  ", "bold")
    if changed is not None:
        text.append(f"{strings.CHANGED_SINCE.format(n=changed):>10}  ", "yellow" if changed else "dim")
    if point.compaction:
        # Ahead of the preview, so a long one does not push it out of view.
        text.append(strings.AFTER_COMPACTION.format(seq=point.compaction) + "  ", "cyan")
    text.append(f"{point.role}: ", "dim")
    text.append(shorten(point.preview, 200))
    return text
