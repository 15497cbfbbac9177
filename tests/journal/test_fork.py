"""Forking: clean points only, a byte-prefix copy with seq kept, a fork event at the end, the parent untouched."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.journal.helpers import write_journal
from tests.journal.strategies import journals, mixed_journals
from tests.reliability.simfs import RecordingOps, crash_state
from wren_tui.journal import reader
from wren_tui.journal.errors import JournalError
from wren_tui.journal.events import ChatMessage, Fork, Message
from wren_tui.journal.forking import NotAForkPoint, fork, fork_from_lines, fork_points
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import is_session_id
from wren_tui.journal.writer import JournalWriter

PARENT = "s-20260101-000000-abcd.jsonl"


def test_fork_points_are_only_the_clean_boundaries(tmp_path: Path) -> None:
    path = tmp_path / PARENT
    write_journal(path)
    points = fork_points(read_events(path).events)
    # 2: the user's request; 12: the tool-free answer. Everything between has a call open.
    assert [(p.seq, p.role) for p in points] == [(2, "user"), (12, "assistant")]
    assert points[0].preview == "run the tests and fix the failing one"


def test_fork_keeps_the_parent_byte_identical_and_the_prefix_with_its_seq(tmp_path: Path) -> None:
    parent = tmp_path / PARENT
    written = write_journal(parent)
    before = hashlib.sha256(parent.read_bytes()).hexdigest()
    forked = fork(parent, 12)
    assert hashlib.sha256(parent.read_bytes()).hexdigest() == before
    assert is_session_id(forked.id) and forked.path == tmp_path / f"{forked.id}.jsonl"
    assert (forked.parent, forked.at_seq) == ("s-20260101-000000-abcd", 12)
    prefix = parent.read_bytes().splitlines(keepends=True)[:12]
    assert forked.path.read_bytes().startswith(b"".join(prefix))
    result = read_events(forked.path)
    assert result.ok and result.events[:12] == written[:12]
    last = result.events[-1]
    assert isinstance(last, Fork) and (last.from_, last.at_seq, last.seq) == ("s-20260101-000000-abcd", 12, 13)
    assert forked.path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([PARENT, forked.path.name])  # no temporary left


def test_a_fork_continues_its_own_seq_when_appended_to(tmp_path: Path) -> None:
    parent = tmp_path / PARENT
    write_journal(parent)
    forked = fork(parent, 2)
    with JournalWriter.open(forked.path) as writer:
        event = writer.append(Message(message=ChatMessage(role="user", content="a different way")))
    assert event.seq == 4
    assert read_events(forked.path).ok


@pytest.mark.parametrize("seq", [3, 4, 7, 13, 0, 99])
def test_a_seq_that_is_not_a_clean_point_is_refused_with_the_valid_points(tmp_path: Path, seq: int) -> None:
    parent = tmp_path / PARENT
    write_journal(parent)
    with pytest.raises(NotAForkPoint) as info:
        fork(parent, seq)
    assert [p.seq for p in info.value.points] == [2, 12]
    assert f"seq {seq} is not a clean fork point" in str(info.value)
    assert "2  user: run the tests" in str(info.value)
    assert [p.name for p in tmp_path.iterdir()] == [PARENT]


def test_a_fork_into_another_folder_names_its_parent(tmp_path: Path) -> None:
    parent = tmp_path / PARENT
    write_journal(parent)
    other = tmp_path / "other"
    other.mkdir()
    forked = fork(parent, 2, folder=other)
    assert forked.path.parent == other and forked.parent == "s-20260101-000000-abcd"


def test_a_fork_of_a_torn_journal_copies_only_whole_lines(tmp_path: Path) -> None:
    parent = tmp_path / PARENT
    write_journal(parent)
    with open(parent, "ab") as f:
        f.write(b'{"seq":14,"ts":')
    forked = fork(parent, 12)
    assert b'{"seq":14' not in forked.path.read_bytes()
    assert read_events(forked.path).ok


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(journals, mixed_journals()))
def test_fork_takes_exactly_the_points_fork_points_lists_and_copies_their_exact_prefix(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    folder = tmp_path_factory.mktemp("forks")
    parent = folder / PARENT
    parent.write_bytes(data)
    (folder / "out").mkdir()
    result = read_events(parent)
    clean = [p.seq for p in fork_points(result.events)]
    for seq in range(result.last_seq + 2):
        if seq not in clean:
            with pytest.raises(NotAForkPoint) as refused:
                fork(parent, seq, folder=folder / "out")
            assert [p.seq for p in refused.value.points] == clean
            continue
        forked = fork(parent, seq, folder=folder / "out")
        index = next(i for i, e in enumerate(result.events) if e.seq == seq)
        assert forked.path.read_bytes().startswith(data[: result.line_ends[index]])
        assert read_events(forked.path).events[:-1] == result.events[: index + 1]
    assert parent.read_bytes() == data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(journals, mixed_journals()), st.integers(1, 200))
def test_a_prefix_copied_chunk_by_chunk_while_it_is_read_is_the_same_prefix(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, chunk: int
) -> None:
    # With tiny read chunks the copy thread copies each checked run as the reading goes on.
    folder = tmp_path_factory.mktemp("forks")
    parent = folder / PARENT
    parent.write_bytes(data)
    out = folder / "out"
    out.mkdir()
    result = read_events(parent)
    clean = {p.seq for p in fork_points(result.events)}
    saved, reader._CHUNK = reader._CHUNK, chunk
    try:
        for seq in range(result.last_seq + 2):
            if seq not in clean:
                with pytest.raises(NotAForkPoint):
                    fork(parent, seq, folder=out)
                continue
            forked = fork(parent, seq, folder=out)
            index = next(i for i, e in enumerate(result.events) if e.seq == seq)
            body = forked.path.read_bytes()
            assert body[: result.line_ends[index]] == data[: result.line_ends[index]]
            assert body.count(b"\n") == index + 2  # the prefix's lines, then the fork event's
    finally:
        reader._CHUNK = saved
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")], "a refused fork left its temporary file"
    assert parent.read_bytes() == data


# --- a fork from lines held in memory (a session read over the network) ----------------------------


def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    """`data` (whole lines) cut into pieces at the line ends chosen by `cuts` (indexes into its lines)."""
    lines = data.splitlines(keepends=True)
    ends = sorted({min(c, len(lines)) for c in cuts} | {len(lines)})
    pieces, start = [], 0
    for end in ends:
        if end > start:
            pieces.append(b"".join(lines[start:end]))
            start = end
    return pieces


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(journals, mixed_journals()), st.lists(st.integers(0, 40), max_size=6))
def test_a_fork_from_lines_takes_the_points_fork_takes_and_writes_the_prefix_fork_writes(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, cuts: list[int]
) -> None:
    folder = tmp_path_factory.mktemp("forks")
    parent = folder / PARENT
    parent.write_bytes(data)
    whole = data[: data.rfind(b"\n") + 1]  # what a mirror ships: whole lines only
    pieces = _pieces(whole, cuts)
    (folder / "file").mkdir()
    result = read_events(parent)
    clean = [p.seq for p in fork_points(result.events)]
    for seq in range(result.last_seq + 2):
        if seq not in clean:
            with pytest.raises(NotAForkPoint) as refused:
                fork_from_lines(pieces, seq, parent=parent.stem, folder=folder / "mem")
            assert [p.seq for p in refused.value.points] == clean
            assert refused.value.stop == result.stop or result.torn
            continue
        from_file = fork(parent, seq, folder=folder / "file")
        from_memory = fork_from_lines(pieces, seq, parent=parent.stem, folder=folder / "mem")
        ours, theirs = from_memory.path.read_bytes(), from_file.path.read_bytes()
        assert ours[: ours.rindex(b"\n", 0, -1)] == theirs[: theirs.rindex(b"\n", 0, -1)]
        forked = read_events(from_memory.path)
        last = forked.events[-1]
        assert forked.ok and isinstance(last, Fork) and (last.from_, last.at_seq) == (parent.stem, seq)
    assert not list(folder.glob("mem/.*.tmp")), "a refused fork left its temporary file"


def test_a_fork_from_lines_makes_its_folder_and_reads_no_further_than_the_fork_line(tmp_path: Path) -> None:
    parent = tmp_path / PARENT
    write_journal(parent)
    lines = parent.read_bytes().splitlines(keepends=True)
    asked: list[int] = []

    def pieces() -> Iterator[bytes]:
        for n, line in enumerate(lines, 1):
            asked.append(n)
            yield line

    folder = tmp_path / "local" / "journals"
    forked = fork_from_lines(pieces(), 2, parent="s-20260101-000000-abcd", folder=folder)
    assert asked == [1, 2] and forked.path.parent == folder
    assert folder.stat().st_mode & 0o777 == 0o700 and forked.path.stat().st_mode & 0o777 == 0o600
    assert forked.path.read_bytes().startswith(b"".join(lines[:2]))
    with pytest.raises(JournalError, match="not a session id"):
        fork_from_lines(lines, 2, parent="../elsewhere", folder=folder)
    with pytest.raises(JournalError, match="does not end with a newline"):
        fork_from_lines([lines[0][:-1]], 2, parent="s-20260101-000000-abcd", folder=folder)
    assert [p.name for p in folder.iterdir()] == [forked.path.name]  # nothing left by the refusals


def test_every_crash_state_of_a_fork_from_lines_has_no_fork_or_a_whole_one(tmp_path: Path) -> None:
    parent = tmp_path / PARENT
    written = write_journal(parent)
    ops = RecordingOps()
    folder = tmp_path / "forks"
    folder.mkdir()
    forked = fork_from_lines([parent.read_bytes()], 12, parent=parent.stem, folder=folder, ops=ops)
    assert [op.kind for op in ops.log][-3:] == ["sync", "rename", "sync_dir"]
    for cut in range(len(ops.log) + 1):
        for keep_all in (False, True):
            state = crash_state(ops.log, cut, None, keep_all=keep_all)
            found = [path for path in state if path.parent == folder and path.suffix == ".jsonl"]
            if cut == len(ops.log):
                assert found == [forked.path]
            for path in found:
                where = tmp_path / f"cut{cut}-{keep_all}"
                where.mkdir()
                (where / path.name).write_bytes(state[path])
                got = read_events(where / path.name)
                assert got.ok and got.events[:-1] == written[:12], f"cut {cut}: half a fork"
