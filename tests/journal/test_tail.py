"""Tail: whole new lines since the last read, the partial rest left for later, a start over on shrink or replace."""

from __future__ import annotations

import os
from pathlib import Path

from tests.journal.helpers import framed, session_events, write_journal
from wren_tui.journal.events import ChatMessage, Message
from wren_tui.journal.reader import Tail
from wren_tui.journal.writer import JournalWriter


def test_tail_returns_only_whole_lines_and_picks_up_the_rest_later(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    tail = Tail(path)
    first = tail.read()
    assert first.events == written[:-1] and first.stop is None
    assert tail.read().events == []
    path.write_bytes(data)
    assert tail.read().events == written[-1:]


def test_tail_starts_over_when_the_file_shrinks(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    tail = Tail(path)
    tail.read()
    lines = path.read_bytes().splitlines(keepends=True)
    with open(path, "r+b") as f:
        f.truncate(sum(map(len, lines[:3])))
    batch = tail.read()
    assert batch.restarted and batch.events == written[:3]


def test_tail_starts_over_when_the_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    tail = Tail(path)
    tail.read()
    other = tmp_path / "other.jsonl"
    replacement = write_journal(other, session_events()[:2])
    os.replace(other, path)
    batch = tail.read()
    assert batch.restarted and batch.events == replacement


def test_tail_follows_a_writer_that_reopens_after_a_torn_tail(tmp_path: Path) -> None:
    # The writer moves the torn bytes aside and appends in their place: the Tail must not glue them together.
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    with open(path, "ab") as f:
        f.write(b'{"seq":14,"ts":"2026-01-01T00:00:00.000Z","type":"delta","text":"half')
    tail = Tail(path)
    assert tail.read().events == written
    with JournalWriter.open(path) as writer:
        event = writer.append(Message(message=ChatMessage(role="user", content="a longer line than the torn one was")))
    batch = tail.read()
    assert batch.stop is None and batch.events == [event]


def test_tail_stops_at_a_zero_filled_tail_and_resumes_once_the_writer_repairs_it(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    with open(path, "ab") as f:
        f.write(b"\x00" * 64 + b"\n")
    tail = Tail(path)
    batch = tail.read()
    assert batch.events == written and batch.stop is not None and batch.stop.line == len(written) + 1
    assert "NUL" in batch.stop.why
    with JournalWriter.open(path) as writer:
        event = writer.append(Message(message=ChatMessage(role="user", content="x" * 100)))
    batch = tail.read()
    assert batch.stop is None and batch.events == [event]


def test_tail_of_a_missing_file_is_empty_until_it_appears(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    tail = Tail(path)
    assert tail.read().events == []
    written = write_journal(path)
    assert tail.read().events == written


def test_tail_reports_a_seq_gap_as_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(
        framed(b'{"seq":1,"ts":"t","type":"delta","text":"a"}\n{"seq":5,"ts":"t","type":"delta","text":"b"}\n')
    )
    batch = Tail(path).read()
    assert [e.seq for e in batch.events] == [1, 5] and batch.warnings == ["line 2: seq jumps from 1 to 5"]
