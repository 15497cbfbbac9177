"""Big journals: the offset index, the row map, tail-first opening and the compact timeline."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.bench.gen import generate
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from tests.tui.journals import SESSION
from wren_tui.journal.events import Message, ToolEnd, Usage
from wren_tui.journal.forking import fork_points
from wren_tui.journal.offsets import Chunk, LineScanner, decode_at, tail_span
from wren_tui.journal.reader import read_events
from wren_tui.sessions import tailing
from wren_tui.sessions.local import LocalJournal
from wren_tui.tui import session_reader
from wren_tui.tui.app import WrenApp
from wren_tui.tui.rowmap import RowMap
from wren_tui.tui.timeline import Timeline
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("big") / f"{SESSION}.jsonl", 3000)


def _folded(path: Path, chunk: int = 4096) -> Timeline:
    source = LocalJournal(path)
    assert source.open()
    timeline = Timeline(source)
    for part in source.lines().chunks(size=chunk):
        timeline.fold(part)
    return timeline


def test_row_map_finds_the_item_of_every_row_as_heights_change() -> None:
    rng = random.Random(4)
    rows = RowMap()
    heights = [rng.randint(1, 9) for _ in range(2000)]
    rows.extend(heights)
    for _ in range(300):
        index, height = rng.randrange(len(heights)), rng.randint(1, 30)
        heights[index] = height
        rows.set(index, height)
    rows.truncate(1500)
    del heights[1500:]
    rows.extend([3, 4])
    heights += [3, 4]
    starts = [sum(heights[:i]) for i in range(len(heights))]
    assert rows.rows == sum(heights)
    for index in range(0, len(heights), 7):
        assert rows.start(index) == starts[index]
        assert rows.find(starts[index]) == index
        assert rows.find(starts[index] + heights[index] - 1) == index
    assert rows.find(-1) == -1
    assert rows.find(sum(heights)) == len(heights)


def test_scanner_in_small_chunks_reads_the_lines_read_events_reads(big: Path) -> None:
    expected = read_events(big)
    fd = os.open(big, os.O_RDONLY)
    try:
        scanner = LineScanner(big, fd)
        chunks = list(scanner.chunks(size=1000))
        seqs = [event.seq for part in chunks for event in part.events]
        ends = [end for part in chunks for end in part.ends]
        assert seqs == [e.seq for e in expected.events]
        assert ends == list(expected.line_ends)
        assert scanner.offset == big.stat().st_size and scanner.stop is None
        # Any line decodes again from its span alone.
        last = chunks[-1]
        assert decode_at(fd, last.starts[-1], last.ends[-1]) == expected.events[-1]
    finally:
        os.close(fd)


def test_a_bad_line_is_reported_by_its_number_from_the_start_even_when_read_from_the_middle(
    big: Path, tmp_path: Path
) -> None:
    data = bytearray(big.read_bytes())
    lines = data.split(b"\n")
    bad = 2500  # 1-based line number of the line changed after it was written
    at = sum(len(line) + 1 for line in lines[: bad - 1]) + 20
    data[at] = ord("#") if data[at] != ord("#") else ord("%")
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(bytes(data))
    expected = read_events(path)
    assert expected.stop is not None and expected.stop.line == bad
    fd = os.open(path, os.O_RDONLY)
    try:
        start, _ = tail_span(fd, len(data), 200_000)
        head = LineScanner(path, fd)
        list(head.chunks(stop=start, size=3000))
        tail = LineScanner(path, fd, start, first_line=head.lineno, after_seq=head.prev_seq)
        events = [e for part in tail.chunks(size=5000) for e in part.events]
        assert head.stop is None and tail.stop == expected.stop
        assert events[-1].seq == expected.events[-1].seq
    finally:
        os.close(fd)


def test_a_seq_that_does_not_increase_across_the_starting_point_stops_the_scanner(big: Path) -> None:
    fd = os.open(big, os.O_RDONLY)
    try:
        scanner = LineScanner(big, fd, 0, first_line=10, after_seq=5)
        assert [part.events for part in scanner.chunks()] == [[]]
        assert str(scanner.stop) == "line 11: seq 1 does not increase on 5"
    finally:
        os.close(fd)


def test_the_compact_timeline_finds_the_kernels_fork_points_and_tool_calls(big: Path) -> None:
    timeline = _folded(big)
    events = read_events(big).events
    assert timeline.events == len(events)
    assert [timeline.event(p).seq for p in timeline.fork_items] == [p.seq for p in fork_points(events)]
    asked = [call for e in events if isinstance(e, Message) for call in (e.message.tool_calls or ())]
    assert timeline.calls == len(asked)
    rows = [timeline.call(n) for n in range(timeline.calls)]
    assert [(r.id, r.name, r.args) for r in rows] == [(c.id, c.name, c.args) for c in asked]
    # The journal may end inside a call (the generator stops at a count, not at a turn's end).
    ends = {e.id: e for e in events if isinstance(e, ToolEnd)}
    answered = {e.message.tool_call_id for e in events if isinstance(e, Message) and e.message.role == "tool"}
    assert all(r.end == ends.get(r.id) and r.answered == (r.id in answered) for r in rows)
    assert sum(r.answered for r in rows) > len(rows) // 2
    tokens = sum(e.input_tokens + e.output_tokens for e in events if isinstance(e, Usage))
    assert timeline.tokens == tokens


async def test_a_journal_past_the_tail_window_shows_its_tail_first_then_all_of_it(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_reader, "TAIL_WINDOW", 50_000)
    events = read_events(big).events
    app = WrenApp(folder=big.parent, session=big, clock=FixedClock(datetime.now(UTC)), watch_mode="poll")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, f"#{events[-1].seq} ")  # the last event, before the index is whole
        status = app.screen.query_one(StatusLine)
        await wait_for(pilot, lambda: f"{len(events)} events" in str(status.render()), "the whole index")
        assert "indexing" not in str(status.render())
        await pilot.press("home")
        await wait_for_text(pilot, "#1 ")
        view = app.screen.query_one(ConversationView)
        assert view.selected_event == events[0]
        # Scrolling down the start lays out items estimated so far; every row belongs to an item.
        for _ in range(30):
            await pilot.press("pagedown")
        await pilot.pause()
        assert "#" in screen_text(app)


async def test_a_bad_line_before_the_tail_window_ends_the_session_there(
    big: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_reader, "TAIL_WINDOW", 50_000)
    data = bytearray(big.read_bytes())
    at = data.index(b'"content":"', 1000) + 12
    data[at] = ord("#") if data[at] != ord("#") else ord("%")
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(bytes(data))
    expected = read_events(path)
    app = WrenApp(folder=path.parent, session=path, clock=FixedClock(datetime.now(UTC)), watch_mode="poll")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, f"stopped at line {expected.stop.line}:")
        assert f"{len(expected.events)} events" in screen_text(app)
        await wait_for_text(pilot, f"#{expected.events[-1].seq} ")


async def test_a_bad_line_with_much_after_it_is_read_once_not_again_and_again(
    big: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More than READ_ON_UI bytes after the bad line: each look at it is a worker's read.
    monkeypatch.setattr(session_reader, "TAIL_WINDOW", 50_000)
    data = bytearray(big.read_bytes())
    at = data.index(b'"content":"', 1000) + 12
    data[at] = ord("#") if data[at] != ord("#") else ord("%")
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(bytes(data))
    assert len(data) - at > session_reader.READ_ON_UI
    reads = 0
    chunks = LineScanner.chunks

    def counted(self: LineScanner, *args: Any, **kwargs: Any) -> Iterator[Chunk]:
        nonlocal reads
        reads += 1
        return chunks(self, *args, **kwargs)

    monkeypatch.setattr(LineScanner, "chunks", counted)
    # Count the viewer's looks at the folder (in poll mode, one every POLL_S), to know some have happened.
    polls = 0
    poll_folder = tailing.poll_folder

    async def counting(folder: Path, on_change: tailing.OnChange) -> None:
        async def looked(paths: set[Path]) -> None:
            nonlocal polls
            await on_change(paths)
            polls += 1

        await poll_folder(folder, looked)

    monkeypatch.setattr(tailing, "poll_folder", counting)
    app = WrenApp(folder=path.parent, session=path, clock=FixedClock(datetime.now(UTC)), watch_mode="poll")
    stop = read_events(path).stop
    assert stop is not None
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_text(pilot, f"stopped at line {stop.line}:")
        # The opening's own reads end (the rest of the file indexed once): two looks in a row read nothing.
        last = {"polls": polls, "reads": reads}

        def settled() -> bool:
            if polls < last["polls"] + 2:
                return False
            if reads == last["reads"]:
                return True
            last.update(polls=polls, reads=reads)
            return False

        await wait_for(pilot, settled, "the opening's reads to end (a re-read at every look never ends)", 30)
        before, looked_at = reads, polls
        await wait_for(pilot, lambda: polls >= looked_at + 5, "five more looks at the folder", 30)
        # Five looks and the file did not change: nothing is read again (it was re-read at every look).
        assert reads == before


def test_the_tail_read_first_leaves_a_huge_last_line_to_the_background(tmp_path: Path) -> None:
    from tests.tui.journals import encode, user

    small = encode([user(f"message {n}") for n in range(1, 2000)])
    huge = encode([user("B" * 300_000)], first_seq=2000)
    path = tmp_path / "huge-last.jsonl"
    path.write_bytes(small + huge)
    fd = os.open(path, os.O_RDONLY)
    try:
        size = len(small) + len(huge)
        # The window holds only the end of the huge line: the lines before it are read first.
        start, stop = tail_span(fd, size, 100_000)
        assert stop == len(small) and 0 < start < stop
        assert small[start - 1 : start] == b"\n"
        # A torn huge line, and no line start within reach: nothing before the first frame.
        torn = tmp_path / "torn.jsonl"
        torn.write_bytes(small + huge[:-1] + b"B" * 500_000)
        torn_fd = os.open(torn, os.O_RDONLY)
        try:
            assert tail_span(torn_fd, torn.stat().st_size, 100_000, reach=200_000) == (0, 0)
            assert tail_span(torn_fd, torn.stat().st_size, 100_000)[1] == len(small)
        finally:
            os.close(torn_fd)
    finally:
        os.close(fd)
