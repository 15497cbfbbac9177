"""The viewer on every bad input: no crash, the events before the damage on screen, where it stopped, no write."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.reliability.bad_inputs import CASES, Case, measure_viewer
from wren_tui.journal.errors import SessionNotFound
from wren_tui.journal.events import Message
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import resolve

SID = "s-20260101-000000-abcd"
LINK = "s-20260101-000000-link"
READ = [pytest.param(c, id=c.name) for c in CASES if c.events is not None]
REFUSED = [c for c in CASES if c.events is None]
UNEXPLAINED = [c for c in REFUSED if c.name != "missing file"]


def _journals(tmp_path: Path) -> Path:
    folder = tmp_path / "journals"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("case", READ)
def test_the_viewer_shows_every_readable_event_and_where_reading_stopped(tmp_path: Path, case: Case) -> None:
    folder = _journals(tmp_path)
    got = measure_viewer(case, folder)
    assert got.crash is None, got.crash
    path = folder / f"{SID}.jsonl"
    assert got.after == got.before
    assert sorted(p.name for p in folder.glob("*.jsonl*")) == [path.name]
    result = read_events(path)
    assert f" {case.events} events " in got.status
    if result.stop is None:
        assert got.integrity is None and "stopped at" not in got.status
    else:
        assert got.integrity == f"stopped at line {result.stop.line}: {result.stop.why}" and got.integrity in got.status
        assert case.phrase in got.integrity
    messages = [e.message.content for e in result.events if isinstance(e, Message)]
    if messages:
        # Follow mode sticks to the end, so the last readable message is on screen.
        assert messages[-1].splitlines()[0][:40] in got.screen


@pytest.mark.parametrize("case", REFUSED, ids=[c.name for c in REFUSED])
def test_the_viewer_on_a_path_it_cannot_read_neither_crashes_nor_writes(tmp_path: Path, case: Case) -> None:
    folder = _journals(tmp_path)
    got = measure_viewer(case, folder)
    assert got.crash is None, got.crash
    assert got.after == got.before and got.events == 0
    expected = {"missing file": [], "a symlink to a journal": [f"{SID}.jsonl", f"{LINK}.jsonl"]}
    assert got.names == expected.get(case.name, [f"{SID}.jsonl"])


@pytest.mark.parametrize("case", UNEXPLAINED, ids=[c.name for c in UNEXPLAINED])
def test_the_viewer_says_why_it_cannot_read_a_path(tmp_path: Path, case: Case) -> None:
    got = measure_viewer(case, _journals(tmp_path))
    assert got.crash is None
    assert got.integrity is not None and case.phrase in got.integrity


@pytest.mark.parametrize(
    ("case_name", "name", "phrase"),
    [
        ("missing file", f"{SID}.jsonl", "no such journal file"),
        ("a symlink to a journal", f"{LINK}.jsonl", "is a symbolic link; journals are opened only directly"),
    ],
)
def test_wren_watch_refuses_a_path_that_is_not_a_journal_with_a_sentence(
    tmp_path: Path, case_name: str, name: str, phrase: str
) -> None:
    folder = _journals(tmp_path)
    next(c for c in CASES if c.name == case_name).build(folder)
    watched = run_wren(["watch", str(folder / name)], cwd=tmp_path, timeout=60)
    assert watched.returncode == 1
    assert watched.stderr.strip() == f"wren: {folder / name}: {phrase}"


def test_wren_watch_takes_a_folder_named_like_a_journal_as_a_journals_folder(tmp_path: Path) -> None:
    """`wren watch DIR` browses DIR, even one named s-….jsonl; with --pick it says the folder holds no sessions."""
    folder = _journals(tmp_path)
    path = next(c for c in CASES if c.name == "a folder where the journal should be").build(folder)
    watched = run_wren(["watch", "--pick", str(path)], cwd=tmp_path, timeout=60)
    assert watched.returncode == 1
    assert watched.stderr.strip() == f"wren: no sessions in {path}"
    assert "Traceback" not in watched.stderr


@pytest.mark.parametrize("case_name", ["a symlink to a journal", "a folder where the journal should be"])
def test_a_session_id_naming_a_symlink_or_a_folder_is_refused(tmp_path: Path, case_name: str) -> None:
    folder = _journals(tmp_path)
    path = next(c for c in CASES if c.name == case_name).build(folder)
    with pytest.raises(SessionNotFound):
        resolve(folder, path.stem)
