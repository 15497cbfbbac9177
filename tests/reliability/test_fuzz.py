"""Fuzz: the reader and the Tail against arbitrary bytes. Never an exception, always the valid prefix,
and the same answer from read_events and from a Tail fed the same bytes in random chunks."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.journal.helpers import reference_read, where
from tests.journal.strategies import journals, mixed_journals
from tests.reliability.dial import examples
from wren_tui.journal.events import Event
from wren_tui.journal.reader import Tail, read_events
from wren_tui.journal.verdict import ReadResult

# Arbitrary bytes, and valid journals with arbitrary bytes spliced in somewhere.
hostile = st.one_of(
    st.binary(max_size=600),
    st.tuples(journals, st.binary(max_size=80), st.integers(0, 10_000)).map(
        lambda t: t[0][: t[2] % (len(t[0]) + 1)] + t[1] + t[0][t[2] % (len(t[0]) + 1) :]
    ),
    mixed_journals(),
)


def _read(data: bytes) -> ReadResult:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.jsonl"
        path.write_bytes(data)
        return read_events(path)


@examples(ci=300, torture=20_000)
@given(hostile)
def test_read_events_on_any_bytes_returns_the_valid_prefix_and_never_raises(data: bytes) -> None:
    result, ref = _read(data), reference_read(data)
    assert result.events == ref.events
    assert where(result.stop) == where(ref.stop)
    assert result.good_bytes == (ref.line_ends[-1] if ref.line_ends else 0)
    if result.stop is None:
        assert data == b"" or data.endswith(b"\n")


@examples(ci=300, torture=20_000)
@given(hostile, st.lists(st.integers(1, 64), min_size=1, max_size=20))
def test_a_tail_fed_random_chunks_agrees_with_read_events(data: bytes, sizes: list[int]) -> None:
    result = _read(data)
    tail = Tail("fed")
    events: list[Event] = []
    pos = 0
    for n in range(len(data)):
        if pos >= len(data):
            break
        step = sizes[n % len(sizes)]
        events += tail.feed(data[pos : pos + step]).events
        pos += step
    assert events == result.events
    if result.stop is not None and not result.stop.why.startswith("the last line"):
        # A Tail reads the line again later, so it never calls it torn: the same line, the same why.
        assert tail.stop is not None and (where(tail.stop), tail.stop.why) == (where(result.stop), result.stop.why)
    else:
        assert tail.stop is None


@examples(ci=100, torture=5_000)
@given(hostile, st.lists(st.integers(1, 64), min_size=1, max_size=20))
def test_a_tail_on_a_growing_file_agrees_with_read_events(data: bytes, sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.jsonl"
        path.touch()
        tail = Tail(path)
        events: list[Event] = []
        pos, n = 0, 0
        with open(path, "ab", buffering=0) as f:
            while pos < len(data):
                step = sizes[n % len(sizes)]
                f.write(data[pos : pos + step])
                pos, n = pos + step, n + 1
                batch = tail.read()
                assert not batch.restarted
                events += batch.events
        result = read_events(path)
    assert events == result.events
