"""The line check in C agrees with the one in Python, byte for byte, and reading gives the same verdicts with either.

The C check is built at install when a compiler is there; without one these tests say so and the
reader uses Python (the rest of the suite then covers that path).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import itertools
import os
import re
import shutil
import sysconfig
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.journal.helpers import reference_read, session_events, where
from tests.journal.strategies import encode, known_events, mixed_journals
from wren_tui.journal import _fastpath, _framing, reader, writer
from wren_tui.journal.events import ChatMessage, Message
from wren_tui.journal.verdict import ReadResult
from wren_tui.journal.writer import encode_line

native = _fastpath.native_lines
needs_native = pytest.mark.skipif(native is None, reason="the C line check was not built (no compiler at install)")
EXAMPLES = 1000 if os.environ.get("WREN_TORTURE") == "1" else 200
_settings = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


C_MODULES = [
    "wren_tui.journal._lines",
    "wren_tui.search._scan",
    "wren_tui.foreign._aider",
    "wren_tui.snapshots._linediff",
]


@pytest.mark.parametrize("module", C_MODULES)
def test_each_c_module_is_built_from_its_source_where_a_compiler_is(module: str) -> None:
    """The C modules are optional at install (no compiler: Python does the same), so a failed compile is
    silent and can leave an older build in place: every function its stub names must be there."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) here: the reader checks lines in Python")
    source = Path(importlib.util.find_spec(module.rpartition(".")[0]).origin or "").parent  # type: ignore[union-attr]
    stub = source / (module.rpartition(".")[2] + ".pyi")
    try:
        built = importlib.import_module(module)
    except ImportError:
        pytest.fail(f"a compiler is here but {stub.with_suffix('.c')} was not built: reinstall the project")
    missing = [name for name in re.findall(r"^def (\w+)", stub.read_text(), re.MULTILINE) if not hasattr(built, name)]
    assert not missing, f"{module} is an older build than {stub.name} ({missing} missing): its compile failed"


@pytest.mark.parametrize("module", C_MODULES)
def test_each_c_module_is_built_for_the_limited_api(module: str) -> None:
    """One wheel serves CPython 3.11 and later (cp311-abi3): each module is built against the stable ABI, so
    its file carries the abi3 suffix, not this Python's own (a leftover version-specific build would be
    imported first and hide the one the wheel ships)."""
    try:
        built = importlib.import_module(module)
    except ImportError:
        pytest.skip(f"{module} is not built in this install (Python's fallback runs)")
    abi3 = [s for s in importlib.machinery.EXTENSION_SUFFIXES if ".abi3" in s]
    if not abi3:
        pytest.skip("this platform names abi3 modules like any other (.pyd)")
    assert built.__file__ is not None
    assert built.__file__.endswith(tuple(abi3)), f"{built.__file__} is not an abi3 build: reinstall the project"


def _python_ok(line: bytes) -> bool:
    """What the C check must accept for one line without its newline: ours, clean, its CRC right."""
    if b"\x00" in line or b"\r" in line or len(line) < 20:
        return False
    tail = line[-18:]
    if tail[:8] != b',"crc":"' or tail[16:] != b'"}' or any(c not in b"0123456789abcdef" for c in tail[8:16]):
        return False
    return zlib.crc32(line[:-18]) == int(tail[8:16], 16)


@needs_native
@_settings
@given(st.binary(max_size=300))
def test_crc32_is_zlibs(data: bytes) -> None:
    assert native is not None
    assert native.crc32(data) == zlib.crc32(data)


lines_of_ours = st.builds(lambda e, s: encode_line(e, s, "2026-01-01T00:00:00.000Z"), known_events, st.integers(1, 99))


@st.composite
def damaged_runs(draw: st.DrawFn) -> bytes:
    """Whole lines, ours, some with a byte changed, inserted or removed, or with a CR, NUL or uppercase hex."""
    out = []
    for line in draw(st.lists(lines_of_ours, min_size=0, max_size=8)):
        body = bytearray(line[:-1])
        what = draw(st.sampled_from(["keep", "keep", "flip", "drop", "insert", "upper", "short"]))
        if body and what in ("flip", "drop", "insert"):
            at = draw(st.integers(0, len(body) - 1))
            if what == "flip":
                body[at] ^= 1 << draw(st.integers(0, 7))
            elif what == "drop":
                del body[at]
            else:
                body.insert(at, draw(st.sampled_from([0, 13, 10 + 22, 0x41, 0xFF])))
        elif what == "upper":
            body[-10:-2] = bytes(body[-10:-2]).upper()
        elif what == "short":
            body = body[draw(st.integers(0, len(body))) :]
        out.append(bytes(body).replace(b"\n", b" ") + b"\n")
    return b"".join(out)


