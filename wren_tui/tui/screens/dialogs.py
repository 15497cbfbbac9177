"""Small modal dialogs: a question with yes/no, a folder to take or edit, a message with OK, a line as written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static
from textual.widgets.button import ButtonVariant

from .. import strings
from ..text import visible, visible_lines

_R = TypeVar("_R")


class _Dialog(ModalScreen[_R]):
    """A text in the middle of the screen above its buttons (label, id, variant), the first of them focused."""

    BUTTONS: ClassVar[tuple[tuple[str, str, ButtonVariant], ...]]

    def __init__(self, text: str) -> None:
        super().__init__(classes="dialog")
        self._text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text("\n".join(visible_lines(self._text))), id="question")
            with Horizontal(id="buttons"):
                for label, name, variant in self.BUTTONS:
                    yield Button(label, variant=variant, id=name)

    def on_mount(self) -> None:
        self.query_one(f"#{self.BUTTONS[0][1]}", Button).focus()


class Confirm(_Dialog[bool]):
    """A yes/no question; Enter or y says yes, Esc or n says no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]
    BUTTONS = (("Yes (y)", "yes", "primary"), ("No (n)", "no", "default"))

    def __init__(self, question: str) -> None:
        super().__init__(question)
        self.question = question

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class AskFolder(ModalScreen[Path | None]):
    """A question above a folder's path, offered and editable; Enter answers with the folder, Esc with None.

    The folder is checked before the dialog closes: a name is needed, and a file or a folder with anything in
    it is refused where it is typed (the one writing the folder checks again: this only spares a round trip).
    A relative name is taken from the viewer's working folder, as the command line takes `--workspace`.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, folder: Path) -> None:
        super().__init__(classes="dialog")
        self.question = question
        self.offered = folder

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text("\n".join(visible_lines(self.question))), id="question")
            yield Input(str(self.offered), id="folder")
            yield Static(Text(strings.FOLDER_HELP), id="help")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        typed = event.value.strip()
        if not typed:
            self.notify(strings.NO_FOLDER, severity="warning", timeout=4)
            return
        folder = Path(os.path.abspath(Path(os.path.expanduser(typed))))
        try:
            used = folder.exists() and (not folder.is_dir() or any(folder.iterdir()))
        except OSError as exc:  # a name too long, a folder not ours to look in: said here, the viewer kept
            why = (exc.strerror or str(exc)).lower()
            said = strings.FOLDER_UNUSABLE.format(folder=visible(str(folder)), why=why)
            self.notify(said, severity="warning", timeout=6)
            return
        if used:
            self.notify(strings.FOLDER_USED.format(folder=visible(str(folder))), severity="warning", timeout=6)
            return
        self.dismiss(folder)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Notice(_Dialog[None]):
    """A message a person reads and closes (Enter or Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close")]
    BUTTONS = (("OK", "ok", "primary"),)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


class RawLines(ModalScreen[None]):
    """An item's journal lines exactly as written (their bytes, control characters made visible), then pretty.

    The pretty view keeps every member in the order written, unknown ones and `crc` included, and
    each number as written. A line longer than RAW_BYTES shows its start.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,r", "close", "Close")]

    def __init__(self, title: str, data: bytes, size: int, offset: int) -> None:
        super().__init__(classes="dialog")
        self.heading = title
        self.data = data  # the first bytes of the lines (all of them up to RAW_BYTES)
        self.byte_size = size
        self.byte_offset = offset

    def compose(self) -> ComposeResult:
        whole = len(self.data) == self.byte_size
        lines = self.data.decode("utf-8", errors="replace").split("\n")
        if whole:
            lines.pop()  # the empty rest after the last newline, the line's commit mark
        written = [*(visible(line) for line in lines)]
        if not whole:
            written.append(strings.RAW_MORE.format(more=f"{self.byte_size - len(self.data):,}"))
        where = strings.RAW_WHERE.format(
            start=self.byte_offset, end=self.byte_offset + self.byte_size, size=f"{self.byte_size:,}"
        )
        with Vertical(id="dialog", classes="raw"):
            yield Static(Text("\n".join(visible_lines(self.heading))), id="title")
            with VerticalScroll(id="json"):
                yield Static(Text(where), classes="raw-label")
                yield Static(Text("\n".join(written)), id="written")
                yield Static(Text(strings.RAW_PRETTY), classes="raw-label")
                yield Static(Text("\n".join(visible_lines(self._pretty(lines, whole)))), id="pretty")

    def _pretty(self, lines: list[str], whole: bool) -> str:
        if not whole or self.byte_size > PRETTY_BYTES:
            return strings.RAW_NO_PRETTY
        try:
            return "\n".join(_pretty(json.loads(line, **_AS_WRITTEN)) for line in lines)
        except ValueError:
            return strings.RAW_NOT_JSON

    def on_mount(self) -> None:
        self.query_one("#json").focus()

    def action_close(self) -> None:
        self.dismiss(None)


RAW_BYTES = 1 << 16  # the raw view shows this much of a line
PRETTY_BYTES = 1 << 16  # and pretty-prints lines up to this size


class _Members(list[tuple[str, Any]]):
    """A JSON object's members in the order written, repeated names kept."""


class _Number(str):
    """A JSON number as written (1.0 stays 1.0, 1e400 stays 1e400)."""


_AS_WRITTEN: dict[str, Any] = {"object_pairs_hook": _Members, "parse_float": _Number, "parse_int": _Number}


def _pretty(value: Any, depth: int = 0) -> str:
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, _Members):
        members = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_pretty(v, depth + 1)}" for k, v in value]
        return "{\n" + ",\n".join(members) + f"\n{pad}}}" if members else "{}"
    if isinstance(value, list):
        items = [f"{inner}{_pretty(v, depth + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]" if items else "[]"
    if isinstance(value, _Number):
        return str(value)
    return json.dumps(value, ensure_ascii=False)
