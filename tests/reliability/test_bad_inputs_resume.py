"""`wren resume` on every bad input: refused paths named, corrupt journals left alone, torn tails set aside whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.bad_inputs import CASES, Case, measure_resume
from wren_tui.journal.events import RunStart
from wren_tui.journal.reader import read_events

SID = "s-20260101-000000-abcd"
REFUSED = [c for c in CASES if c.events is None]
CORRUPT = [c for c in CASES if c.outcome == "corrupt"]
TORN = [c for c in CASES if c.outcome == "torn"]
READABLE = [c for c in CASES if c.outcome in ("torn", "whole")]


def _ids(cases: list[Case]) -> list[str]:
    return [c.name for c in cases]


def _folders(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "journals"
    folder.mkdir()
    return folder, tmp_path / "workspace"


@pytest.mark.parametrize("case", REFUSED, ids=_ids(REFUSED))
def test_resume_refuses_a_path_that_is_not_a_readable_journal_and_names_it(tmp_path: Path, case: Case) -> None:
    folder, workspace = _folders(tmp_path)
    got = measure_resume(case, folder, workspace)
    assert got.exit == 1, got.stderr
    assert "Traceback" not in got.stderr
    path = folder / ("s-20260101-000000-link.jsonl" if "symlink" in case.name else f"{SID}.jsonl")
    if case.name == "missing file":
        # An id that names no file: the sentence names the id and the folder it looked in.
        assert f"no session {SID} in {folder}" in got.stderr
    else:
        assert str(path) in got.stderr and case.phrase in got.stderr
    assert got.after == got.before
    # Nothing created: no journal for a missing id, no .torn beside the others.
    expected = [] if case.name == "missing file" else sorted({f"{SID}.jsonl", path.name})
    assert sorted(p.name for p in folder.iterdir()) == expected


@pytest.mark.parametrize("case", CORRUPT, ids=_ids(CORRUPT))
def test_resume_refuses_a_corrupt_journal_with_the_line_and_reason_and_writes_nothing(
    tmp_path: Path, case: Case
) -> None:
    folder, workspace = _folders(tmp_path)
    got = measure_resume(case, folder, workspace)
    stop = read_events(folder / f"{SID}.jsonl")
    assert got.exit == 4, got.stdout + got.stderr
    assert "Traceback" not in got.stderr
    assert stop.stop is not None and f"line {stop.stop.line}: " in got.stderr and case.phrase in got.stderr
    assert "Nothing was written" in got.stderr and f"wren log {folder / SID}.jsonl" in got.stderr
    assert got.after == got.before
    assert got.torn is None
    assert sorted(p.name for p in folder.glob("*.jsonl*")) == [f"{SID}.jsonl"]


@pytest.mark.parametrize("case", READABLE, ids=_ids(READABLE))
def test_resume_continues_a_readable_journal_keeping_every_byte_it_could_read(tmp_path: Path, case: Case) -> None:
    folder, workspace = _folders(tmp_path)
    path = folder / f"{SID}.jsonl"
    got = measure_resume(case, folder, workspace)
    assert got.exit == 0, got.stderr
    assert "Traceback" not in got.stderr
    assert got.before is not None and got.after is not None
    if case.outcome == "torn":
        # The torn tail is moved aside byte for byte; what precedes it stays exactly as it was.
        assert got.torn is not None and got.torn and got.before.endswith(got.torn)
        prefix = got.before[: len(got.before) - len(got.torn)]
        assert f"moved aside to {SID}.jsonl.torn" in got.stdout
    else:
        assert got.torn is None
        prefix = got.before
    assert got.after.startswith(prefix) and len(got.after) > len(prefix)
    # What was readable before is still read, unchanged, and resume's run continues the seq after it.
    (tmp_path / "before.jsonl").write_bytes(got.before)
    readable = read_events(tmp_path / "before.jsonl").events
    assert len(readable) == case.events
    after = read_events(path)
    assert after.stop is None, str(after.stop)
    assert after.events[: len(readable)] == readable
    added = after.events[len(readable) :]
    assert isinstance(added[0], RunStart) and added[0].resumed
    last_seq = readable[-1].seq if readable else 0
    assert [e.seq for e in added] == list(range(last_seq + 1, last_seq + 1 + len(added)))
    assert sorted(p.name for p in folder.glob("*.jsonl*")) == [path.name] + ([f"{path.name}.torn"] if got.torn else [])


@pytest.mark.parametrize("case", TORN, ids=_ids(TORN))
def test_resume_with_nothing_to_do_leaves_a_torn_journal_untouched(tmp_path: Path, case: Case) -> None:
    """A finished session and no new message: resume opens no writer, so it neither repairs nor moves anything."""
    folder, workspace = _folders(tmp_path)
    got = measure_resume(case, folder, workspace, message=None)
    assert got.exit == 0, got.stderr
    assert f"{SID} is finished" in got.stdout
    assert got.after == got.before and got.torn is None


def test_resume_names_the_bad_line_once(tmp_path: Path) -> None:
    """The reader's reason already starts with "line N: "; the sentence must not say it twice."""
    folder, workspace = _folders(tmp_path)
    got = measure_resume(next(c for c in CORRUPT if c.name == "NaN"), folder, workspace)
    assert got.exit == 4
    assert f"{SID}.jsonl: line 4: it is not JSON. Nothing was written." in got.stderr
