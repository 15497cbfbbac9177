"""`wren watch nats://SERVER`: the viewer over a fleet, driven through Pilot against a real nats-server.

Each "host" is a journals folder of its own with its own host token, shipped by a real `wren mirror`
(a process of its own, or `--once`). The viewer reads only the server: the session list for the
browser, a session's stream for the session screen.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, closing, contextmanager
from pathlib import Path

import nats
import pytest
from textual.pilot import Pilot

from tests.conftest import run_wren
from tests.fleet.conftest import NatsServer, journal_lines, mirror_process
from tests.fleet.test_mirror import mirror_once, write_journal
from tests.tui.conftest import screen_text, wait_for, wait_for_text
from wren_tui.fleet.names import parse_ref
from wren_tui.fleet.remote import SILENT_AFTER_S, Fleet
from wren_tui.journal.events import ChatMessage, Delta, Message
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import new_session_id
from wren_tui.journal.writer import JournalWriter, encode_line
from wren_tui.sessions.remote import TAIL_FIRST, RemoteSource
from wren_tui.tui.fleet_app import FleetApp
from wren_tui.tui.screens.dialogs import Confirm
from wren_tui.tui.screens.fleet_browser import FleetBrowserScreen
from wren_tui.tui.screens.session import SessionScreen

WIDE = (200, 40)


@contextmanager
def mirroring(server: NatsServer, folder: Path, host: str) -> Iterator[subprocess.Popen[bytes]]:
    """`wren mirror` following `folder` as `host` for the length of the block."""
    folder.mkdir(parents=True, exist_ok=True)
    process = mirror_process(server, folder, folder.parent / f"mirror-{host}.log", host=host)
    try:
        yield process
    finally:
        process.terminate()
        process.wait(30)


@asynccontextmanager
async def watching(
    target: str, fork_folder: Path, *, size: tuple[int, int] = WIDE, tail_first: int = TAIL_FIRST
) -> AsyncIterator[tuple[FleetApp, Pilot[None]]]:
    """The viewer on `target` (nats://SERVER[/HOST[/ID]]), as `wren watch` runs it, driven by Pilot."""
    ref = parse_ref(target)
    async with await Fleet.connect(ref.server, reconnect=True) as fleet:
        app = FleetApp(ref, fleet, fork_folder=fork_folder, tail_first=tail_first)
        async with app.run_test(size=size) as pilot:
            yield app, pilot


def row_of(app: FleetApp, host: str, session: str) -> str:
    """The browser's row of one session, as the screen shows it, without its trailing blanks ("" until it is there)."""
    return next((line for line in screen_text(app).splitlines() if host in line and session in line), "").rstrip()


def session_screen(app: FleetApp) -> SessionScreen:
    screen = app.screen
    assert isinstance(screen, SessionScreen), f"not on a session: {screen!r}"
    return screen


async def test_the_browser_lists_every_hosts_sessions_with_their_host_and_follows_their_states_live(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    done = write_journal(tmp_path / "laptop")
    assert mirror_once(nats_server, done.parent, "laptop")[0] == 0
    running = tmp_path / "ci" / f"{new_session_id()}.jsonl"
    running.parent.mkdir()
    writer = JournalWriter.create(running)
    writer.append(Message(message=ChatMessage(role="user", content="run the suite on ci")))
    with mirroring(nats_server, running.parent, "ci"), closing(writer):
        async with watching(nats_server.url, tmp_path / "here") as (app, pilot):
            await wait_for_text(pilot, done.stem, timeout=30)
            assert isinstance(app.screen, FleetBrowserScreen)
            header = next(line for line in screen_text(app).splitlines() if " id " in line)
            assert header.split()[:2] == ["host", "id"]
            assert row_of(app, "laptop", done.stem).split()[0] == "laptop"
            assert row_of(app, "laptop", done.stem).endswith(" done")
            # A session written on another host appears, live, then says how it ended.
            await wait_for(pilot, lambda: row_of(app, "ci", running.stem).endswith(" live"), "the ci session, live", 30)
            assert row_of(app, "ci", running.stem).split()[0] == "ci"
            for n in range(3):
                writer.append(Delta(text=f"step {n} "))
            writer.close()
            await wait_for(
                pilot, lambda: row_of(app, "ci", running.stem).endswith(" interrupted"), "the ci session ended", 30
            )
            assert " 4 " in row_of(app, "ci", running.stem)  # its events, as its mirror last wrote them


async def test_a_session_of_another_host_opens_and_follows_its_lines_live(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = tmp_path / "ci" / f"{new_session_id()}.jsonl"
    path.parent.mkdir()
    with mirroring(nats_server, path.parent, "ci"), JournalWriter.create(path) as writer:
        writer.append(Message(message=ChatMessage(role="user", content="fix the flaky test")))
        async with watching(nats_server.url, tmp_path / "here") as (app, pilot):
            await wait_for(pilot, lambda: bool(row_of(app, "ci", path.stem)), "the ci session listed", 30)
            await pilot.press("enter")
            await wait_for_text(pilot, "fix the flaky test", timeout=30)
            screen = session_screen(app)
            assert screen.session == f"ci/{path.stem}"
            await wait_for(pilot, lambda: screen.writer_alive is True, "its writer seen alive", 30)
            for n in range(1, 4):
                writer.append(Message(message=ChatMessage(role="assistant", content=f"appended on ci, step {n}")))
                await wait_for_text(pilot, f"appended on ci, step {n}", timeout=30)
            status = screen_text(app).splitlines()[0]
            assert status.startswith(" live ") and f"ci/{path.stem} · 4 events" in status
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, FleetBrowserScreen), "back on the browser")


async def test_a_long_session_shows_its_last_lines_first_then_reads_its_whole_history(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = tmp_path / "ci" / f"{new_session_id()}.jsonl"
    path.parent.mkdir()
    count = 3000
    with JournalWriter.create(path, fsync="none") as writer:
        for n in range(1, count + 1):
            writer.append(Message(message=ChatMessage(role="assistant", content=f"message {n} " + "." * 500)))
    assert path.stat().st_size > 1 << 20  # more than the screen reads before its first frame
    assert mirror_once(nats_server, path.parent, "ci")[0] == 0
    # A session over `tail_first` bytes is read from its last lines (the default is 8 MB).
    async with watching(f"{nats_server.url}/ci/{path.stem}", tmp_path / "here", tail_first=0) as (app, pilot):
        await wait_for_text(pilot, f"message {count} ", timeout=30)
        screen = session_screen(app)
        source = screen.source
        assert isinstance(source, RemoteSource)
        held = source._held
        assert held is not None and held.base > 0 and held.first_seq == count - source.tail_lines + 1
        await wait_for(pilot, lambda: screen.reader.indexing is None, "the history read and indexed", 60)
        timeline = screen.timeline
        assert timeline.events == count
        assert [timeline.event(i).seq for i in (0, 1, len(timeline) - 1)] == [1, 2, count]
        assert source.read(0, path.stat().st_size) == path.read_bytes()  # held exactly as the journal's bytes
        assert source.arrival().history is None
        status = screen_text(app).splitlines()[0]
        assert f"{count} events" in status and "loading" not in status and "stopped" not in status


async def test_a_line_the_stream_holds_that_fails_its_crc_is_where_the_integrity_line_says_reading_stops(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = tmp_path / "box" / f"{new_session_id()}.jsonl"
    path.parent.mkdir()
    with JournalWriter.create(path) as writer:
        writer.append(Message(message=ChatMessage(role="user", content="count to nine")))
        for n in range(1, 10):
            writer.append(Message(message=ChatMessage(role="assistant", content=f"number {n}")))
    assert mirror_once(nats_server, path.parent, "box")[0] == 0
    forged = encode_line(Delta(text="forged"), 11, "2026-01-01T00:00:00.000Z").replace(b"forged", b"FORGED")
    after = encode_line(
        Message(message=ChatMessage(role="assistant", content="twelfth line")), 12, "2026-01-01T00:00:01.000Z"
    )

    async def publish() -> None:
        nc = await nats.connect(nats_server.url)
        try:
            for line in (forged, after):
                await nc.jetstream().publish(f"wren.j.box.{path.stem}", line, stream="WREN")
        finally:
            await nc.close()

    await publish()
    async with watching(f"{nats_server.url}/box/{path.stem}", tmp_path / "here", size=(240, 30)) as (app, pilot):
        await wait_for_text(pilot, "stopped at line 11", timeout=30)
        status = screen_text(app).splitlines()[0]
        # As the viewer says it of a local journal whose line 11 fails its CRC.
        assert "stopped at line 11: its CRC does not match its bytes" in status
        assert "10 events" in status
        text = screen_text(app)
        assert "number 9" in text and "FORGED" not in text and "twelfth line" not in text


# Seq 11 as a forger would publish it: json.dumps's spacing (crc member and all), or with no crc member.
FORGED_LINES = {
    "spaced crc": json.dumps(
        {
            "seq": 11,
            "ts": "2026-01-01T00:00:00.000Z",
            "type": "message",
            "message": {"role": "user", "content": "FORGED"},
            "crc": "00000000",
        }
    ).encode()
    + b"\n",
    "no crc": b'{"seq":11,"ts":"2026-01-01T00:00:00.000Z","type":"message",'
    b'"message":{"role":"user","content":"FORGED"}}\n',
}


@pytest.mark.parametrize("form", FORGED_LINES)
async def test_a_stream_line_without_the_writers_crc_is_where_reading_stops_and_no_fork_copies_it(
    nats_server: NatsServer, tmp_path: Path, form: str
) -> None:
    path = tmp_path / "box" / f"{new_session_id()}.jsonl"
    path.parent.mkdir()
    with JournalWriter.create(path) as writer:
        writer.append(Message(message=ChatMessage(role="user", content="count to nine")))
        for n in range(1, 10):
            writer.append(Message(message=ChatMessage(role="assistant", content=f"number {n}")))
    assert mirror_once(nats_server, path.parent, "box")[0] == 0
    nc = await nats.connect(nats_server.url)
    try:
        await nc.jetstream().publish(f"wren.j.box.{path.stem}", FORGED_LINES[form], stream="WREN")
    finally:
        await nc.close()
    here = tmp_path / "here"
    async with watching(f"{nats_server.url}/box/{path.stem}", here, size=(240, 30)) as (app, pilot):
        await wait_for_text(pilot, "stopped at line 11", timeout=30)
        status = screen_text(app).splitlines()[0]
        assert "10 events" in status and "crc" in status and "FORGED" not in screen_text(app)
        await pilot.press("p")
        await wait_for_text(pilot, f"Fork points of box/{path.stem}")
        assert "FORGED" not in screen_text(app)
        await pilot.press("enter")  # the last point offered
        await wait_for_text(pilot, f"Fork box/{path.stem} at seq")
        await pilot.press("y")
        await wait_for_text(pilot, "Continue it with:")
    (forked,) = here.glob("s-*.jsonl")
    assert b"FORGED" not in forked.read_bytes()
    result = read_events(forked)
    assert result.stop is None and result.events[-1].seq <= 11  # the fork event right after a point <= 10


async def test_a_fork_of_a_remote_session_is_a_local_journal_of_its_mirrored_prefix(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    parent = write_journal(tmp_path / "laptop")
    assert mirror_once(nats_server, parent.parent, "laptop")[0] == 0
    here = tmp_path / "here"
    async with watching(f"{nats_server.url}/laptop/{parent.stem}", here, size=(160, 40)) as (app, pilot):
        await wait_for(pilot, lambda: session_screen(app).timeline.events > 0, "the session read", 30)
        await pilot.press("p")
        await wait_for_text(pilot, f"Fork points of laptop/{parent.stem}")
        await pilot.press("up", "enter")
        await wait_for_text(pilot, f"Fork laptop/{parent.stem} at seq")
        question = app.screen
        assert isinstance(question, Confirm)
        assert f"A new journal is written in {here}" in question.question  # this machine's journals folder
        await pilot.press("y")
        await wait_for_text(pilot, "Continue it with:")
    (forked,) = here.glob("s-*.jsonl")
    result = read_events(forked)
    fork_event = result.events[-1]
    at = result.events[-2].seq
    assert result.stop is None
    assert forked.read_bytes().splitlines(keepends=True)[:at] == journal_lines(parent)[:at]
    assert json.loads(forked.read_bytes().splitlines()[-1])["from"] == parent.stem
    assert fork_event.seq == at + 1
    listed = run_wren(["ls", "--json", "--dir", str(here)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert (row["id"], row["forkedFrom"], row["forkAt"]) == (forked.stem, parent.stem, at)


async def test_a_fork_of_a_session_read_from_its_end_holds_its_whole_history(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = tmp_path / "ci" / f"{new_session_id()}.jsonl"
    path.parent.mkdir()
    with JournalWriter.create(path, fsync="none") as writer:
        for n in range(1, 2201):
            writer.append(Message(message=ChatMessage(role="user", content=f"message {n} " + "." * 500)))
    assert mirror_once(nats_server, path.parent, "ci")[0] == 0
    here = tmp_path / "here"
    async with watching(f"{nats_server.url}/ci/{path.stem}", here, tail_first=0) as (app, pilot):
        await wait_for_text(pilot, "message 2200 ", timeout=30)
        screen = session_screen(app)
        await wait_for(pilot, lambda: screen.reader.indexing is None, "the history read and indexed", 60)
        await pilot.press("p")
        await wait_for_text(pilot, "Fork points of")
        await pilot.press("enter", "y")
        await wait_for_text(pilot, "Continue it with:")
    (forked,) = here.glob("s-*.jsonl")
    assert forked.read_bytes().startswith(path.read_bytes())
    assert read_events(forked).events[-1].seq == 2201


def test_watch_of_a_server_that_cannot_be_reached_says_so_in_one_sentence(tmp_path: Path) -> None:
    result = run_wren(["watch", "nats://127.0.0.1:9"], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("wren: cannot reach nats://127.0.0.1:9 (")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_pick_is_refused_for_a_fleets_session_with_what_to_do_instead(tmp_path: Path) -> None:
    result = run_wren(["watch", "--pick", "nats://127.0.0.1:9/laptop/s-20260101-000000-abcd"], cwd=tmp_path)
    assert result.returncode == 2
    assert "press p" in result.stderr and "Traceback" not in result.stderr


def test_serve_is_refused_for_a_fleets_server_before_anything_listens(tmp_path: Path) -> None:
    result = run_wren(["watch", "nats://127.0.0.1:9", "--serve"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "wren: --serve serves a local folder or journal; watch a fleet's server in this terminal\n"


async def test_where_the_journal_itself_stops_its_torn_tail_is_on_the_integrity_line(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = tmp_path / "box" / f"{new_session_id()}.jsonl"
    path.parent.mkdir()
    with JournalWriter.create(path) as writer:
        for n in range(1, 11):
            writer.append(Message(message=ChatMessage(role="assistant", content=f"number {n}")))
    with open(path, "ab") as f:
        f.write(encode_line(Delta(text="cut in the middle of its write"), 11, "2026-01-01T00:00:00.000Z")[:30])
    assert mirror_once(nats_server, path.parent, "box")[0] == 0
    async with watching(f"{nats_server.url}/box/{path.stem}", tmp_path / "here", size=(240, 30)) as (app, pilot):
        await wait_for_text(pilot, "stopped at line 11", timeout=30)
        status = screen_text(app).splitlines()[0]
        assert "stopped at line 11: the last line was cut short (no newline at its end)" in status
        assert "10 events" in status
        # The conversation draws its new lines on its own turn: on a busy machine, after the status line.
        await wait_for_text(pilot, "number 10", timeout=30)


async def test_the_viewer_rides_out_its_server_going_away_and_reads_on_when_it_is_back(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = tmp_path / "ci" / f"{new_session_id()}.jsonl"
    path.parent.mkdir()
    with mirroring(nats_server, path.parent, "ci"), JournalWriter.create(path) as writer:
        writer.append(Message(message=ChatMessage(role="user", content="before the outage")))
        async with watching(f"{nats_server.url}/ci/{path.stem}", tmp_path / "here") as (app, pilot):
            await wait_for_text(pilot, "before the outage", timeout=30)
            assert session_screen(app).session == f"ci/{path.stem}"
            await wait_for(pilot, lambda: screen_text(app).startswith(" live "), "the session live", 30)
            await asyncio.to_thread(nats_server.stop)
            writer.append(Message(message=ChatMessage(role="assistant", content="written while the server was away")))
            await wait_for(pilot, lambda: screen_text(app).startswith(" silent "), "the session said silent", 60)
            await asyncio.to_thread(nats_server.start)
            await wait_for_text(pilot, "written while the server was away", timeout=60)
            writer.append(Message(message=ChatMessage(role="assistant", content="after the server came back")))
            await wait_for_text(pilot, "after the server came back", timeout=60)
            await wait_for(pilot, lambda: screen_text(app).startswith(" live "), "the session live again", 60)
            assert f"ci/{path.stem} · 3 events" in screen_text(app).splitlines()[0]


async def test_a_host_in_the_address_lists_only_that_hosts_sessions(nats_server: NatsServer, tmp_path: Path) -> None:
    laptop, ci = write_journal(tmp_path / "laptop"), write_journal(tmp_path / "ci")
    assert mirror_once(nats_server, laptop.parent, "laptop")[0] == 0
    assert mirror_once(nats_server, ci.parent, "ci")[0] == 0
    async with watching(f"{nats_server.url}/laptop", tmp_path / "here") as (app, pilot):
        await wait_for_text(pilot, laptop.stem, timeout=30)
        assert f"Sessions on {nats_server.url}/laptop" in screen_text(app)
        assert ci.stem not in screen_text(app)


async def test_a_live_session_whose_mirror_was_killed_is_said_to_be_silent_not_live(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = tmp_path / "ci" / f"{new_session_id()}.jsonl"
    path.parent.mkdir()
    with JournalWriter.create(path) as writer:
        writer.append(Message(message=ChatMessage(role="user", content="still running on ci")))
        with mirroring(nats_server, path.parent, "ci") as mirror:
            async with watching(nats_server.url, tmp_path / "here") as (app, pilot):
                await wait_for(pilot, lambda: row_of(app, "ci", path.stem).endswith(" live"), "the ci session live", 30)
                mirror.kill()  # its session stays live in the list: only the mirror's silence tells
                await wait_for(
                    pilot,
                    lambda: row_of(app, "ci", path.stem).endswith(" live? mirror silent"),
                    "the row said silent",
                    SILENT_AFTER_S + 30,
                )
                await pilot.press("enter")
                await wait_for_text(pilot, "still running on ci", timeout=30)
                status = screen_text(app).splitlines()[0]
                assert status.startswith(" silent ") and "the mirror on ci is silent for" in status


async def test_a_viewer_started_before_any_mirror_says_so_and_lists_the_first_session_when_it_comes(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = write_journal(tmp_path / "laptop")
    async with watching(nats_server.url, tmp_path / "here") as (app, pilot):
        await wait_for_text(pilot, "no `wren mirror` has run against it yet. Trying again", timeout=30)
        assert path.stem not in screen_text(app)
        assert (await asyncio.to_thread(mirror_once, nats_server, path.parent, "laptop"))[0] == 0
        await wait_for(pilot, lambda: row_of(app, "laptop", path.stem).endswith(" done"), "the session listed", 30)
        assert "Trying again" not in screen_text(app)
