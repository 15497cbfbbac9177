"""Reading one session for the viewer, apart from drawing it: its tail first, its whole index after, what is appended.

`SessionReader` is not a widget. It holds the session's `Timeline` and what reading it found out
(where it stopped, whether the journal left its place, how far the background index got) and tells
a `ReaderListener` of each change: the session screen passes that on to its panes and its status
line; `SessionSearch` keeps the search's state beside it. Work that takes long (the whole index, a
big backlog, a search) runs through a `Runner`: Textual's workers in the viewer (`tui/workers.py`),
plain calls in a test. The session screen draws what this module reads, as Toolong keeps a log
file apart from the view of its lines.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Protocol

from ..foreign import format_named
from ..foreign.listing import ending
from ..journal.errors import JournalError
from ..journal.events import Event
from ..journal.offsets import Chunk
from ..journal.timing import duration
from ..journal.verdict import Stop
from ..search.query import BadPattern, Query
from ..sessions import ForeignSource, LineReader, SessionSource, TailFirst, Whereabouts
from . import strings
from .search import find_all
from .text import shorten
from .timeline import Clip, Timeline, clips_of

# How many of a session's last events are looked at for how it ends (its last message is among them).
_ENDING_EVENTS = 64

# Bytes read before the first frame; the rest of a bigger journal is indexed in the background.
TAIL_WINDOW = 1 << 20
# More bytes than this appended at once are read by a worker thread, not by the UI.
READ_ON_UI = 1 << 20
# How long another agent's big session waits before its whole index is built: its first frames come first.
FOREIGN_INDEX_AFTER_S = 0.2
# Of a session opened tail first, how much of the index's progress is making its whole export (about
# as long as reading it after).
_WHOLE_SHARE = 0.4
# Chunks (of journal.offsets.CHUNK bytes) between two progress reports of the background index.
_PROGRESS_EVERY = 16

Cancelled = Callable[[], bool]
"""Asked by a job in a thread between two pieces of work: whether to give up."""


class Runner(Protocol):
    """Where the reader's work runs: a job in a thread, and calls back on the thread that owns the reader."""

    def in_thread(self, group: str, job: Callable[[Cancelled], None]) -> None:
        """Run `job` in a thread, cancelling the job of the same group still running."""
        ...

    def to_ui(self, call: Callable[[], None]) -> None:
        """From a job's thread: `call` on the owning thread (dropped once its owner stopped)."""
        ...

    def soon(self, call: Callable[[], None], delay: float = 0.0) -> None:
        """`call` on the owning thread, after the next frame (or `delay` seconds)."""
        ...

    def cancel(self, group: str) -> None:
        """Cancel the jobs of `group`; their results are dropped."""
        ...


class ReaderListener(Protocol):
    """Who hears of what reading found: the session screen."""

    def replaced(self, timeline: Timeline, continues: bool) -> None:
        """`timeline` is the session now (`continues`: the same session, read whole in place of its tail)."""
        ...

    def grew(self, first: int, added: int) -> None:
        """The timeline took `added` events, its new items from `first` on."""
        ...

    def writer_changed(self, alive: bool) -> None: ...

    def changed(self) -> None:
        """Something the status line says changed (progress, where the session stopped, its place)."""
        ...


