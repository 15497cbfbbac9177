"""Gemini CLI, Qwen Code and Copilot CLI sessions in the session screen, through Pilot: their conversation,
calls, outcomes and tokens; followed live as each recorded session grew (its growth log replayed into a
file); honest about a run stopped in a call; and the status line's tool time is the tool table's."""

from __future__ import annotations

import hashlib
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.foreign.sessions import AGENTS, AN_HOUR, FOLDER, age, copy_session, fixture, lines_of
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.foreign import FORMATS, Translated
from wren_tui.foreign.reader import scan
from wren_tui.journal.events import ToolEnd
from wren_tui.journal.timing import duration
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.foreign import ForeignFolder
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)
NEW = ["gemini", "qwen", "copilot"]
# The tokens of the two replies of each tool-error recording, as its client counted them.
TOKENS = {"gemini": 2 * 1135, "qwen": 2 * 930, "copilot": 2 * 930}
# The line each tool-error recording's call is on: what a run stopped during its tool would have left.
# Gemini CLI writes the call only with its result: stopped during the tool, its file ends with the reply.
CALL_LINE = {"gemini": 6, "qwen": 5, "copilot": 7}


def _app(path: Path, **kwargs: object) -> WrenApp:
    return WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK), **kwargs)  # type: ignore[arg-type]


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def _fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def _tool_time(agent: str, path: Path) -> str:
    """The tool table's times added up, as the status line writes a span."""
    took: list[int] = []

    def take(_lineno: int, line: Translated, _data: bytes) -> None:
        for part, event in enumerate(line.events):
            if isinstance(event, ToolEnd) and event.elapsed_ms and part not in line.hidden:
                took.append(event.elapsed_ms)

    fd = os.open(path, os.O_RDONLY)
    try:
        scan(fd, FORMATS[agent], take)
    finally:
        os.close(fd)
    assert took, "the recording has timed calls"
    return duration(sum(took))


@pytest.mark.parametrize("agent", NEW)
async def test_a_session_shows_its_conversation_its_calls_outcomes_tokens_and_tool_time(
    agent: str, tmp_path: Path
) -> None:
    path = copy_session(agent, "tool-error", tmp_path)
    before = _fingerprint(path)
    app = _app(path)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for_text(pilot, "missing.txt does not exist here: cat failed with exit status 1.")
        text = screen_text(app)
        order = ["▌ you", "Show me missing.txt please.", "cat missing.txt", "▌ tool result", "No such file"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        # The tool pane: the call, its time from the recorded times, failed (exit status 1) from the record.
        await wait_for(pilot, lambda: " failed" in screen_text(app), "the call failed")
        row = next(line for line in screen_text(app).splitlines() if "cat missing.txt" in line and " ms " in line)
        assert row.split()[-1] == "failed"
        status = _status(app)
        # The ending the listing says (Gemini CLI cannot tell a finished run from one stopped in its tool).
        ending = " last: reply " if agent == "gemini" else " ended "
        assert ending in status and f" {TOKENS[agent]} tokens" in status, status
        # The status line's tool time adds up the calls the table shows (one here).
        assert f"tools {_tool_time(agent, path)}" in status, status
        assert "tools 0 ms" not in status
    assert _fingerprint(path) == before


@pytest.mark.parametrize("agent", ["claude", "pi"])
async def test_the_tool_time_of_claude_code_and_pi_is_the_tool_tables(agent: str, tmp_path: Path) -> None:
    path = copy_session(agent, "multi-turn", tmp_path)
    app = _app(path)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for_text(pilot, "hello.py has 3 lines.")
        await wait_for(pilot, lambda: "tools " in _status(app), "the time spent")
        status = _status(app)
        assert f"tools {_tool_time(agent, path)}" in status and "tools 0 ms" not in status, status


@pytest.mark.parametrize("agent", ["qwen", "copilot"])
async def test_a_run_stopped_during_its_call_shows_no_result_recorded_and_stopped_mid_call(
    agent: str, tmp_path: Path
) -> None:
    path = copy_session(agent, "tool-error", tmp_path, lines=CALL_LINE[agent])
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "the call with no result")
        await wait_for(pilot, lambda: " stopped mid-call " in _status(app), "stopped mid-call")
        assert "outcome unknown" not in screen_text(app)


async def test_a_gemini_session_stopped_during_its_tool_shows_its_last_record_and_no_call_open(
    tmp_path: Path,
) -> None:
    # Gemini CLI writes a call only with its result: stopped in the tool, the file ends with the reply that asked it.
    path = copy_session("gemini", "tool-error", tmp_path, lines=CALL_LINE["gemini"])
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for_text(pilot, "Show me missing.txt please.")
        await wait_for(pilot, lambda: " last: reply " in _status(app), "the listing's ending")
        assert " ended " not in _status(app)
        text = screen_text(app)
        assert "no result recorded" not in text and "cat missing.txt" not in text
        assert "stopped mid-call" not in _status(app)


async def _read_to(pilot: Pilot[object], screen: SessionScreen, size: int) -> None:
    await wait_for(
        pilot, lambda: screen.reader.lines is not None and screen.reader.lines.offset == size, f"read to {size}"
    )


def _looked(screen: SessionScreen) -> int:
    reader = screen.reader.lines
    return int(getattr(reader, "scanned", 0)) if reader is not None else 0


