"""The session screen: one journal, live: conversation, tool timings, status line, fork picker."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message as TextualMessage
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from ...journal.events import Event, Message
from ...journal.fork import ForkPoint, fork, fork_points
from ...journal.reader import JournalError, Tail
from ...journal.store import lock_holder, session_id_of
from .. import strings
from ..tailing import WatchMode, watch_folder
from ..timeline import Timeline
from ..widgets.conversation import ConversationView, describe
from ..widgets.status_line import Status, StatusLine
from ..widgets.tool_timings import ToolTimings
from .dialogs import Confirm, Notice, RawEvent
from .fork_picker import ForkPicker

Clock = Callable[[], datetime]


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

    class Appended(TextualMessage):
        """One change of the journal: the whole lines that arrived, read through Tail."""

        def __init__(self, events: list[Event], restarted: bool, reason: str | None) -> None:
            super().__init__()
            self.events = events
            self.restarted = restarted
            self.reason = reason

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
        self._tail = Tail(path)
        self._stopped: str | None = None
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
        self._apply(self._tail.read().events, restarted=True, reason=self._tail.reason)
        self.conversation.focus()
        self.set_interval(1.0, self._tick)
        self._follow_journal()
        self.watch(self.conversation, "follow", self._follow_changed, init=False)
        if self.pick:
            self.call_after_refresh(self.action_fork_points)

    # --- tailing --------------------------------------------------------------------------

    @work(exclusive=True, group="tail")
    async def _follow_journal(self) -> None:
        await watch_folder(self.path.parent, self._changed, self.watch_mode)

    async def _changed(self, paths: set[Path]) -> None:
        # An empty set means "re-read to be sure"; otherwise only changes to our journal matter.
        if paths and self.path not in paths:
            return
        batch = self._tail.read()
        if batch.events or batch.restarted or batch.reason != self._stopped:
            self.post_message(self.Appended(batch.events, batch.restarted, batch.reason))

    def on_session_screen_appended(self, message: Appended) -> None:
        self._apply(message.events, restarted=message.restarted, reason=message.reason)

    def _apply(self, events: list[Event], *, restarted: bool, reason: str | None) -> None:
        conversation = self.conversation
        if restarted:
            self.timeline.clear()
            self.unseen = 0
        first = len(self.timeline.items)
        self.timeline.extend(events)
        self._stopped = reason
        if restarted:
            conversation.reset()
        else:
            conversation.items_added(first)
        if not conversation.follow:
            self.unseen += len(events)
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
        if self._stopped is not None:
            return f"stopped at {self._stopped}"
        if self.writer_alive:
            return None
        # A partial last line with no writer left to finish it is a torn tail.
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return None
        if size > self._tail.offset:
            return strings.STOPPED_AT.format(line=self._tail.lineno + 1, reason=strings.TORN_WAITING)
        return None

    def _show_status(self) -> None:
        follow = self.conversation.follow
        mode = (strings.LIVE if follow else strings.PAUSED) if self.writer_alive else strings.ENDED
        self.query_one(StatusLine).status = Status(
            session=self.session,
            events=len(self.timeline.events),
            tokens=self.timeline.tokens,
            age_s=self.timeline.seconds_since_last(self.clock()),
            mode=mode,
            unseen=0 if follow else self.unseen,
            integrity=self._integrity(),
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

    def _jump(self, positions: list[int], forward: bool, what: str) -> None:
        cursor = self.conversation.cursor
        if forward:
            target = next((p for p in positions if p > cursor), None)
        else:
            target = next((p for p in reversed(positions) if p < cursor), None)
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
        target = row.start_index if row.start_index is not None else row.asked_index
        if target is None:
            return
        position = next((i for i, item in enumerate(self.timeline.items) if item.index == target), None)
        if position is not None:
            self.conversation.select(position)
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
        query = self._query.casefold()
        if not query:
            return
        items, events = self.timeline.items, self.timeline.events
        count = len(items)
        start = self.conversation.cursor
        for step in range(1, count + 1):
            position = (start + step if forward else start - step) % count
            event = events[items[position].index]
            text = event.message.content if isinstance(event, Message) else describe(event)
            if query in text.casefold():
                self.conversation.select(position)
                return
        self.notify(strings.NOT_FOUND.format(query=self._query), timeout=2)

    # --- forking --------------------------------------------------------------------------

    def action_fork_points(self) -> None:
        points = fork_points(self.timeline.events)
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
        self.app.push_screen(Notice(strings.FORKED.format(parent=forked.parent, seq=forked.at_seq, new=forked.id)))