@needs_native
@_settings
@given(damaged_runs(), st.integers(0, 1 << 40))
def test_check_lines_accepts_exactly_the_leading_lines_python_accepts(run: bytes, base: int) -> None:
    assert native is not None
    lines = run.split(b"\n")[:-1]
    expected = 0
    for line in lines:
        if not _python_ok(line):
            break
        expected += 1
    count, ends, whole = native.check_lines(run, base)
    assert count == expected
    assert whole == (count == len(lines))
    offsets = [base + sum(len(line) + 1 for line in lines[: i + 1]) for i in range(count)]
    assert list(memoryview(ends).cast("q")) == offsets
    if hasattr(native, "check_start"):  # the same check begun in C's own thread
        assert native.check_start(bytearray(run), base).result() == (count, ends, whole)


@needs_native
def test_a_check_begun_in_its_own_thread_answers_once_and_may_be_dropped() -> None:
    if not hasattr(native, "check_start"):
        pytest.skip("a build from before check_start")
    line = encode_line(_a_message(), 1, "2026-01-01T00:00:00.000Z")
    pending = native.check_start(line * 1000, 0)
    assert pending.result()[0::2] == (1000, True)
    with pytest.raises(RuntimeError, match="already taken"):
        pending.result()
    dropped = native.check_start(memoryview(line * 1000), 0)
    del dropped  # its thread is waited for, its buffer let go
    with pytest.raises(TypeError):
        native.check_start("a str", 0)  # type: ignore[arg-type]


@needs_native
def test_check_lines_ignores_a_partial_last_line_and_takes_any_buffer() -> None:
    assert native is not None
    line = encode_line(_a_message(), 1, "2026-01-01T00:00:00.000Z")
    count, _, whole = native.check_lines(line + line[:10], 0)
    assert (count, whole) == (1, False)
    assert native.check_lines(memoryview(line * 3), 5)[0:3:2] == (3, True)
    assert native.check_lines(b"", 0) == (0, b"", True)
    with pytest.raises(TypeError):
        native.check_lines("a str", 0)  # type: ignore[arg-type]


def _a_message() -> Message:
    return Message(message=ChatMessage(role="user", content="hello"))


@contextlib.contextmanager
def python_only() -> Iterator[None]:
    saved, _fastpath.native_lines = _fastpath.native_lines, None
    try:
        yield
    finally:
        _fastpath.native_lines = saved


def _read_both(data: bytes) -> tuple[ReadResult, ReadResult]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.jsonl"
        path.write_bytes(data)
        fast = reader.read_events(path)
        with python_only():
            slow = reader.read_events(path)
    return fast, slow


def _same(a: ReadResult, b: ReadResult) -> None:
    assert a.events == b.events
    assert a.stop == b.stop
    assert a.warnings == b.warnings
    assert list(a.line_ends) == list(b.line_ends)


@_settings
@given(mixed_journals())
def test_reading_without_the_c_check_gives_the_same_result(data: bytes) -> None:
    fast, slow = _read_both(data)
    _same(fast, slow)
    ref = reference_read(data)
    assert slow.events == ref.events and where(slow.stop) == where(ref.stop)


@pytest.mark.parametrize("at", [0, 5, 12])
def test_a_line_ending_in_crlf_is_refused_the_same_with_and_without_the_c_check(at: int) -> None:
    lines = encode(session_events()).splitlines(keepends=True)
    lines[at] = lines[at][:-1] + b"\r\n"
    fast, slow = _read_both(b"".join(lines))
    _same(fast, slow)
    assert len(fast.events) == at and fast.stop is not None and fast.stop.line == at + 1 and not fast.torn
    because = "it ends with CR (\\r\\n): another program rewrote this file; Wren never writes CR"
    assert str(fast.stop) == f"line {at + 1}: {because}"


