"""The fork picker: the clean fork points of a session in an OptionList; Enter picks one."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...journal.forking import ForkPoint
from .. import strings
from ..text import shorten


class ForkPicker(ModalScreen[ForkPoint | None]):
    """Dismissed with the chosen point, or None on Esc."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Back")]

    def __init__(self, session: str, points: list[ForkPoint], *, pick: bool) -> None:
        super().__init__(classes="dialog")
        self.session = session
        self.points = points
        self.pick = pick

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="picker"):
            yield Static(Text(strings.FORK_TITLE.format(session=shorten(self.session, 40))), id="title")
            if self.points:
                yield OptionList(*(Option(_prompt(p), id=str(p.seq)) for p in self.points), id="points")
            else:
                yield Static(Text(strings.NO_FORK_POINTS), id="empty")
            yield Static(Text(strings.PICK_HELP if self.pick else strings.FORK_HELP), id="help")

    def on_mount(self) -> None:
        if self.points:
            options = self.query_one(OptionList)
            options.highlighted = len(self.points) - 1
            options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.points[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)


def _prompt(point: ForkPoint) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{point.seq:>6}  ", "bold")
    text.append(f"{point.role}: ", "dim")
    text.append(shorten(point.preview, 200))
    return text
