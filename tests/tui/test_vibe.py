"""A Mistral Vibe session in the viewer, through Pilot: a resumed session's compacted first turn and its second;
the failed call; a run killed in its tool shows the text said before the call, then the call with no result
recorded, and says stopped mid-call; the simple run's journal replayed as its growth log saw it grow is followed
from its meta.json (the journal folder is watched), then ends; the browser lists one row per session folder and a
new one as it starts. The design's own journal (mca) shows in the viewer, ending as the list says. Nothing of the
session's folder changes."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

from textual.widgets import DataTable

from tests.conftest import FIXTURES
from tests.foreign.sessions import AN_HOUR, age, wren_json
from tests.foreign.test_vibe import FIRST, VIBE, killed, session
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.foreign import FORMATS
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.foreign import ForeignFolder
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 12, 7, 6, 0, tzinfo=UTC)


def _app(path: Path) -> WrenApp:
    return WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK))


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def _files(folder: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


async def test_a_resumed_vibe_session_shows_its_compacted_first_turn_then_its_second_once(tmp_path: Path) -> None:
    meta = session(tmp_path, "multi-turn")
    before = _files(meta.parent)
    app = _app(meta)
    async with app.run_test(size=(160, 60)) as pilot:
        await wait_for_text(pilot, "hello.py has 3 lines.")
        text = screen_text(app)
        order = ["What does notes.txt say?", "to-do list with two items", "How many lines does hello.py", "wc -l"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        assert text.count("What does notes.txt say?") == 1 and text.count("How many lines does hello.py") == 1
        await wait_for(pilot, lambda: " 3720 tokens" in _status(app), "the tokens")
        assert " ended " in _status(app)
    assert _files(meta.parent) == before


async def test_a_vibe_run_killed_in_its_tool_shows_its_preamble_then_the_call_stopped_mid_call(tmp_path: Path) -> None:
    meta = killed(tmp_path)
    app = _app(meta)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "the call with no result")
        text = screen_text(app)
        assert text.index("I'll list the folder first.") < text.index("ls -la")
        await wait_for(pilot, lambda: " stopped mid-call " in _status(app), "stopped mid-call")


def _growth() -> list[int]:
    """How many lines the simple run's first journal segment had at each change the recorder saw."""
    log = (VIBE / "growth-simple.log").read_text()
    pattern = r"^t_ms=\d+ .*?\bfile=\S+/journal/" + re.escape(FIRST) + r" .*?\blines=(\d+)\b"
    return [int(n) for n in re.findall(pattern, log, re.MULTILINE) if int(n)]


async def test_the_simple_runs_journal_replayed_as_it_grew_is_followed_from_its_meta_json(tmp_path: Path) -> None:
    meta = session(tmp_path, "simple")
    journal = meta.parent / "journal" / FIRST
    lines = journal.read_bytes().splitlines(keepends=True)
    steps = _growth()
    assert steps[-1] == len(lines) and len(steps) >= 5
    journal.write_bytes(b"".join(lines[: steps[0]]))
    # While it runs: the first segment only (the generation and the next segment come at the run's end).
    (meta.parent / "journal" / "0000000000000022.jsonl").unlink()
    generation = meta.parent / "generations" / "0000000000000021"
    kept = {p.name: p.read_bytes() for p in generation.iterdir()}
    for p in generation.iterdir():
        p.unlink()
    generation.rmdir()
    app = WrenApp(folder=tmp_path, session=meta)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        written = steps[0]
        for count in steps[1:]:
            with journal.open("ab") as client:
                client.write(b"".join(lines[written:count]))
            written = count
            if count == 3:  # the prompt's entry appended
                await wait_for_text(pilot, "List the files in this folder")
            if count == 9:  # the tool's effect appended, running: the preamble, then the open call
                await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "the open call", 15)
                assert "I'll list the folder first." in screen_text(app)
                assert "The folder holds two files" not in screen_text(app)
        await wait_for_text(pilot, "The folder holds two files: hello.py (a tiny script) and notes.txt.")
        await wait_for(pilot, lambda: " live " in _status(app), "live: its journal just changed")
        generation.mkdir()
        for name, data in kept.items():
            (generation / name).write_bytes(data)
        (meta.parent / "journal" / "0000000000000022.jsonl").write_bytes(b"")
        for p in meta.parent.rglob("*"):
            if p.is_file():
                age(p, AN_HOUR)
        await wait_for(pilot, lambda: " ended " in _status(app), "ended once nobody writes", 15)
        assert screen_text(app).count("List the files in this folder") == 1


async def test_the_designs_journal_shows_in_the_viewer_with_its_failed_call(tmp_path: Path) -> None:
    path = tmp_path / "design-run.jsonl"
    path.write_bytes((FIXTURES / "seed" / "mca_excerpt.jsonl").read_bytes())
    age(path, AN_HOUR)
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for_text(pilot, "exit code 1...")
        text = screen_text(app)
        assert text.index("run the tests and see which case fails") < text.index("Let me run the tests first.")
        assert "mca" in _status(app)
        # It ends with a tool's result no reply followed: the status line says what `wren ls` says.
        await wait_for(pilot, lambda: " interrupted " in _status(app), "interrupted, as the list says")
    rows = wren_json(["ls", "--agent", "all", "--dir", str(tmp_path)], tmp_path)
    assert isinstance(rows, list) and [(r["agent"], r["state"]) for r in rows] == [("mca", "interrupted")]


def _rows(app: WrenApp) -> list[list[str]]:
    table = app.screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_the_browser_lists_vibes_sessions_one_row_each_and_a_new_one_as_it_starts(tmp_path: Path) -> None:
    root = tmp_path / "unified"
    session(root, "multi-turn")
    killed(root)
    app = WrenApp(folder=root, agents=[ForeignFolder(FORMATS["vibe"], root)], clock=FixedClock(CLOCK))
    async with app.run_test(size=(180, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 2, "two sessions")
        assert sorted(row[-2] for row in _rows(app)) == ["done", "stopped mid-call"]
        # Vibe starts another session: its folder, its journal, then its meta.json.
        fresh = session(root, "simple")
        for path in fresh.parent.rglob("*"):
            if path.is_file():
                os.utime(path, (CLOCK.timestamp(), CLOCK.timestamp()))  # written as the app's clock reads: live
        await wait_for(pilot, lambda: len(_rows(app)) == 3, "the new session", 15)
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=next(i for i, row in enumerate(_rows(app)) if row[-2] == "live"))
        await pilot.press("enter")
        await wait_for_text(pilot, "The folder holds two files")
        assert isinstance(app.screen, SessionScreen)


async def test_the_browser_of_any_agents_folder_lists_a_vibe_session_and_the_designs_journal(tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    session(root, "tool-error")
    design = root / "design-run.jsonl"
    design.write_bytes((FIXTURES / "seed" / "mca_excerpt.jsonl").read_bytes())
    age(design, AN_HOUR)
    app = WrenApp(folder=root, agents=[ForeignFolder(None, root)], clock=FixedClock(CLOCK))
    async with app.run_test(size=(180, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 2, "two sessions")
        assert sorted((row[0], row[-2]) for row in _rows(app)) == [("mca", "interrupted"), ("vibe", "done")]
