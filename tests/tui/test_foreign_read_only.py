"""The viewer never writes to, locks, renames or touches another agent's files or folders.

A child process records, through Python's audit hooks, every call that could write, rename, remove,
change the times of or lock a file, while it browses an agent's sessions folder, opens each session,
presses every key (search, raw view, the fork picker) and forks one into Wren's journals folder. The
test asserts that none of it touched the agent's folder, whose bytes and times are compared too.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.foreign.sessions import AGENTS, age, copy_session

_CHILD = textwrap.dedent(
    """
    import asyncio, json, os, sys, time
    from datetime import UTC, datetime
    from pathlib import Path

    folder, journals = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    agent, session = sys.argv[3], Path(sys.argv[4])
    inodes = {(st.st_dev, st.st_ino) for p in folder.rglob("*") for st in [os.stat(p)]}
    touched = []
    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    MUTATING = {"os.rename", "os.replace", "os.remove", "os.rmdir", "os.truncate", "os.mkdir",
                "os.chmod", "os.chown", "os.utime", "os.link", "os.symlink", "shutil.copyfile",
                "shutil.move", "shutil.rmtree"}

    def inside(arg):
        try:
            return Path(os.fsdecode(arg)).resolve().is_relative_to(folder)
        except (TypeError, ValueError):
            return False

    def ours(fd):
        try:
            st = os.fstat(fd)
        except (OSError, TypeError):
            return False
        return (st.st_dev, st.st_ino) in inodes

    def hook(event, args):
        if event == "open" and args and isinstance(args[-1], int) and args[-1] & WRITE_FLAGS:
            if inside(args[0]):
                touched.append([event, os.fsdecode(args[0])])
        elif event in MUTATING and any(inside(a) for a in args if isinstance(a, (str, bytes, os.PathLike))):
            touched.append([event, [str(a) for a in args]])
        elif event in ("fcntl.flock", "fcntl.lockf") and ours(args[0]):
            touched.append([event, args[1]])
        elif event == "os.utime" and args and isinstance(args[0], int) and ours(args[0]):
            touched.append([event, "by descriptor"])
        elif event == "sqlite3.connect" and args:
            # SQLite opening the agent's database itself (it may checkpoint it, delete its -wal, write its -shm).
            name = os.fsdecode(args[0])
            if inside(name.removeprefix("file:").split("?")[0]):
                touched.append([event, name])

    sys.addaudithook(hook)

    from wren_tui.foreign import FORMATS
    from wren_tui.tui.app import WrenApp
    from wren_tui.tui.screens.foreign import ForeignFolder

    from textual.widgets import DataTable
    from wren_tui.tui.screens.dialogs import Confirm, Notice
    from wren_tui.tui.screens.fork_picker import ForkPicker
    from wren_tui.tui.screens.session import SessionScreen
    async def until(pilot, condition, what):
        deadline = time.monotonic() + 60
        while not condition():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}")
            await pilot.pause(0.02)
    async def main():
        clock = lambda: datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
        browse = [ForeignFolder(FORMATS[agent], folder)]
        for kwargs in ({"agents": browse}, {"session": session}):
            app = WrenApp(folder=folder, clock=clock, journals=journals, **kwargs)
            async with app.run_test(size=(140, 40)) as pilot:
                if "agents" in kwargs:
                    listed = lambda: any(t.row_count == 2 for t in app.screen.query(DataTable))
                    await until(pilot, listed, "both sessions listed")
                    await pilot.press("enter")  # the browser opens the session
                await until(pilot, lambda: isinstance(app.screen, SessionScreen), "the session")
                await pilot.press("e", "t", "r", "escape", "/", "m", "enter", "escape", "home", "enter", "f")
                await pilot.press("p")
                await until(pilot, lambda: isinstance(app.screen, ForkPicker), "the fork picker")
                await pilot.press("enter")
                await until(pilot, lambda: isinstance(app.screen, Confirm), "the question")
                await pilot.press("y")  # fork the point into Wren's journals folder
                await until(pilot, lambda: isinstance(app.screen, Notice), "the fork's outcome")
        print(json.dumps({"touched": touched, "forks": sorted(p.name for p in journals.glob("s-*.jsonl"))}))
    asyncio.run(main())
    """
)


def _state(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every file and folder under `folder`: its bytes (for files), modification and change times."""
    found = {}
    for path in sorted([folder, *folder.rglob("*")]):
        st = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "folder"
        found[str(path)] = (digest, st.st_mtime_ns, st.st_ctime_ns)
    return found


