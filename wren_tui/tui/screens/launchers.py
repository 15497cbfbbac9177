"""The screens the session screen opens over itself: the raw lines, lineage, beside the parent, export, replay."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.dom import DOMNode
from textual.message import Message as TextualMessage

from ...journal.events import event_type
from .. import strings
from ..session_reader import SessionReader
from ..sources import ForeignSource, SessionSource
from ..timeline import Timeline
from .dialogs import RAW_BYTES, RawLines
from .export import ExportDialog
from .lineage import LineageScreen
from .side_by_side import SideBySide


class ReplayWanted(TextualMessage):
    """A session asks for its replay (its lines up to `end`): the app pushes the replay screen over it.

    The replay screen is built on the session screen, so only the app imports it.
    """

    def __init__(self, source: SessionSource, end: int, timeline: Timeline) -> None:
        super().__init__()
        self.source = source
        self.end = end
        self.timeline = timeline


class Launchers:
    """Each opens its screen from what `reader` holds, or says why it cannot."""

    @property
    def app(self) -> App[object]:
        return self.screen.app

    def __init__(self, screen: DOMNode, reader: SessionReader, open_session: Callable[[Path], None]) -> None:
        self.screen = screen
        self.reader = reader
        self.open_session = open_session  # a relative's session screen, from the lineage screen

    def raw(self, position: int) -> None:
        """The item's line (a partial reply: its lines) as its bytes are in the journal."""
        reader = self.reader
        timeline, source = reader.timeline, reader.source
        if not 0 <= position < len(timeline) or not reader.is_open:
            self.app.notify(strings.NO_EVENT, timeout=2)
            return
        start, end = timeline.starts[position], timeline.ends[position]
        data = source.read(start, min(end - start, RAW_BYTES))
        event = timeline.event(position)
        clip = timeline.clips.get(position)
        if isinstance(source, ForeignSource):
            title = strings.RAW_TITLE_FOREIGN.format(seq=event.seq, agent=source.agent, type=event_type(event))
        elif timeline.kind(position) == "partial" and clip is not None and clip.last_seq not in (None, event.seq):
            title = strings.RAW_TITLE_PARTIAL.format(first=event.seq, last=clip.last_seq)
        elif timeline.kind(position) == "partial":
            title = strings.RAW_TITLE.format(seq=event.seq, type="delta: a partial reply")
        else:
            title = strings.RAW_TITLE.format(seq=event.seq, type=event_type(event))
        self.app.push_screen(RawLines(title, data, end - start, start))

    def _folders(self, path: Path) -> list[Path]:
        """Where relatives are looked for: the session's own folder, and the folder the viewer browses."""
        folders = [path.parent]
        browsed = getattr(self.app, "folder", None)
        if isinstance(browsed, Path) and browsed.resolve() != path.parent.resolve():
            folders.append(browsed)
        return folders

    def lineage(self) -> None:
        path = self.reader.source.path
        if path is None:
            self.app.notify(strings.NO_LINEAGE, timeout=3)
            return
        self.app.push_screen(LineageScreen(path, self._folders(path), open_session=self.open_session))

    def beside_parent(self) -> None:
        path = self.reader.source.path
        if path is None:
            self.app.notify(strings.NO_LINEAGE, timeout=3)
            return
        self.app.push_screen(SideBySide(path, self._folders(path)))

    def export(self) -> None:
        path = self.reader.source.path
        if path is None:
            self.app.notify(strings.NO_EXPORT, timeout=3)
            return
        self.app.push_screen(ExportDialog(path))

    def replay(self) -> None:
        """Ask the app for the replay of a finished session, read whole."""
        reader = self.reader
        if reader.indexing is not None:
            self.app.notify(strings.REPLAY_INDEXING, timeout=3)
            return
        if reader.writer_alive:
            self.app.notify(strings.REPLAY_LIVE, timeout=3)
            return
        if not reader.is_open or not len(reader.timeline) or reader.lines is None:
            self.app.notify(strings.REPLAY_EMPTY, timeout=3)
            return
        self.app.post_message(ReplayWanted(reader.source.share(), reader.lines.offset, reader.timeline))
