"""The session screen: one journal, live: conversation, tool timings, status line, fork picker."""

from __future__ import annotations

import json
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import ClassVar, ParamSpec

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message as TextualMessage
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from ...journal.commandline import wren_command
from ...journal.errors import JournalError
from ...journal.events import Message, event_type
from ...journal.forking import ForkPoint, preview
from ...journal.index import Chunk
from ...journal.store import project_of
from ...journal.timing import duration
from ...journal.verdict import Stop
from .. import strings
from ..clock import Clock
from ..filters import LABEL, ONLY, Only
from ..messages import Tick, TimelineGrew, TimelineReplaced, WriterChanged, tell_panes
from ..search import find_all
from ..sources import ForeignSource, LineReader, SessionSource, TailFirst, Whereabouts
from ..sources.local import LocalJournal
from ..sources.replay import ReplaySource
from ..text import shorten
from ..timeline import Clip, Timeline, clips_of
from ..widgets.conversation import ConversationView
from ..widgets.key_footer import KeyFooter
from ..widgets.status_line import Status, StatusLine
from ..widgets.tool_timings import ToolTimings
from ..widgets.waterfall import TokenSparkline, Waterfall
from ..wren_child import run_wren
from .dialogs import RAW_BYTES, Confirm, Notice, RawLines
from .export import ExportDialog
from .fork_picker import ForkPicker, WithFiles
from .lineage import LineageScreen
from .side_by_side import SideBySide

P = ParamSpec("P")


def _busy(indexing: float | None, searching: float | None, reading: bool, loading: float | None = None) -> str | None:
    if searching is not None:
        return strings.SEARCHING.format(percent=int(searching * 100))
    if loading is not None:
        return strings.LOADING.format(percent=int(loading * 100))
    if indexing is not None:
        return strings.INDEXING.format(percent=int(indexing * 100))
    return strings.READING if reading else None


