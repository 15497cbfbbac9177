"""Search across every listed session: the hits in a list as they are found, Enter opens one at its match.

The list is part of the browser's screen, mounted with it and hidden until the first search: Enter
shows it in place of the session table, so no screen is pushed, composed and styled between Enter
and the first hit. The search runs on the index's thread (the engine of `wren search`, newest
session first) and hands its hits to the UI in small batches, so the first show while later
sessions are still read. Esc in the session opened returns here, the list as it was; Esc here
stops the search and shows the sessions again.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...journal.visible import visible
from ...search.engine import Found, Hit, Searched, search
from ...search.query import Query
from ...search.sources import SearchSource
from ...search.streamed import StreamedRead, WarmIndex
from .. import strings
from ..text import shorten

# The sessions to search, made on the search's thread (newest first, as `wren search` orders them).
Listing = Callable[[], list[SearchSource]]
# Open a session at a hit: its journal, the hit's place (line start, part) and the text matched.
OpenAt = Callable[[Path, tuple[int, int], str], None]
# Hits handed to the UI at least this often while a search runs (the first as soon as found).
_BATCH_SECONDS = 0.05
# Before the first hit, sessions with none are said at most this often; the list shows after this at the latest.
_FIRST_SECONDS = 0.1
# The search waits at most this long for its first hit drawn before it goes on.
_DRAWN_SECONDS = 0.5
# The list holds at most this many hits; the count goes on past it.
MOST_SHOWN = 5000


class _Run:
    """One search: what its thread hands over is taken only while it is the list's search and not cancelled."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        # Set once the frame that shows the first hit is drawn (or the search stopped): the thread waits for it.
        self.drawn = threading.Event()

    def cancel(self) -> None:
        self.cancelled.set()
        self.drawn.set()


