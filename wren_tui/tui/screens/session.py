"""The session screen: one journal, live: conversation, tool timings, status line, fork picker."""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, Static
from textual.worker import get_current_worker

from ...journal.events import Message
from ...journal.fork import ForkPoint, fork, preview
from ...journal.index import LineScanner, tail_start
from ...journal.reader import JournalError, open_for_reading
from ...journal.store import lock_holder, session_id_of
from .. import strings
from ..search import find
from ..tailing import WatchMode, watch_folder
from ..timeline import Timeline
from ..widgets.conversation import ConversationView
from ..widgets.status_line import Status, StatusLine
from ..widgets.tool_timings import ToolTimings
from .dialogs import Confirm, Notice, RawEvent
from .fork_picker import ForkPicker

Clock = Callable[[], datetime]


def _busy(indexing: float | None, searching: float | None) -> str | None:
    if searching is not None:
        return strings.SEARCHING.format(percent=int(searching * 100))
    if indexing is not None:
        return strings.INDEXING.format(percent=int(indexing * 100))
    return None


# Bytes read before the first frame; the rest of a bigger journal is indexed in the background.
TAIL_WINDOW = 1 << 20
# Chunks (of journal.index.CHUNK bytes) between two progress reports of the background index.
_PROGRESS_EVERY = 16


@dataclass(frozen=True)
class Picked:
    """What `wren watch --pick` prints on exit."""

    session: str
    seq: int