@settings(max_examples=25 if os.environ.get("WREN_TORTURE") != "1" else 200, deadline=None)
@given(st.data())
def test_a_run_long_enough_to_be_checked_in_another_thread_gives_the_same_verdict(draw: st.DataObject) -> None:
    # Past the size where the check moves to a second thread while the main one decodes.
    line = encode_line(_a_message(), 1, "2026-01-01T00:00:00.000Z")
    count = (2 * _fastpath._OVERLAP_MIN) // len(line) + 2
    data = b"".join(encode_line(_a_message(), seq, "2026-01-01T00:00:00.000Z") for seq in range(1, count + 1))
    damaged = bytearray(data)
    if draw.draw(st.booleans()):
        at = draw.draw(st.integers(0, len(data) - 1))
        damaged[at] = draw.draw(st.integers(0, 255).filter(lambda b: b != data[at]))
    fast, slow = _read_both(bytes(damaged))
    _same(fast, slow)
    ref = reference_read(bytes(damaged))
    assert fast.events == ref.events and where(fast.stop) == where(ref.stop)


json_objects = st.dictionaries(
    st.text(max_size=8), st.one_of(st.integers(), st.text(max_size=40), st.booleans(), st.none()), min_size=1
).map(lambda d: msgspec.json.encode({"type": "x", **d}))


@needs_native
@_settings
@given(st.integers(0, 2**63 - 1), st.from_regex(rb"[0-9T:.Z-]{0,30}", fullmatch=True), json_objects)
def test_the_c_line_is_the_python_line(seq: int, ts: bytes, body: bytes) -> None:
    assert native is not None
    line = native.make_line(seq, ts, body)
    assert line == _framing.python_line(seq, ts, body)
    assert native.check_lines(line, 0)[0] == 1  # and the reader takes it as ours


@needs_native
def test_the_c_line_refuses_what_is_not_an_object_or_a_seq_it_cannot_write() -> None:
    assert native is not None
    for body in (b"", b"{", b"[1]", b'"x"'):
        with pytest.raises(ValueError, match="must be a JSON object"):
            native.make_line(1, b"t", body)
    with pytest.raises(OverflowError):
        native.make_line(2**63, b"t", b'{"type":"x"}')
    with pytest.raises(TypeError):
        native.make_line(1, "t", b'{"type":"x"}')  # type: ignore[arg-type]


@needs_native
def test_a_journal_written_with_and_without_the_c_line_is_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "now_ts", lambda: "2026-01-01T00:00:00.000Z")
    events = [
        Message(message=ChatMessage(role="user", content="héllo \u202e\x1b[31m")),
        Message(message=ChatMessage(role="assistant", content="")),
    ]
    files = []
    for name, line in (("c.jsonl", _fastpath.native_line), ("py.jsonl", None)):
        monkeypatch.setattr(_fastpath, "native_line", line)
        with writer.JournalWriter.create(tmp_path / name, fsync="none") as journal:
            for event in events:
                journal.append(event)
        files.append((tmp_path / name).read_bytes())
    assert files[0] == files[1]
    assert reader.read_events(tmp_path / "c.jsonl").ok


@needs_native
@_settings
@given(
    st.lists(st.tuples(known_events, st.integers(-3, 2**64), st.sampled_from(["", "t", "2026-01-01T00:00:00Z"]))),
    st.integers(-3, 2**63 - 1),
)
def test_follows_says_what_the_python_seq_and_ts_check_says(
    drawn: list[tuple[msgspec.Struct, int, str]], first: int
) -> None:
    # Seqs from `first` one by one now and then, else anywhere (past 64 bits too); ts empty or not.
    events = [
        msgspec.structs.replace(e, seq=first + i if n % 2 == 0 else n, ts=ts)  # type: ignore[type-var]
        for i, (e, n, ts) in enumerate(drawn)
    ]
    seqs = [e.seq for e in events]  # type: ignore[attr-defined]
    expected = seqs == list(range(first, first + len(events))) and all(e.ts for e in events)  # type: ignore[attr-defined]
    if all(seq < 2**63 for seq in seqs):
        assert native.follows(events, first) == expected
    else:  # past 64 bits it says no, and Python looks
        assert not native.follows(events, first)
    assert not native.follows(events, 2**64) or not events


@needs_native
def test_crc32_is_zlibs_at_every_length_and_alignment_around_the_block_sizes() -> None:
    # The folding path takes 64 bytes and more, in 16-byte blocks; the tables the rest and each tail.
    assert native is not None
    data = os.urandom(1100)
    for start in range(17):
        for length in [*range(0, 300), *range(300, 1100 - start, 37)]:
            piece = memoryview(data)[start : start + length]
            assert native.crc32(piece) == zlib.crc32(piece), (start, length)


