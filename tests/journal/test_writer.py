"""JournalWriter: contiguous seq, CRC on every line, one writer, private files, torn tails moved aside."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tests.journal.helpers import session_events, write_journal
from wren_tui.journal.errors import JournalCorrupt, JournalError, JournalLocked
from wren_tui.journal.events import ChatMessage, Message, RunStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.verdict import ReadVerdict
from wren_tui.journal.writer import JournalWriter

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_seq_runs_from_1_with_no_gap(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    assert [e.seq for e in read_events(path).events] == list(range(1, len(written) + 1))


def test_append_returns_the_event_stamped_with_seq_and_a_utc_millisecond_ts(tmp_path: Path) -> None:
    with JournalWriter.create(tmp_path / "j.jsonl") as writer:
        event = writer.append(Message(message=ChatMessage(role="user", content="hi")))
    assert event.seq == 1 and TS.match(event.ts)
    assert event.message.content == "hi"


def test_every_line_ends_with_the_crc_of_the_bytes_before_it(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    for line in path.read_bytes().splitlines():
        body, crc = line[:-18], line[-18:]
        assert crc == b',"crc":"%08x"}' % zlib.crc32(body)


def test_a_reopened_journal_continues_the_seq(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    with JournalWriter.open(path) as writer:
        event = writer.append(Message(message=ChatMessage(role="user", content="again")))
    assert event.seq == len(written) + 1
    result = read_events(path)
    assert result.ok and result.warnings == [] and result.events[-1] == event


def test_reopening_a_torn_journal_moves_the_torn_bytes_aside_and_continues(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    whole = path.read_bytes()
    torn = b'{"seq":14,"ts":"2026-01-01T00:00:00.000Z","type":"mes'
    path.write_bytes(whole + torn)
    with JournalWriter.open(path) as writer:
        event = writer.append(Message(message=ChatMessage(role="user", content="after the crash")))
    assert (tmp_path / "j.jsonl.torn").read_bytes() == torn
    assert path.read_bytes().startswith(whole)
    result = read_events(path)
    assert result.ok and result.events == [*written, event] and event.seq == len(written) + 1


def test_open_streams_every_event_once_and_a_refusing_check_leaves_a_torn_journal_untouched(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    written = write_journal(path)
    before = path.read_bytes() + b'{"seq":14,"ts":"2026-01-01T00:00:00.000Z","type":"mes'
    path.write_bytes(before)
    seen: list[object] = []

    def refuse(verdict: ReadVerdict) -> None:
        assert verdict.torn and verdict.last_seq == len(written) and seen == written
        raise RuntimeError("the caller says no")

    with pytest.raises(RuntimeError, match="the caller says no"):
        JournalWriter.open(path, on_events=lambda events, _lines: seen.extend(events), check=refuse)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.jsonl"]
    with JournalWriter.open(path) as writer:  # the lock was let go
        assert writer.last_seq == len(written)


def test_a_second_torn_tail_is_kept_beside_the_first(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    for junk in (b"first", b"second"):
        with open(path, "ab") as f:
            f.write(junk)
        JournalWriter.open(path).close()
    assert (tmp_path / "j.jsonl.torn").read_bytes() == b"first"
    assert (tmp_path / "j.jsonl.torn.1").read_bytes() == b"second"


def test_reopening_a_journal_with_a_bad_middle_line_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[5] = b"{oops\n"
    path.write_bytes(b"".join(lines))
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(JournalCorrupt) as info:
        JournalWriter.open(path)
    assert info.value.stop.line == 6
    assert "line 6: it is not JSON" in str(info.value) and "Nothing was written" in str(info.value)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert not (tmp_path / "j.jsonl.torn").exists()


def test_create_refuses_a_journal_that_exists(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    before = path.read_bytes()
    with pytest.raises(JournalError, match="already exists"):
        JournalWriter.create(path)
    assert path.read_bytes() == before


def test_new_journals_are_0600_in_a_new_0700_folder_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path = tmp_path / "journals" / "j.jsonl"
        write_journal(path)
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    torn_aside = path.with_name("j.jsonl.torn")
    with open(path, "ab") as f:
        f.write(b"torn")
    JournalWriter.open(path).close()
    assert torn_aside.stat().st_mode & 0o777 == 0o600


def test_open_refuses_a_symlinked_journal(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    write_journal(real)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with pytest.raises(JournalError, match="symbolic link"):
        JournalWriter.open(link)
    with pytest.raises(JournalError):
        JournalWriter.create(link)


_HOLDER = """
import sys
from wren_tui.journal.writer import JournalWriter
writer = JournalWriter.open(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
"""


def test_a_second_writer_fails_at_once_naming_the_holders_pid(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        with pytest.raises(JournalLocked) as info:
            JournalWriter.open(path)
        assert f"process {holder.pid} is writing this journal" in str(info.value)
    finally:
        holder.communicate("", timeout=30)
    with JournalWriter.open(path) as writer:  # free once the holder has gone
        assert writer.last_seq == len(session_events())


def test_appending_after_close_is_refused(tmp_path: Path) -> None:
    writer = JournalWriter.create(tmp_path / "j.jsonl")
    writer.close()
    with pytest.raises(JournalError, match="closed"):
        writer.append(RunStart(pid=1, cwd="/", model="m", version="v"))


def test_an_event_carrying_a_seq_is_restamped_not_written_twice(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with JournalWriter.create(path) as writer:
        event = writer.append(Message(seq=99, ts="old", message=ChatMessage(role="user", content="x")))
    assert event.seq == 1 and event.ts != "old"
    assert path.read_bytes().count(b'"seq"') == 1
