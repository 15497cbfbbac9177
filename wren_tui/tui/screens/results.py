"""Search across every listed session: the hits in a list as they are found, Enter opens one at its match.

The search runs in a worker thread (the engine of `wren search`, newest session first) and hands
its hits to the UI in small batches, so the first show while later sessions are still read. Esc in
the session opened returns here, the list as it was; Esc here returns to the browser.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from ...journal.visible import visible
from ...search.engine import Found, Hit, Searched, search
from ...search.index import Snapshot, connect_read, index_path
from ...search.query import Query
from ...search.sources import SearchSource
from .. import strings
from ..index_stream import StreamedSnapshot
from ..text import shorten
from ..widgets.key_footer import KeyFooter

# Open a session at a hit: its journal, the hit's place (line start, part) and the text matched.
OpenAt = Callable[[Path, tuple[int, int], str], None]
# Hits handed to the UI at least this often while a search runs (the first as soon as found).
_BATCH_SECONDS = 0.05
# The list holds at most this many hits; the count goes on past it.
MOST_SHOWN = 5000


class SearchResults(Screen[None]):
    CSS_PATH = "results.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
    ]

    def __init__(
        self, sources: list[SearchSource], query: Query, *, open_at: OpenAt, indexed: Path | None = None
    ) -> None:
        super().__init__()
        self.sources = sources
        self.indexed = indexed  # the journals folder whose index (`wren search` keeps it) answers first
        self.search_query = query
        self.open_at = open_at
        self.hits: list[Hit] = []
        self.found = 0  # hits found, shown or not
        self.searched = 0  # sessions whose search ended
        self.stopped = 0  # of them, read only up to a damaged line (or not at all)
        self.done = False
        # What the search handed over before the list was there to take it (it starts as the screen is composed).
        self._early: list[tuple[list[Found], bool]] | None = []
        self._shown_a_hit = False  # the worker's: the first hit is handed over at once, the rest in batches

    def compose(self) -> ComposeResult:
        self._search()  # now, not once mounted: mounting the screen takes longer than the index's first answer
        title = strings.RESULTS_TITLE.format(query=shorten(visible(self.search_query.pattern), 80))
        yield Static(Text(title), id="results-title")
        yield OptionList(id="results")
        yield Static(Text(""), id="results-progress")
        yield KeyFooter(keep=("quit", "toggle_help", "back"))

    @property
    def results(self) -> OptionList:
        return self.query_one(OptionList)

    def on_mount(self) -> None:
        self.results.focus()
        early, self._early = self._early or [], None
        for batch, done in early:
            self._take(batch, done)
        self._show_progress()

    def on_unmount(self) -> None:
        self.workers.cancel_group(self, "search-all")

    @work(thread=True, exclusive=True, group="search-all")
    def _search(self) -> None:
        worker = get_current_worker()
        batch: list[Found] = []
        # Sessions with no hit are said in the first batch, 50 ms on, unless a hit comes first: it is handed
        # over at once, as nothing else would be drawn in the frame that shows it.
        sent = time.monotonic()
        index = self._index()
        try:
            for found in search(self.sources, self.search_query, cancelled=lambda: worker.is_cancelled, index=index):
                batch.append(found)
                now = time.monotonic()
                first = not self._shown_a_hit and isinstance(found, Hit)
                if first or now - sent >= _BATCH_SECONDS:
                    self._shown_a_hit = self._shown_a_hit or first
                    self._hand_over(batch)
                    batch, sent = [], now
        finally:
            if index is not None:
                index.close()
        if not worker.is_cancelled:
            self._hand_over(batch, done=True)

    def _index(self) -> Snapshot | None:
        """The index, opened read-only (the viewer never writes it), for this query; None: read the files."""
        if self.indexed is None:
            return None
        db = connect_read(index_path(self.indexed))
        if db is None:
            return None
        snapshot = StreamedSnapshot(db, self.search_query)
        if snapshot.load():
            return snapshot
        snapshot.close()
        return None

    def _hand_over(self, batch: list[Found], *, done: bool = False) -> None:
        def take() -> None:
            if self._early is not None:
                self._early.append((batch, done))
            elif self.is_running:
                self._take(batch, done)

        self.app.call_from_thread(take)

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
        total = len(self.sources)
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
        self.query_one("#results-progress", Static).update(Text(text))

    @on(OptionList.OptionSelected, "#results")
    def _open(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is None:
            return
        hit = self.hits[int(event.option.id)]
        self.open_at(hit.path, (hit.item.offset, hit.item.part), hit.snippet[hit.start : hit.end])

    def action_back(self) -> None:
        self.dismiss(None)


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