needs_read_ahead = pytest.mark.skipif(
    not _fastpath.read_ahead_works(), reason="no reading thread in C here (not built, or not a POSIX system)"
)


@needs_read_ahead
@_settings
@given(damaged_runs(), st.binary(max_size=40), st.integers(0, 500), st.integers(1, 700))
def test_a_chunk_read_in_cs_thread_is_the_files_bytes_checked_as_check_lines_checks_them(
    run: bytes, tail: bytes, offset: int, size: int
) -> None:
    assert native is not None
    data = run + tail
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.jsonl"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            got_data, got, cut, count, ends, whole, _first = native.read_start(fd, offset, size).result()
        finally:
            os.close(fd)
    expected = data[offset : offset + size]
    assert len(got_data) == size and got == len(expected) and got_data[:got] == expected
    assert cut == expected.rfind(b"\n") + 1
    assert (count, ends, whole) == native.check_lines(expected[:cut], offset)


@needs_read_ahead
@settings(max_examples=40 if EXAMPLES < 1000 else 200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 3099),
    st.sampled_from(["none", "flip", "cr", "seq key"]),
    st.integers(0, 3099),
    st.integers(1, 900_000),
    st.binary(max_size=40).filter(lambda b: b"\n" not in b),
)
def test_a_chunk_read_in_pieces_is_checked_as_one_check_of_its_lines(
    long_at: int, damage: str, damage_at: int, size: int, tail: bytes
) -> None:
    # A chunk bigger than the pieces C reads it in (with a line longer than a piece somewhere, and
    # one damaged line or a line whose seq C cannot read from its head): the lines, their ends and
    # the first seq are what one check of the whole chunk's lines says, wherever the pieces end.
    assert native is not None
    lines = [encode_line(_a_message(), seq, "2026-01-01T00:00:00.000Z") for seq in range(1, 3101)]
    long = Message(message=ChatMessage(role="user", content="x" * 300_000))
    lines[long_at] = encode_line(long, long_at + 1, "2026-01-01T00:00:00.000Z")
    if damage == "flip":
        lines[damage_at] = lines[damage_at].replace(b"hello", b"hellp")
    elif damage == "cr":
        lines[damage_at] = lines[damage_at].replace(b"hello", b"hel\rlo")
    elif damage == "seq key":
        body = b'{"type":"delta","text":"x","seq":%d}' % (damage_at + 1)
        lines[damage_at] = _framing.python_line(damage_at + 1, b"2026-01-01T00:00:00.000Z", body)
    data = b"".join(lines) + tail
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "j.jsonl"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            got_data, got, cut, count, ends, whole, first = native.read_start(fd, 0, size).result()
        finally:
            os.close(fd)
    expected = data[:size]
    assert got == len(expected) and got_data[:got] == expected and cut == expected.rfind(b"\n") + 1
    assert (count, ends, whole) == native.check_lines(expected[:cut], 0)
    tricked = damage == "seq key" and damage_at < count
    assert first == (1 if count and not tricked else -1)


@needs_read_ahead
def test_a_read_that_fails_in_cs_thread_raises_its_error_once_and_a_dropped_one_is_waited_for(tmp_path: Path) -> None:
    assert native is not None
    folder = os.open(tmp_path, os.O_RDONLY)
    try:
        with pytest.raises(IsADirectoryError):
            native.read_start(folder, 0, 100).result()
    finally:
        os.close(folder)
    path = tmp_path / "j.jsonl"
    path.write_bytes(encode_line(_a_message(), 1, "2026-01-01T00:00:00.000Z") * 100)
    fd = os.open(path, os.O_RDONLY)
    try:
        reading = native.read_start(fd, 0, 1 << 16)
        assert reading.result()[3] == 100
        with pytest.raises(RuntimeError, match="already taken"):
            reading.result()
        dropped = native.read_start(fd, 0, 1 << 16)
        del dropped  # its thread is waited for before the descriptor closes
    finally:
        os.close(fd)
    for offset, size in ((-1, 10), (0, 0)):
        with pytest.raises(ValueError, match="offset must be >= 0 and size >= 1"):
            native.read_start(0, offset, size)


@contextlib.contextmanager
def small_chunks(size: int) -> Iterator[None]:
    saved, reader._CHUNK = reader._CHUNK, size
    try:
        yield
    finally:
        reader._CHUNK = saved


