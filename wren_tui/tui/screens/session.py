"""The session screen: one session, live: conversation, tool timings, status line, search box.

It draws: what it shows is read by a `SessionReader` (tui/session_reader.py), which tells it of each
change; it passes every change on to its panes (tui/messages.py) and says it in the status line.
Forking is a `ForkFlow` (fork_flow.py); the screens it opens over itself are `Launchers` (launchers.py).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, Static

from ...forwarding import Forward
from ...sessions import ForeignSource, SessionSource
from ...sessions.local import LocalJournal
from .. import strings
from ..clock import Clock
from ..filters import LABEL, ONLY, Only
from ..messages import Tick, TimelineGrew, TimelineReplaced, WriterChanged, tell_panes
from ..session_reader import SessionReader, SessionSearch
from ..timeline import Timeline
from ..widgets.conversation import ConversationView
from ..widgets.key_footer import KeyFooter
from ..widgets.status_line import Status, StatusLine
from ..widgets.tool_timings import ToolTimings
from ..widgets.waterfall import TokenSparkline, Waterfall
from ..workers import ScreenRunner
from .fork_flow import ForkFlow
from .launchers import Launchers

# The footer's keys by importance: on a narrow terminal the last give way first.
_FOOTER_KEEP = (
    "quit",
    "toggle_help",
    "search",
    "cycle_only",
    "fork_points",
    "raw",
    "call_lines",
    "next_error",
    "next_tool",
    "live",
    "toggle_follow",
    "waterfall",
    "replay",
    "export",
    "lineage",
    "beside_parent",
)
# The filters by the name an action gives.
LABEL_OF: dict[str, Only] = {only: only for only in ONLY}


class SessionScreen(Screen[None]):
    CSS_PATH = "session.tcss"
    # The footer's keys by importance (a screen built on this one names its own).
    FOOTER_KEEP: ClassVar[tuple[str, ...]] = _FOOTER_KEEP
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
        Binding("b", "call_lines", "Blame"),
        Binding("o", "cycle_only", "Filter"),
        Binding("1", "only('thinking')", "Only thinking", show=False),
        Binding("2", "only('tools')", "Only tool calls", show=False),
        Binding("3", "only('writes')", "Only writes", show=False),
        Binding("4", "only('errors')", "Only errors", show=False),
        Binding("0", "only('')", "Show everything", show=False),
        Binding("w", "waterfall", "Waterfall"),
        Binding("R", "replay", "Replay"),
        Binding("x", "export", "Export"),
        Binding("g", "lineage", "Lineage"),
        Binding("d", "beside_parent", "Beside parent"),
        Binding("tab", "app.focus_next", "Switch pane", show=False),
        Binding("escape", "back", "Back", show=False),
    ]

    def __init__(
        self,
        source: SessionSource,
        *,
        clock: Clock,
        pick: bool = False,
        waterfall: bool = False,
        only: Only | None = None,
        at: tuple[int, int] | None = None,
        match: str = "",
    ) -> None:
        super().__init__(classes="-waterfall" if waterfall else "")
        self._only_at_start = only
        # Open at a search hit: the item at this place (line start, part) selected, `match` marked.
        self._at, self._at_match = at, match
        self.source = source
        self.session = source.session
        self.clock = clock
        self.pick = pick
        self.foreign = source if isinstance(source, ForeignSource) else None
        self.unseen = 0  # events that arrived while the conversation did not follow
        self.reader = SessionReader(source, ScreenRunner(self), self)
        self.search = SessionSearch(self.reader, self._search_ready)
        self.forks = ForkFlow(self, self.reader, pick=pick)
        self.launch = Launchers(self, self.reader, self._open_relative)

    timeline: Forward[Timeline] = Forward("reader.timeline")
    writer_alive: Forward[bool | None] = Forward("reader.writer_alive")

    def compose(self) -> ComposeResult:
        # The panes: each hears of every change of the timeline (tui/messages.py), none is wired here.
        yield StatusLine(id="status")
        yield ConversationView(self.timeline, id="conversation")
        yield Static(self._tools_title(), id="tools-title", markup=False)
        yield TokenSparkline(self.timeline, id="tokens")
        # An agent that records no tool calls (aider) says so where the calls would be.
        unrecorded = getattr(getattr(self.foreign, "format", None), "unrecorded", None)
        yield ToolTimings(self.timeline, self.clock, id="tools", empty=unrecorded)
        yield Waterfall(self.timeline, self.clock, id="waterfall")
        yield Input(placeholder=strings.SEARCH_PLACEHOLDER, id="search")
        yield KeyFooter(keep=self.FOOTER_KEEP)

    @property
    def conversation(self) -> ConversationView:
        return self.query_one(ConversationView)

    def on_mount(self) -> None:
        self.title = self.session
        self.reader.open()
        self.conversation.focus()
        self.set_interval(1.0, self._tick)
        self._follow_journal()
        self.watch(self.conversation, "follow", self._follow_changed, init=False)
        self.watch(self.conversation, "only", self._only_changed, init=False)
        self.conversation.only = self._only_at_start
        if self.pick:
            self.call_after_refresh(self.action_fork_points)

    def on_unmount(self) -> None:
        self.reader.end()

    @work(exclusive=True, group="tail")
    async def _follow_journal(self) -> None:
        await self.reader.follow()

    # --- what the reader tells (session_reader.ReaderListener) ----------------------------

    def _widgets_gone(self) -> bool:
        """Whether the screen's widgets are gone (the app closing, the screen removed): what the reader tells
        then, as its last reading ends, is shown nowhere."""
        return not self.is_attached or not self.query(ConversationView)

    def replaced(self, timeline: Timeline, continues: bool) -> None:
        if self._widgets_gone():
            return
        self.unseen = 0
        tell_panes(self, TimelineReplaced(timeline, continues))
        if self._at is not None:
            self.call_after_refresh(self._go_to_hit)

    def grew(self, first: int, added: int) -> None:
        if self._widgets_gone():
            return
        tell_panes(self, TimelineGrew(self.timeline, first, added))
        if not self.conversation.follow:
            self.unseen += added

    def writer_changed(self, alive: bool) -> None:
        if not self._widgets_gone():
            tell_panes(self, WriterChanged(alive))

    def changed(self) -> None:
        if not self._widgets_gone():
            self._show_status()

    def _go_to_hit(self) -> None:
        """Select the hit search opened this screen at, once the timeline holds it (the tail, or the whole index)."""
        if self._at is None:
            return
        position = self.timeline.position_at(self._at)
        if position is None:
            return  # before the tail read first: the whole index, when in place, has it
        self._at = None
        self.conversation.highlight = self._at_match
        self.conversation.reveal(position, self._at_match)
        self._show_status()

    # --- status ---------------------------------------------------------------------------

    def _tick(self) -> None:
        self.reader.tick()
        self._show_status()
        tell_panes(self, Tick())

    def _show_status(self) -> None:
        reader, conversation = self.reader, self.conversation
        follow = conversation.follow
        only = conversation.only
        self.query_one(StatusLine).status = Status(
            session=self.session,
            events=self.timeline.events,
            tokens=self.timeline.tokens,
            age_s=self.timeline.seconds_since_last(self.clock()),
            mode=reader.mode(follow),
            unseen=0 if follow else self.unseen,
            integrity=reader.notes(),
            busy=reader.busy(self.search.progress),
            match=self.search.status(conversation.cursor),
            only=None if only is None else strings.ONLY.format(what=LABEL[only], hidden=conversation.hidden, key="0"),
            spent=reader.spent(self.clock()),
            gauge=self.timeline.gauge,
        )

    def _only_changed(self, _only: Only | None) -> None:
        self._show_status()

    @on(ConversationView.Hidden)
    def _hidden_changed(self) -> None:
        self._show_status()

    def _follow_changed(self, follow: bool) -> None:
        if follow:
            self.unseen = 0
        self._show_status()

    # --- navigation -----------------------------------------------------------------------

    def action_only(self, only: str) -> None:
        """Show only thinking, tool calls, writes or errors ("": everything again)."""
        self.conversation.only = LABEL_OF.get(only)

    def action_cycle_only(self) -> None:
        """The next filter: everything, thinking, tool calls, writes, errors, everything."""
        order: list[Only | None] = [None, *ONLY]
        self.conversation.only = order[(order.index(self.conversation.only) + 1) % len(order)]

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

    def action_back(self) -> None:
        """Close the search box, else forget the search, else go back to the browser."""
        search = self.query_one("#search", Input)
        if search.has_class("-shown") or self.search.query:
            search.remove_class("-shown")
            self.search.clear()
            self.conversation.highlight = ""
            self.conversation.focus()
            self._show_status()
        elif len(self.app.screen_stack) > 2:
            self.dismiss(None)

    # --- search ---------------------------------------------------------------------------

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.add_class("-shown")
        search.focus()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        """Search from the cursor; the conversation takes the keys back, so n and N move between matches."""
        self.search.start(event.value)
        event.input.remove_class("-shown")
        self.conversation.highlight = event.value
        self.conversation.focus()
        self.search.find(forward=True)

    def action_search_next(self) -> None:
        self.search.find(forward=True)

    def action_search_prev(self) -> None:
        self.search.find(forward=False)

    def _search_ready(self, forward: bool) -> None:
        """Show the next (or previous) match from the cursor; the status line counts."""
        target = self.search.target(self.conversation.cursor, forward=forward)
        if target is None:
            self.notify(strings.NOT_FOUND.format(query=self.search.query), timeout=2)
        else:
            self.conversation.reveal(target, self.search.query)
        self._show_status()

    # --- what opens over this screen ------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # In a browser the viewer only reads.
        return not (action == "fork_points" and self.app.is_web)

    def action_fork_points(self) -> None:
        self.forks.points()

    def action_raw(self) -> None:
        self.launch.raw(self.conversation.cursor)

    def action_call_lines(self) -> None:
        self.launch.call_lines(self.conversation.cursor)

    def action_lineage(self) -> None:
        self.launch.lineage()

    def action_beside_parent(self) -> None:
        self.launch.beside_parent()

    def action_export(self) -> None:
        self.launch.export()

    def action_replay(self) -> None:
        self.launch.replay()

    def _open_relative(self, path: Path) -> None:
        """A relative's session screen, made as the app makes every one (its clock, its watch mode)."""
        make: Callable[[Path], Screen[None]] | None = getattr(self.app, "session_screen", None)
        self.app.push_screen(make(path) if make is not None else SessionScreen(LocalJournal(path), clock=self.clock))

    def _tools_title(self) -> str:
        return strings.WATERFALL_TITLE if self.has_class("-waterfall") else strings.TOOLS_TITLE

    def action_waterfall(self) -> None:
        """Show the tool calls on the session's time axis (and tokens per turn), or as the table again."""
        was_focused = self.focused is not None and self.focused.id in ("tools", "waterfall")
        self.toggle_class("-waterfall")
        self.query_one("#tools-title", Static).update(self._tools_title())
        self.query_one(TokenSparkline).take()
        if was_focused:
            self.query_one("#waterfall" if self.has_class("-waterfall") else "#tools").focus()