class SessionReader:
    """One session's timeline, kept up to date as its source changes; every change told to `listener`."""

    def __init__(self, source: SessionSource, runner: Runner, listener: ReaderListener) -> None:
        self.source = source
        self.runner = runner
        self.listener = listener
        self.timeline = Timeline()
        self.is_open = False
        self.writer_alive: bool | None = None  # not asked yet: the first answer is told
        # Reads on from the end of what the timeline holds.
        self.lines: LineReader | None = None
        # Bumped when the session is opened again, so a background result for the old file is dropped.
        self.generation = 0
        self.indexing: float | None = None  # how much of the whole index is built, while it is
        self.stopped: Stop | None = None
        self.cannot_read: str | None = None
        self.reading = False  # a worker reads a big backlog
        # The journal left its place under the viewer: moved (maybe to a known name) or deleted.
        self.gone: Whereabouts | None = None
        self._looked_again: int | None = None
        self._ended = False

    # --- opening and closing --------------------------------------------------------------

    def open(self) -> None:
        """Read the session's tail now and show it; index the whole of it in the background."""
        self._close()
        self.generation += 1
        self.indexing = self.cannot_read = self.gone = None
        source = self.source
        try:
            self.is_open = source.open()
        except JournalError as exc:
            self.cannot_read = str(exc)
        if not self.is_open:
            self._install(Timeline(), None)
            return
        size = source.size()
        timeline = Timeline(source)
        if size <= TAIL_WINDOW:
            start, stop = 0, size
        else:
            # The last lines that fit the window (never a huge one: the index reads that off the UI).
            start, stop = source.tail_span(size, TAIL_WINDOW)
        lines = source.lines(start)
        for chunk in lines.chunks(stop=stop):
            timeline.fold(chunk)
        # A source opened on its last lines alone (a big exported session) is indexed whole too.
        tail_only = isinstance(source, TailFirst) and source.partial
        self.indexing = 0.0 if size > TAIL_WINDOW or tail_only else None
        self._install(timeline, lines)
        if self.indexing is not None:
            build = partial(self._index, self.generation, source.share())
            # After the first frame: the worker holds the GIL for long stretches while it decodes.
            # Another agent's lines are translated in Python alone (no C thread to share the work):
            # started at once, it would slow the first frames by as much again.
            self.runner.soon(build, FOREIGN_INDEX_AFTER_S if isinstance(source, ForeignSource) else 0.0)

    def end(self) -> None:
        """Stop for good: nothing read is told from now on."""
        self._ended = True
        self._close()

    def _close(self) -> None:
        for group in ("index", "read"):
            self.runner.cancel(group)
        self.reading = False
        self.source.close()
        self.is_open, self.lines = False, None

    def _install(self, timeline: Timeline, lines: LineReader | None, *, continues: bool = False) -> None:
        self.timeline, self.lines = timeline, lines
        self.stopped = lines.stop if lines else None
        self._looked_again = None
        self.listener.replaced(timeline, continues)
        self.check_writer()
        self.listener.changed()

    # --- the whole index, off the UI ------------------------------------------------------

    def _index(self, generation: int, own: SessionSource) -> None:
        self.runner.in_thread("index", partial(self._build_index, generation, own))

    def _build_index(self, generation: int, own: SessionSource, cancelled: Cancelled) -> None:
        """The whole index, from the first byte to the session's size when it starts (in a thread).

        `own` is this job's handle: the reader may close its own (a replaced journal) while this runs.
        """
        to_ui = self.runner.to_ui
        with closing(own):
            if generation != self.generation:
                return  # opened again before this started: that opening indexes its own file
            # Opened on its last lines alone: the whole session first (its share of the progress), read from line 1.
            whole = _WHOLE_SHARE if isinstance(own, TailFirst) and own.partial else 0.0
            if whole:
                assert isinstance(own, TailFirst)
                own.read_whole(lambda done: to_ui(partial(self.index_progress, generation, done * whole)))
                if cancelled():
                    return
            until = max(own.size(), 1)
            timeline = Timeline(own)
            lines = own.lines(0, worker=True)
            for count, chunk in enumerate(lines.chunks(stop=until), 1):
                timeline.fold(chunk)
                if cancelled():
                    return
                if count % _PROGRESS_EVERY == 0:
                    done = whole + (1 - whole) * lines.offset / until
                    to_ui(partial(self.index_progress, generation, done))
        to_ui(partial(self._index_built, generation, timeline, lines))

    def index_progress(self, generation: int, done: float) -> None:
        if generation == self.generation and not self._ended:
            self.indexing = done
            self.listener.changed()

    def _index_built(self, generation: int, timeline: Timeline, built: LineReader) -> None:
        """Put the whole index in place of the tail's, on the same event, and read what came since."""
        if generation != self.generation or not self.is_open:
            return
        if isinstance(self.source, TailFirst):
            self.source.adopt_whole()  # the lines this index was read from, in place of the tail's
        timeline.source = self.source
        self.indexing = None
        self._install(timeline, self.source.lines_after(built), continues=True)
        self.read_new()

    # --- what is appended -----------------------------------------------------------------

    async def follow(self) -> None:
        """Read on whenever the source says it changed, until it stops following."""
        await self.source.follow(self.changed)

    async def changed(self) -> None:
        if not self._ended:  # a change that lands as the viewer closes: its panes are going
            self.read_new()

    def read_new(self) -> None:
        """Read the lines appended since the last read; open the session again if it shrank or was replaced.

        A backlog of more than READ_ON_UI bytes (a huge line, a burst) is read by a worker, and
        while the index is being built, by the index.
        """
        source, lines = self.source, self.lines
        look = source.look()
        if look.change == "unknown":
            return
        if look.change == "replaced":
            self.open()  # a journal at this name that is not the one being read: created, replaced
            return
        if lines is None or not self.is_open:
            return  # nothing at this name yet: the watcher sees it arrive
        self._left_its_place(look)
        size = source.size()
        if size < lines.offset:
            if self.gone is None:
                self.open()  # it shrank
            return
        backlog = size - lines.offset
        if self.reading or (self.indexing is not None and backlog > READ_ON_UI):
            return  # a worker is reading on (or the index will), and reads this too
        if backlog > READ_ON_UI and size <= lines.scanned and lines.stop is None:
            return  # nothing new after a long partial line already looked through
        if lines.stop is not None:
            # Look at the stopping line again once the journal changed: a writer reopening it moves a
            # torn tail aside. An unchanged journal stops there still (looking again on every wake looped).
            if size == self._looked_again:
                return
            self._looked_again = size
            lines = self.lines = source.lines_after(lines, retry=True)
        if backlog > READ_ON_UI:
            self.reading = True
            self.listener.changed()
            self.runner.in_thread("read", partial(self._read_on, self.generation, source.share(), lines))
            return
        timeline = self.timeline
        first, before = len(timeline), timeline.events
        for chunk in lines.chunks(stop=size):  # no further than the backlog just measured
            timeline.fold(chunk)
        if timeline.events != before or lines.stop != self.stopped:
            self._apply(first, timeline.events - before, lines.stop)

    def _left_its_place(self, look: Whereabouts) -> None:
        """Notice the journal being read leaving its place: moved or deleted (a live writer stops at its next event)."""
        if look.change == "here":
            self.gone = None
            return
        if self.gone is not None:
            return
        self.gone = look
        self.check_writer()
        self.listener.changed()

    def _read_on(self, generation: int, own: SessionSource, lines: LineReader, cancelled: Cancelled) -> None:
        """Read a big backlog (in a thread); each chunk is folded on the UI as it comes, its big lines clipped here."""
        to_ui = self.runner.to_ui
        with closing(own):
            mine = own.lines_after(lines, worker=True)
            for chunk in mine.chunks():
                clips = clips_of(chunk)
                if cancelled():
                    return
                to_ui(partial(self._fold_more, generation, chunk, clips, mine.stop))
        to_ui(partial(self._read_on_done, generation, mine))

    def _fold_more(self, generation: int, chunk: Chunk, clips: dict[int, Clip], stop: Stop | None) -> None:
        if generation != self.generation:
            return
        timeline = self.timeline
        first, before = len(timeline), timeline.events
        timeline.fold(chunk, clips)
        self._apply(first, timeline.events - before, stop)

    def _read_on_done(self, generation: int, done: LineReader) -> None:
        if generation != self.generation or not self.is_open:
            return
        self.lines = self.source.lines_after(done)
        self.reading = False
        if done.stop != self.stopped:
            self._apply(len(self.timeline), 0, done.stop)
        self.read_new()  # what came while it read

    def _apply(self, first: int, added: int, stop: Stop | None) -> None:
        """The timeline grew by `added` events from item `first` on (or only where it stops changed)."""
        self.stopped = stop
        if added:
            self.listener.grew(first, added)
        self.check_writer()
        self.listener.changed()

    # --- what the status line says --------------------------------------------------------

    def tick(self) -> None:
        """Once a second: a journal moved to another folder reaches no watcher here, and writers come and go."""
        if self.gone is not None:
            self.read_new()
        self.check_writer()

    def check_writer(self) -> None:
        alive = self.source.writer_alive()
        if alive != self.writer_alive:
            self.writer_alive = alive
            self.listener.writer_changed(alive)

    def mode(self, follow: bool) -> str:
        """Live (or paused); how it ended (a Wren session's state, as listed; another agent's ending, or stopped
        mid-call); moved, deleted, or silent: what the status line leads with."""
        mode = (strings.LIVE if follow else strings.PAUSED) if self.writer_alive else strings.ENDED
        if mode == strings.ENDED and isinstance(self.source, ForeignSource):
            # Nobody writes it: its last call has no result, or it ends as the listing says.
            mode = strings.STOPPED_MID_CALL if self.timeline.any_open_call else self._foreign_ending()
        elif mode == strings.ENDED and self.is_open and self.indexing is None and not self.reading:
            mode = self.timeline.state(self.stopped)  # read whole: as `wren ls` and the list say it (store.state_of)
        if self.gone is not None:
            mode = strings.DELETED_MODE if self.gone.change == "deleted" else strings.MOVED_MODE
        arrival = self.source.arrival()
        if arrival is not None and arrival.silent is not None:
            mode = strings.SILENT_MODE  # what is shown may be old: neither live nor known to have ended
        return mode

    def _foreign_ending(self) -> str:
        """How another agent's session that nobody writes ends, in the listing's words (`listing.ending`): "ended"
        for a last reply that asks for nothing, else the listing's ("interrupted", "last: reply", "error")."""
        fmt = format_named(self.source.agent or "")  # an agent's, or a document's (the design's journal, ATIF)
        if fmt is None:
            return strings.ENDED
        last: list[Event] = []
        for position in range(len(self.timeline) - 1, max(len(self.timeline) - _ENDING_EVENTS, 0) - 1, -1):
            last.append(self.timeline.event(position))
        said = ending(last[::-1], fmt)
        return strings.ENDED if said in ("done", "empty") else said

    def notes(self) -> str | None:
        """What the status line adds: silence, the journal's place, where it stops, the other agent's branches."""
        arrival, source = self.source.arrival(), self.source
        silent = arrival.silent if arrival is not None else None
        branches = source.branch_note() if isinstance(source, ForeignSource) else None
        return " · ".join(note for note in (silent, self.whereabouts(), self.integrity(), branches) if note) or None

    def spent(self, now: datetime) -> str | None:
        """Time waiting for the model and running tools; while a writer runs, the phase under way counts to `now`."""
        spent = self.timeline.spent
        if spent.since_ms is None:
            return None
        if self.writer_alive:
            spent = spent.until(int(now.timestamp() * 1000))
        return strings.SPENT.format(model=duration(spent.model_ms), tools=duration(spent.tools_ms))

    def whereabouts(self) -> str | None:
        """What became of the journal's place, if it left it."""
        gone, alive = self.gone, bool(self.writer_alive)
        if gone is None:
            return None
        if gone.change == "deleted":
            return strings.DELETED_WRITING if alive else strings.DELETED
        if gone.moved_to is None:
            return strings.MOVED_WRITING if alive else strings.MOVED
        name = shorten(gone.moved_to, 60)
        return (strings.MOVED_TO_WRITING if alive else strings.MOVED_TO).format(name=name)

    def integrity(self) -> str | None:
        """Why the session shown stops where it does, if it is not all there."""
        if self.cannot_read is not None:
            return self.cannot_read
        if self.stopped is not None:
            return f"stopped at {self.stopped}"
        if self.writer_alive or self.indexing is not None or self.reading or not self.is_open:
            return None
        # A partial last line with no writer left to finish it is a torn tail.
        lines = self.lines
        if lines is not None and self.source.size() > lines.offset:
            return strings.STOPPED_AT.format(line=lines.lineno + 1, reason=strings.TORN_WAITING)
        return None

    def busy(self, searching: float | None) -> str | None:
        """What is under way, with its progress: a search, the history still arriving, the index, a big read."""
        if searching is not None:
            return strings.SEARCHING.format(percent=int(searching * 100))
        arrival = self.source.arrival()
        if arrival is not None and arrival.history is not None:
            return strings.LOADING.format(percent=int(arrival.history * 100))
        if self.indexing is not None:
            return strings.INDEXING.format(percent=int(self.indexing * 100))
        return strings.READING if self.reading else None


