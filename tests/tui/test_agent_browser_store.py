"""The browser over other agents' folders lists unchanged sessions from the store `wren ls --agent` keeps.

To see that it does: after `wren ls --agent claude` kept its rows, one session is damaged in place
with the same size and its modification time put back. The store trusts a file whose device, inode,
size and time are unchanged, so the browser shows the row kept ("done"), not what reading the file
now says ("corrupt"); a session that changed since is read, and one never listed too.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from textual.widgets import DataTable

from tests.conftest import run_wren
from tests.foreign.sessions import copy_session
from tests.tui.conftest import FixedClock, wait_for
from wren_tui.foreign import FORMATS
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.foreign import ForeignFolder


def _states(app: WrenApp) -> dict[str, str]:
    table = app.screen.query_one(DataTable)
    rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
    return {row[0]: row[5] for row in rows}


async def test_the_agents_browser_takes_unchanged_sessions_rows_from_the_store(tmp_path: Path) -> None:
    journals, config = tmp_path / "journals", tmp_path / "claude"
    journals.mkdir()
    projects = config / "projects"
    kept = copy_session("claude", "simple", projects, nested=True, stem="aaaa-kept")
    changed = copy_session("claude", "multi-turn", projects, nested=True, stem="bbbb-changed")
    listed = run_wren(
        ["ls", "--agent", "claude"], cwd=tmp_path, env={"CLAUDE_CONFIG_DIR": str(config), "WREN_DIR": str(journals)}
    )
    assert listed.returncode == 0, listed.stderr
    for path in (kept, changed):
        before = path.stat()
        data = bytearray(path.read_bytes())
        data[data.index(b"\n") + 1] = ord("x")  # the second line is no longer JSON: reading stops there
        with path.open("r+b") as out:
            out.write(data)
        if path == kept:
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        else:
            os.utime(path, (before.st_mtime - 60, before.st_mtime - 60))
    new = copy_session("claude", "tool-error", projects, nested=True, stem="cccc-new")
    app = WrenApp(
        folder=projects,
        agents=[ForeignFolder(FORMATS["claude"], projects)],
        journals=journals,
        clock=FixedClock(datetime(2026, 11, 30, 10, tzinfo=UTC)),
    )
    async with app.run_test(size=(200, 20)) as pilot:
        await wait_for(pilot, lambda: len(_states(app)) == 3, "three sessions")
        states = _states(app)
        assert states[FORMATS["claude"].session_id(kept)[:18]] == "done"  # the kept row: the file is not read
        assert states[FORMATS["claude"].session_id(changed)[:18]] == "corrupt"
        assert states[FORMATS["claude"].session_id(new)[:18]] == "done"
