"""OpenCode's database as a user meets it: `wren ls`, `log`, `fork`, `search` on it, none of which changes a byte
or a modification time of the database, its `-wal` or its `-shm` (which merely opening it with SQLite does)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS
from wren_tui.foreign import FORMATS, detect
from wren_tui.journal.events import Fork, Message, RunStart
from wren_tui.journal.reader import read_events

OPENCODE = AGENTS / "opencode"
RECORDED_CWD = "/home/user/project/ws"
SIMPLE_ID = "ses_dce0f6347ffem3EOnRkfEIRQ7B"
MULTI_ID = "ses_dce0f289affee77vSSpk8FX4aH"

Fingerprint = dict[str, tuple[str, int] | None]


def database(folder: Path, scenario: str = "simple", *, wal: bool = False) -> Path:
    """A copy of a recorded database named as OpenCode names it; `wal`: every row still in its -wal, with its -shm."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "opencode.db"
    if wal:
        for suffix in ("", "-wal", "-shm"):
            shutil.copyfile(OPENCODE / "wal-unmerged" / f"{scenario}.opencode.db{suffix}", f"{db}{suffix}")
    else:
        shutil.copyfile(OPENCODE / f"{scenario}.opencode.db", db)
    return db


def fingerprint(db: Path) -> Fingerprint:
    """The bytes and modification time of the database and its -wal and -shm (None: absent)."""
    found: Fingerprint = {}
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{db}{suffix}")
        found[suffix or "db"] = (
            (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) if path.exists() else None
        )
    return found


def edit(db: Path, *statements: str) -> None:
    """Change a test's own copy of a database (as OpenCode would: SQLite, then merged into the one file)."""
    with closing(sqlite3.connect(db)) as conn:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
        conn.execute("pragma wal_checkpoint(truncate)")


def log_json(target: str, cwd: Path) -> dict[str, object]:
    result = run_wren(["log", target, "--json"], cwd=cwd)
    assert result.returncode == 0, result.stderr
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_sqlite_itself_changes_a_wal_database_it_only_reads(tmp_path: Path) -> None:
    """Why Wren reads a copy: a read-only query through SQLite merges the WAL and deletes -wal and -shm."""
    db = database(tmp_path, wal=True)
    before = fingerprint(db)
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("select count(*) from session").fetchone() == (1,)
    assert fingerprint(db) != before


