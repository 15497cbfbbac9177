"""The fleet carries kept sessions: `wren mirror` ships the other agents' sessions Wren kept (`wren keep`) byte for
byte, exactly once, and another machine lists them (`wren ls nats://SERVER --agent`) and opens them in its viewer,
against a real nats-server.

Each machine is a folder of its own: its HOME, Claude Code's folder, Wren's journals and Wren's kept store.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nats
from nats.js.api import StorageType, StreamConfig

from tests.conftest import run_wren
from tests.fleet.conftest import NatsServer, stored
from tests.fleet.test_watch import watching
from tests.foreign.sessions import copy_session, lines_of
from tests.tui.conftest import wait_for, wait_for_text
from wren_tui.fleet.kept import kept_subject
from wren_tui.fleet.remote import Fleet
from wren_tui.sessions.foreign import ForeignFile
from wren_tui.tui.screens.fleet_browser import FleetBrowserScreen
from wren_tui.tui.screens.session import SessionScreen

GONE = "aaaa1111-0000-4000-8000-000000000001"
RELATIVE = f"-var-tmp-ws/{GONE}.jsonl"


def machine(tmp: Path, name: str) -> dict[str, str]:
    """The environment of a machine whose files are all under `tmp/name`."""
    home = tmp / name
    (home / "journals").mkdir(parents=True)
    return {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "WREN_DIR": str(home / "journals"),
        "WREN_KEEP_DIR": str(home / "kept"),
        "XDG_STATE_HOME": str(home / "state"),
    }


def wren(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    done = run_wren(list(args), cwd=Path(env["HOME"]), env=env)
    return done.returncode, done.stdout, done.stderr


def kept_and_deleted(env: dict[str, str]) -> Path:
    """A Claude Code session Wren kept, then its agent deleted: the kept copy."""
    original = copy_session("claude", "simple", Path(env["CLAUDE_CONFIG_DIR"]) / "projects", nested=True, stem=GONE)
    code, _out, err = wren(env, "keep")
    assert code == 0, err
    original.unlink()
    copy = Path(env["WREN_KEEP_DIR"]) / "claude" / "files" / RELATIVE
    assert copy.read_bytes() == b"".join(lines_of("claude", "simple"))
    return copy


def mirror(env: dict[str, str], server: NatsServer, host: str) -> tuple[int, str]:
    code, _out, err = wren(env, "mirror", "--url", server.url, "--host", host, "--once")
    return code, err


def test_the_mirror_ships_a_kept_session_byte_for_byte_once_and_another_machine_lists_and_reads_it(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    laptop, desk = machine(tmp_path, "laptop"), machine(tmp_path, "desk")
    copy = kept_and_deleted(laptop)
    assert mirror(laptop, nats_server, "laptop")[0] == 0
    subject = kept_subject("laptop", "claude", RELATIVE, 1)
    messages = stored(nats_server.url, subject)
    assert b"".join(m.data for m in messages) == copy.read_bytes()
    assert [int(m.headers["Wren-Offset"]) for m in messages] == [0]  # 36 KB: one message
    # Again: nothing is shipped twice.
    assert mirror(laptop, nats_server, "laptop")[0] == 0
    assert stored(nats_server.url, subject) == messages

    # Another machine, with no kept store of its own, lists it with what the laptop's store says of it.
    code, out, err = wren(desk, "ls", nats_server.url, "--agent", "claude", "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["host"], row["agent"], row["session"], row["relative"]) == ("laptop", "claude", GONE, RELATIVE)
    assert row["size"] == copy.stat().st_size and row["mark"].startswith("kept; deleted by its agent ")
    code, table, _ = wren(desk, "ls", nats_server.url, "--agent", "all")
    assert code == 0 and "laptop" in table and GONE in table and "kept; deleted by its agent" in table
    code, none, _ = wren(desk, "ls", nats_server.url, "--agent", "codex")
    assert code == 0 and "no kept sessions" in none

    async def read_back() -> bytes:
        async with await Fleet.connect(nats_server.url) as fleet:
            (kept,) = await fleet.kept()
            return await fleet.kept_copy(kept)

    assert asyncio.run(read_back()) == copy.read_bytes()


def test_a_kept_copy_that_grew_ships_only_its_new_bytes(nats_server: NatsServer, tmp_path: Path) -> None:
    laptop = machine(tmp_path, "laptop")
    projects = Path(laptop["CLAUDE_CONFIG_DIR"]) / "projects"
    original = copy_session("claude", "simple", projects, nested=True, stem=GONE)
    assert wren(laptop, "keep")[0] == 0
    assert mirror(laptop, nats_server, "laptop")[0] == 0
    subject = kept_subject("laptop", "claude", RELATIVE, 1)
    before = stored(nats_server.url, subject)
    with original.open("ab") as agent:
        agent.write(lines_of("claude", "multi-turn")[-1])
    assert wren(laptop, "keep")[0] == 0
    assert mirror(laptop, nats_server, "laptop")[0] == 0
    after = stored(nats_server.url, subject)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert int(after[-1].headers["Wren-Offset"]) == len(b"".join(lines_of("claude", "simple")))
    assert b"".join(m.data for m in after) == original.read_bytes()


def test_a_stream_holding_other_bytes_for_a_kept_copy_is_never_overwritten(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    laptop = machine(tmp_path, "laptop")
    kept_and_deleted(laptop)
    assert mirror(laptop, nats_server, "laptop")[0] == 0  # makes the stream
    subject = kept_subject("laptop", "claude", RELATIVE, 1)

    async def overwrite() -> None:
        nc = await nats.connect(nats_server.url)
        try:
            await nc.jetstream().publish(subject, b"not the kept copy\n", headers={"Wren-Offset": "0"})
        finally:
            await nc.close()

    asyncio.run(overwrite())
    held = stored(nats_server.url, subject)
    # A new machine with the same host token and another copy of the same path: it stops, it writes nothing.
    other = machine(tmp_path, "other")
    kept_and_deleted(other)
    code, err = mirror(other, nats_server, "laptop")
    assert code == 1 and err.count("not mirrored any more") == 1 and "nothing was overwritten" in err
    assert stored(nats_server.url, subject) == held
    code, out, _ = wren(other, "ls", nats_server.url, "--agent", "claude", "--json")
    (row,) = json.loads(out)
    assert code == 0 and "nothing was overwritten" in row["mirror"]


async def _stream_subjects(url: str, make: bool = False) -> list[str]:
    """The stream's subjects; `make`: first make it as a mirror before the kept sessions did (journals only)."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        if make:
            config = StreamConfig(name="WREN", subjects=["wren.j.>"], storage=StorageType.FILE)
            config.allow_atomic = config.allow_direct = True
            await js.add_stream(config)
        return list((await js.stream_info("WREN")).config.subjects or [])
    finally:
        await nc.close()


