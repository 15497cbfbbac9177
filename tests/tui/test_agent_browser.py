"""The browser over other agents' folders (`wren watch --agent`): their sessions newest first, an agent column for
all three, new sessions as the agents create them (nested folders too), live ending with time, Enter opens one."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from textual.widgets import DataTable

from tests.conftest import run_wren
from tests.foreign.sessions import copy_session, fixture
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.foreign import FORMATS, live
from wren_tui.sessions.foreign import ForeignFile
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.foreign import ForeignBrowser, ForeignFolder
from wren_tui.tui.screens.session import SessionScreen

CLOCK = datetime(2026, 11, 30, 10, tzinfo=UTC)
FOLDERS = ("claude", "codex", "pi")


def _app(folders: dict[str, Path], clock: FixedClock | None = None) -> WrenApp:
    browse = [ForeignFolder(FORMATS[agent], root) for agent, root in folders.items()]
    first = next(iter(folders.values()))
    return WrenApp(folder=first, agents=browse, clock=clock or FixedClock(CLOCK))


def _written_at(path: Path, clock: FixedClock) -> None:
    """The file last changed at the clock's time (what "live" is judged against: never the wall clock)."""
    at = clock.now.timestamp()
    os.utime(path, (at, at))


def _rows(app: WrenApp) -> list[list[str]]:
    table = app.screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_all_three_agents_sessions_are_listed_newest_first_with_an_agent_column(tmp_path: Path) -> None:
    # The recordings were made pi first, then Codex, then Claude Code (their own start times say so).
    folders = {agent: tmp_path / agent for agent in ("claude", "codex", "pi")}
    for agent, root in folders.items():
        copy_session(agent, "simple", root, nested=True)
    app = _app(folders)
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 3, "three sessions")
        rows = _rows(app)
        assert [row[0] for row in rows] == ["claude", "pi", "codex"]  # newest first, by when each started
        assert all(row[6] == "done" for row in rows)
        assert "Sessions of 3 agents (f: their folders): Claude Code, Codex, pi" in screen_text(app)
        assert "agent" in screen_text(app)
        claude = rows[0]
        assert claude[2].startswith("2026-11-30 09:03:36") and claude[5] == "3084"


async def test_several_agents_title_names_them_and_f_shows_each_folder_read_whole(tmp_path: Path) -> None:
    folders = {agent: tmp_path / agent for agent in FOLDERS}
    for agent, root in folders.items():
        copy_session(agent, "simple", root, nested=True)
    app = _app(folders)
    async with app.run_test(size=(130, 30)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 3, "three sessions")
        assert "Sessions of 3 agents (f: their folders): Claude Code, Codex, pi" in screen_text(app)
        assert not any(str(root) in screen_text(app) for root in folders.values())
        await pilot.press("f")
        await wait_for_text(pilot, "The folders read")
        lines = screen_text(app).splitlines()
        for agent, root in folders.items():
            assert any(line.strip() == f"{FORMATS[agent].label}: {root}" for line in lines), root
        await pilot.press("f")
        await wait_for(pilot, lambda: "The folders read" not in screen_text(app), "the folders hidden again")


async def test_a_session_the_agent_creates_in_a_new_nested_folder_appears_and_enter_opens_it(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    copy_session("codex", "simple", root, nested=True, stem="0001")
    app = _app({"codex": root})
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 1, "the first session")
        assert "agent" not in _rows(app)[0]  # one agent: no column for it
        # Codex starts a session on a new day: a new folder, then the file, then its lines.
        fresh = root / "2026" / "12" / "01" / "rollout-2026-12-01T08-00-00-0002.jsonl"
        fresh.parent.mkdir(parents=True)
        fresh.write_bytes(b"")
        fresh.write_bytes(fixture("codex", "multi-turn").read_bytes())
        _written_at(fresh, FixedClock(CLOCK))  # written as the app's clock reads
        await wait_for(pilot, lambda: len(_rows(app)) == 2, "the new session", 15)
        await wait_for(pilot, lambda: _rows(app)[0][-2] == "live", "the new session, live at the top")
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=0)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen")
        screen = app.screen
        assert isinstance(screen, SessionScreen) and isinstance(screen.source, ForeignFile)
        assert screen.source.origin == fresh
        await wait_for_text(pilot, "hello.py has 3 lines.")


