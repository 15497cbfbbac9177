"""Small modal dialogs: a question with yes/no, a message with OK, an event as raw JSON."""

from __future__ import annotations

import json
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ...journal.events import Event, event_type, to_builtins
from .. import strings
from ..text import visible_lines


class Confirm(ModalScreen[bool]):
    """A yes/no question; Enter or y says yes, Esc or n says no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__(classes="dialog")
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text("\n".join(visible_lines(self.question))), id="question")
            with Horizontal(id="buttons"):
                yield Button("Yes (y)", variant="primary", id="yes")
                yield Button("No (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class Notice(ModalScreen[None]):
    """A message a person reads and closes (Enter or Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]

    def __init__(self, message: str) -> None:
        super().__init__(classes="dialog")
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text("\n".join(visible_lines(self.message))), id="question")
            with Horizontal(id="buttons"):
                yield Button("OK", variant="primary", id="ok")

    def on_mount(self) -> None:
        self.query_one("#ok", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


class RawEvent(ModalScreen[None]):
    """One event as pretty JSON, exactly the fields the journal holds."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,r", "close", "Close")]

    def __init__(self, event: Event) -> None:
        super().__init__(classes="dialog")
        self.event = event

    def compose(self) -> ComposeResult:
        pretty = json.dumps(to_builtins(self.event), indent=2, ensure_ascii=False)
        title = strings.RAW_TITLE.format(seq=self.event.seq, type=event_type(self.event))
        with Vertical(id="dialog", classes="raw"):
            yield Static(Text("\n".join(visible_lines(title))), id="title")
            with VerticalScroll(id="json"):
                yield Static(Text("\n".join(visible_lines(pretty))))

    def on_mount(self) -> None:
        self.query_one("#json").focus()

    def action_close(self) -> None:
        self.dismiss(None)
