"""The lines one call changed (`b` on a write, edit or command row): each file it touched, its new lines numbered.

Read from the session's snapshot store (the snapshot before the call and the next one) by the same
`wren blame --call` a person types (`snapshots.blame.call_lines`), run as a child: the viewer opens
nothing in the store itself and writes nothing. Where the store cannot say (no snapshot, thinned,
not taken yet, another agent's session), the screen says so in one sentence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...journal.visible import visible
from .. import strings
from ..wren_child import run_wren

_SHOWN = 2000  # lines shown at most; the count says the rest


class CallLines(ModalScreen[None]):
    """The files a call touched and the lines it added or changed; `why` instead when the store cannot say."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,b", "close", "Close")]

    def __init__(self, title: str, journal: Path | None, call: str, why: str = "") -> None:
        super().__init__(classes="dialog")
        self.heading = title
        self.journal = journal
        self.call = call
        self.why = why  # said at once, no child run (another agent's session)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="raw"):
            yield Static(Text(visible(self.heading)), id="title")
            with VerticalScroll(id="json"):
                yield Static(Text(self.why or strings.READING_SNAPSHOTS), id="call-lines")

    def on_mount(self) -> None:
        self.query_one("#json").focus()
        if not self.why and self.journal is not None:
            self._read(self.journal, self.call)

    @work(thread=True, exclusive=True, group="call-lines")
    def _read(self, journal: Path, call: str) -> None:
        done = run_wren(["blame", "--dir", str(journal.parent), "--session", str(journal), "--call", call, "--json"])
        self.app.call_from_thread(self._show, done.ok, done.stdout if done.ok else done.said)

    def _show(self, ok: bool, text: str) -> None:
        if not self.is_running:
            return
        shown = self.query_one("#call-lines", Static)
        if not ok:
            shown.update(Text(_sentence(text)))
            return
        try:
            found = json.loads(text)
        except ValueError:
            shown.update(Text(strings.CALL_LINES_UNREADABLE))
            return
        shown.update(render(found))

    def action_close(self) -> None:
        self.dismiss(None)


def _sentence(said: str) -> str:
    """The child's sentence without the session and call it names (the title says them)."""
    return said.split("): ", 1)[1] if "): " in said else said


def render(found: dict[str, Any]) -> Text:
    """Each file: its path, what happened to it and its counts, then its new lines, numbered."""
    text = Text()
    files = found.get("files") or []
    if not files:
        text.append(strings.CALL_CHANGED_NOTHING)
        return text
    left = _SHOWN
    for at, file in enumerate(files):
        if at:
            text.append("\n")
        lines = file.get("lines") or []
        counts = strings.CALL_BINARY if file.get("binary") else f"+{len(lines)} -{file.get('removed', 0)}"
        text.append(visible(str(file.get("path", ""))), style="bold")
        text.append(f"  {file.get('status', '')}, {counts}\n", style="dim")
        for line in lines[:left]:
            text.append(f"{line.get('line', 0):>6} ", style="dim")
            text.append("│ ", style="dim")
            text.append(visible(str(line.get("text", ""))) + "\n", style="green")
        if len(lines) > left:
            text.append(strings.CALL_MORE_LINES.format(more=f"{len(lines) - left:,}") + "\n", style="dim")
        left = max(0, left - len(lines))
    return text
