"""The export dialog: a format and a file name; the export is written off the UI thread.

In a terminal the file is written where the person says (wren_tui.export: atomically, never over
a journal). In a browser (`wren watch --serve`) it is written to a temporary folder and handed to
the browser as a download, so nothing is left on the serving machine's disk by a reader.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static
from textual.worker import get_current_worker

from ...export import ExportCancelled, ExportRefused, Format, default_name, export_bytes, export_session
from ...journal.errors import JournalError
from .. import strings
from ..text import shorten, visible

_LABELS: dict[Format, str] = {"md": "Markdown (m)", "html": "HTML page (h)", "json": "JSON (j)"}


class ExportDialog(ModalScreen[None]):
    """Choose a format (m, h, j, or a button), edit the name if need be; Enter (or the format's button) writes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("m", "format('md')", "Markdown", show=False),
        Binding("h", "format('html')", "HTML", show=False),
        Binding("j", "format('json')", "JSON", show=False),
    ]

    def __init__(self, journal: Path) -> None:
        super().__init__(classes="dialog")
        self.journal = journal
        self.format: Format = "html"

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(strings.EXPORT_TITLE.format(session=shorten(self.journal.stem, 40))), id="title")
            with Horizontal(id="buttons"):
                for fmt, label in _LABELS.items():
                    yield Button(label, id=f"as-{fmt}", variant="primary" if fmt == self.format else "default")
            yield Input(self._file_name(self.format), id="path")
            yield Static(Text(strings.EXPORT_HELP_WEB if self.app.is_web else strings.EXPORT_HELP), id="help")

    def _file_name(self, fmt: Format) -> str:
        return default_name(self.journal, fmt)  # in the folder the viewer was started from

    def on_mount(self) -> None:
        self.query_one("#as-html", Button).focus()

    def action_format(self, fmt: Format) -> None:
        path = self.query_one("#path", Input)
        if path.value == self._file_name(self.format):
            path.value = self._file_name(fmt)  # a name the person has not edited follows the format
        self.format = fmt
        for each in _LABELS:
            self.query_one(f"#as-{each}", Button).variant = "primary" if each == fmt else "default"
        if isinstance(self.focused, Button):
            self.query_one(f"#as-{fmt}", Button).focus()  # so Enter writes in the format just chosen

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        fmt = next((f for f in _LABELS if event.button.id == f"as-{f}"), None)
        if fmt is not None:
            if fmt == self.format:
                self._write()
            else:
                self.action_format(fmt)

    @on(Input.Submitted, "#path")
    def _submitted(self) -> None:
        self._write()

    def _write(self) -> None:
        self.query_one("#help", Static).update(Text(strings.EXPORTING))
        target = None if self.app.is_web else Path(os.path.expanduser(self.query_one("#path", Input).value))
        self._export(self.format, target)

    @work(thread=True, exclusive=True)
    def _export(self, fmt: Format, target: Path | None) -> None:
        worker = get_current_worker()
        try:
            if target is None:
                name, data, stopped = export_bytes(self.journal, fmt, cancelled=lambda: worker.is_cancelled)
                self.app.call_from_thread(self._deliver, name, data, stopped)
                return
            done = export_session(self.journal, fmt, target, cancelled=lambda: worker.is_cancelled)
        except ExportCancelled:
            return
        except (ExportRefused, JournalError, OSError) as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._written, str(done.path), done.stopped)

    def _deliver(self, name: str, data: bytes, stopped: str | None) -> None:
        import io

        self.app.deliver_binary(io.BytesIO(data), save_filename=name)
        self._written(name, stopped)

    def _written(self, where: str, stopped: str | None) -> None:
        message = strings.EXPORTED.format(path=visible(where))
        if stopped:
            message += " " + strings.EXPORTED_DAMAGED
        self.app.notify(message, timeout=6)
        self.dismiss(None)

    def _failed(self, why: str) -> None:
        if self.is_running:
            self.query_one("#help", Static).update(Text(strings.EXPORT_FAILED.format(reason=visible(why))))

    def action_close(self) -> None:
        self.workers.cancel_all()
        self.dismiss(None)
