"""A session a fleet mirrors, opened by its nats:// name on the sessions floor: read as its journal reads, and
not written any more once its writer finished it."""

from __future__ import annotations

from pathlib import Path

from tests.fleet.conftest import nats_server  # noqa: F401 (a fixture)
from tests.fleet.server import NatsServer
from tests.fleet.test_mirror import mirror_once, write_journal
from wren_tui.journal.events import Event
from wren_tui.journal.reader import read_events
from wren_tui.sessions.opening import FleetSession, open_session


def test_a_mirrored_session_reads_through_its_name_as_its_journal_and_says_no_one_writes_it(
    nats_server: NatsServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    path = write_journal(folder)
    assert mirror_once(nats_server, folder, "box")[0] == 0
    source = open_session(f"{nats_server.url}/box/{path.stem}", str(tmp_path / "here"))
    assert isinstance(source, FleetSession) and source.id == path.stem
    seen: list[Event] = []
    verdict = source.scan(lambda events, _lines: seen.extend(events))
    assert verdict.stop is None
    assert [e.seq for e in seen] == [e.seq for e in read_events(path).events]
    assert source.writer_alive() is False  # its writer closed it: the row says it ended