def test_no_command_changes_a_byte_or_a_time_of_the_database_its_wal_or_its_shm(tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    db = database(folder, wal=True)
    before = fingerprint(db)
    assert before["-wal"] is not None and before["-shm"] is not None
    journals = tmp_path / "journals"
    commands = [
        ["ls", "--agent", "opencode", "--dir", str(folder)],
        ["ls", "--agent", "opencode", "--dir", str(folder), "--json"],
        ["ls", "--agent", "all", "--dir", str(folder), "--json"],
        ["log", str(db)],
        ["log", f"{db}#{SIMPLE_ID}", "--json"],
        ["fork", str(db), "--dir", str(journals)],
        ["fork", str(db), "26", "--dir", str(journals)],
        ["search", "hello.py", "--agent", "opencode", "--dir", str(folder)],
    ]
    for command in commands:
        result = run_wren(command, cwd=tmp_path)
        assert result.returncode == 0, (command, result.stderr)
        assert fingerprint(db) == before, command
    assert len(list(journals.glob("s-*.jsonl"))) == 1  # the fork did write: a journal of Wren's, elsewhere


def test_a_database_is_recognised_by_its_tables_not_its_name(tmp_path: Path) -> None:
    db = database(tmp_path / "a", wal=True)
    misnamed = tmp_path / "b" / "notes.bin"
    misnamed.parent.mkdir()
    shutil.copyfile(OPENCODE / "simple.opencode.db", misnamed)
    assert detect(db) is FORMATS["opencode"] and detect(misnamed) is FORMATS["opencode"]
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("create table session (id text)")
        conn.commit()
    assert detect(other) is None  # SQLite, but without OpenCode's tables
    (tmp_path / "a" / "notes.db").write_text("not a database\n")
    shutil.copyfile(other, tmp_path / "a" / "other.db")
    rows = json.loads(
        run_wren(["ls", "--agent", "opencode", "--dir", str(tmp_path / "a"), "--json"], cwd=tmp_path).stdout
    )
    assert [r["path"] for r in rows] == [f"{db}#{SIMPLE_ID}"]  # another program's database is not a session
    refused = run_wren(["log", str(other)], cwd=tmp_path)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr


def test_log_shows_the_prompt_the_call_its_failure_and_timing_and_the_answer(tmp_path: Path) -> None:
    db = database(tmp_path, "tool-error")
    doc = log_json(str(db), tmp_path)
    assert doc["agent"] == "opencode" and doc["id"] == "ses_dce0f4273ffePBM2vZDSagqmWx"
    events = doc["events"]
    assert isinstance(events, list)
    messages = [e["message"] for e in events if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[0]["content"] == '"Show me missing.txt please."'  # as OpenCode stored it, quotes and all
    call = messages[1]["toolCalls"][0]
    assert call["name"] == "bash" and json.loads(call["args"]) == {"command": "cat missing.txt"}
    end = next(e for e in events if e["type"] == "tool_end")
    assert end["ok"] is False and end["elapsedMs"] == 712  # exit status 1, from its start to its end
    assert messages[3]["content"] == "missing.txt does not exist here: cat failed with exit status 1."
    usage = [e for e in events if e["type"] == "usage"]
    assert [(u["inputTokens"], u["outputTokens"]) for u in usage] == [(900, 30), (900, 30)]


def test_a_session_killed_in_the_middle_of_a_call_is_never_done(tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    db = database(folder, "tool-error")
    # What OpenCode leaves when it dies during the tool: the rows up to the call's "running" state.
    edit(db, "delete from event where seq > 12")
    rows = json.loads(run_wren(["ls", "--agent", "opencode", "--dir", str(folder), "--json"], cwd=tmp_path).stdout)
    assert [r["state"] for r in rows] == ["stopped mid-call"]
    doc = log_json(str(db), tmp_path)
    events = doc["events"]
    assert isinstance(events, list)
    assert not any(e["type"] == "tool_end" for e in events)
    listed = run_wren(["fork", str(db), "--json"], cwd=tmp_path)
    assert [p["seq"] for p in json.loads(listed.stdout)] == [4]  # the prompt; nothing while the call is open


def test_a_call_still_pending_is_not_shown_as_asked(tmp_path: Path) -> None:
    db = database(tmp_path, "tool-error")
    edit(db, "delete from event where seq > 10")  # the tool part exists, still "pending": no input yet
    events = log_json(str(db), tmp_path)["events"]
    assert isinstance(events, list)
    assert [e["message"]["role"] for e in events if e["type"] == "message"] == ["user"]


def test_a_database_of_several_sessions_names_each_as_db_hash_id(tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    db = database(folder, "simple")
    other = OPENCODE / "multi-turn.opencode.db"
    tables = ("session", "message", "part", "event", "event_sequence")
    edit(db, f"attach '{other}' as other", *(f"insert into {t} select * from other.{t}" for t in tables))
    rows = json.loads(run_wren(["ls", "--agent", "opencode", "--dir", str(folder), "--json"], cwd=tmp_path).stdout)
    assert {r["id"]: r["path"] for r in rows} == {SIMPLE_ID: f"{db}#{SIMPLE_ID}", MULTI_ID: f"{db}#{MULTI_ID}"}
    assert all(r["agent"] == "opencode" and r["state"] == "done" for r in rows)
    ambiguous = run_wren(["log", str(db)], cwd=tmp_path)
    assert ambiguous.returncode != 0
    assert f"an OpenCode database of 2 sessions; name one as {db}#ID" in ambiguous.stderr
    doc = log_json(f"{db}#{MULTI_ID}", tmp_path)
    assert doc["id"] == MULTI_ID
    missing = run_wren(["log", f"{db}#ses_nope"], cwd=tmp_path)
    assert missing.returncode != 0 and "no OpenCode session ses_nope" in missing.stderr


@pytest.mark.parametrize("wal", [False, True])
def test_fork_into_wren_then_wren_resume_continues_it(wal: bool, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("TODO\n- buy milk\n- fix the flaky test\n")
    db = database(tmp_path / "opencode", "multi-turn")
    # The session worked in a folder of the recording machine: here it is this test's workspace.
    edit(db, f"update event set data = replace(data, '{RECORDED_CWD}', '{workspace}')")
    if wal:
        db = database(tmp_path / "wal", "simple", wal=True)
    journals = tmp_path / "journals"
    before = fingerprint(db)
    point = "22" if not wal else "26"
    made = run_wren(["fork", str(db), point, "--dir", str(journals), "--json"], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    forked = json.loads(made.stdout)
    result = read_events(Path(forked["path"]))
    assert result.ok
    start, *middle, last = result.events
    assert isinstance(start, RunStart) and start.model == "opencode:fake-model"
    assert isinstance(last, Fork) and last.at_seq == int(point)
    roles = [e.message.role for e in middle if isinstance(e, Message)]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert fingerprint(db) == before
    if wal:
        return
    assert start.cwd == str(workspace)
    resumed = run_wren(
        ["resume", forked["id"], "what did you find in notes.txt?", "--dir", str(journals), "--model", "scripted"],
        cwd=tmp_path,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"working in {workspace}" in resumed.stdout
    assert "notes.txt is a short to-do list with two items." in resumed.stdout
