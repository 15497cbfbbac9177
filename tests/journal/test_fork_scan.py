"""The fork's fast scan (C line check, tool calls followed from a few lines) says what the full reading says."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.journal.strategies import encode, journals, mixed_journals
from wren_tui.journal import _fastpath, forking
from wren_tui.journal.events import ChatMessage, Message, Reasoning, Rewind, ToolCall
from wren_tui.journal.forking import NotAForkPoint, fork
from wren_tui.journal.reader import read_events

PARENT = "s-20260101-000000-abcd.jsonl"
pytestmark = pytest.mark.skipif(
    not hasattr(_fastpath.native_lines, "scan_calls"), reason="the C line check is not built"
)


@contextmanager
def _chunk(size: int) -> Iterator[None]:
    saved, forking._SCAN_CHUNK = forking._SCAN_CHUNK, size
    try:
        yield
    finally:
        forking._SCAN_CHUNK = saved


def _both(path: Path, seq: int) -> tuple[tuple[bool, int | None], int | None, list[int]]:
    """The fast scan's answer, the full reading's, and the offsets the scan said were checked."""
    heard: list[int] = []
    fd = os.open(path, os.O_RDONLY)
    try:
        fast = forking._scanned_line_end(fd, seq, heard.append)
    finally:
        os.close(fd)
    return fast, forking._clean_line_end(path, seq), heard


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(journals, mixed_journals()), st.integers(32, 2048))
def test_when_the_scan_is_sure_it_finds_the_line_end_the_reading_finds(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, chunk: int
) -> None:
    path = tmp_path_factory.mktemp("scan") / PARENT
    path.write_bytes(data)
    result = read_events(path)
    with _chunk(chunk):
        for seq in range(result.last_seq + 2):
            (sure, end), full, heard = _both(path, seq)
            if sure:
                assert end == full
            # What it hands the copier is checked whole lines before the fork line, in order.
            assert heard == sorted(heard)
            assert all(offset in result.line_ends for offset in heard)
            if full is not None:
                assert all(offset < full for offset in heard)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(journals)
def test_the_scan_is_sure_of_every_seq_a_writer_wrote(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    # The fast road is the one taken: for lines as Wren writes them it never hands over to the slow one.
    path = tmp_path_factory.mktemp("scan") / PARENT
    path.write_bytes(data)
    result = read_events(path)
    last = result.last_seq
    # A rewind line changes which calls are open and the scan reads none: from the first, the reader decides.
    rewound = min((e.seq for e in result.events if isinstance(e, Rewind)), default=last + 1)
    with _chunk(64):  # lines longer than the buffer too: it grows
        for seq in range(1, last + 1):
            (sure, end), full, _ = _both(path, seq)
            assert (sure and end == full) if seq < rewound else not sure
        assert not _both(path, last + 1)[0][0]  # past the end: the full reading says why


def test_messages_whose_ids_cannot_be_read_in_place_are_decoded_and_agree(tmp_path: Path) -> None:
    def asked(*ids: str, args: str = "{}", **more: object) -> Message:
        calls = [ToolCall(id=i, name="read_file", args=args) for i in ids]
        return Message(message=ChatMessage(role="assistant", content="", tool_calls=calls, **more))  # type: ignore[arg-type]

    def answer(call_id: str, **more: object) -> Message:
        return Message(message=ChatMessage(role="tool", content='"toolCallId":"x"', tool_call_id=call_id, **more))  # type: ignore[arg-type]

    user = Message(message=ChatMessage(role="user", content='"toolCalls":[{"id":"z"}]'))
    many = [f"m{i}" for i in range(20)]
    events = [
        user,
        asked('a"b\\c', "é", "plain", "twice", args='{"q": "\\"x\\" ]}"}'),  # escapes in ids and args
        answer('a"b\\c'),  # escapes in the id
        answer("é"),  # not ASCII
        answer("plain", reasoning=[Reasoning(text="why")]),  # toolCallId is not the last member
        user,  # seq 6: "twice" is still open
        Message(
            message=ChatMessage(role="tool", content="", tool_call_id="twice", tool_calls=[ToolCall("new", "x", "")])
        ),
        user,  # seq 8: "new" was asked by a tool message
        answer("new"),
        user,  # seq 10: clean
        asked(*many),  # more ids than the scan keeps in place
        *[answer(i) for i in many[:-1]],
        user,  # seq 31: m19 is open
        asked("r", reasoning=[Reasoning(text="the list is not the last member")]),
        Message(message=ChatMessage(role="assistant", content="", tool_calls=[])),
        answer("m19"),
        user,  # seq 35: "r" is open
        answer("r"),
        user,  # seq 37: clean
    ]
    path = tmp_path / PARENT
    path.write_bytes(encode(events))
    for seq in range(1, len(events) + 1):
        (sure, end), full, _ = _both(path, seq)
        assert sure and end == full, seq
    assert [seq for seq in range(1, len(events) + 1) if _both(path, seq)[1] is not None] == [1, 10, 37]


def test_a_fork_refuses_a_journal_damaged_before_the_point_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    user = Message(message=ChatMessage(role="user", content="hello"))
    data = encode([user] * 50)
    lines = data.splitlines(keepends=True)
    for damage in (
        lines[9].replace(b"hello", b"hellp"),  # a changed byte: the CRC no longer matches
        lines[9][:-1] + b"\r\n",  # a CRLF conversion
        lines[9][:20] + b"\x00" * (len(lines[9]) - 21) + b"\n",  # a hole of NUL bytes
    ):
        parent = tmp_path / PARENT
        parent.write_bytes(b"".join([*lines[:9], damage, *lines[10:]]))
        before = parent.read_bytes()
        (sure, _end), full, _ = _both(parent, 40)
        assert not sure and full is None
        with pytest.raises(NotAForkPoint) as refused:
            fork(parent, 40, folder=tmp_path)
        assert refused.value.past_stop and refused.value.stop is not None and refused.value.stop.line == 10
        assert parent.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == [PARENT]
