"""A new format is one module and one line in `FORMATS`: a toy agent's format (tests/foreign/toy_format.py),
registered for the test alone, is found by `wren ls --agent`, `wren log`, `wren search`, the browser of
`wren watch --agent` and the session screen's writes filter, none of which names an agent.

The commands run in this process (`wren_tui.cli.main`), as a subprocess would not see the registry the test
changed; the browser is the app `wren watch --agent toy` runs, driven through Pilot.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.foreign import toy_format
from tests.foreign.sessions import AN_HOUR, age
from tests.tui.conftest import wait_for, wait_for_text
from wren_tui.cli import main, parse_args
from wren_tui.cli.foreign import agents_browser
from wren_tui.foreign import FORMATS
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.status_line import StatusLine


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The toy agent's folder, holding one session in a nested folder; the toy format registered."""
    monkeypatch.setitem(FORMATS, toy_format.NAME, toy_format.FORMAT)
    root = tmp_path / "toy-sessions"
    (root / "garden").mkdir(parents=True)
    (root / "garden" / "s1.jsonl").write_bytes(toy_format.session())
    age(root / "garden" / "s1.jsonl", AN_HOUR)  # written an hour ago: done, not live
    monkeypatch.setenv(toy_format.ENV, str(root))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # every other agent's folder: none there
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / "data"))
    monkeypatch.delenv("WREN_DIR", raising=False)  # the journals folder: below the test's own state folder
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path / "home")  # aider's sessions are the current folder's: none there
    return root


def wren(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`wren ARGS` in this process: its exit status, stdout and stderr."""
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_an_unregistered_format_is_no_agent_wren_knows(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["ls", "--agent", "toy"])
    assert refused.value.code == 2
    assert "invalid choice: 'toy'" in capsys.readouterr().err


def test_wren_ls_lists_the_toy_session_from_its_folder_and_its_help_names_it(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = wren(capsys, "ls", "--agent", "toy", "--json")
    assert code == 0
    [row] = json.loads(out)
    assert (row["agent"], row["id"], row["state"], row["lines"]) == ("toy", "s1", "done", 8)
    assert row["project"] == "/home/toy/garden" and row["started"] == "2026-12-01T09:00:00Z"
    # Every agent's sessions: the toy one among them, from its own folder, or from a folder --dir names.
    for extra in ([], ["--dir", str(folder)]):
        code, out, _err = wren(capsys, "ls", "--agent", "all", "--json", *extra)
        assert code == 0 and [(r["agent"], r["id"]) for r in json.loads(out)] == [("toy", "s1")], extra
    with pytest.raises(SystemExit):
        main(["ls", "--help"])
    assert "toy: Toy Agent" in " ".join(capsys.readouterr().out.split())


def test_wren_log_reads_the_toy_session_by_its_content(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = wren(capsys, "log", str(folder / "garden" / "s1.jsonl"))
    assert code == 0
    assert "Plant a marigold" in out and "scribble(" in out and "wrote garden.txt" in out
    assert "not shown: tick ×1" in err


def test_wren_search_finds_the_toy_session_in_its_folder_and_in_a_named_one(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in (["--agent", "toy"], [], ["--dir", str(folder)]):
        code, out, _err = wren(capsys, "search", "marigold", "--json", *args)
        assert code == 0, args
        hits = [json.loads(line) for line in out.splitlines()]
        assert {(hit["agent"], hit["session"]) for hit in hits} == {("toy", "s1")}, args
        assert sorted(hit["line"] for hit in hits) == [2, 8], args


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


async def _reachable(pilot: Pilot[object], app: WrenApp) -> list[int]:
    """The lines a person reaches with the cursor, from Home down to the end (a line of two events: twice)."""
    view = app.screen.query_one(ConversationView)
    await pilot.press("home")
    seen: list[tuple[int, str]] = []
    while (event := view.selected_event) is not None and (event.seq, type(event).__name__) not in seen:
        seen.append((event.seq, type(event).__name__))
        await pilot.press("down")
    return [seq for seq, _kind in seen]


async def test_the_browser_lists_the_toy_session_and_its_write_tool_counts_as_a_write(folder: Path) -> None:
    app = agents_browser(parse_args(["watch", "--agent", "toy", "--poll"]))
    async with app.run_test(size=(160, 40)) as pilot:
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the toy session listed")
        row = [str(cell) for cell in table.get_row_at(0)]
        assert row[0] == "s1" and "done" in row
        await wait_for_text(pilot, "Toy Agent")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen")
        await wait_for_text(pilot, "The marigold is planted")
        await pilot.press("2")  # only tool calls: both
        await wait_for(pilot, lambda: "only tool calls" in _status(app), "the tools filter")
        assert await _reachable(pilot, app) == [3, 4, 4, 6, 7, 7]
        await pilot.press("3")  # only writes: the scribble call, not the peek
        await wait_for(pilot, lambda: "only writes" in _status(app), "the writes filter")
        assert await _reachable(pilot, app) == [6, 7, 7]


async def test_a_folder_of_any_agents_sessions_shows_the_toy_session_by_its_content(folder: Path) -> None:
    stray = folder / "notes.jsonl"  # no session of any agent: never listed, never guessed at
    stray.write_bytes(b'{"note": "not a session"}\n')
    app = agents_browser(parse_args(["watch", "--agent", "all", "--dir", str(folder), "--poll"]))
    async with app.run_test(size=(160, 40)) as pilot:
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the toy session listed")
        row = [str(cell) for cell in table.get_row_at(0)]
        assert row[:2] == ["toy", "s1"] and "done" in row
