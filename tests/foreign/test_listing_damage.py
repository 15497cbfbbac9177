"""`wren ls --agent` and `wren log` agree on a damaged file of another agent, and one damaged file lists no worse.

A line whose bytes are not UTF-8 (or not JSON) lists its file as `corrupt` with the reason `wren log`
gives, wherever the line is in a file small enough to have its lines counted; the other files list as
they would; nothing prints a traceback, in the listing or in the viewer's browser.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from textual.widgets import DataTable

from tests.conftest import run_wren
from tests.foreign.sessions import AN_HOUR, age, copy_session, lines_of
from tests.tui.conftest import wait_for
from wren_tui.foreign import FORMATS
from wren_tui.foreign.listing import COUNTED_UNDER, WINDOW
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.foreign import ForeignFolder

HOMES = {
    "claude": ("CLAUDE_CONFIG_DIR", "projects"),
    "codex": ("CODEX_HOME", "sessions"),
    "pi": ("PI_CODING_AGENT_DIR", "sessions"),
}


def spoil(path: Path, lineno: int, bad: bytes = b"\xff\xfe") -> None:
    """Put bytes that are not UTF-8 at the start of line `lineno`'s timestamp (a field every reader decodes)."""
    lines = path.read_bytes().split(b"\n")
    line = lines[lineno - 1]
    at = line.index(b'"timestamp":"') + len(b'"timestamp":"')
    lines[lineno - 1] = line[:at] + bad + line[at:]
    path.write_bytes(b"\n".join(lines))
    age(path, AN_HOUR)


def log_stop(path: Path, cwd: Path) -> str:
    """`wren log`'s last line for a damaged file: stopped at line N (byte B): why [corrupt] ..."""
    result = run_wren(["log", str(path)], cwd=cwd)
    assert result.returncode == 4, result.stdout + result.stderr
    return result.stdout.splitlines()[-1]


def rows(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, dict[str, object]]:
    result = run_wren(["ls", *args, "--json"], cwd=cwd, env=env)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return {Path(str(r["path"])).name: r for r in json.loads(result.stdout)}


def test_a_claude_file_with_bad_bytes_near_its_head_lists_as_corrupt_and_the_others_as_they_are(tmp_path: Path) -> None:
    home = tmp_path / "claude"
    root = home / "projects"
    damaged = copy_session("claude", "killed", root, nested=True, stem="0001-killed")
    copy_session("claude", "simple", root, nested=True, stem="0002-simple")
    spoil(damaged, 5)  # past the lines that say when it started and where; no running total in its tail
    stop = log_stop(damaged, tmp_path)
    assert stop.startswith("stopped at line 5 (byte ") and "its bytes are not valid UTF-8" in stop
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(home)}
    for agent in ("claude", "all"):
        listed = rows(["--agent", agent], tmp_path, env)
        assert listed["0002-simple.jsonl"]["state"] == "done"
        row = listed[damaged.name]
        assert row["state"] == "corrupt" and row["lines"] == 4
        assert row["reason"] == "line 5: its bytes are not valid UTF-8"
        text = run_wren(["ls", "--agent", agent], cwd=tmp_path, env=env)
        assert text.returncode == 0 and "Traceback" not in text.stderr, text.stderr
        assert len(text.stdout.splitlines()) == 3 and "corrupt" in text.stdout and "done" in text.stdout


@pytest.mark.parametrize(
    ("agent", "name"), [("pi", "simple"), ("codex", "simple"), ("claude", "simple"), ("claude", "multi-turn")]
)
def test_ls_says_corrupt_where_log_stops_at_a_line_in_the_middle(agent: str, name: str, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    path = copy_session(agent, name, root, nested=True)
    lineno = len(lines_of(agent, name)) // 2
    while b'"timestamp":"' not in lines_of(agent, name)[lineno - 1]:
        lineno += 1
    spoil(path, lineno)
    assert path.stat().st_size <= COUNTED_UNDER
    stop = log_stop(path, tmp_path)
    assert stop.startswith(f"stopped at line {lineno} (byte ")
    (row,) = rows(["--agent", agent, "--dir", str(root)], tmp_path).values()
    assert (row["state"], row["lines"], row["reason"]) == (
        "corrupt",
        lineno - 1,
        f"line {lineno}: its bytes are not valid UTF-8",
    )
    if name == "multi-turn":
        assert path.stat().st_size > 2 * WINDOW  # its middle is read by neither end's window


def test_bad_bytes_in_a_field_the_reader_skips_list_as_log_reads_them(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    path = copy_session("pi", "simple", root, nested=True)
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3][:-1] + b',"note":"\xff"}'  # a member pi's reader does not read
    path.write_bytes(b"\n".join(lines))
    age(path, AN_HOUR)
    result = run_wren(["log", str(path)], cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    (row,) = rows(["--agent", "pi", "--dir", str(root)], tmp_path).values()
    assert (row["state"], row["reason"]) == ("done", None)


async def test_the_agents_browser_lists_a_damaged_claude_file_beside_the_others(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    damaged = copy_session("claude", "killed", root, nested=True, stem="0001-killed")
    copy_session("claude", "simple", root, nested=True, stem="0002-simple")
    spoil(damaged, 5)
    app = WrenApp(folder=root, agents=[ForeignFolder(FORMATS["claude"], root)])
    async with app.run_test(size=(160, 20)) as pilot:

        def states() -> list[str]:
            table = app.screen.query_one(DataTable)
            return sorted(str(table.get_row_at(i)[-2]) for i in range(table.row_count))

        await wait_for(pilot, lambda: states() == ["corrupt", "done"], "both sessions listed", 15)
    assert os.path.getmtime(damaged) < time.time() - AN_HOUR + 60  # the viewer wrote nothing