def _growth(agent: str, scenario: str) -> list[int]:
    """How many lines the session file had at each change the recorder saw while the client ran (the log
    follows every file under the agent's folder: the session's are those the format takes for one)."""
    log = (AGENTS / FOLDER[agent] / f"growth-{scenario}.log").read_text()
    counts = []
    for found in re.finditer(r"^t_ms=\d+ .*?\bfile=(\S+) .*?\blines=(\d+)\b", log, re.MULTILINE):
        if FORMATS[agent].folder.is_session_file(Path(found.group(1))) and int(found.group(2)):
            counts.append(int(found.group(2)))
    return counts


@pytest.mark.parametrize("agent", NEW)
async def test_a_recorded_sessions_growth_replayed_into_a_file_is_followed_as_it_grows(
    agent: str, tmp_path: Path
) -> None:
    lines = lines_of(agent, "multi-turn")
    steps = _growth(agent, "multi-turn")
    assert steps[-1] == len(lines) and len(steps) >= 4
    path = tmp_path / fixture(agent, "multi-turn").name
    # The file as the recorder first saw it with lines in it (its format is told by its content).
    path.write_bytes(b"".join(lines[: steps[0]]))
    app = WrenApp(folder=tmp_path, session=path)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        written = steps[0]
        for count in steps[1:]:
            new = b"".join(lines[written:count])
            with path.open("ab") as client:
                if count == steps[len(steps) // 2]:
                    # Caught mid-write: the partial line is held back until its newline arrives.
                    client.write(new[:-40])
                    client.flush()
                    whole = len(b"".join(lines[:written])) + new[:-40].rfind(b"\n") + 1
                    await wait_for(pilot, lambda at=whole: _looked(screen) > at, "the partial line looked at")
                    assert screen.reader.lines is not None and screen.reader.lines.offset == whole
                    assert screen.reader.lines.stop is None and "stopped at" not in _status(app)
                    new = new[-40:]
                client.write(new)
            written = count
            await _read_to(pilot, screen, len(b"".join(lines[:count])))
            if count < len(lines) // 2:
                assert "hello.py has 3 lines." not in screen_text(app)
        await wait_for_text(pilot, "hello.py has 3 lines.")
        await wait_for(pilot, lambda: " live " in _status(app), "live: it just changed")
        text = screen_text(app)
        assert "How many lines does hello.py have?" in text and "wc -l hello.py" in text
        age(path, AN_HOUR)
        ending = " last: reply " if agent == "gemini" else " ended "  # as the listing says it ends
        await wait_for(pilot, lambda: ending in _status(app), "ended once nobody writes", 15)


async def test_the_browser_lists_the_three_agents_folders_and_a_new_session_as_it_appears(tmp_path: Path) -> None:
    folders = {agent: tmp_path / agent for agent in NEW}
    for agent, root in folders.items():
        copy_session(agent, "tool-error", root, nested=True, stem="0001")
    browse = [ForeignFolder(FORMATS[agent], root) for agent, root in folders.items()]
    app = WrenApp(folder=folders["gemini"], agents=browse, clock=FixedClock(CLOCK))
    async with app.run_test(size=(180, 20)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 3, "three sessions")
        rows = _rows(app)
        assert [row[0] for row in rows] == ["copilot", "qwen", "gemini"]  # newest first, by when each started
        assert [row[6] for row in rows] == ["done", "done", "last: reply"]
        # Copilot CLI starts another session: its folder, then its events file.
        fresh = copy_session("copilot", "simple", folders["copilot"], nested=True, stem="0002")
        os.utime(fresh, (CLOCK.timestamp(), CLOCK.timestamp()))  # written as the app's clock reads: live
        await wait_for(pilot, lambda: len(_rows(app)) == 4, "the new session", 15)
        assert any(row[6] == "live" for row in _rows(app))
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=next(i for i, row in enumerate(_rows(app)) if row[6] == "live"))
        await pilot.press("enter")
        await wait_for_text(pilot, "The folder holds two files")
        assert isinstance(app.screen, SessionScreen) and fresh.exists()


def _rows(app: WrenApp) -> list[list[str]]:
    table = app.screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_a_session_qwen_code_has_created_but_not_written_opens_as_qwen_codes_and_fills_in(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    path = root / "-home-user-project-ws" / "chats" / "0001.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")  # Qwen Code creates the file, then writes its first entry
    app = WrenApp(folder=root, agents=[ForeignFolder(FORMATS["qwen"], root)], clock=FixedClock(CLOCK))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: len(_rows(app)) == 1, "the empty session")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session")
        with path.open("ab") as client:
            client.write(b"".join(lines_of("qwen", "simple")))
        await wait_for_text(pilot, "The folder holds two files")
        assert "qwen" in _status(app)


@pytest.mark.parametrize("agent", NEW)
async def test_a_big_session_shows_its_last_lines_first_then_the_whole_of_it(agent: str, tmp_path: Path) -> None:
    from tests.bench.bench_more_agents import big_session

    path = big_session(agent, tmp_path / "big.jsonl", 2 << 20)
    age(path, AN_HOUR)
    app = _app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_for_text(pilot, "hello.py has 3 lines.")
        first = len(screen.timeline)
        await wait_for(
            pilot, lambda: screen.reader.indexing is None and len(screen.timeline) > first, "the whole index", 60
        )
        await pilot.press("home")
        await wait_for_text(pilot, "What does notes.txt say?")
        lines = path.read_bytes().splitlines()
        answer = max(i for i, line in enumerate(lines, 1) if b"hello.py has 3 lines." in line)
        # Seq is the line's number from the file's start, in the lines shown first and in the index.
        last = screen.timeline.event(len(screen.timeline) - 1)
        assert last.seq == answer
