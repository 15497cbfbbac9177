"""Properties of reading over generated journals: damage gives a prefix, never an exception."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.journal.helpers import reference_read, where
from tests.journal.strategies import journals, mixed_journals
from wren_tui.journal.events import Event
from wren_tui.journal.reader import Tail, read_events, read_head_and_tail, scan_events
from wren_tui.journal.verdict import ReadResult

EXAMPLES = 1000 if os.environ.get("WREN_TORTURE") == "1" else 150
_settings = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _read(data: bytes) -> tuple[list[Event], ReadResult]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.jsonl"
        path.write_bytes(data)
        result = read_events(path)
    return result.events, result


@_settings
@given(journals, st.data())
def test_any_truncation_reads_a_prefix_and_never_raises(data: bytes, draw: st.DataObject) -> None:
    whole, _ = _read(data)
    cut = draw.draw(st.integers(0, len(data)))
    events, result = _read(data[:cut])
    assert events == whole[: len(events)]
    assert len(events) == data[:cut].count(b"\n")  # every whole line before the cut is read
    assert result.ok or result.torn


@_settings
@given(journals, st.data())
def test_one_changed_byte_per_line_reads_a_prefix_and_never_raises(data: bytes, draw: st.DataObject) -> None:
    whole, _ = _read(data)
    damaged = bytearray(data)
    starts = [0] + [i + 1 for i, b in enumerate(data[:-1]) if b == 0x0A]
    ends = [*starts[1:], len(data)]
    for start, end in zip(starts, ends, strict=True):
        if draw.draw(st.booleans()):
            at = draw.draw(st.integers(start, end - 1))
            damaged[at] = draw.draw(st.integers(0, 255).filter(lambda b, old=data[at]: b != old))
    events, result = _read(bytes(damaged))
    assert events == whole[: len(events)]
    ref = reference_read(bytes(damaged))
    assert (result.events, where(result.stop), result.warnings) == (ref.events, where(ref.stop), ref.warnings)


@_settings
@given(mixed_journals())
def test_streaming_reader_matches_reading_line_by_line(data: bytes) -> None:
    _, result = _read(data)
    ref = reference_read(data)
    assert result.events == ref.events
    assert where(result.stop) == where(ref.stop)
    assert result.warnings == ref.warnings
    assert list(result.line_ends) == ref.line_ends
    if ref.stop is not None:
        assert result.stop is not None and result.stop.why == ref.stop.why


@_settings
@given(mixed_journals(), st.data())
def test_scan_events_hands_over_what_read_events_keeps_with_the_same_verdict(data: bytes, draw: st.DataObject) -> None:
    if data and draw.draw(st.booleans()):
        data = data[: draw.draw(st.integers(0, len(data)))]  # a torn tail too
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.jsonl"
        path.write_bytes(data)
        result = read_events(path)
        seen: list[Event] = []
        spans: list[bytes] = []
        verdict = scan_events(path, lambda events, lines: (seen.extend(events), spans.append(bytes(lines))))
    assert seen == result.events
    assert b"".join(spans) == data[: result.good_bytes]
    assert all(s.count(b"\n") == len(s.splitlines()) for s in spans)
    assert (verdict.stop, verdict.warnings) == (result.stop, result.warnings)
    assert (verdict.lines, verdict.last_seq, verdict.good_bytes) == (len(seen), result.last_seq, result.good_bytes)


@_settings
@given(mixed_journals(), st.lists(st.integers(1, 200), min_size=1, max_size=40))
def test_tail_fed_in_random_chunks_agrees_with_read_events(data: bytes, sizes: list[int]) -> None:
    _, result = _read(data)
    tail = Tail("unused")
    events: list[Event] = []
    pos, i = 0, 0
    while pos < len(data):
        size = sizes[i % len(sizes)]
        events += tail.feed(data[pos : pos + size]).events
        pos, i = pos + size, i + 1
    assert events == result.events
    if result.stop is not None and not result.torn:
        assert tail.stop == result.stop


@_settings
@given(mixed_journals(), st.integers(1, 3000))
def test_head_and_tail_are_a_prefix_and_a_suffix_of_the_events_or_nothing(data: bytes, window: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.jsonl"
        path.write_bytes(data)
        ends = read_head_and_tail(path, window)
        result = read_events(path)
    if ends is None:
        return
    assert ends.head == result.events[: len(ends.head)]
    if result.ok:  # the middle is not read, so a damaged middle is not seen; a whole journal must agree
        assert ends.tail == result.events[len(result.events) - len(ends.tail) :]