class SearchResults(Vertical):
    """The hits of a search of every session a browser lists, shown in place of its table (`start`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
    ]

    class Closed(Message):
        """Esc: the search stopped and the list hidden; the browser shows its sessions again."""

    def __init__(self, *, open_at: OpenAt) -> None:
        super().__init__(id="search-results")
        self.open_at = open_at
        self.total = 0
        self.search_query: Query | None = None
        self.hits: list[Hit] = []
        self.found = 0  # hits found, shown or not
        self.searched = 0  # sessions whose search ended
        self.stopped = 0  # of them, read only up to a damaged line (or not at all)
        self.done = False
        self._run = _Run()
        self._shown: Callable[[], None] = lambda: None

    def compose(self) -> ComposeResult:
        yield Static(id="results-title")
        yield OptionList(id="results")
        yield Static(id="results-progress")

    @property
    def results(self) -> OptionList:
        return self.query_one("#results", OptionList)

    @property
    def shown(self) -> bool:
        return self.display

    def start(self, sources: Listing, total: int, query: Query, index: WarmIndex, shown: Callable[[], None]) -> None:
        """Search the sessions `sources` makes, on the index's thread (it answers first); the list shows with the
        first hit, or the search's end, or after _FIRST_SECONDS (then saying how far it is), and calls `shown`.

        Until then nothing on screen changes, so the UI thread has nothing to draw: the search has Python's
        lock to itself, and the one frame that shows the list shows the hit with it."""
        self._run.cancel()
        self._run = run = _Run()
        self.total = total
        self.search_query = query
        self.hits, self.found, self.searched, self.stopped, self.done = [], 0, 0, 0, False
        self._shown = shown
        if self.results.option_count:  # Esc clears them; a refresh now would draw a frame before the first hit
            self.results.clear_options()
        self._app = self.app  # the thread has no app of its own to find
        index.run(lambda: self._search_thread(index, run, query, sources))
        self.set_timer(_FIRST_SECONDS, lambda: self._show(run))

    def _show(self, run: _Run) -> None:
        if run is not self._run or run.cancelled.is_set() or self.display:
            return
        pattern = "" if self.search_query is None else self.search_query.pattern
        title = strings.RESULTS_TITLE.format(query=shorten(visible(pattern), 80))
        self.query_one("#results-title", Static).update(Text(title))
        self._show_progress()
        self.display = True
        self._shown()
        # Focused once drawn: moving the focus restyles the widgets it leaves and reaches before the frame.
        self.call_after_refresh(self._focus_hits)

    def _focus_hits(self) -> None:
        if self.display:  # not closed meanwhile
            self.results.focus()

    def stop(self) -> None:
        """Stop the search (its thread ends at its next session); what it still hands over is dropped."""
        self._run.cancel()

    def on_unmount(self) -> None:
        self.stop()

    def action_back(self) -> None:
        self.stop()
        self.display = False
        self.results.clear_options()  # now, while the list goes: the next search's first frame has less to do
        self.post_message(self.Closed())

    def _search_thread(self, index: WarmIndex, run: _Run, query: Query, sources: Listing) -> None:
        try:
            self._search(index.snapshot(query), run, query, sources)
        except Exception as exc:  # a bug: the app stops and says it, as it does for a worker's
            error = exc

            def fail() -> None:
                raise error

            with contextlib.suppress(RuntimeError):
                self._app.call_from_thread(self._app.call_later, fail)

    def _search(self, index: StreamedRead | None, run: _Run, query: Query, sources: Listing) -> None:
        """The search's thread: the sessions listed, each answered from the index (or read), in batches to the UI."""
        cancelled = run.cancelled.is_set
        if cancelled():
            if index is not None:
                index.end()
            return
        batch: list[Found] = []
        # Until the first hit, sessions with none are handed over only every _FIRST_SECONDS: the UI thread
        # kept drawing progress would slow the search (and the frame) that shows the hit; it goes at once.
        sent, wait, shown = time.monotonic(), _FIRST_SECONDS, False
        try:
            for found in search(sources(), query, cancelled=cancelled, index=index):
                batch.append(found)
                now = time.monotonic()
                first = not shown and isinstance(found, Hit)
                if first or now - sent >= wait:
                    if first:
                        shown, wait = True, _BATCH_SECONDS
                    if not self._hand_over(run, batch):
                        return
                    if first:  # the next batches wait for it drawn: this thread would slow that frame
                        run.drawn.wait(_DRAWN_SECONDS)
                    batch, sent = [], time.monotonic()
        finally:
            if index is not None:
                index.end()
        if not cancelled():
            self._hand_over(run, batch, done=True)

    def _hand_over(self, run: _Run, batch: list[Found], *, done: bool = False) -> bool:
        """Hand `batch` to the UI thread; False when the app is gone (nothing more to do)."""

        def take() -> None:
            if run is self._run and not run.cancelled.is_set() and self.is_attached:
                self._take(batch, done)
                self._show(run)
                if self.hits and not run.drawn.is_set():
                    self.call_after_refresh(run.drawn.set)

        try:
            self._app.call_from_thread(take)
        except RuntimeError:  # the app closed under the search
            run.cancelled.set()
            return False
        return True

    def _take(self, batch: list[Found], done: bool) -> None:
        options: list[Option] = []
        for found in batch:
            if isinstance(found, Hit):
                self.found += 1
                if len(self.hits) < MOST_SHOWN:
                    options.append(Option(_hit_line(found), id=str(len(self.hits))))
                    self.hits.append(found)
                continue
            self.searched += 1
            note = _stop_line(found)
            if note is not None:
                self.stopped += 1
                options.append(Option(note, disabled=True))
        if options:
            self.results.add_options(options)
            if self.results.highlighted is None:
                self.results.highlighted = next((i for i, o in enumerate(self.results.options) if not o.disabled), None)
        self.done = self.done or done
        self._show_progress()

    def _show_progress(self) -> None:
        self.query_one("#results-progress", Static).update(self._progress())

    def _progress(self) -> Text:
        total = self.total
        if not self.done:
            text = strings.RESULTS_SEARCHING.format(done=self.searched, total=total, found=self.found)
        elif not self.found:
            text = strings.RESULTS_NONE.format(total=total)
        else:
            text = strings.RESULTS_DONE.format(found=self.found, total=total)
        if self.found > len(self.hits):
            text += " · " + strings.RESULTS_CAPPED.format(shown=len(self.hits))
        if self.stopped:
            text += " · " + strings.RESULTS_STOPPED.format(count=self.stopped)
        return Text(text)

    @on(OptionList.OptionSelected, "#results")
    def _open(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is None:
            return
        hit = self.hits[int(event.option.id)]
        self.open_at(hit.path, (hit.item.offset, hit.item.part), hit.snippet[hit.start : hit.end])


def _hit_line(hit: Hit) -> Text:
    """One hit: session, seq, time, role, and the snippet on one line with the match marked."""
    item = hit.item
    role = item.role if item.name is None else f"{item.role}:{item.name}"
    place = f"#{item.seq}" if hit.agent == "wren" else f"line {item.seq}"
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{shorten(hit.session, 40)} ", "bold")
    text.append(f"{place:>7} {item.ts[11:19]} ", "dim")
    text.append(f"{shorten(visible(role), 24):<16} ", "italic")
    parts = (hit.snippet[: hit.start], hit.snippet[hit.start : hit.end], hit.snippet[hit.end :])
    before, match, after = (visible(part) for part in parts)
    text.append(before)
    text.append(match, "bold reverse")
    text.append(after)
    return text


def _stop_line(searched: Searched) -> Text | None:
    """What the list says of a session read only in part (or not at all), after its hits."""
    if searched.unreadable is not None:
        return Text(strings.RESULTS_UNREADABLE.format(why=shorten(visible(searched.unreadable), 200)), "red")
    stop = searched.stop
    if stop is None or stop.torn:
        return None  # a torn tail is a crash's normal end: every whole line was searched
    words = strings.RESULTS_STOP.format(session=searched.session, line=stop.line, why=shorten(visible(stop.why), 120))
    return Text(words, "red")