@needs_read_ahead
@_settings
@given(mixed_journals(), st.binary(max_size=30).filter(lambda b: b"\n" not in b), st.integers(32, 3000))
def test_a_journal_read_ahead_in_chunks_reads_as_line_by_line(data: bytes, tail: bytes, chunk: int) -> None:
    # Chunks smaller than some lines and larger than others, a partial last line or none: the C
    # reading hands over to Lines wherever it stops, and the verdict is the reference's.
    data += tail
    with small_chunks(chunk):
        fast, slow = _read_both(data)
    _same(fast, slow)
    ref = reference_read(data)
    assert fast.events == ref.events and where(fast.stop) == where(ref.stop)
    assert list(fast.line_ends) == ref.line_ends[: len(fast.events)]


@contextlib.contextmanager
def small_first_chunks(size: int) -> Iterator[None]:
    saved, _fastpath._FIRST_AHEAD = _fastpath._FIRST_AHEAD, size
    try:
        yield
    finally:
        _fastpath._FIRST_AHEAD = saved


@needs_read_ahead
@_settings
@given(mixed_journals(), st.binary(max_size=30).filter(lambda b: b"\n" not in b), st.integers(32, 3000))
def test_a_journal_read_ahead_from_small_first_chunks_reads_as_line_by_line(
    data: bytes, tail: bytes, chunk: int
) -> None:
    # The first chunks a sixteenth and a quarter of the others: lines longer than a first chunk
    # make C read a bigger one from the same place, and the verdict is still the reference's.
    data += tail
    with small_chunks(chunk), small_first_chunks(16):
        fast, slow = _read_both(data)
    _same(fast, slow)
    ref = reference_read(data)
    assert fast.events == ref.events and where(fast.stop) == where(ref.stop)
    assert list(fast.line_ends) == ref.line_ends[: len(fast.events)]


@needs_read_ahead
def test_a_reading_read_ahead_starts_small_and_c_reads_a_first_line_longer_than_its_first_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = Message(message=ChatMessage(role="user", content="x" * 3000))
    lines = [encode_line(long if seq == 1 else _a_message(), seq, "2026-01-01T00:00:00.000Z") for seq in range(1, 601)]
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(lines))
    started: list[tuple[int, int]] = []
    assert native is not None
    start = native.read_start

    def counted(fd: int, offset: int, size: int) -> object:
        started.append((offset, size))
        return start(fd, offset, size)

    monkeypatch.setattr(native, "read_start", counted)
    with small_chunks(16_000), small_first_chunks(1_000):
        result = reader.read_events(path)
    assert result.ok and [e.seq for e in result.events] == list(range(1, 601))
    assert list(result.line_ends) == list(itertools.accumulate(map(len, lines)))
    # 1,000 bytes hold no newline (the first line is longer): 4,000 from the same place, then 16,000
    # from just past the last line the 4,000 held, then 16,000 a time to the end.
    sizes = [size for _offset, size in started]
    assert sizes[:3] == [1_000, 4_000, 16_000] and set(sizes[2:]) == {16_000}
    assert started[0][0] == started[1][0] == 0 and started[2][0] == result.line_ends[0] + len(lines[1]) * (
        (4_000 - len(lines[0])) // len(lines[1])
    )
    assert sum(sizes[2:]) >= path.stat().st_size - started[2][0]  # C read it all, not Lines


@needs_read_ahead
def test_a_journal_of_many_chunks_is_read_ahead_by_c_and_reads_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [encode_line(_a_message(), seq, "2026-01-01T00:00:00.000Z") for seq in range(1, 2001)]
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(lines))
    started: list[int] = []
    assert native is not None
    start = native.read_start

    def counted(fd: int, offset: int, size: int) -> object:
        started.append(offset)
        return start(fd, offset, size)

    monkeypatch.setattr(native, "read_start", counted)
    with small_chunks(len(lines[0]) * 100 + 7):
        result = reader.read_events(path)
    assert result.ok and [e.seq for e in result.events] == list(range(1, 2001))
    assert list(result.line_ends) == list(itertools.accumulate(map(len, lines)))
    assert len(started) >= 19  # C read the chunks, not Lines


@needs_read_ahead
def test_a_sink_that_raises_stops_a_reading_read_ahead_and_its_error_reaches_the_caller(tmp_path: Path) -> None:
    lines = [encode_line(_a_message(), seq, "2026-01-01T00:00:00.000Z") for seq in range(1, 501)]
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(lines))
    seen: list[int] = []

    def sink(events: list[object], _lines: bytes | memoryview) -> None:
        seen.append(len(events))
        if len(seen) == 2:
            raise OSError("the sink is full")

    with small_chunks(len(lines[0]) * 50), pytest.raises(OSError, match="the sink is full"):
        reader.scan_events(path, sink)  # type: ignore[arg-type]
    assert len(seen) == 2 and seen[0] > 40


