"""The session reader without Textual: a journal read tail first, then whole, then as it grows; searched; its status.

The runner here is the smallest honest one: jobs run in real threads, and what they hand back
waits in a queue until the test (the "UI thread") takes it, as Textual's message loop would.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.search.helpers import resealed
from tests.tui.journals import SESSION, assistant, user, write_journal
from wren_tui.journal.writer import JournalWriter
from wren_tui.sessions.local import LocalJournal
from wren_tui.tui import search as search_module
from wren_tui.tui import session_reader, strings
from wren_tui.tui.session_reader import Cancelled, SessionReader, SessionSearch
from wren_tui.tui.timeline import Timeline


class QueueRunner:
    """Jobs in threads; everything meant for the UI thread queued until `pump` runs it on the test's thread."""

    def __init__(self) -> None:
        self.calls: queue.Queue[Callable[[], None]] = queue.Queue()
        self.cancelled: set[str] = set()
        self.threads: list[threading.Thread] = []

    def in_thread(self, group: str, job: Callable[[Cancelled], None]) -> None:
        self.cancelled.discard(group)
        thread = threading.Thread(target=job, args=(lambda: group in self.cancelled,), daemon=True)
        self.threads.append(thread)
        thread.start()

    def to_ui(self, call: Callable[[], None]) -> None:
        self.calls.put(call)

    def soon(self, call: Callable[[], None], delay: float = 0.0) -> None:
        self.calls.put(call)

    def cancel(self, group: str) -> None:
        self.cancelled.add(group)

    def pump(self, until: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        """Run what was handed to the UI thread until `until()` holds (or fail after `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}")
            try:
                call = self.calls.get(timeout=min(left, 0.1))
            except queue.Empty:
                continue
            call()


class Listener:
    """What the reader tells, written down."""

    def __init__(self) -> None:
        self.replacements: list[tuple[int, bool]] = []  # (items, continues)
        self.growth: list[tuple[int, int]] = []
        self.writer: list[bool] = []
        self.changes = 0

    def replaced(self, timeline: Timeline, continues: bool) -> None:
        self.replacements.append((len(timeline), continues))

    def grew(self, first: int, added: int) -> None:
        self.growth.append((first, added))

    def writer_changed(self, alive: bool) -> None:
        self.writer.append(alive)

    def changed(self) -> None:
        self.changes += 1


def _reader(path: Path) -> tuple[SessionReader, QueueRunner, Listener]:
    runner, listener = QueueRunner(), Listener()
    return SessionReader(LocalJournal(path, watch_mode="poll"), runner, listener), runner, listener


def test_a_big_journal_is_read_tail_first_then_whole_then_as_it_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_reader, "TAIL_WINDOW", 4_000)
    events = [user(f"message number {n} " + "x" * 200) for n in range(60)]
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    reader, runner, listener = _reader(path)
    reader.open()
    try:
        # The tail alone, at once; the rest is being indexed.
        tail = len(reader.timeline)
        assert 0 < tail < 60 and reader.indexing == 0.0
        assert listener.replacements == [(tail, False)]
        assert reader.busy(None) == strings.INDEXING.format(percent=0)
        assert reader.mode(follow=True) == strings.ENDED  # how it stands is known once it is read whole
        runner.pump(lambda: reader.indexing is None, "the whole index")
        assert listener.replacements == [(tail, False), (60, True)]
        assert reader.timeline.event(0).seq == 1 and reader.busy(None) is None
        # Its state as the list says it: no run_end, so interrupted.
        assert reader.mode(follow=True) == "interrupted" and reader.integrity() is None

        # A writer appends: read on, and the listener hears of the new items.
        with JournalWriter.open(path, fsync="none") as writer:
            writer.append(assistant("an answer, appended"))
            reader.read_new()
            assert listener.growth == [(60, 1)]
            assert reader.writer_alive and listener.writer[-1] is True
            assert reader.mode(follow=True) == strings.LIVE
        reader.check_writer()
        assert listener.writer[-1] is False
        assert reader.timeline.events == 61
    finally:
        reader.end()


@pytest.mark.parametrize(
    ("typed", "found"),
    [("keep", [0, 1, 2]), ("KEEP", [1]), ("Keep", []), ("\u212aeep", [0]), ("eep go", [0, 2])],
    ids=["lower-ignores-case-kelvin-too", "capitals-as-typed", "no-such-case", "the-kelvin-sign", "two-words"],
)
@pytest.mark.parametrize("raw", ["c-find", "bytes-find"])
def test_the_session_search_finds_what_the_query_of_wren_search_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: str, found: list[int], raw: str
) -> None:
    if raw == "bytes-find":
        monkeypatch.setattr(search_module, "native", None)  # as where the C raw pass could not be built
    else:
        assert search_module.native is not None
    # The Kelvin sign matches k ignoring case (as re.IGNORECASE does): its bytes hold no k, yet it is found.
    events = [user("\u212aeep going"), assistant("KEEP"), user("keep going"), assistant("nothing")]
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    reader, runner, _listener = _reader(path)
    reader.open()
    try:
        ready: list[bool] = []
        search = SessionSearch(reader, ready.append)
        search.start(typed)
        search.find(forward=True)
        runner.pump(lambda: bool(ready) or search.progress is None, "the search")
        matches = search.matches
        assert (list(matches.positions) if matches is not None else []) == found
    finally:
        reader.end()
    for thread in runner.threads:
        thread.join(timeout=10)


@pytest.mark.parametrize("raw", ["c-find", "bytes-find"])
def test_the_session_search_finds_a_character_its_writer_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    if raw == "bytes-find":
        monkeypatch.setattr(search_module, "native", None)
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [user("a Café au lait"), assistant("none")])
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if "Café".encode() in line)
    lines[at] = resealed(lines[at], "é".encode(), b"\\u00E9")  # as a writer that escapes what is not ASCII
    path.write_bytes(b"".join(lines))
    reader, runner, _listener = _reader(path)
    reader.open()
    try:
        ready: list[bool] = []
        search = SessionSearch(reader, ready.append)
        search.start("Café")  # a capital: case-sensitive, its é looked for as it is and as an escape
        search.find(forward=True)
        runner.pump(lambda: bool(ready) or search.progress is None, "the search")
        assert search.matches is not None and list(search.matches.positions) == [0]
    finally:
        reader.end()
    for thread in runner.threads:
        thread.join(timeout=10)


def test_a_torn_last_line_is_said_and_a_search_finds_and_wraps(tmp_path: Path) -> None:
    events = [user("find the parrot"), assistant("no parrot here"), user("and a cat")]
    path = write_journal(tmp_path / f"{SESSION}.jsonl", events)
    with path.open("ab") as torn:
        torn.write(b'{"type":"message","seq":4')  # a writer killed mid-line
    reader, runner, _listener = _reader(path)
    reader.open()
    try:
        assert reader.indexing is None and len(reader.timeline) == 3
        assert reader.integrity() == strings.STOPPED_AT.format(line=4, reason=strings.TORN_WAITING)

        ready: list[bool] = []
        search = SessionSearch(reader, ready.append)
        search.start("parrot")
        search.find(forward=True)
        assert search.progress == 0.0
        runner.pump(lambda: bool(ready), "the search")
        assert ready == [True] and search.progress is None
        assert search.target(0, forward=True) == 1  # from the first item on, the next match
        assert search.target(1, forward=True) == 0  # around the end
        assert search.target(0, forward=False) == 1  # back from the first: the last
        assert search.status(1) == strings.MATCH.format(k=2, n=2)
        # Asked again, the matches found are reused: no second scan.
        search.find(forward=False)
        assert ready == [True, False] and search.progress is None
    finally:
        reader.end()
    for thread in runner.threads:
        thread.join(timeout=10)
        assert not thread.is_alive()
