"""OpenCode's database and aider's chat history in the viewer, through Pilot: the session screen, the browser, a live
session followed as rows are committed (OpenCode) or text appended (aider) by another process, and a fork from the
picker into a Wren journal; the agent's files keep every byte and time."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, AN_HOUR, age
from tests.foreign.test_opencode import database, fingerprint
from tests.tui.conftest import FixedClock, screen_text, wait_for, wait_for_text
from wren_tui.foreign import FORMATS
from wren_tui.journal.events import Fork, Message
from wren_tui.journal.reader import read_events
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.dialogs import Notice
from wren_tui.tui.screens.foreign import ForeignFolder
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.status_line import StatusLine

CLOCK = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)
AIDER = AGENTS / "aider"


def _app(path: Path, **kwargs: object) -> WrenApp:
    return WrenApp(folder=path.parent, session=path, clock=FixedClock(CLOCK), **kwargs)  # type: ignore[arg-type]


def _status(app: WrenApp) -> str:
    return str(app.screen.query_one(StatusLine).render())


def aider_history(folder: Path, scenario: str = "multi-turn", data: bytes | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".aider.chat.history.md"
    path.write_bytes((AIDER / f"{scenario}.chat.history.md").read_bytes() if data is None else data)
    age(path, AN_HOUR)
    return path


# --- OpenCode -----------------------------------------------------------------------------------


async def test_an_opencode_session_shows_its_prompt_call_failure_timing_and_answer(tmp_path: Path) -> None:
    db = database(tmp_path / "opencode", "tool-error", wal=False)
    before = fingerprint(db)
    app = _app(db)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for_text(pilot, "missing.txt does not exist here: cat failed with exit status 1.")
        text = screen_text(app)
        order = ["▌ you", "Show me missing.txt please.", "cat missing.txt", "▌ tool result", "No such file"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        await wait_for(pilot, lambda: " failed" in screen_text(app), "the call failed")
        row = next(line for line in screen_text(app).splitlines() if "cat missing.txt" in line and " ms " in line)
        assert "712 ms" in row and row.split()[-1] == "failed"
        status = _status(app)
        assert " ended " in status and "opencode ses_dce0f4273ffePBM2vZDSagqmWx" in status and " 1860 tokens" in status
    assert fingerprint(db) == before


async def test_an_opencode_session_killed_during_its_call_shows_no_result_recorded_never_done(tmp_path: Path) -> None:
    from tests.foreign.test_opencode import edit

    db = database(tmp_path / "opencode", "tool-error")
    edit(db, "delete from event where seq > 12")
    app = _app(db)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: "no result recorded" in screen_text(app), "the call with no result")
        await wait_for(pilot, lambda: " stopped mid-call " in _status(app), "stopped mid-call")
        assert " ended " not in _status(app)


# A writer of its own: OpenCode's rows committed one by one into a WAL-mode database, as OpenCode commits them.
_WRITER = textwrap.dedent(
    """
    import sqlite3, sys
    from contextlib import closing
    target, source, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with closing(sqlite3.connect(source)) as src:
        rows = src.execute("select * from event where seq >= ? order by seq", (first,)).fetchall()
    with closing(sqlite3.connect(target, isolation_level=None)) as db:
        db.execute("pragma journal_mode=wal")
        db.execute("pragma wal_autocheckpoint=0")
        for row in rows:
            line = sys.stdin.readline()  # the test says when: one row per line it sends
            if not line:
                break
            db.execute("begin immediate")
            db.execute("insert into event values (?, ?, ?, ?, ?)", row)
            db.execute("commit")
            print(row[2], flush=True)
    """
)


async def test_an_opencode_session_is_followed_live_as_another_process_commits_its_rows(tmp_path: Path) -> None:
    from tests.foreign.test_opencode import OPENCODE, edit

    db = database(tmp_path / "opencode", "multi-turn")
    # The first turn is there; the rest of the recorded session is committed while the viewer follows it.
    edit(db, "delete from event where seq >= 24", "pragma journal_mode=wal")
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db), str(OPENCODE / "multi-turn.opencode.db"), "24"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None and writer.stdout is not None
    try:
        app = _app(db)
        async with app.run_test(size=(140, 50)) as pilot:
            await wait_for_text(pilot, "notes.txt is a short to-do list with two items.")
            assert "How many lines does hello.py have?" not in screen_text(app)
            for _row in range(24, 51):
                writer.stdin.write("\n")
                writer.stdin.flush()
                writer.stdout.readline()  # committed
                if _row == 34:
                    await wait_for_text(pilot, "How many lines does hello.py have?")
                    assert "hello.py has 3 lines." not in screen_text(app)
            await wait_for_text(pilot, "hello.py has 3 lines.")
            text = screen_text(app)
            assert text.count("How many lines does hello.py have?") == 1
            await wait_for(pilot, lambda: "wc -l hello.py" in screen_text(app), "the second call")
    finally:
        writer.stdin.close()
        writer.wait(timeout=30)


async def test_the_browser_lists_each_session_of_a_database_and_opens_one(tmp_path: Path) -> None:
    from tests.foreign.test_opencode import OPENCODE, edit

    folder = tmp_path / "opencode"
    db = database(folder, "simple")
    tables = ("session", "message", "part", "event", "event_sequence")
    other = OPENCODE / "multi-turn.opencode.db"
    edit(db, f"attach '{other}' as other", *(f"insert into {t} select * from other.{t}" for t in tables))
    before = fingerprint(db)
    app = WrenApp(folder=folder, agents=[ForeignFolder(FORMATS["opencode"], folder)], clock=FixedClock(CLOCK))
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for_text(pilot, "ses_dce0f289affee")
        await wait_for_text(pilot, "ses_dce0f6347ffem")
        text = screen_text(app)
        assert text.index("ses_dce0f289affee") < text.index("ses_dce0f6347ffem")  # newest first
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session")
        await wait_for_text(pilot, "hello.py has 3 lines.")
    assert fingerprint(db) == before


async def test_fork_from_the_picker_into_a_wren_journal_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    db = database(tmp_path / "opencode", "simple", wal=True)
    before = fingerprint(db)
    journals = tmp_path / "journals"
    app = _app(db, journals=journals)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for_text(pilot, "The folder holds two files")
        await pilot.press("p")
        await wait_for_text(pilot, "Fork points of opencode")
        await pilot.press("enter")
        await wait_for_text(pilot, "into a new Wren journal?")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, Notice), "the fork's notice")
    forked = list(journals.glob("s-*.jsonl"))
    assert len(forked) == 1 and fingerprint(db) == before
    events = read_events(forked[0]).events
    assert [e.message.role for e in events if isinstance(e, Message)] == ["user", "assistant", "tool", "assistant"]
    assert isinstance(events[-1], Fork) and events[-1].at_seq == 26


# --- aider --------------------------------------------------------------------------------------


async def test_an_aider_history_shows_both_runs_turns_and_says_aider_records_no_tool_calls(tmp_path: Path) -> None:
    path = aider_history(tmp_path / "project")
    before = path.read_bytes(), path.stat().st_mtime_ns
    app = _app(path)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for_text(pilot, "hello.py has 3 lines.")
        text = screen_text(app)
        order = ["What does notes.txt say?", "notes.txt is a short to-do list", "How many lines does hello.py"]
        positions = [text.index(marker) for marker in order]
        assert positions == sorted(positions)
        await wait_for(pilot, lambda: "aider records no tool calls" in _status(app), "what aider does not record")
        tools = screen_text(app).split("Tool calls")[-1]
        assert "aider records no tool calls" in tools and "No tool calls yet." not in tools
        assert " ended " in _status(app) and "aider project" in _status(app)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


async def test_an_aider_history_is_followed_as_aider_appends_a_run(tmp_path: Path) -> None:
    whole = (AIDER / "multi-turn.chat.history.md").read_bytes()
    second = whole.index(b"# aider chat started at", 10)
    prompt = whole.index(b"#### How many lines")
    path = aider_history(tmp_path / "project", data=whole[:second])
    app = _app(path)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for_text(pilot, "notes.txt is a short to-do list with two items.")
        # As aider writes: the run's header block, the prompt when sent, the reply once it has arrived.
        with path.open("ab") as aider_writes:
            aider_writes.write(whole[second:prompt])
            aider_writes.flush()
            aider_writes.write(whole[prompt : whole.index(b"\n\n", prompt) + 2])
            aider_writes.flush()
            await wait_for_text(pilot, "How many lines does hello.py have?")
            aider_writes.write(whole[whole.index(b"\n\n", prompt) + 2 :])
        await wait_for_text(pilot, "hello.py has 3 lines.")
        await wait_for(pilot, lambda: " live " in _status(app), "live: it just changed")
        assert screen_text(app).count("How many lines does hello.py have?") == 1


async def test_the_browser_finds_aider_histories_in_the_folders_named(tmp_path: Path) -> None:
    aider_history(tmp_path / "one", "simple")
    aider_history(tmp_path / "two", "multi-turn")
    (tmp_path / "three").mkdir()
    (tmp_path / "three" / "README.md").write_text("# not aider\n")
    app = WrenApp(folder=tmp_path, agents=[ForeignFolder(FORMATS["aider"], tmp_path)], clock=FixedClock(CLOCK))
    async with app.run_test(size=(160, 20)) as pilot:
        await wait_for_text(pilot, "two")
        await wait_for(pilot, lambda: "one" in screen_text(app), "both histories")
        assert "three" not in screen_text(app)


def test_watch_agent_aider_help_says_where_it_looks() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wren_tui", "watch", "--help"], capture_output=True, text=True, check=True
    )
    assert "aider" in result.stdout and "AIDER_CHAT_HISTORY_FILE" in result.stdout


@pytest.mark.parametrize("agent", ["gemini", "aider"])
async def test_a_killed_sessions_status_line_says_the_same_ending_as_the_list(agent: str, tmp_path: Path) -> None:
    from tests.foreign.sessions import copy_session
    from tests.foreign.test_more_agents import CALL_LINE

    if agent == "gemini":  # stopped in its tool: the file ends with the reply that asked for the call
        path = copy_session("gemini", "tool-error", tmp_path / "gemini", lines=CALL_LINE["gemini"], nested=True)
    else:  # aider killed while the model answered: the prompt with no reply
        whole = (AIDER / "simple.chat.history.md").read_bytes()
        path = aider_history(tmp_path / "aider", data=whole[: whole.index(b"\n\n", whole.index(b"#### ")) + 2])
    listed = run_wren(["ls", "--agent", agent, "--dir", str(tmp_path / agent), "--json"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["state"] == {"gemini": "last: reply", "aider": "interrupted"}[agent]
    app = _app(path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for_text(pilot, {"gemini": "Show me missing.txt please.", "aider": "List the files"}[agent])
        await wait_for(pilot, lambda: f" {row['state']} " in _status(app), "the listing's ending")
        assert " ended " not in _status(app)