@pytest.mark.parametrize("agent", ["claude", "gemini", "qwen", "copilot"])
def test_browsing_reading_and_forking_another_agents_sessions_touches_none_of_its_files(
    agent: str, tmp_path: Path
) -> None:
    folder = tmp_path / agent / "sessions"
    copy_session(agent, "simple", folder, nested=True, stem="0001")
    session = copy_session(agent, "multi-turn", folder, nested=True, stem="0002")
    journals = tmp_path / "journals"
    before = _state(folder)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(folder), str(journals), agent, str(session)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env={**os.environ, "TEXTUAL": ""},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["touched"] == []
    assert len(report["forks"]) == 2  # it did write: a new journal each time, in Wren's journals folder only
    assert _state(folder) == before


def test_the_recorder_sees_a_lock_and_a_time_change_on_an_agents_file(tmp_path: Path) -> None:
    """The recorder itself must be able to fail: a lock and a utime on a session file are caught."""
    folder = tmp_path / "pi" / "sessions"
    session = copy_session("pi", "simple", folder, nested=True)
    probe = _CHILD.replace(
        "asyncio.run(main())",
        "import fcntl\n"
        "fd = os.open(session, os.O_RDONLY)\n"
        "fcntl.flock(fd, fcntl.LOCK_SH)\n"
        "os.utime(session)\n"
        "print(json.dumps({'touched': touched}))",
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(folder), str(tmp_path / "j"), "pi", str(session)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [t[0] for t in json.loads(proc.stdout.strip().splitlines()[-1])["touched"]] == ["fcntl.flock", "os.utime"]


def _opencode(folder: Path) -> Path:
    """Two databases: one with every row still in its -wal (and its -shm), one checkpointed."""
    (folder / "a").mkdir(parents=True)
    (folder / "b").mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(
            AGENTS / "opencode" / "wal-unmerged" / f"simple.opencode.db{suffix}", folder / f"a/opencode.db{suffix}"
        )
    shutil.copyfile(AGENTS / "opencode" / "multi-turn.opencode.db", folder / "b" / "opencode.db")
    return folder / "a" / "opencode.db"


def _aider(folder: Path) -> Path:
    """Two projects, each with aider's chat history beside it."""
    for project, scenario in (("one", "simple"), ("two", "multi-turn")):
        (folder / project).mkdir(parents=True)
        path = folder / project / ".aider.chat.history.md"
        shutil.copyfile(AGENTS / "aider" / f"{scenario}.chat.history.md", path)
        age(path, 3600)
    return folder / "one" / ".aider.chat.history.md"


@pytest.mark.parametrize("agent", ["opencode", "aider"])
def test_browsing_reading_and_forking_a_database_or_a_chat_history_touches_none_of_its_files(
    agent: str, tmp_path: Path
) -> None:
    folder = tmp_path / agent
    session = _opencode(folder) if agent == "opencode" else _aider(folder)
    journals = tmp_path / "journals"
    before = _state(folder)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(folder), str(journals), agent, str(session)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env={**os.environ, "TEXTUAL": ""},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["touched"] == []
    assert len(report["forks"]) == 2
    assert _state(folder) == before


def test_the_recorder_sees_sqlite_open_an_agents_database(tmp_path: Path) -> None:
    """The recorder must be able to fail: SQLite given the agent's database itself is caught."""
    folder = tmp_path / "opencode"
    session = _opencode(folder)
    probe = _CHILD.replace(
        "asyncio.run(main())",
        "import sqlite3\n"
        "sqlite3.connect(f'file:{session}?mode=ro', uri=True).close()\n"
        "print(json.dumps({'touched': touched}))",
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(folder), str(tmp_path / "j"), "opencode", str(session)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [t[0] for t in json.loads(proc.stdout.strip().splitlines()[-1])["touched"]] == ["sqlite3.connect"]
