"""Another agent's session file (Claude Code, Codex, pi) as search reads it: its lines translated as `wren log` does.

Every line is translated in order by its format (`wren_tui.foreign`), as `wren log` reads the file:
every branch of a tree of entries, the translator's memory kept line by line, and reading stopped
at a line that is not a JSON object (a torn tail: a last line without its newline). Seq is the
line's number; an item's part is its event's place among the line's events, so the viewer opens the
session at the hit as it opens one of these files. A thinking note is searched as role thinking,
like a Wren reply's reasoning. Lines are not skipped by the raw test: a translator may build a text
that is not in the line's bytes as such (blocks joined, a placeholder for an image).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from pathlib import Path

from ..foreign import Format
from ..foreign.base import THINKING
from ..foreign.exported import open_lines
from ..foreign.reader import Translation
from ..journal.events import Event, UnknownEvent
from .query import Query
from .sources import FileSession, Item, Saved, items_of


class ForeignSession(FileSession):
    """One session file of another agent, searched read-only."""

    def __init__(self, path: Path, fmt: Format) -> None:
        super().__init__(path, fmt.session_id(path))
        self._format = fmt
        # The file as it was when listed (sorted newest first): the index compares it with what it read.
        self.looked: os.stat_result | None = None

    @property
    def agent(self) -> str:
        return self._format.name

    def items(self, query: Query) -> Iterator[Item]:
        return self._read(None)

    def resume(self, query: Query, saved: Saved) -> Iterator[Item]:
        return self._read(saved)

    def _read(self, saved: Saved | None) -> Iterator[Item]:
        fd = open_lines(self._path, self._format)
        try:
            if saved is None:
                translator, lineno, good, project = self._format.translator(), 0, 0, None
            else:
                translator, lineno, good, project = pickle.loads(saved.state)
            # Lines, whatever the format: a format read in its own units (a document) is searched by its lines.
            reading = Translation(fd, None, translator, good, lineno)
            for start, line, _data in reading:
                project = line.cwd or project
                for part, event in enumerate(line.events):
                    if part not in line.hidden:
                        yield from _items(event, start, part, project)
            self._stop = reading.ending()
            lineno, good = reading.lineno, reading.offset
            # A session exported into lines (OpenCode, aider) is exported anew from the file each time, so
            # its offsets are no place in the file to go on from: it is read again whole when it changes.
            exported = self._format.export is not None
            self._saved = None if exported else _save(translator, lineno, good, project)
        finally:
            os.close(fd)


def _save(translator: object, lineno: int, good: int, project: str | None) -> Saved | None:
    """What a reading remembers at `good`, or None when a format's translator cannot be kept (read again whole)."""
    try:
        return Saved(good, pickle.dumps((translator, lineno, good, project), protocol=5))
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


def _items(event: Event, offset: int, part: int, project: str | None) -> Iterator[Item]:
    if isinstance(event, UnknownEvent):
        text = event.fields.get("text") if event.type == THINKING else None
        if isinstance(text, str) and text:
            yield Item(event.seq, event.ts, "thinking", "reasoning", text, offset, part, project=project)
        return
    yield from items_of(event, offset, part, project)