# The footer's keys by importance: on a narrow terminal the last give way first.
_FOOTER_KEEP = (
    "quit",
    "toggle_help",
    "search",
    "cycle_only",
    "fork_points",
    "raw",
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
# Bytes read before the first frame; the rest of a bigger journal is indexed in the background.
TAIL_WINDOW = 1 << 20
# More bytes than this appended at once are read by a worker thread, not by the UI.
READ_ON_UI = 1 << 20
# How long another agent's big session waits before its whole index is built: its first frames come first.
FOREIGN_INDEX_AFTER_S = 0.2
# Of a session opened tail first, how much of the index's progress is making its whole export (about
# as long as reading it after).
_WHOLE_SHARE = 0.4
# Chunks (of journal.index.CHUNK bytes) between two progress reports of the background index.
_PROGRESS_EVERY = 16


@dataclass
class Matches:
    """The items whose text holds the search query, in order, among the first `upto` items."""

    positions: array[int]
    upto: int


@dataclass(frozen=True)
class Picked:
    """The point chosen in `wren watch --pick`, and where reading the journal stopped, as the screen showed it.

    The fork picker opens only once the whole journal is indexed, so `stop` is the journal's own.
    """

    session: str
    seq: int
    stop: Stop | None = None


class ReplayWanted(TextualMessage):
    """The session asks for its replay: the app pushes the replay screen over it."""

    def __init__(self, source: ReplaySource, timeline: Timeline) -> None:
        super().__init__()
        self.source = source
        self.timeline = timeline


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
        # Another agent's session: its other branches, its points on every branch, a fork into Wren.
        self.foreign = source if isinstance(source, ForeignSource) else None
        self.timeline = Timeline()
        self.writer_alive: bool | None = None  # not asked yet: the panes are told the first answer
        self.unseen = 0
        self._open = False
        # Reads on from the end of what the timeline holds.
        self._reader: LineReader | None = None
        # Bumped when the journal is opened again, so a background result for the old file is dropped.
        self._generation = 0
        self._indexing: float | None = None  # how much of the whole index is built, while it is
        self._searching: float | None = None
        self._stopped: Stop | None = None
        self._cannot_read: str | None = None
        self._reading = False  # a worker reads a big backlog
        # The journal left its place under the viewer: moved (maybe to a known name) or deleted.
        self._gone: Whereabouts | None = None
        self._query = ""
        self._matches: Matches | None = None

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
        self._open_journal()
        self.conversation.focus()
        self.set_interval(1.0, self._tick)
        self._follow_journal()
        self.watch(self.conversation, "follow", self._follow_changed, init=False)
        self.watch(self.conversation, "only", self._only_changed, init=False)
        self.conversation.only = self._only_at_start
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
        self._gone = None
        source = self.source
        try:
            self._open = source.open()
        except JournalError as exc:
            self._cannot_read = str(exc)
        if not self._open:
            self._install(Timeline(), None)
            return
        size = source.size()
        timeline = Timeline(source)
        if size <= TAIL_WINDOW:
            start, stop = 0, size
        else:
            # The last lines that fit the window (never a huge one: the index reads that off the UI).
            start, stop = source.tail_span(size, TAIL_WINDOW)
        reader = source.lines(start)
        for chunk in reader.chunks(stop=stop):
            timeline.fold(chunk)
        # A source opened on its last lines alone (a big exported session) is indexed whole too.
        tail_only = isinstance(source, TailFirst) and source.partial
        self._indexing = 0.0 if size > TAIL_WINDOW or tail_only else None
        self._install(timeline, reader)
        if self._indexing is not None:
            # After the first frame: the worker holds the GIL for long stretches while it decodes.
            if self.foreign is not None:
                # Another agent's lines are translated in Python alone (no C thread to share the work):
                # started at once, it would slow the first frames by as much again.
                self.set_timer(FOREIGN_INDEX_AFTER_S, partial(self._build_index, self._generation, source.share()))
            else:
                self.call_after_refresh(self._build_index, self._generation, source.share())

    def _close_journal(self) -> None:
        for group in ("index", "read", "search"):
            self.workers.cancel_group(self, group)
        self._reading = False
        self.source.close()
        self._open, self._reader = False, None

    def _install(self, timeline: Timeline, reader: LineReader | None, *, continues: bool = False) -> None:
        """Show `timeline` in place of the one shown: every pane is told."""
        self.timeline, self._reader = timeline, reader
        self._stopped = reader.stop if reader else None
        self._looked_again: int | None = None
        self.unseen = 0
        self._matches = None  # positions in the timeline replaced
        tell_panes(self, TimelineReplaced(timeline, continues))
        self._check_writer()
        self._show_status()
        if self._at is not None:
            self.call_after_refresh(self._go_to_hit)

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

    @work(thread=True, exclusive=True, group="index")
    def _build_index(self, generation: int, own: SessionSource) -> None:
        """The whole index, from the first byte to the journal's size when it starts, off the UI.

        `own` is this worker's handle: the screen may close its own (a replaced journal) while this runs.
        """
        worker = get_current_worker()
        with closing(own):
            if generation != self._generation:
                return  # opened again before this started: that opening indexes its own file
            # Opened on its last lines alone: the whole session first (its share of the progress), read from line 1.
            whole = _WHOLE_SHARE if isinstance(own, TailFirst) and own.partial else 0.0
            if whole:
                assert isinstance(own, TailFirst)
                own.read_whole(lambda done: self._to_ui(self._index_progress, generation, done * whole))
                if worker.is_cancelled:
                    return
            until = max(own.size(), 1)
            timeline = Timeline(own)
            reader = own.lines(0, worker=True)
            for count, chunk in enumerate(reader.chunks(stop=until), 1):
                timeline.fold(chunk)
                if worker.is_cancelled:
                    return
                if count % _PROGRESS_EVERY == 0:
                    self._to_ui(self._index_progress, generation, whole + (1 - whole) * reader.offset / until)
        self._to_ui(self._index_built, generation, timeline, reader)

    def _index_progress(self, generation: int, done: float) -> None:
        if generation == self._generation:
            self._indexing = done
            self._show_status()

    def _index_built(self, generation: int, timeline: Timeline, built: LineReader) -> None:
        """Put the whole index in place of the tail's, on the same event, and read what came since."""
        if generation != self._generation or not self._open:
            return
        if isinstance(self.source, TailFirst):
            self.source.adopt_whole()  # the lines this index was read from, in place of the tail's
        timeline.source = self.source
        self._indexing = None
        self._install(timeline, self.source.lines_after(built), continues=True)
        self.read_new()

    @work(exclusive=True, group="tail")
    async def _follow_journal(self) -> None:
        await self.source.follow(self._changed)

    def _to_ui(self, callback: Callable[P, None], *args: P.args, **kwargs: P.kwargs) -> None:
        """A worker's result, handled on the UI thread; dropped once this screen stops (its widgets go next)."""

        def if_running() -> None:
            if self.is_running:
                callback(*args, **kwargs)

        self.app.call_from_thread(if_running)

    async def _changed(self) -> None:
        if self.is_running:  # a change that lands as the screen closes: its widgets are going
            self.read_new()

    def read_new(self) -> None:
        """Read the lines appended since the last read; open the journal again if it shrank or was replaced.

        A backlog of more than READ_ON_UI bytes (a huge line, a burst) is read by a worker, and
        while the index is being built, by the index.
        """
        source, reader = self.source, self._reader
        look = source.look()
        if look.change == "unknown":
            return
        if look.change == "replaced":
            self._open_journal()  # a journal at this name that is not the one being read: created, replaced
            return
        if reader is None or not self._open:
            return  # nothing at this name yet: the watcher sees it arrive
        self._left_its_place(look)
        size = source.size()
        if size < reader.offset:
            if self._gone is None:
                self._open_journal()  # it shrank
            return
        backlog = size - reader.offset
        if self._reading or (self._indexing is not None and backlog > READ_ON_UI):
            return  # a worker is reading on (or the index will), and reads this too
        if backlog > READ_ON_UI and size <= reader.scanned and reader.stop is None:
            return  # nothing new after a long partial line already looked through
        if reader.stop is not None:
            # Look at the stopping line again once the journal changed: a writer reopening it moves a
            # torn tail aside. An unchanged journal stops there still (looking again on every wake looped).
            if size == self._looked_again:
                return
            self._looked_again = size
            reader = self._reader = source.lines_after(reader, retry=True)
        if backlog > READ_ON_UI:
            self._reading = True
            self._show_status()
            self._read_on(self._generation, source.share(), reader)
            return
        timeline = self.timeline
        first, before = len(timeline), timeline.events
        for chunk in reader.chunks(stop=size):  # no further than the backlog just measured
            timeline.fold(chunk)
        if timeline.events != before or reader.stop != self._stopped:
            self._apply(first, timeline.events - before, reader.stop)

    def _left_its_place(self, look: Whereabouts) -> None:
        """Notice the journal being read leaving its place: moved or deleted (a live writer stops at its next event)."""
        if look.change == "here":
            self._gone = None
            return
        if self._gone is not None:
            return
        self._gone = look
        self._check_writer()
        self._show_status()

    @work(thread=True, exclusive=True, group="read")
    def _read_on(self, generation: int, own: SessionSource, reader: LineReader) -> None:
        """Read a big backlog off the UI; each chunk is folded on the UI as it comes, its big lines clipped here."""
        worker = get_current_worker()
        with closing(own):
            mine = own.lines_after(reader, worker=True)
            for chunk in mine.chunks():
                clips = clips_of(chunk)
                if worker.is_cancelled:
                    return
                self._to_ui(self._fold_more, generation, chunk, clips, mine.stop)
        self._to_ui(self._read_on_done, generation, mine)

    def _fold_more(self, generation: int, chunk: Chunk, clips: dict[int, Clip], stop: Stop | None) -> None:
        if generation != self._generation:
            return
        timeline = self.timeline
        first, before = len(timeline), timeline.events
        timeline.fold(chunk, clips)
        self._apply(first, timeline.events - before, stop)

    def _read_on_done(self, generation: int, done: LineReader) -> None:
        if generation != self._generation or not self._open:
            return
        self._reader = self.source.lines_after(done)
        self._reading = False
        if done.stop != self._stopped:
            self._apply(len(self.timeline), 0, done.stop)
        self.read_new()  # what came while it read

    def _apply(self, first: int, added: int, stop: Stop | None) -> None:
        """The timeline grew by `added` events from item `first` on (or only where it stops changed)."""
        self._stopped = stop
        if added:
            tell_panes(self, TimelineGrew(self.timeline, first, added))
            if not self.conversation.follow:
                self.unseen += added
        self._check_writer()
        self._show_status()

    # --- status ---------------------------------------------------------------------------

    def _tick(self) -> None:
        if self._gone is not None:
            self.read_new()  # moved to another folder, its changes reach no watcher here
        self._check_writer()
        self._show_status()
        tell_panes(self, Tick())

    def _check_writer(self) -> None:
        alive = self.source.writer_alive()
        if alive != self.writer_alive:
            self.writer_alive = alive
            tell_panes(self, WriterChanged(alive))

    def _whereabouts(self) -> str | None:
        """What became of the journal's place, if it left it."""
        gone, alive = self._gone, bool(self.writer_alive)
        if gone is None:
            return None
        if gone.change == "deleted":
            return strings.DELETED_WRITING if alive else strings.DELETED
        if gone.moved_to is None:
            return strings.MOVED_WRITING if alive else strings.MOVED
        name = shorten(gone.moved_to, 60)
        return (strings.MOVED_TO_WRITING if alive else strings.MOVED_TO).format(name=name)

    def _integrity(self) -> str | None:
        if self._cannot_read is not None:
            return self._cannot_read
        if self._stopped is not None:
            return f"stopped at {self._stopped}"
        if self.writer_alive or self._indexing is not None or self._reading or not self._open:
            return None
        # A partial last line with no writer left to finish it is a torn tail.
        reader = self._reader
        if reader is not None and self.source.size() > reader.offset:
            return strings.STOPPED_AT.format(line=reader.lineno + 1, reason=strings.TORN_WAITING)
        return None

    def _show_status(self) -> None:
        follow = self.conversation.follow
        arrival = self.source.arrival()
        mode = (strings.LIVE if follow else strings.PAUSED) if self.writer_alive else strings.ENDED
        if mode == strings.ENDED and self.foreign is not None and self.timeline.any_open_call:
            mode = strings.STOPPED_MID_CALL  # nobody writes it, and its last call has no result
        if self._gone is not None:
            mode = strings.DELETED_MODE if self._gone.change == "deleted" else strings.MOVED_MODE
        silent = arrival.silent if arrival is not None else None
        if silent is not None:
            mode = strings.SILENT_MODE  # what is shown may be old: neither live nor known to have ended
        branches = self.foreign.branch_note() if self.foreign is not None else None
        notes = [note for note in (silent, self._whereabouts(), self._integrity(), branches) if note]
        self.query_one(StatusLine).status = Status(
            session=self.session,
            events=self.timeline.events,
            tokens=self.timeline.tokens,
            age_s=self.timeline.seconds_since_last(self.clock()),
            mode=mode,
            unseen=0 if follow else self.unseen,
            integrity=" · ".join(notes) or None,
            busy=_busy(
                self._indexing, self._searching, self._reading, arrival.history if arrival is not None else None
            ),
            match=self._match_status(),
            only=self._only_status(),
            spent=self._spent(),
        )

    def _only_status(self) -> str | None:
        only = self.conversation.only
        if only is None:
            return None
        return strings.ONLY.format(what=LABEL[only], hidden=self.conversation.hidden, key="0")

    def _only_changed(self, _only: Only | None) -> None:
        self._show_status()

    @on(ConversationView.Hidden)
    def _hidden_changed(self) -> None:
        self._show_status()

    def action_only(self, only: str) -> None:
        """Show only thinking, tool calls, writes or errors ("": everything again)."""
        self.conversation.only = LABEL_OF.get(only)

    def action_cycle_only(self) -> None:
        """The next filter: everything, thinking, tool calls, writes, errors, everything."""
        order: list[Only | None] = [None, *ONLY]
        self.conversation.only = order[(order.index(self.conversation.only) + 1) % len(order)]

    def _spent(self) -> str | None:
        """Time waiting for the model and running tools; while a writer runs, the phase under way counts to now."""
        spent = self.timeline.spent
        if spent.since_ms is None:
            return None
        if self.writer_alive:
            spent = spent.until(int(self.clock().timestamp() * 1000))
        return strings.SPENT.format(model=duration(spent.model_ms), tools=duration(spent.tools_ms))

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
        """The selected item's line (a partial reply: its lines) as its bytes are in the journal."""
        position, timeline = self.conversation.cursor, self.timeline
        if not 0 <= position < len(timeline) or not self._open:
            self.notify(strings.NO_EVENT, timeout=2)
            return
        start, end = timeline.starts[position], timeline.ends[position]
        data = self.source.read(start, min(end - start, RAW_BYTES))
        event = timeline.event(position)
        clip = timeline.clips.get(position)
        if self.foreign is not None:
            title = strings.RAW_TITLE_FOREIGN.format(seq=event.seq, agent=self.foreign.agent, type=event_type(event))
        elif timeline.kind(position) == "partial" and clip is not None and clip.last_seq not in (None, event.seq):
            title = strings.RAW_TITLE_PARTIAL.format(first=event.seq, last=clip.last_seq)
        elif timeline.kind(position) == "partial":
            title = strings.RAW_TITLE.format(seq=event.seq, type="delta: a partial reply")
        else:
            title = strings.RAW_TITLE.format(seq=event.seq, type=event_type(event))
        self.app.push_screen(RawLines(title, data, end - start, start))

    def action_back(self) -> None:
        """Close the search box, else forget the search, else go back to the browser."""
        search = self.query_one("#search", Input)
        if search.has_class("-shown") or self._query:
            search.remove_class("-shown")
            self._query, self._matches = "", None
            self.workers.cancel_group(self, "search")
            self._searching = None
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
        self._query, self._matches = event.value, None
        event.input.remove_class("-shown")
        self.conversation.highlight = event.value
        self.conversation.focus()
        self._find(forward=True)

    def action_search_next(self) -> None:
        self._find(forward=True)

    def action_search_prev(self) -> None:
        self._find(forward=False)

    def _find(self, *, forward: bool) -> None:
        if not self._query or not self._open or self._searching is not None:
            return
        matches, count = self._matches, len(self.timeline)
        if matches is not None and matches.upto >= count:
            self._move_to_match(forward)
            return
        # Search what is not searched yet (all of it, or what came since), then move.
        lo = 0 if matches is None else matches.upto
        self._searching = 0.0
        self._show_status()
        self._search(self._generation, self.source.share(), self._query, lo, count, forward)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, generation: int, own: SessionSource, query: str, lo: int, hi: int, forward: bool) -> None:
        """Scan items lo..hi for `query` off the UI: a million events take a few seconds, with progress."""
        worker = get_current_worker()
        with closing(own):
            found = find_all(
                self.timeline,
                own,
                query,
                lo,
                hi,
                progress=lambda done: self._to_ui(self._search_progress, generation, done),
                cancelled=lambda: worker.is_cancelled,
            )
        if found is not None and not worker.is_cancelled:
            self._to_ui(self._found, generation, query, found, lo, hi, forward)

    def _search_progress(self, generation: int, done: float) -> None:
        if generation == self._generation and self._searching is not None:
            self._searching = done
            self._show_status()

    def _found(self, generation: int, query: str, found: array[int], lo: int, hi: int, forward: bool) -> None:
        self._searching = None
        if generation != self._generation or query != self._query:
            self._show_status()
            return
        matches = self._matches
        if matches is None or matches.upto != lo:
            matches = Matches(array("i"), 0)
        matches.positions.extend(found)
        matches.upto = hi
        self._matches = matches
        self._move_to_match(forward)

    def _move_to_match(self, forward: bool) -> None:
        """The next (or previous) match from the cursor, around the end; the status line counts."""
        assert self._matches is not None
        positions = self._matches.positions
        if not positions:
            self.notify(strings.NOT_FOUND.format(query=self._query), timeout=2)
            self._show_status()
            return
        cursor = self.conversation.cursor
        if forward:
            at = bisect_right(positions, cursor)
            target = positions[at % len(positions)]
        else:
            at = bisect_left(positions, cursor)
            target = positions[at - 1]  # -1 wraps to the last
        self.conversation.reveal(target, self._query)
        self._show_status()

    def _match_status(self) -> str | None:
        matches = self._matches
        if matches is None or not self._query or not matches.positions:
            return None
        positions, cursor = matches.positions, self.conversation.cursor
        at = bisect_left(positions, cursor)
        if at < len(positions) and positions[at] == cursor:
            return strings.MATCH.format(k=at + 1, n=len(positions))
        return strings.MATCHES.format(n=len(positions), query=shorten(self._query, 30))

    # --- forking --------------------------------------------------------------------------

    def action_fork_points(self) -> None:
        if self.foreign is not None:
            if self._open:
                self.notify(strings.FINDING_POINTS, timeout=2)
                self._foreign_points(self._generation, self.foreign.share())
            return
        if self.source.fork_folder is None:
            self.notify(strings.NOT_FORKABLE, timeout=3)
            return
        if self._indexing is not None:
            self.notify(strings.STILL_INDEXING, timeout=3)
            return
        points = []
        for position in self.timeline.fork_items:
            event = self.timeline.event(position)
            if isinstance(event, Message):
                points.append(ForkPoint(event.seq, event.message.role, preview(event.message.content)))
        journal = self.source.path if isinstance(self.source, LocalJournal) else None
        self.app.push_screen(ForkPicker(self.session, points, pick=self.pick, journal=journal), self._point_chosen)

    @work(thread=True, exclusive=True, group="points")
    def _foreign_points(self, generation: int, own: SessionSource) -> None:
        """Every branch's clean points of another agent's session: its whole file is read, off the UI."""
        assert isinstance(own, ForeignSource)
        with closing(own):
            try:
                points = own.fork_points()
            except (JournalError, OSError) as exc:
                self._to_ui(self.notify, str(exc), severity="error")
                return
        self._to_ui(self._show_points, generation, points)

    def _show_points(self, generation: int, points: list[ForkPoint]) -> None:
        if generation == self._generation:
            self.app.push_screen(ForkPicker(self.session, points, pick=self.pick), self._point_chosen)

    def _point_chosen(self, point: ForkPoint | None) -> None:
        if point is None:
            return
        if self.pick:
            # Another agent's session is named by its file: `wren fork PATH SEQ` takes it as printed.
            session = str(self.foreign.origin) if self.foreign is not None else self.session
            self.app.exit(Picked(session, point.seq, self._stopped))
            return
        if self.foreign is not None:
            question = strings.CONFIRM_FORK_FOREIGN.format(
                agent=self.foreign.agent, seq=point.seq, point=str(point), folder=self.foreign.fork_folder
            )
            self.app.push_screen(Confirm(question), partial(self._foreign_confirmed, point))
            return
        if isinstance(point, WithFiles) and isinstance(self.source, LocalJournal):
            target = _fork_folder_for(self.source.path, point.seq)
            question = strings.CONFIRM_FORK_FILES.format(
                session=self.session, seq=point.seq, point=str(point), target=shorten(str(target), 80)
            )
            self.app.push_screen(Confirm(question), partial(self._files_confirmed, self.source.path, point, target))
            return
        folder = shorten(str(self.source.fork_folder), 80)
        question = strings.CONFIRM_FORK.format(session=self.session, seq=point.seq, point=str(point), folder=folder)
        self.app.push_screen(Confirm(question), lambda yes: self._fork(point) if yes else None)

    def _foreign_confirmed(self, point: ForkPoint, yes: bool | None) -> None:
        if yes:
            self._fork_foreign(point)

    @work(thread=True, exclusive=True, group="fork")
    def _fork_foreign(self, point: ForkPoint) -> None:
        """Another agent's session into a new Wren journal, off the UI (its whole file is read twice)."""
        assert self.foreign is not None
        own = self.foreign.share()
        assert isinstance(own, ForeignSource)
        folder = own.fork_folder
        with closing(own):
            try:
                forked = own.fork(point.seq)
            except JournalError as exc:
                self._to_ui(self._notice, strings.FORK_FAILED.format(reason=exc))
                return
            except OSError as exc:
                why = (exc.strerror or str(exc)).lower()
                reason = strings.CANNOT_WRITE.format(folder=folder, why=why)
                self._to_ui(self._notice, strings.FORK_FAILED.format(reason=reason))
                return
        command = wren_command("resume", forked.id, folder=forked.path.parent)
        text = strings.FORKED_FOREIGN.format(
            agent=own.agent, parent=self.session, seq=forked.at_seq, new=forked.id, command=command
        )
        note: str | None = getattr(forked, "workspace_note", None)
        if note is not None:
            text += "\n\n" + strings.FORK_NO_WORKSPACE.format(why=note)
        self._to_ui(self._notice, text)

    def _files_confirmed(self, journal: Path, point: ForkPoint, target: Path, yes: bool | None) -> None:
        if yes:
            self._fork_with_files(journal, point, target)

    @work(thread=True, exclusive=True, group="fork")
    def _fork_with_files(self, journal: Path, point: ForkPoint, target: Path) -> None:
        """`wren fork JOURNAL SEQ --workspace TARGET` as a person types it, in a child: the viewer writes nothing."""
        done = run_wren(["fork", str(journal), str(point.seq), "--workspace", str(target), "--json"])
        if not done.ok:
            self._to_ui(self._notice, strings.FORK_FAILED.format(reason=done.said))
            return
        try:
            forked = json.loads(done.stdout)
            new, path = str(forked["id"]), Path(str(forked["path"]))
        except (ValueError, KeyError, TypeError):
            self._to_ui(self._notice, strings.FORK_FAILED.format(reason=done.stdout.strip() or done.said))
            return
        command = wren_command("resume", new, folder=path.parent)
        text = strings.FORKED_FILES.format(parent=self.session, seq=point.seq, new=new, target=target, command=command)
        self._to_ui(self._notice, text)

    def _notice(self, text: str) -> None:
        self.app.push_screen(Notice(text))

    def _fork(self, point: ForkPoint) -> None:
        folder = self.source.fork_folder
        assert folder is not None, "fork points are offered only for a session that can be forked"
        try:
            forked = self.source.fork(point.seq)
        except JournalError as exc:
            self.app.push_screen(Notice(strings.FORK_FAILED.format(reason=exc)))
            return
        except OSError as exc:
            # A folder it cannot write, a full disk.
            why = (exc.strerror or str(exc)).lower()
            reason = strings.CANNOT_WRITE.format(folder=folder, why=why)
            self.app.push_screen(Notice(strings.FORK_FAILED.format(reason=reason)))
            return
        command = wren_command("resume", forked.id, folder=forked.path.parent)
        self.app.push_screen(
            Notice(strings.FORKED.format(parent=forked.parent, seq=forked.at_seq, new=forked.id, command=command))
        )

    # --- lineage and time -----------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # In a browser the viewer only reads.
        return not (action == "fork_points" and self.app.is_web)

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

    def _folders(self, path: Path) -> list[Path]:
        """Where relatives are looked for: the session's own folder, and the folder the viewer browses."""
        folders = [path.parent]
        browsed = getattr(self.app, "folder", None)
        if isinstance(browsed, Path) and browsed.resolve() != path.parent.resolve():
            folders.append(browsed)
        return folders

    def action_lineage(self) -> None:
        path = self.source.path
        if path is None:
            self.notify(strings.NO_LINEAGE, timeout=3)
            return
        self.app.push_screen(LineageScreen(path, self._folders(path), open_session=self._open_relative))

    def _open_relative(self, path: Path) -> None:
        """A relative's session screen, made as the app makes every one (its clock, its watch mode)."""
        make: Callable[[Path], Screen[None]] | None = getattr(self.app, "session_screen", None)
        self.app.push_screen(make(path) if make is not None else SessionScreen(LocalJournal(path), clock=self.clock))

    def action_beside_parent(self) -> None:
        path = self.source.path
        if path is None:
            self.notify(strings.NO_LINEAGE, timeout=3)
            return
        self.app.push_screen(SideBySide(path, self._folders(path)))

    def action_replay(self) -> None:
        if self._indexing is not None:
            self.notify(strings.REPLAY_INDEXING, timeout=3)
            return
        if self.writer_alive:
            self.notify(strings.REPLAY_LIVE, timeout=3)
            return
        if not self._open or not len(self.timeline) or self._reader is None:
            self.notify(strings.REPLAY_EMPTY, timeout=3)
            return
        # The app opens the replay (replay.py builds on this screen, so this screen never imports it).
        self.post_message(ReplayWanted(ReplaySource(self.source.share(), end=self._reader.offset), self.timeline))

    def action_export(self) -> None:
        path = self.source.path
        if path is None:
            self.notify(strings.NO_EXPORT, timeout=3)
            return
        self.app.push_screen(ExportDialog(path))


def _fork_folder_for(journal: Path, seq: int) -> Path:
    """Where a fork with files goes: beside the session's workspace, named after it and the point, never a used name."""
    project = project_of(journal)
    base = Path(project) if project else journal.parent.parent / journal.stem
    target = base.with_name(f"{base.name}-fork-{seq}")
    number = 2
    while target.exists():
        target = base.with_name(f"{base.name}-fork-{seq}-{number}")
        number += 1
    return target
