"""read_events: every whole, valid line up to the first that is not, and where and why it stopped."""

from __future__ import annotations

import json
import os
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.journal.helpers import framed, reference_read, session_events, where, write_journal
from wren_tui.journal import reader
from wren_tui.journal._framing import CRC_SUFFIX_LEN
from wren_tui.journal.errors import JournalError
from wren_tui.journal.events import ChatMessage, Message, ToolEnd, UnknownEvent
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import encode_line

EXTERNAL = sorted((FIXTURES / "external").glob("*/*.jsonl"))


def test_reference_lines_without_a_crc_stop_at_line_1_as_not_written_by_wren() -> None:
    result = read_events(FIXTURES / "seed" / "mca_excerpt.jsonl")
    assert result.events == [] and not result.torn
    assert str(result.stop).startswith("line 1: it has no crc member")


def test_reference_lines_given_crcs_read_with_three_events_and_one_gap_warning(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(framed((FIXTURES / "seed" / "mca_excerpt.jsonl").read_bytes()))
    result = read_events(path)
    assert result.ok and not result.torn
    assert [e.seq for e in result.events] == [1, 4, 5]
    assert result.warnings == ["line 2: seq jumps from 1 to 4"]
    first, second, third = result.events
    assert isinstance(first, Message) and first.message.content == "run the tests and see which case fails"
    assert isinstance(second, Message) and second.message.tool_calls
    assert second.message.tool_calls[0].name == "run_command"
    assert isinstance(third, ToolEnd) and third.result == {"ok": False, "content": "exit code 1..."}


def test_kind_data_lines_are_not_our_format_and_stop_at_line_1() -> None:
    result = read_events(FIXTURES / "seed" / "wren_kind_data.jsonl")
    assert result.events == []
    assert where(result.stop) == (1, 0)
    assert str(result.stop) == "line 1: it has no type"
    assert not result.torn


def test_other_agents_session_files_are_in_the_repository() -> None:
    # An empty glob would turn the next test into a skip; a fresh clone must carry the files.
    assert {p.parent.name for p in EXTERNAL} == {"claude-code", "codex", "pi"}


@pytest.mark.parametrize("path", EXTERNAL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_agents_session_files_stop_at_line_1_with_a_reason(path: Path) -> None:
    # Claude Code, Codex and pi lines carry a string type but no seq: not our format, said plainly.
    result = read_events(path)
    assert result.events == []
    assert result.stop.line == 1 and result.stop.offset == 0
    assert str(result.stop) == "line 1: it has no seq"
    assert not result.torn


def test_a_whole_journal_reads_back_exactly_what_was_written(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    result = read_events(path)
    assert result.ok and result.warnings == []
    assert result.events == written
    assert list(result.line_ends) == [i for i, b in enumerate(path.read_bytes(), 1) if b == 0x0A]


@pytest.mark.parametrize("keep", [1, 2, 17, 0.5, -20, -2])
def test_torn_last_line_stops_at_the_previous_line(tmp_path: Path, keep: float) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    data = path.read_bytes()
    last_start = data.rindex(b"\n", 0, len(data) - 1) + 1
    line_len = len(data) - last_start
    cut = int(line_len * keep) if isinstance(keep, float) else keep % line_len
    path.write_bytes(data[: last_start + cut])
    result = read_events(path)
    assert result.events == written[:-1]
    assert result.stop.line == len(written)
    assert result.stop.offset == last_start
    assert result.torn and result.stop.why == "the last line was cut short (no newline at its end)"


def test_a_complete_last_line_without_its_newline_is_still_torn(tmp_path: Path) -> None:
    # The newline is the commit mark: a line that parses but lacks it was never committed.
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    path.write_bytes(path.read_bytes()[:-1])
    result = read_events(path)
    assert result.torn and result.events == written[:-1]


def test_a_bad_middle_line_stops_there_as_corruption(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[4] = b"this is not json\n"
    path.write_bytes(b"".join(lines))
    result = read_events(path)
    assert result.events == written[:4]
    assert result.stop.line == 5
    assert result.stop.offset == sum(map(len, lines[:4]))
    assert str(result.stop) == "line 5: it is not JSON"
    assert not result.torn


@pytest.mark.parametrize(("seq", "why"), [(3, "seq 3 does not increase on 3"), (2, "seq 2 does not increase on 3")])
def test_a_repeated_or_decreasing_seq_stops(tmp_path: Path, seq: int, why: str) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = encode_line(written[3], seq, written[3].ts)
    path.write_bytes(b"".join(lines))
    result = read_events(path)
    assert result.events == written[:3]
    assert str(result.stop) == f"line 4: {why}"
    assert not result.torn


def test_a_seq_gap_is_a_warning_not_a_stop(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3:] = [encode_line(e, e.seq + 10, e.ts) for e in written[3:]]
    path.write_bytes(b"".join(lines))
    result = read_events(path)
    assert result.ok and len(result.events) == len(written)
    assert result.warnings == ["line 4: seq jumps from 3 to 14"]


def test_a_flipped_byte_inside_a_string_is_caught_by_the_crc(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    data = bytearray(path.read_bytes())
    at = data.index(b"run the tests")
    data[at] ^= 0x20  # "run" -> "Run": still valid JSON, a different text
    path.write_bytes(bytes(data))
    result = read_events(path)
    assert result.events == written[:1]
    assert result.stop.line == 2
    assert str(result.stop) == "line 2: its CRC does not match its bytes (the line was changed after it was written)"


def test_an_unknown_type_is_kept_with_its_fields(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(
        framed(
            b'{"seq":1,"ts":"2026-01-01T00:00:00.000Z","type":"checkpoint","files":["a.py"],"note":"x"}\n'
            b'{"seq":2,"ts":"2026-01-01T00:00:00.001Z","type":"message","message":{"role":"user","content":"hi"}}\n'
        )
    )
    result = read_events(path)
    assert result.ok
    unknown = result.events[0]
    assert unknown == UnknownEvent(
        seq=1, ts="2026-01-01T00:00:00.000Z", type="checkpoint", fields={"files": ["a.py"], "note": "x"}
    )
    assert isinstance(result.events[1], Message)


# A line anyone could append: the writer's bytes with the crc member left out, or written another way.
FORGED = [
    (lambda body, crc: body + b"}", "it has no crc member"),
    (lambda body, crc: body + b', "crc": "%08x"}' % crc, "its crc member is not written as Wren writes it"),
    (lambda body, crc: body + b',"crc": "%08x"}' % crc, "its crc member is not written as Wren writes it"),
    (lambda body, crc: body + b',"crc":"%08x" }' % crc, "its crc member is not written as Wren writes it"),
    (lambda body, crc: body + b',"crc":"%08x","x":1}' % crc, "its crc member is not written as Wren writes it"),
    (lambda body, crc: b'{"crc":"%08x",' % crc + body[1:] + b"}", "its crc member is not written as Wren writes it"),
    (lambda body, crc: body + b',"crc":%d}' % crc, "its crc member is not written as Wren writes it"),
    (lambda body, crc: body + b',"crc":"%08X"}' % crc, "its crc is not 8 lowercase hex digits"),
    (lambda body, crc: body + b',"crc":" %07x"}' % (crc & 0xFFFFFFF), "its crc is not 8 lowercase hex digits"),
    (lambda body, crc: body + b',"crc":"0x%06x"}' % (crc & 0xFFFFFF), "its crc is not 8 lowercase hex digits"),
    (lambda body, crc: body + b',"crc":"%04x_%03x"}' % (crc >> 16, crc & 0xFFF), "its crc is not 8 lowercase hex"),
]


@pytest.mark.parametrize(("forge", "why"), FORGED)
def test_a_line_without_the_writers_crc_member_is_damage_at_its_line(tmp_path: Path, forge: Any, why: str) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    body = (
        b'{"seq":%d,"ts":"2026-12-01T00:00:00.000Z","type":"message","message":{"role":"user","content":"FORGED"}'
        % (len(written) + 1)
    )
    with open(path, "ab") as f:
        f.write(forge(body, zlib.crc32(body)) + b"\n")
    data = path.read_bytes()
    result = read_events(path)
    assert result.events == written and not result.torn
    assert str(result.stop).startswith(f"line {len(written) + 1}: {why}")
    assert (result.events, result.stop) == (reference_read(data).events, reference_read(data).stop)
    with pytest.raises(JournalError, match=why):
        reader.decode_line(data.splitlines()[-1])


def test_a_line_of_another_writer_with_no_crc_says_first_what_else_is_wrong_with_it(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b'{"ts":"t","type":"message","message":{"role":"user","content":"hi"}}\n')
    assert str(read_events(path).stop) == "line 1: it has no seq"


def test_a_journal_rewritten_with_crlf_line_ends_stops_at_line_1_saying_another_program_did_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    result = read_events(path)
    assert result.events == [] and not result.torn
    assert where(result.stop) == (1, 0)
    assert (
        str(result.stop) == "line 1: it ends with CR (\\r\\n): another program rewrote this file; Wren never writes CR"
    )


def test_one_crlf_line_among_lf_lines_ends_the_reading_there(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[4] = lines[4].replace(b"\n", b"\r\n")  # its CRC still matches: the CR is after the suffix
    path.write_bytes(b"".join(lines))
    result = read_events(path)
    assert result.events == written[:4] and not result.torn
    assert result.stop.line == 5 and "ends with CR" in str(result.stop)


def test_a_cr_byte_inside_a_line_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b'{"seq":1,\r"ts":"t","type":"message","message":{"role":"user","content":"hi"}}\n')
    result = read_events(path)
    assert result.events == [] and "holds a CR byte" in str(result.stop)


def test_nul_bytes_to_the_end_of_the_file_are_a_torn_tail(tmp_path: Path) -> None:
    # A crash after the file grew but before its data was written leaves zeros, sometimes with newlines.
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    good = path.stat().st_size
    with open(path, "ab") as f:
        f.write(b"\x00" * 300 + b"\n" + b"\x00" * 100)
    result = read_events(path)
    assert result.events == written and result.torn
    assert result.stop.offset == good
    assert str(result.stop) == f"line {len(written) + 1}: it holds NUL bytes (the tail of an interrupted write)"


def test_nul_bytes_followed_by_data_are_corruption(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(2, b"\x00\x00\x00\n")
    path.write_bytes(b"".join(lines))
    result = read_events(path)
    assert result.events == written[:2] and not result.torn
    assert result.stop.line == 3


# Lines the reader refuses, each with the start of why.
NOT_EVENTS = [
    (b'\xef\xbb\xbf{"seq":1,"ts":"t","type":"x"}', "it starts with a UTF-8 byte-order mark"),
    (b"[1, 2]", "it is JSON but not an object (a list)"),
    (b"42", "it is JSON but not an object (a number)"),
    (b"null", "it is JSON but not an object (null)"),
    (b"", "it is not JSON"),
    (b'{"seq":1,"ts":"t","type":"x","v":NaN}', "it is not JSON"),
    (b'{"seq":1,"ts":"t","type":"x","v":"\xff\xfe"}', "its bytes are not valid UTF-8"),
    (b'{"seq":true,"ts":"t","type":"x"}', "its seq is not a positive integer"),
    (b'{"seq":1.0,"ts":"t","type":"x"}', "its seq is not a positive integer"),
    (b'{"seq":"1","ts":"t","type":"x"}', "its seq is not a positive integer"),
    (b'{"seq":0,"ts":"t","type":"x"}', "its seq is not a positive integer"),
    (b'{"ts":"t","type":"x"}', "it has no seq"),
    (b'{"seq":1,"type":"x"}', "it has no ts"),
    (b'{"seq":1,"ts":5,"type":"x"}', "its ts is not a string"),
    (b'{"seq":1,"ts":"t"}', "it has no type"),
    (b'{"seq":1,"ts":"t","type":7}', "its type is not a string"),
    (b'{"seq":true,"ts":"t","type":"delta","text":"a"}', "a delta event that does not fit format 1"),
    (b'{"ts":"t","type":"delta","text":"a"}', "it has no seq"),
    (b'{"seq":1,"ts":"","type":"delta","text":"a"}', "it has no ts"),
    (
        b'{"seq":1,"ts":"t","type":"message","message":{"role":"robot","content":"a"}}',
        "a message event that does not fit",
    ),
    (
        b'{"seq":1,"ts":"t","type":"tool_end","id":"a","result":{"a":' + b"[" * 10_000 + b"]" * 10_000 + b"}}",
        "its JSON is nested too deeply to read",
    ),
    (
        b'{"seq":1,"ts":"t","type":"x","deep":' + b"[" * 10_000 + b"]" * 10_000 + b"}",
        "its JSON is nested too deeply to read",
    ),
]


@pytest.mark.parametrize(("line", "why"), NOT_EVENTS)
def test_a_line_that_is_not_an_event_stops_with_a_reason(tmp_path: Path, line: bytes, why: str) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(line + b"\n")
    result = read_events(path)
    assert result.events == [] and result.stop.line == 1 and not result.torn
    assert str(result.stop).startswith(f"line 1: {why}")


def test_decode_line_gives_each_line_of_a_journal_the_event_the_reader_gives(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    events = read_events(path).events
    assert len(lines) == len(events) > 5
    assert [reader.decode_line(line) for line in lines] == events
    assert [reader.decode_line(line.rstrip(b"\n")) for line in lines] == events  # the newline is optional
    unknown = framed(b'{"seq":7,"ts":"t","type":"checkpoint","files":["a.py"]}\n')
    assert reader.decode_line(unknown) == UnknownEvent(seq=7, ts="t", type="checkpoint", fields={"files": ["a.py"]})


def _changed_line(tmp_path: Path) -> bytes:
    """A line the writer wrote, then one byte of its text changed: valid JSON whose CRC no longer matches."""
    write_journal(tmp_path / "w.jsonl")
    (line,) = [line for line in (tmp_path / "w.jsonl").read_bytes().splitlines() if b"run the tests" in line]
    return line.replace(b"run the tests", b"Run the tests")


@pytest.mark.parametrize(
    ("line", "why"),
    [
        *NOT_EVENTS,
        (b'{"seq":1,"ts":"t","type":"x"}\x00\x00', "it holds NUL bytes"),
        (b'{"seq":1,"ts":"t","type":"x"}\r', "it ends with CR"),
        (b'{"seq":1,"ts":"t",\r"type":"x"}', "it holds a CR byte"),
        (None, "its CRC does not match its bytes"),
    ],
)
def test_decode_line_refuses_what_the_reader_refuses_saying_the_same_why(
    tmp_path: Path, line: bytes | None, why: str
) -> None:
    line = _changed_line(tmp_path) if line is None else line
    path = tmp_path / "j.jsonl"
    path.write_bytes(line + b"\n")
    stop = read_events(path).stop
    assert stop is not None and stop.why.startswith(why)
    with pytest.raises(JournalError) as refused:
        reader.decode_line(line + b"\n")
    assert str(refused.value) == stop.why


def test_decode_line_refuses_two_lines_given_as_one(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    two = b"".join(path.read_bytes().splitlines(keepends=True)[:2])
    with pytest.raises(JournalError, match=r"^it holds more than one line$"):
        reader.decode_line(two)
    # Also when the newline between them is the JSON whitespace of one object spread over two lines.
    with pytest.raises(JournalError, match=r"^it holds more than one line$"):
        reader.decode_line(b'{"seq":1,"ts":"t",\n"type":"x"}\n')


def test_a_huge_integer_seq_is_kept_exactly(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(framed(b'{"seq":123456789012345678901234567890,"ts":"t","type":"delta","text":"a"}\n'))
    result = read_events(path)
    assert result.ok and result.events[0].seq == 123456789012345678901234567890


def test_duplicate_keys_take_the_last_value_and_the_crc_still_guards_the_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    line = framed(b'{"seq":1,"ts":"t","type":"delta","text":"first","text":"second"}\n')
    path.write_bytes(line)
    result = read_events(path)
    assert result.ok and result.events[0].text == "second"  # type: ignore[union-attr]
    path.write_bytes(line.replace(b"first", b"frist"))
    assert "its CRC does not match" in str(read_events(path).stop)


def test_empty_file_reads_as_no_events(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.touch()
    result = read_events(path)
    assert result.ok and result.events == [] and result.good_bytes == 0


@pytest.mark.parametrize("what", ["missing", "folder", "symlink", "fifo"])
def test_what_is_not_a_journal_file_is_refused_with_its_path(tmp_path: Path, what: str) -> None:
    path = tmp_path / "j.jsonl"
    if what == "folder":
        path.mkdir()
    elif what == "symlink":
        write_journal(tmp_path / "real.jsonl")
        path.symlink_to(tmp_path / "real.jsonl")
    elif what == "fifo":
        os.mkfifo(path)
    with pytest.raises(JournalError) as info:
        read_events(path)
    expected = {"missing": "no such journal", "folder": "not a regular file", "symlink": "symbolic link"}
    assert str(path) in str(info.value)
    assert expected.get(what, "not a regular file") in str(info.value)


def test_a_ten_megabyte_line_reads(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    big = "x" * 10_000_000
    written = write_journal(path, [*session_events()[:2], Message(message=ChatMessage(role="tool", content=big))])
    result = read_events(path)
    assert result.ok and result.events == written


def test_a_huge_torn_tail_is_not_held_in_memory(tmp_path: Path) -> None:
    # Streaming: a 40 MB last line with no newline is skipped over, never gathered.
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    with open(path, "ab") as f:
        for _ in range(40):
            f.write(b"y" * 1_000_000)
    tracemalloc.start()
    try:
        result = read_events(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.torn and result.events == written
    # A few read chunks at most (the one read and the one before it), never the 40 MB line.
    assert peak < 4 * reader._CHUNK < 40_000_000, f"reading held {peak / 1e6:.1f} MB"


def test_many_chunks_of_lines_read_like_line_by_line(tmp_path: Path) -> None:
    # More than one read chunk, with lines of every length crossing the chunk edges.
    path = tmp_path / "j.jsonl"
    events = [Message(message=ChatMessage(role="user", content="z" * (n * 37 % 5000))) for n in range(1500)]
    write_journal(path, events)
    data = path.read_bytes()
    assert len(data) > 3 * (1 << 20)
    result, ref = read_events(path), reference_read(data)
    assert result.events == ref.events and result.ok
    assert list(result.line_ends) == ref.line_ends


def test_to_builtins_of_read_events_round_trips_through_json(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    from wren_tui.journal.events import to_builtins

    assert [to_builtins(e) for e in read_events(path).events] == [
        {k: v for k, v in d.items() if k != "crc"} for d in lines
    ]


@pytest.mark.parametrize(
    "recrc",
    [
        lambda line, crc: line[:-10] + b"%08X" % crc + line[-2:],  # uppercase hex: int() would take it
        lambda line, crc: line[:-10] + b"+%07x" % crc + line[-2:] if crc < 1 << 28 else line,
        lambda line, crc: line[:-10] + b"0x%06x" % crc + line[-2:] if crc < 1 << 24 else line,
        lambda line, crc: line[:-10] + b"%08x" % (crc ^ 1) + line[-2:],  # a wrong CRC
        lambda line, crc: line[:-10] + b"%08x" % crc + b"}",  # the quote before the brace lost
        lambda line, crc: line[:-CRC_SUFFIX_LEN] + b"}",  # no crc member
        lambda line, crc: line[:-CRC_SUFFIX_LEN] + b', "crc": "%08x"}' % crc,  # json.dumps's spacing
        lambda line, crc: line[:-CRC_SUFFIX_LEN] + b',"crc":"%08x","x":1}' % crc,  # not the last member
    ],
)
def test_every_way_of_writing_a_crc_reads_as_line_by_line_reading_says(tmp_path: Path, recrc: Any) -> None:
    path = tmp_path / "j.jsonl"
    lines = [encode_line(Message(message=ChatMessage(role="user", content=f"m{i}")), i, "t") for i in range(1, 40)]
    for i in (5, 17):
        body = lines[i][: -CRC_SUFFIX_LEN - 1]
        lines[i] = recrc(lines[i][:-1], zlib.crc32(body)) + b"\n"
    data = b"".join(lines)
    path.write_bytes(data)
    result, ref = read_events(path), reference_read(data)
    assert (result.events, result.stop) == (ref.events, ref.stop)
