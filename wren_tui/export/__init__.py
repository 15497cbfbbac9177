"""Exports of a session: Markdown for a pull request, a self-contained HTML page, JSON of the events as read.

An export reads its journal once, through the journal's reader, and never writes it; the file it
writes is made whole or not at all (see atomic.py) and is never read back as the truth about the
session (the journal stays that). An export of a damaged journal says where reading stopped first.
This package imports only the journal; the command line (`wren export`) and the viewer call it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from ..journal.store import SUFFIX, session_id_of
from ..journal.targets import replaceable
from ..journal.verdict import Stop
from .atomic import REPLACES_ONLY, AtomicOutput, ExportRefused, scratch_folder
from .reading import ExportCancelled, read_session, stop_sentence

Format = Literal["md", "html", "json", "atif"]
FORMATS: tuple[Format, ...] = get_args(Format)

__all__ = [
    "FORMATS",
    "ExportCancelled",
    "ExportRefused",
    "Exported",
    "Format",
    "default_name",
    "export_bytes",
    "export_session",
]


@dataclass(frozen=True)
class Exported:
    path: Path
    # Where and why reading stopped, when the journal could not be read to its end (the export says so too).
    stop: Stop | None

    @property
    def stopped(self) -> str | None:
        """The export's own sentence for where reading stopped (None: the journal was read to its end)."""
        return None if self.stop is None else stop_sentence(self.stop)


def default_name(journal: Path, fmt: Format) -> str:
    return f"{session_id_of(journal)}.{_SUFFIXES.get(fmt, fmt)}"


# The file name's ending for a format, where it is not the format's name.
_SUFFIXES = {"atif": "atif.json"}


def target(journal: Path, fmt: Format, out: Path | None) -> Path:
    """Where the export goes: `out`, a file named for the session inside `out` if it is a folder, or here.

    Never the journal itself, never a name ending in .jsonl, which would be taken for a journal, and
    never anything but a regular file (`journal.targets`: the rename would replace a FIFO or a device).
    """
    path = Path(default_name(journal, fmt)) if out is None else out
    if path.is_dir():
        path = path / default_name(journal, fmt)
    if path.name.endswith(SUFFIX):
        raise ExportRefused(
            f"{path}: an export is never named .jsonl (it would be taken for a journal); choose another name"
        )
    if path.exists() and path.resolve() == journal.resolve():
        raise ExportRefused(f"{path}: that is the journal itself; an export never writes over it")
    replaceable(path, advice=REPLACES_ONLY)  # a folder, link, FIFO, device or socket: refused
    return path


def export_session(
    journal: Path, fmt: Format, out: Path | None = None, *, cancelled: Callable[[], bool] | None = None
) -> Exported:
    """Export the session at `journal` as `fmt` to `out` (see `target`); raises ExportRefused with why."""
    # The writers load only when an export is made: `wren run` loads this package for ExportRefused alone.
    from . import html, markdown
    from .asjson import write_json

    path = target(journal, fmt, out)
    output = AtomicOutput(path, _mode_of(journal))
    try:
        if fmt == "json":
            return Exported(path, write_json(journal, output))
        if fmt == "atif":
            from .atif import write_atif

            return Exported(path, write_atif(journal, output))
        if fmt == "html":
            reading = read_session(journal, html.HtmlConversation(output), cancelled)
            output.finish(html.head(reading), html.FOOT)
        else:
            reading = read_session(journal, markdown.MarkdownConversation(output), cancelled)
            output.finish(markdown.head(reading))
    finally:
        output.close()
    return Exported(path, reading.verdict.stop)


def _mode_of(journal: Path) -> int:
    """The export's permissions: the journal's read and write bits (an export of a 0600 journal is 0600)."""
    try:
        return os.stat(journal).st_mode & 0o666
    except OSError:
        return 0o600  # read_session says why it cannot be read; the narrowest mode meanwhile


def export_bytes(
    journal: Path, fmt: Format, *, cancelled: Callable[[], bool] | None = None
) -> tuple[str, bytes, str | None]:
    """The export as bytes, with its file name and where reading stopped: for a browser to download.

    It is made as a file is (the same code), in a private temporary folder that is then removed.
    """
    with scratch_folder() as folder:
        done = export_session(journal, fmt, folder, cancelled=cancelled)
        return done.path.name, done.path.read_bytes(), done.stopped