async def test_live_ends_a_few_seconds_after_the_last_write_with_no_byte_changed(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    path = copy_session("pi", "simple", root, nested=True)
    clock = FixedClock(CLOCK)
    _written_at(path, clock)
    before = path.stat()
    data = path.read_bytes()
    app = _app({"pi": root}, clock)
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 1 and _rows(app)[0][-2] == "live", "live")
        screen = app.screen
        assert isinstance(screen, ForeignBrowser)
        # Just short of RECENT_S after the last write: still live, listed again as of the clock's time.
        clock.advance(live.RECENT_S - 0.5)
        screen.rescan()
        assert _rows(app)[0][-2] == "live"
        # RECENT_S after it: done, with no byte written (the state follows the file's time, not a timer).
        clock.advance(0.5)
        await wait_for(pilot, lambda: _rows(app)[0][-2] == "done", "done, once no one writes", 10)
    # Nothing was written to find that out: the same bytes, the same modification time.
    after = path.stat()
    assert path.read_bytes() == data and after.st_mtime_ns == before.st_mtime_ns


async def test_a_column_widens_for_a_longer_cell_that_arrives_later(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    # Asked for its tool a moment ago, in a folder with a short name: live, then stopped mid-call.
    first = copy_session("pi", "tool-error", root, nested=True, stem="0001", lines=5)
    first.write_bytes(first.read_bytes().replace(b"/var/tmp/wren-pi-tool-error-r5qkntii/ws", b"/w"))
    clock = FixedClock(CLOCK)
    _written_at(first, clock)
    app = _app({"pi": root}, clock)
    async with app.run_test(size=(200, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 1 and _rows(app)[0][-2] == "live", "live")
        clock.advance(live.RECENT_S)
        await wait_for(pilot, lambda: "stopped mid-call" in screen_text(app), "the whole of the longer state", 10)
        copy_session("pi", "tool-error", root, nested=True, stem="0002")
        await wait_for(pilot, lambda: len(_rows(app)) == 2, "the second session", 15)
        await wait_for_text(pilot, "/var/tmp/wren-pi-tool-error-r5qkntii/ws")  # its longer project, whole


def test_wren_watch_agent_rejects_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    result = run_wren(["watch", "--agent", "claude", "--dir", str(tmp_path / "nowhere")], cwd=tmp_path)
    assert result.returncode == 1 and "nowhere: no such folder" in result.stderr
    listed = run_wren(["ls", "--agent", "claude", "--dir", str(tmp_path), "--json"], cwd=tmp_path)
    assert json.loads(listed.stdout) == []


async def test_one_folder_of_every_agents_sessions_is_browsed_each_by_its_content(tmp_path: Path) -> None:
    for agent in ("claude", "codex", "pi"):
        copy_session(agent, "tool-error", tmp_path / "mixed", stem=f"from-{agent}")
    (tmp_path / "mixed" / "notes.jsonl").write_bytes(b'{"a": 1}\n')  # no agent's
    app = WrenApp(
        folder=tmp_path, agents=[ForeignFolder(None, tmp_path / "mixed")], clock=FixedClock(datetime.now(UTC))
    )
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 3, "the three sessions")
        assert sorted((row[0], row[1]) for row in _rows(app)) == [
            ("claude", "from-claude"),
            ("codex", "from-codex"),
            ("pi", "from-pi"),
        ]
    listed = run_wren(["ls", "--agent", "all", "--dir", str(tmp_path / "mixed"), "--json"], cwd=tmp_path)
    # A file of no agent's is listed as unknown (never guessed at, never left out without a word).
    assert sorted(row["agent"] for row in json.loads(listed.stdout)) == ["claude", "codex", "pi", "unknown"]
    assert "notes.jsonl: not a Wren journal" in listed.stderr


def test_wren_watch_agent_refuses_what_it_cannot_do_with_one_sentence(tmp_path: Path) -> None:
    for extra in (["--pick"], ["--serve"], ["some-session.jsonl"]):
        proc = run_wren(["watch", "--agent", "pi", "--dir", str(tmp_path), *extra], cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "--agent browses the agent's own folder in this terminal" in proc.stderr
        assert "Traceback" not in proc.stderr