def test_a_stream_an_earlier_mirror_made_is_given_the_kept_subjects_and_carries_them(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    assert asyncio.run(_stream_subjects(nats_server.url, make=True)) == ["wren.j.>"]
    laptop = machine(tmp_path, "laptop")
    copy = kept_and_deleted(laptop)
    assert mirror(laptop, nats_server, "laptop")[0] == 0
    assert asyncio.run(_stream_subjects(nats_server.url)) == ["wren.j.>", "wren.k.>"]
    messages = stored(nats_server.url, kept_subject("laptop", "claude", RELATIVE, 1))
    assert b"".join(m.data for m in messages) == copy.read_bytes()


async def test_another_machines_viewer_lists_a_kept_session_and_opens_it_with_its_agents_reader(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    laptop = machine(tmp_path, "laptop")
    kept_and_deleted(laptop)
    assert mirror(laptop, nats_server, "laptop")[0] == 0
    async with watching(nats_server.url, tmp_path / "desk-journals") as (app, pilot):
        await wait_for_text(pilot, "kept; deleted by its agent")
        browser = app.screen
        assert isinstance(browser, FleetBrowserScreen)
        assert len(browser.kept) == 1
        await pilot.press("enter")  # its only row
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the kept session's screen")
        screen = app.screen
        assert isinstance(screen, SessionScreen) and isinstance(screen.source, ForeignFile)
        assert screen.source.format.name == "claude" and screen.source.origin.name == f"{GONE}.jsonl"
        await wait_for_text(pilot, "hello.py (a tiny script)")
        laid_out = screen.source.origin
    assert not laid_out.exists()  # the private folder it was laid out in goes with the viewer