@dataclass
class Matches:
    """The items of `timeline` whose text holds the search query, in order, among the first `upto` items."""

    timeline: Timeline
    positions: array[int]
    upto: int


class SessionSearch:
    """The search of one session: its query, the matches found so far, the scan under way and its progress.

    `find` scans what is not scanned yet in a thread (a million events take a few seconds), then
    calls `ready(forward)` on the owning thread; `target` then says which item to show.
    """

    def __init__(self, reader: SessionReader, ready: Callable[[bool], None]) -> None:
        self.reader = reader
        self.ready = ready
        self.query = ""  # the text typed
        self.compiled: Query | None = None  # as `wren search` searches for it: smart case
        self.matches: Matches | None = None
        self.progress: float | None = None  # while a scan runs

    def start(self, query: str) -> None:
        """Search for the text `query` as `wren search` does (`Query`: a capital letter makes it case-sensitive)."""
        try:
            compiled: Query | None = Query.of(query)
        except BadPattern:  # nothing typed: nothing searched
            compiled, query = None, ""
        self.query, self.compiled, self.matches = query, compiled, None

    def clear(self) -> None:
        self.query, self.compiled, self.matches, self.progress = "", None, None, None
        self.reader.runner.cancel("search")

    def find(self, *, forward: bool) -> None:
        """Scan what is not scanned yet (all of it, or what came since), then say `ready`."""
        reader = self.reader
        query = self.compiled
        if query is None or not reader.is_open or self.progress is not None:
            return
        timeline, matches = reader.timeline, self._matches()
        count = len(timeline)
        if matches is not None and matches.upto >= count:
            self.ready(forward)
            return
        lo = 0 if matches is None else matches.upto
        self.progress = 0.0
        reader.listener.changed()
        job = partial(self._scan, reader.generation, timeline, reader.source.share(), query, lo, count, forward)
        reader.runner.in_thread("search", job)

    def _matches(self) -> Matches | None:
        """The matches so far, if found in the timeline shown (positions in one replaced mean nothing)."""
        matches = self.matches
        return matches if matches is not None and matches.timeline is self.reader.timeline else None

    def _scan(
        self,
        generation: int,
        timeline: Timeline,
        own: SessionSource,
        query: Query,
        lo: int,
        hi: int,
        forward: bool,
        cancelled: Cancelled,
    ) -> None:
        """Scan items lo..hi for `query` (in a thread), with progress."""
        to_ui = self.reader.runner.to_ui
        with closing(own):
            found = find_all(
                timeline,
                own,
                query,
                lo,
                hi,
                progress=lambda done: to_ui(partial(self._progress, generation, done)),
                cancelled=cancelled,
            )
        if found is not None and not cancelled():
            to_ui(partial(self._found, generation, timeline, query, found, lo, hi, forward))

    def _progress(self, generation: int, done: float) -> None:
        if generation == self.reader.generation and self.progress is not None:
            self.progress = done
            self.reader.listener.changed()

    def _found(
        self, generation: int, timeline: Timeline, query: Query, found: array[int], lo: int, hi: int, forward: bool
    ) -> None:
        self.progress = None
        if generation != self.reader.generation or query != self.compiled or timeline is not self.reader.timeline:
            self.reader.listener.changed()
            return
        matches = self._matches()
        if matches is None or matches.upto != lo:
            matches = Matches(timeline, array("i"), 0)
        matches.positions.extend(found)
        matches.upto = hi
        self.matches = matches
        self.ready(forward)

    def target(self, cursor: int, *, forward: bool) -> int | None:
        """The next (or previous) match from `cursor`, around the end; None: no match at all."""
        matches = self._matches()
        positions = matches.positions if matches is not None else None
        if not positions:
            return None
        if forward:
            return positions[bisect_right(positions, cursor) % len(positions)]
        return positions[bisect_left(positions, cursor) - 1]  # -1 wraps to the last

    def status(self, cursor: int) -> str | None:
        """Which match the cursor is on (k of n), or how many there are."""
        matches = self._matches()
        if matches is None or not self.query or not matches.positions:
            return None
        positions = matches.positions
        at = bisect_left(positions, cursor)
        if at < len(positions) and positions[at] == cursor:
            return strings.MATCH.format(k=at + 1, n=len(positions))
        return strings.MATCHES.format(n=len(positions), query=shorten(self.query, 30))