# Lines with a right CRC whose head says one seq or ts and whose decoding says another, or may: C's
# reading of seqs from the heads must doubt each of them, so that the events and the verdict are
# those of decoding every line (a later key wins in msgspec, escaped or not).
_TRICKS = [
    b'{"type":"delta","text":"x","seq":%d}',  # a second seq key: it is the one decoded
    b'{"type":"delta","text":"x","s\\u0065q":%d}',  # the same key, escaped
    b'{"type":"delta","text":"x","\\u0073eq":%d}',
    b'{"type":"delta","text":"x","ts":""}',  # a second ts, empty: the line has no ts
    b'{"type":"delta","text":"x","t\\u0073":"%d"}',
    b'{"type":"delta","text":"seq","reasoning":true}',  # "seq" as a value: a doubt, nothing more
    b'{"type":"delta","text":"ts \\u00e9"}',
    b'{"type":"delta","text":"\\"seq\\": %d"}',  # in a string: no key at all
]


@needs_read_ahead
@_settings
@given(st.integers(1, 300), st.sampled_from(_TRICKS), st.integers(-2, 2), st.integers(200, 20_000))
def test_a_seq_or_ts_c_cannot_read_from_the_head_reads_as_line_by_line(
    at: int, trick: bytes, shift: int, chunk: int
) -> None:
    lines = [encode_line(_a_message(), seq, "2026-01-01T00:00:00.000Z") for seq in range(1, 301)]
    body = trick % (at + shift) if b"%d" in trick else trick
    lines[at - 1] = _framing.python_line(at, b"2026-01-01T00:00:00.000Z", body)
    data = b"".join(lines)
    with small_chunks(chunk):
        fast, slow = _read_both(data)
    _same(fast, slow)
    ref = reference_read(data)
    assert fast.events == ref.events and where(fast.stop) == where(ref.stop) and fast.warnings == ref.warnings


@needs_read_ahead
def test_c_reads_the_seqs_from_the_heads_only_where_nothing_else_in_a_line_could_be_one(tmp_path: Path) -> None:
    assert native is not None
    clean = [encode_line(_a_message(), seq, "2026-01-01T00:00:00.000Z") for seq in range(7, 57)]
    path = tmp_path / "j.jsonl"
    cases = {
        b"".join(clean): 7,
        b"".join(clean[:10] + clean[11:]): -1,  # a seq skipped
        b"".join([*clean[:20], _framing.python_line(27, b"t", _TRICKS[1] % 30), *clean[21:]]): -1,
        b"".join([*clean[:5], _framing.python_line(12, b"t", _TRICKS[5]), *clean[6:]]): -1,
        b"".join([_framing.python_line(7, b"", b'{"type":"delta","text":"x"}'), *clean[1:]]): -1,  # no ts
    }
    for data, first in cases.items():
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            result = native.read_start(fd, 0, len(data) + 10).result()
        finally:
            os.close(fd)
        assert result[3:] == (*native.check_lines(data, 0), first)


@needs_read_ahead
@pytest.mark.parametrize(
    "last",
    [b'"seq":1', b'"ts":"t"', b'"x":"\\u00e9"', b'"s\\u0065q":1', b'"x":"ok"'],
    ids=["seq", "ts", "u", "escaped", "none"],
)
def test_a_second_seq_or_ts_key_is_seen_at_every_place_before_the_crc(tmp_path: Path, last: bytes) -> None:
    # The key last in the event, just before the CRC suffix, with text of every length before it: so
    # it falls in each part of the scan (32 bytes a step, 16, one by one).
    assert native is not None
    path = tmp_path / "j.jsonl"
    for pad in range(70):
        body = b'{"type":"delta","text":"%b",%b}' % (b"x" * pad, last)
        line = _framing.python_line(1, b"t", body)
        path.write_bytes(line)
        fd = os.open(path, os.O_RDONLY)
        try:
            result = native.read_start(fd, 0, 1 << 12).result()
        finally:
            os.close(fd)
        assert result[3] == 1 and result[6] == (1 if last == b'"x":"ok"' else -1), (pad, line)