class SessionScreen(Screen[None]):
    CSS_PATH = "session.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "toggle_follow", "Follow"),
        Binding("l,end", "live", "Live"),
        Binding("e", "next_error", "Next error"),
        Binding("E", "prev_error", "Prev error", show=False),
        Binding("t", "next_tool", "Next tool"),
        Binding("T", "prev_tool", "Prev tool", show=False),
        Binding("r", "raw", "Raw"),
        Binding("/", "search", "Search"),
        Binding("n", "search_next", "Next match", show=False),
        Binding("N", "search_prev", "Prev match", show=False),
        Binding("p", "fork_points", "Fork points"),
        Binding("tab", "app.focus_next", "Switch pane", show=False),
        Binding("escape", "back", "Back", show=False),
    ]

    def __init__(self, path: Path, *, clock: Clock, pick: bool = False, watch_mode: WatchMode = "auto") -> None:
        super().__init__()
        # Absolute, because the watcher reports absolute paths.
        self.path = Path(os.path.abspath(path))
        self.session = session_id_of(path)
        self.clock = clock
        self.pick = pick
        self.watch_mode = watch_mode
        self.timeline = Timeline()
        self.writer_alive = False
        self.unseen = 0
        self._fd: int | None = None
        self._inode: tuple[int, int] | None = None
        # Reads on from the end of what the timeline holds.
        self._scanner: LineScanner | None = None
        # Bumped when the journal is opened again, so a background result for the old file is dropped.
        self._generation = 0
        self._indexing: float | None = None  # how much of the whole index is built, while it is
        self._searching: float | None = None
        self._stopped: str | None = None
        self._cannot_read: str | None = None
        self._query = ""

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield ConversationView(self.timeline, id="conversation")
        yield Static(strings.TOOLS_TITLE, id="tools-title", markup=False)
        yield ToolTimings(self.timeline, self.clock, id="tools")
        yield Input(placeholder=strings.SEARCH_PLACEHOLDER, id="search")
        yield Footer()

    @property
    def conversation(self) -> ConversationView:
        return self.query_one(ConversationView)

    @property
    def tools(self) -> ToolTimings:
        return self.query_one(ToolTimings)

    def on_mount(self) -> None:
        self.title = self.session
        self._open_journal()
        self.conversation.focus()
        self.set_interval(1.0, self._tick)
        self._follow_journal()
        self.watch(self.conversation, "follow", self._follow_changed, init=False)
        if self.pick:
            self.call_after_refresh(self.action_fork_points)

    def on_unmount(self) -> None:
        self._close_journal()

    # --- reading and tailing --------------------------------------------------------------

    def _open_journal(self) -> None:
        """Read the journal's tail now and show it; index the whole of it in the background."""
        self._close_journal()
        self._generation += 1
        self._indexing = None
        self._cannot_read = None
        try:
            fd = open_for_reading(self.path)
        except JournalError as exc:
            # A missing journal may still arrive (the watcher sees it); any other refusal is said.
            if os.path.lexists(self.path):
                self._cannot_read = str(exc)
            self._install(Timeline(), None)
            return
        st = os.fstat(fd)
        self._fd, self._inode = fd, (st.st_dev, st.st_ino)
        start = tail_start(fd, st.st_size, TAIL_WINDOW)
        timeline = Timeline(fd)
        scanner = LineScanner(self.path, fd, start)
        for chunk in scanner.chunks():
            timeline.fold(chunk)
        self._indexing = 0.0 if start else None
        self._install(timeline, scanner)
        if start:
            # After the first frame: the worker holds the GIL for long stretches while it decodes.
            self.call_after_refresh(self._build_index, self._generation, fd, scanner.offset)

    def _close_journal(self) -> None:
        self.workers.cancel_group(self, "index")
        self.workers.cancel_group(self, "search")
        if self._fd is not None:
            os.close(self._fd)
        self._fd, self._inode, self._scanner = None, None, None

    def _install(self, timeline: Timeline, scanner: LineScanner | None) -> None:
        self.timeline, self._scanner = timeline, scanner
        self._stopped = scanner.reason if scanner else None
        self.unseen = 0
        self.conversation.timeline = self.tools.timeline = timeline
        self.conversation.reset()
        self.tools.rows_changed()
        self._check_writer()
        self._show_status()

    @work(thread=True, exclusive=True, group="index")
    def _build_index(self, generation: int, fd: int, until: int) -> None:
        """The whole index from the first byte to `until` (where the tail read stopped), off the UI."""
        worker = get_current_worker()
        own = os.dup(fd)  # the screen may close its descriptor (a replaced journal) while this runs
        try:
            timeline = Timeline()
            scanner = LineScanner(self.path, own, 0)
            for count, chunk in enumerate(scanner.chunks(stop=until), 1):
                timeline.fold(chunk)
                if worker.is_cancelled:
                    return
                if count % _PROGRESS_EVERY == 0:
                    self.app.call_from_thread(self._index_progress, generation, scanner.offset / until)
        finally:
            os.close(own)
        self.app.call_from_thread(self._index_built, generation, timeline, scanner)

    def _index_progress(self, generation: int, done: float) -> None:
        if generation == self._generation:
            self._indexing = done
            self._show_status()

    def _index_built(self, generation: int, timeline: Timeline, built: LineScanner) -> None:
        """Put the whole index in place of the tail's, on the same event, and read what came since."""
        if generation != self._generation or self._fd is None:
            return
        old, view = self.timeline, self.conversation
        timeline.fd = self._fd
        scanner = LineScanner(self.path, self._fd, built.offset, first_line=built.lineno, after_seq=built.prev_seq)
        scanner.reason = built.reason  # a bad line before the tail ends the journal there, tail or not
        for chunk in scanner.chunks():
            timeline.fold(chunk)
        following, cursor = view.follow, view.cursor
        timeline.expanded = {p for i in old.expanded if (p := timeline.position_at(old.starts[i])) is not None}
        self._indexing = None
        self._install(timeline, scanner)
        if not following and 0 <= cursor < len(old):
            position = timeline.position_at(old.starts[cursor])
            if position is not None:
                view.select(position)

    @work(exclusive=True, group="tail")
    async def _follow_journal(self) -> None:
        await watch_folder(self.path.parent, self._changed, self.watch_mode)

    async def _changed(self, paths: set[Path]) -> None:
        # An empty set means "re-read to be sure"; otherwise only changes to our journal matter.
        if paths and self.path not in paths:
            return
        self.read_new()

    def read_new(self) -> None:
        """Read the lines appended since the last read; open the journal again if it shrank or was replaced."""
        try:
            st = os.stat(self.path)
        except OSError:
            return
        scanner = self._scanner
        if scanner is None or (st.st_dev, st.st_ino) != self._inode or st.st_size < scanner.offset:
            self._open_journal()
            return
        if scanner.reason is not None:
            # Look at the stopping line again: a writer reopening the journal moves a torn tail aside.
            scanner = self._scanner = LineScanner(
                self.path, scanner.fd, scanner.offset, first_line=scanner.lineno, after_seq=scanner.prev_seq
            )
        timeline = self.timeline
        first, before = len(timeline), timeline.events
        for chunk in scanner.chunks():
            timeline.fold(chunk)
        if timeline.events != before or scanner.reason != self._stopped:
            self._apply(first, timeline.events - before, scanner.reason)

    def _apply(self, first: int, added: int, reason: str | None) -> None:
        self._stopped = reason
        conversation = self.conversation
        conversation.items_added(first)
        if not conversation.follow:
            self.unseen += added
        self.tools.rows_changed()
        self._check_writer()
        self._show_status()

    # --- status ---------------------------------------------------------------------------

    def _tick(self) -> None:
        self._check_writer()
        self._show_status()
        self.tools.refresh()

    def _check_writer(self) -> None:
        self.writer_alive = lock_holder(self.path) is not None
        if self.is_mounted:
            self.tools.writer_alive = self.writer_alive

    def _integrity(self) -> str | None:
        if self._cannot_read is not None:
            return self._cannot_read
        if self._stopped is not None:
            return f"stopped at {self._stopped}"
        if self.writer_alive:
            return None
        # A partial last line with no writer left to finish it is a torn tail.
        scanner = self._scanner
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return None
        if scanner is not None and size > scanner.offset:
            return strings.STOPPED_AT.format(line=scanner.lineno + 1, reason=strings.TORN_WAITING)
        return None

    def _show_status(self) -> None:
        follow = self.conversation.follow
        mode = (strings.LIVE if follow else strings.PAUSED) if self.writer_alive else strings.ENDED
        self.query_one(StatusLine).status = Status(
            session=self.session,
            events=self.timeline.events,
            tokens=self.timeline.tokens,
            age_s=self.timeline.seconds_since_last(self.clock()),
            mode=mode,
            unseen=0 if follow else self.unseen,
            integrity=self._integrity(),
            busy=_busy(self._indexing, self._searching),
        )

    def _follow_changed(self, follow: bool) -> None:
        if follow:
            self.unseen = 0
        self._show_status()

    # --- navigation -----------------------------------------------------------------------

    def action_toggle_follow(self) -> None:
        if self.conversation.follow:
            self.conversation.pause()
        else:
            self.conversation.jump_to_live()

    def action_live(self) -> None:
        self.conversation.jump_to_live()
        self.conversation.focus()

    def _jump(self, positions: array[int], forward: bool, what: str) -> None:
        cursor = self.conversation.cursor
        if forward:
            at = bisect_right(positions, cursor)
            target = positions[at] if at < len(positions) else None
        else:
            at = bisect_left(positions, cursor)
            target = positions[at - 1] if at > 0 else None
        if target is None:
            self.notify(strings.NO_MORE.format(what=what), timeout=2)
            return
        self.conversation.select(target)
        self.conversation.focus()

    def action_next_error(self) -> None:
        self._jump(self.timeline.error_items, True, "errors")

    def action_prev_error(self) -> None:
        self._jump(self.timeline.error_items, False, "errors")

    def action_next_tool(self) -> None:
        self._jump(self.timeline.tool_items, True, "tool calls")

    def action_prev_tool(self) -> None:
        self._jump(self.timeline.tool_items, False, "tool calls")

    @on(ToolTimings.Chosen)
    def _show_call(self, message: ToolTimings.Chosen) -> None:
        row = message.row
        target = row.start_item if row.start_item is not None else row.asked_item
        if target is not None:
            self.conversation.select(target)
            self.conversation.focus()

    def action_raw(self) -> None:
        event = self.conversation.selected_event
        if event is None:
            self.notify(strings.NO_EVENT, timeout=2)
            return
        self.app.push_screen(RawEvent(event))

    def action_back(self) -> None:
        search = self.query_one("#search", Input)
        if search.has_class("-shown"):
            search.remove_class("-shown")
            self.conversation.focus()
        elif len(self.app.screen_stack) > 2:
            self.dismiss(None)

    # --- search ---------------------------------------------------------------------------

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.add_class("-shown")
        search.focus()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        self._query = event.value
        self._find(forward=True)

    def action_search_next(self) -> None:
        self._find(forward=True)

    def action_search_prev(self) -> None:
        self._find(forward=False)

    def _find(self, *, forward: bool) -> None:
        if self._query and self._fd is not None:
            self._searching = 0.0
            self._search(self._generation, self._fd, self._query, self.conversation.cursor, forward)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, generation: int, fd: int, query: str, cursor: int, forward: bool) -> None:
        """Scan the journal for `query` off the UI: a million events take a few seconds, with progress."""
        worker = get_current_worker()
        own = os.dup(fd)
        try:
            found = find(
                self.timeline,
                own,
                query,
                cursor,
                forward=forward,
                progress=lambda done: self.app.call_from_thread(self._search_progress, generation, done),
                cancelled=lambda: worker.is_cancelled,
            )
        finally:
            os.close(own)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._found, generation, query, found)

    def _search_progress(self, generation: int, done: float) -> None:
        if generation == self._generation and self._searching is not None:
            self._searching = done
            self._show_status()

    def _found(self, generation: int, query: str, position: int | None) -> None:
        self._searching = None
        self._show_status()
        if generation != self._generation:
            return
        if position is None:
            self.notify(strings.NOT_FOUND.format(query=query), timeout=2)
        else:
            self.conversation.select(position)

    # --- forking --------------------------------------------------------------------------

    def action_fork_points(self) -> None:
        if self._indexing is not None:
            self.notify(strings.STILL_INDEXING, timeout=3)
            return
        points = []
        for position in self.timeline.fork_items:
            event = self.timeline.event(position)
            if isinstance(event, Message):
                points.append(ForkPoint(event.seq, event.message.role, preview(event.message.content)))
        self.app.push_screen(ForkPicker(self.session, points, pick=self.pick), self._point_chosen)

    def _point_chosen(self, point: ForkPoint | None) -> None:
        if point is None:
            return
        if self.pick:
            self.app.exit(Picked(self.session, point.seq))
            return
        question = strings.CONFIRM_FORK.format(session=self.session, seq=point.seq, point=str(point))
        self.app.push_screen(Confirm(question), lambda yes: self._fork(point) if yes else None)

    def _fork(self, point: ForkPoint) -> None:
        try:
            forked = fork(self.path, point.seq, folder=self.path.parent)
        except JournalError as exc:
            self.app.push_screen(Notice(strings.FORK_FAILED.format(reason=exc)))
            return
        except OSError as exc:
            # The new journal is written beside this one: a folder it cannot write, a full disk.
            why = (exc.strerror or str(exc)).lower()
            reason = strings.CANNOT_WRITE.format(folder=self.path.parent, why=why)
            self.app.push_screen(Notice(strings.FORK_FAILED.format(reason=reason)))
            return
        self.app.push_screen(Notice(strings.FORKED.format(parent=forked.parent, seq=forked.at_seq, new=forked.id)))
