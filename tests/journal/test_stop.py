"""One Stop, everywhere: every reader of a damaged journal reports the same line, byte and why, as data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.journal.helpers import write_journal
from wren_tui.journal.errors import JournalCorrupt
from wren_tui.journal.forking import NotAForkPoint, fork
from wren_tui.journal.offsets import LineScanner
from wren_tui.journal.reader import Tail, read_events, scan_events
from wren_tui.journal.verdict import Stop
from wren_tui.journal.writer import JournalWriter

SID = "s-20260101-000000-stop"
WHY = "its CRC does not match its bytes (the line was changed after it was written)"


def test_a_stop_reads_as_its_line_and_why() -> None:
    stop = Stop(line=3, offset=412, why="it is not JSON")
    assert str(stop) == "line 3: it is not JSON" and not stop.torn


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[Path, int]:
    """A journal whose line 6 was changed after it was written, and where that line starts."""
    path = tmp_path / f"{SID}.jsonl"
    write_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[5] = lines[5].replace(b"FAILED", b"PASSED")
    path.write_bytes(b"".join(lines))
    return path, sum(map(len, lines[:5]))


def test_every_reader_reports_the_same_stop_for_a_changed_line(damaged: tuple[Path, int]) -> None:
    path, offset = damaged
    expected = Stop(line=6, offset=offset, why=WHY, torn=False)
    result = read_events(path)
    assert result.stop == expected and not result.ok and not result.torn
    assert (result.lines, result.good_bytes) == (5, offset)
    assert scan_events(path, lambda events, lines: None).stop == expected
    tail = Tail(path)
    assert tail.read().stop == expected and tail.stop == expected
    fd = os.open(path, os.O_RDONLY)
    try:
        # From the middle of the file, as the viewer reads its tail first: counted from the file's start.
        head = LineScanner(path, fd)
        list(head.chunks(stop=read_events(path).line_ends[2]))
        rest = LineScanner(path, fd, head.offset, first_line=head.lineno, after_seq=head.prev_seq)
        list(rest.chunks())
        assert head.stop is None and rest.stop == expected
    finally:
        os.close(fd)
    with pytest.raises(NotAForkPoint) as past:
        fork(path, 12, folder=path.parent)
    assert past.value.stop == expected and [p.seq for p in past.value.points] == [2]
    with pytest.raises(JournalCorrupt) as refused:
        JournalWriter.open(path)
    assert refused.value.stop == expected
    assert str(refused.value).startswith(f"{path}: line 6: {WHY}. Nothing was written.")


def test_a_cut_short_last_line_is_a_torn_stop_where_the_good_bytes_end(tmp_path: Path) -> None:
    path = tmp_path / f"{SID}.jsonl"
    write_journal(path)
    good = path.stat().st_size
    with open(path, "ab") as f:
        f.write(b'{"seq":14,"ts":"2026-')
    result = read_events(path)
    assert result.stop == Stop(14, good, "the last line was cut short (no newline at its end)", torn=True)
    assert result.torn and result.good_bytes == good


def test_the_cli_says_the_stop_it_was_given(damaged: tuple[Path, int], tmp_path: Path) -> None:
    path, offset = damaged
    folder = str(path.parent)
    text = run_wren(["log", "--dir", folder, SID], cwd=tmp_path)
    assert text.returncode == 4
    assert text.stdout.splitlines()[-1].startswith(f"stopped at line 6 (byte {offset}): {WHY} [corrupt]")
    doc = json.loads(run_wren(["log", "--dir", folder, "--json", SID], cwd=tmp_path).stdout)
    assert (doc["stoppedAtLine"], doc["stoppedAtOffset"], doc["reason"], doc["torn"]) == (
        6,
        offset,
        f"line 6: {WHY}",
        False,
    )
    resumed = run_wren(["resume", "--dir", folder, "--workspace", str(tmp_path), SID, "go on"], cwd=tmp_path)
    assert resumed.returncode == 4
    # The reader's words once, with its line once: nothing took the sentence apart and put it back.
    assert f"{path}: line 6: {WHY}. Nothing was written." in resumed.stderr
    assert resumed.stderr.count("line 6") == 1
