"""Huge lines read off the viewer's GIL: a child process checks and decodes them, with the reader's verdicts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tui.journals import SESSION, encode, finished_story, user, write_journal
from wren_tui.journal import huge_line
from wren_tui.journal.events import Event, Message
from wren_tui.journal.offsets import LineScanner
from wren_tui.journal.reader import read_events

BIG = 3 << 20
CLIP = 1000


def _scan(path: Path) -> tuple[LineScanner, list[Event]]:
    """Every line as the viewer's workers read them: those over 1 MB by a child, cut to CLIP characters."""
    fd = os.open(path, os.O_RDONLY)
    try:
        scanner = LineScanner(path, fd, 0, elsewhere=(1 << 20, CLIP))
        return scanner, [e for chunk in scanner.chunks() for e in chunk.events]
    finally:
        os.close(fd)


def test_a_huge_line_comes_back_from_the_child_cut_short_and_the_lines_after_it_read_on(tmp_path: Path) -> None:
    body = "start " + "x" * BIG
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [user("before"), user(body), user("after")])
    scanner, events = _scan(path)
    assert [e.seq for e in events] == [1, 2, 3] and scanner.stop is None
    assert isinstance(events[1], Message) and events[1].message.content == body[:CLIP]
    assert isinstance(events[2], Message) and events[2].message.content == "after"
    assert scanner.offset == path.stat().st_size


@pytest.mark.parametrize("damage", ["crc", "seq"])
def test_a_bad_huge_line_stops_the_reading_where_read_events_stops_it(tmp_path: Path, damage: str) -> None:
    body = "y" * BIG
    head = encode(finished_story()[:3])
    if damage == "crc":
        data = bytearray(head + encode([user(body)], first_seq=4))
        data[data.index(b"yyyy") + 10] = ord("z")  # changed after it was written
    else:
        data = bytearray(head + encode([user(body)], first_seq=3))  # a whole, clean line repeating seq 3
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(bytes(data))
    expected = read_events(path)
    scanner, events = _scan(path)
    assert expected.stop is not None and scanner.stop == expected.stop
    assert [e.seq for e in events] == [e.seq for e in expected.events]


def test_when_no_child_can_run_the_huge_line_is_decoded_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(huge_line.sys, "executable", str(tmp_path / "no-such-python"))
    body = "z" * BIG
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [user("before"), user(body)])
    _, events = _scan(path)
    assert isinstance(events[1], Message) and events[1].message.content == body


def test_the_child_refuses_a_descriptor_open_for_writing_and_the_line_is_decoded_here(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", [user("x" * 5000)])
    before = path.read_bytes()
    fd = os.open(path, os.O_RDWR)
    try:
        with pytest.raises(huge_line.ChildFailed, match="open for writing; this child only reads"):
            huge_line.decode_elsewhere(fd, 0, len(before) - 1, 0, CLIP)
        read_only = os.open(path, os.O_RDONLY)
        try:
            decoded = huge_line.decode_elsewhere(read_only, 0, len(before) - 1, 0, CLIP)
        finally:
            os.close(read_only)
    finally:
        os.close(fd)
    assert isinstance(decoded.event, Message) and decoded.chars == 5000
    assert path.read_bytes() == before
