"""The sessions floor: any name a person gives opens as a source with one reading and one answer to whether something
writes it now, and that answer is the same one `wren ls --agent` gives."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.foreign.sessions import AN_HOUR, copy_session
from tests.tui.journals import SESSION, finished_story, write_journal
from wren_tui.foreign.listing import describe_agent_session
from wren_tui.foreign.live import alive, held_for_writing
from wren_tui.journal.errors import NotASession, SessionNotFound
from wren_tui.journal.events import Event
from wren_tui.journal.reader import read_events
from wren_tui.sessions.foreign import ForeignFile
from wren_tui.sessions.local import LocalJournal
from wren_tui.sessions.opening import FleetSession, open_session


def _events(source: LocalJournal | ForeignFile, **how: bool) -> list[Event]:
    seen: list[Event] = []
    verdict = source.scan(lambda events, _data: seen.extend(events), **how)
    assert verdict.stop is None
    return seen


def test_a_wren_journal_opens_by_its_id_and_by_its_path_and_reads_as_the_journal_reader_reads_it(
    tmp_path: Path,
) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    expected = [e.seq for e in read_events(journal).events]
    for ref in (SESSION, str(journal)):
        with closing(open_session(ref, str(tmp_path))) as source:
            assert isinstance(source, LocalJournal) and source.agent is None and source.id == SESSION
            assert [e.seq for e in _events(source)] == expected
            assert source.writer_alive() is False  # no process holds its lock


def test_another_agents_file_opens_as_its_session_its_branch_shown_or_every_branch(tmp_path: Path) -> None:
    session = copy_session("claude", "simple", tmp_path / "projects")
    with closing(open_session(str(session), str(tmp_path / "journals"))) as source:
        assert isinstance(source, ForeignFile) and source.agent == "claude" and source.where == str(session)
        shown, every = _events(source), _events(source, every_branch=True)
        assert shown and [e.seq for e in shown] == [e.seq for e in every]  # one branch: the same lines
        assert source.writer_alive() is False  # an hour old, and no process holds it


def test_a_fleets_name_opens_as_a_fleet_session_and_a_command_on_this_machine_alone_does_not_take_it(
    tmp_path: Path,
) -> None:
    ref = "nats://127.0.0.1:4222/host-a/s-20260101-000000-abcd"
    source = open_session(ref, str(tmp_path))
    assert isinstance(source, FleetSession) and source.id == "s-20260101-000000-abcd" and source.agent is None
    with pytest.raises(SessionNotFound):
        open_session(ref, str(tmp_path), fleet=False)


def test_a_file_of_no_kind_wren_reads_is_the_one_refusal_not_a_missing_session(tmp_path: Path) -> None:
    other = tmp_path / "notes.yaml"
    other.write_text("key: value\n")
    with pytest.raises(NotASession):
        open_session(str(other), str(tmp_path))


def test_a_session_held_open_for_writing_is_alive_for_the_listing_the_source_and_the_one_function_alike(
    tmp_path: Path,
) -> None:
    held = copy_session("codex", "simple", tmp_path / "sessions", age_s=AN_HOUR)
    st = os.stat(held)
    key = (st.st_dev, st.st_ino)
    assert not alive(st) and alive(st, held={key})  # a look at every process made before is taken as given
    # Another program holds it open for writing (as Codex does), though it has not written for an hour.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; f = open(sys.argv[1], 'ab'); sys.stdin.read()", str(held)],
        stdin=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 10
        while not held_for_writing([key]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert alive(os.stat(held)) and not alive(os.stat(held), held=set())
        with closing(open_session(str(held), str(tmp_path / "journals"))) as source:
            assert source.writer_alive()
        assert describe_agent_session(held, source.format).state == "live"
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    with closing(open_session(str(held), str(tmp_path / "journals"))) as source:
        assert not source.writer_alive()
    assert describe_agent_session(held, source.format).state == "done"
    os.utime(held)  # changed just now: alive by its time alone
    assert alive(os.stat(held), held=set())
