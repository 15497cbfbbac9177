"""The screens the session screen opens over itself: the raw lines, lineage, beside the parent, export, replay."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from textual.app import App
from textual.dom import DOMNode
from textual.message import Message as TextualMessage

from ...journal.compare import Comparison
from ...journal.events import Message, ToolEnd, ToolStart, event_type
from ...sessions import ForeignSource, SessionSource
from ...sessions.local import LocalJournal
from .. import strings
from ..session_reader import SessionReader
from ..text import visible
from ..timeline import Timeline
from .call_lines import CallLines
from .dialogs import RAW_BYTES, RawLines
from .export import ExportDialog
from .lineage import LineageScreen
from .side_by_side import SideBySide, beside_parent


class ReplayWanted(TextualMessage):
    """A session asks for its replay (its lines up to `end`): the app pushes the replay screen over it.

    The replay screen is built on the session screen, so only the app imports it.
    """

    def __init__(self, source: SessionSource, end: int, timeline: Timeline) -> None:
        super().__init__()
        self.source = source
        self.end = end
        self.timeline = timeline


_CHANGING = frozenset({"write_file", "edit_file", "run_command"})
_LOOK_BACK = 10_000  # rows looked back from a call's end or result for its start


class _Call(NamedTuple):
    id: str
    name: str
    seq: int  # its tool_start's, or (another agent's, which journal no start) the reply's that asked for it


def _call_at(timeline: Timeline, position: int, names: frozenset[str] | None) -> _Call | None:
    """The call (one of `names`; None: any) of the row at `position`: its start, its asking reply, its end or result.

    A reply asking for more than one call names the first of `names` it asks for.
    """
    event = timeline.event(position)
    if isinstance(event, ToolStart):
        return _Call(event.id, event.name, event.seq) if names is None or event.name in names else None
    if isinstance(event, Message) and event.message.tool_calls:
        asked = [c for c in event.message.tool_calls if names is None or c.name in names]
        return _Call(asked[0].id, asked[0].name, event.seq) if asked else None
    if isinstance(event, ToolEnd):
        call = event.id
    elif isinstance(event, Message) and event.message.role == "tool" and event.message.tool_call_id:
        call = event.message.tool_call_id
    else:
        return None
    for at in range(position - 1, max(-1, position - _LOOK_BACK), -1):
        found = timeline.event(at)
        if isinstance(found, ToolStart) and found.id == call:
            return _Call(found.id, found.name, found.seq) if names is None or found.name in names else None
        if isinstance(found, Message) and found.message.tool_calls:
            one = next((c for c in found.message.tool_calls if c.id == call), None)
            if one is not None:
                return _Call(one.id, one.name, found.seq) if names is None or one.name in names else None
    return None


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

    def call_lines(self, position: int) -> None:
        """The lines the call at `position` (its start, end or result row) changed, from the snapshot store."""
        reader = self.reader
        timeline, source = reader.timeline, reader.source
        # Another agent's calls have their own names: any call row of theirs gets the sentence that says why not.
        wren = isinstance(source, LocalJournal)
        ok = reader.is_open and 0 <= position < len(timeline)
        start = _call_at(timeline, position, _CHANGING if wren else None) if ok else None
        if start is None:
            self.app.notify(strings.NOT_A_CALL_ROW, timeout=3)
            return
        title = strings.CALL_LINES_TITLE.format(tool=start.name, call=start.id, seq=start.seq)
        if not isinstance(source, LocalJournal):
            agent = source.agent
            why = strings.NO_CALL_SNAPSHOTS_FOREIGN.format(agent=agent) if agent else strings.NO_CALL_SNAPSHOTS_HERE
            self.app.push_screen(CallLines(title, None, start.id, why))
            return
        self.app.push_screen(CallLines(title, source.path, start.id))

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
        """The fork beside its parent, compared in a worker first: a session that is no fork (or whose parent is
        gone) gets a notice saying so, not a screen."""
        path = self.reader.source.path
        if path is None:
            self.app.notify(strings.NO_LINEAGE, timeout=3)
            return
        folders = self._folders(path)
        self.screen.run_worker(
            lambda: self._compared(path, beside_parent(path, folders)), thread=True, exclusive=True, group="beside"
        )

    def _compared(self, path: Path, found: Comparison | str) -> None:
        self.app.call_from_thread(self._beside, path, found)

    def _beside(self, path: Path, found: Comparison | str) -> None:
        if self.app.screen is not self.screen:
            return  # the session was left while it compared
        if isinstance(found, str):
            self.app.notify(visible(found), timeout=5, markup=False)
        else:
            self.app.push_screen(SideBySide(path, found))

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
