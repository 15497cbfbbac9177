"""The browser over an agent's folder (`wren watch --agent`) lists a session Wren kept after its agent deleted
it, marked "kept; deleted by its agent", and Enter opens the kept copy; one never kept goes
when its agent deletes it."""

from __future__ import annotations

import argparse
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from textual.widgets import DataTable

from tests.conftest import run_wren
from tests.foreign.sessions import copy_session, fixture
from tests.tui.conftest import wait_for, wait_for_text
from wren_tui.cli.foreign import agents_browser
from wren_tui.sessions.foreign import ForeignFile
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.foreign import ForeignBrowser
from wren_tui.tui.screens.session import SessionScreen

GONE = "aaaa1111-0000-4000-8000-000000000001"
NEVER = "bbbb2222-0000-4000-8000-000000000002"


def _rows(app: WrenApp) -> dict[str, list[str]]:
    """The rows shown, by the first characters of each session's id."""
    table = app.screen.query_one(DataTable)
    rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
    return {row[0][:8]: row for row in rows}


async def test_the_browser_lists_a_kept_session_its_agent_deleted_marked_and_opens_the_kept_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, journals, kept = tmp_path / "claude", tmp_path / "journals", tmp_path / "kept"
    journals.mkdir()
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(config), "WREN_DIR": str(journals)}
    env["WREN_KEEP_DIR"] = str(kept)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    gone = copy_session("claude", "simple", config / "projects", nested=True, stem=GONE)
    done = run_wren(["keep"], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    never = copy_session("claude", "multi-turn", config / "projects", nested=True, stem=NEVER)
    app = agents_browser(argparse.Namespace(agent="claude", dir=None, poll=True))
    async with app.run_test(size=(220, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 2, "both sessions")
        assert _rows(app)[GONE[:8]][5] == "done"  # still the agent's: nothing to say
        gone.unlink()
        never.unlink()
        screen = app.screen
        assert isinstance(screen, ForeignBrowser)
        await wait_for(pilot, lambda: len(_rows(app)) == 1, "only the kept session")
        row = _rows(app)[GONE[:8]]
        assert row[5].startswith("kept; deleted by its agent") and row[5].endswith("done")
        app.screen.query_one(DataTable).move_cursor(row=0)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen")
        opened = app.screen
        assert isinstance(opened, SessionScreen) and isinstance(opened.source, ForeignFile)
        assert kept in opened.source.origin.parents
        await wait_for_text(pilot, "hello.py (a tiny script)")
        await wait_for_text(pilot, "kept; deleted by its agent")  # said on the session's screen too


async def test_the_browser_lists_a_session_its_agent_deleted_from_its_database_and_opens_the_kept_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, journals, kept = tmp_path / "data", tmp_path / "journals", tmp_path / "kept"
    journals.mkdir()
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(data), "WREN_DIR": str(journals), "WREN_KEEP_DIR": str(kept)}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    db = data / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    shutil.copyfile(fixture("opencode", "multi-turn"), db)
    assert run_wren(["keep"], cwd=tmp_path, env=env).returncode == 0
    with closing(sqlite3.connect(db)) as conn:  # OpenCode deletes its only session; the database stays
        for table in ("part", "message", "event", "session"):
            conn.execute(f"delete from {table}")
        conn.commit()
    assert run_wren(["keep"], cwd=tmp_path, env=env).returncode == 0
    app = agents_browser(argparse.Namespace(agent="opencode", dir=None, poll=True))
    async with app.run_test(size=(220, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 1, "the deleted session, from its kept version")
        (row,) = _rows(app).values()
        assert row[5].startswith("kept; deleted by its agent on ")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen")
        await wait_for_text(pilot, "3 lines")
