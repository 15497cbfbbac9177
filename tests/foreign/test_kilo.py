"""Kilo Code CLI's `kilo.db` (OpenCode's tables plus two of Kilo's) as a user meets it: told from OpenCode by its
tables, read by OpenCode's reader as `--agent kilo` from its own folder, its transient spinner text never a reply
nor carried into a fork; and OpenCode's text said before a call shown before it (Kilo's rows are OpenCode's)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS
from tests.foreign.test_opencode import OPENCODE, edit, fingerprint
from wren_tui.foreign import FORMATS, detect
from wren_tui.journal.events import Fork, Message, RunStart
from wren_tui.journal.reader import read_events

KILO = AGENTS / "kilo-cli"
RECORDED_CWD = "/home/user/project/ws"
MULTI_ID = "ses_db14b21eaffeo7YKNY0WPVaCwP"
SPINNER = "Initializing snapshot"


def kilo_db(folder: Path, scenario: str = "simple", *, wal: bool = False) -> Path:
    """A copy of a recorded Kilo database named as Kilo names it; `wal`: every row still in its -wal."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "kilo.db"
    if wal:
        for suffix in ("", "-wal", "-shm"):
            shutil.copyfile(KILO / "wal-unmerged" / f"{scenario}.kilo.db{suffix}", f"{db}{suffix}")
    else:
        shutil.copyfile(KILO / f"{scenario}.kilo.db", db)
    return db


def _json(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> object:
    result = run_wren([*args, "--json"], cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _said(doc: object) -> list[tuple[str, str]]:
    assert isinstance(doc, dict)
    return [(e["message"]["role"], e["message"]["content"]) for e in doc["events"] if e["type"] == "message"]


def test_a_kilo_database_is_told_from_opencodes_by_its_own_tables_whatever_its_name(tmp_path: Path) -> None:
    kilo = kilo_db(tmp_path / "kilo")
    assert detect(kilo) is FORMATS["kilo"]
    assert detect(kilo_db(tmp_path / "wal", wal=True)) is FORMATS["kilo"]  # its tables still in the WAL
    misnamed = tmp_path / "opencode" / "opencode.db"
    misnamed.parent.mkdir()
    shutil.copyfile(KILO / "simple.kilo.db", misnamed)
    assert detect(misnamed) is FORMATS["kilo"]
    opencode = tmp_path / "oc.db"
    shutil.copyfile(OPENCODE / "simple.opencode.db", opencode)
    assert detect(opencode) is FORMATS["opencode"]
    # OpenCode's folder holding Kilo's database lists no OpenCode session; Kilo's listing of it names it Kilo's.
    assert _json(["ls", "--agent", "opencode", "--dir", str(misnamed.parent)], tmp_path) == []
    rows = _json(["ls", "--agent", "kilo", "--dir", str(misnamed.parent)], tmp_path)
    assert isinstance(rows, list) and [r["agent"] for r in rows] == ["kilo"]
    doc = _json(["log", str(kilo)], tmp_path)
    assert isinstance(doc, dict) and doc["agent"] == "kilo"


def test_ls_agent_kilo_reads_its_default_folder_and_xdg_data_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = kilo_db(home / ".local" / "share" / "kilo", "multi-turn")
    rows = _json(["ls", "--agent", "kilo"], tmp_path, env={"HOME": str(home)})
    assert isinstance(rows, list)
    assert [(r["id"], r["agent"], r["state"], r["project"], r["tokens"]) for r in rows] == [
        (MULTI_ID, "kilo", "done", RECORDED_CWD, 4 * 930)
    ]
    assert rows[0]["path"] == f"{db}#{MULTI_ID}"
    data = tmp_path / "data"
    kilo_db(data / "kilo", "simple")
    rows = _json(["ls", "--agent", "kilo"], tmp_path, env={"HOME": str(home), "XDG_DATA_HOME": str(data)})
    assert isinstance(rows, list) and [r["state"] for r in rows] == ["done"]
    every = _json(["ls", "--agent", "all"], tmp_path, env={"HOME": str(home)})
    assert isinstance(every, list) and [r["agent"] for r in every] == ["kilo"]


def test_kilos_transient_spinner_text_is_never_a_reply_nor_carried_into_a_fork(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("TODO\n- buy milk\n- fix the flaky test\n")
    db = kilo_db(tmp_path / "kilo", "multi-turn")
    with closing(sqlite3.connect(db)) as conn:  # the spinner is in the recording, twice
        assert conn.execute(f"select count(*) from event where data like '%{SPINNER}%'").fetchone() == (2,)
    edit(db, f"update event set data = replace(data, '{RECORDED_CWD}', '{workspace}')")
    logged = run_wren(["log", str(db)], cwd=tmp_path)
    assert logged.returncode == 0, logged.stderr
    assert SPINNER not in logged.stdout
    assert "message.part.removed.1 ×2" in logged.stderr  # a known kind left out, not one Wren does not know
    said = _said(_json(["log", str(db)], tmp_path))
    assert [role for role, _ in said] == ["user", "assistant", "tool", "assistant"] * 2
    assert said[3] == ("assistant", "notes.txt is a short to-do list with two items.")
    journals = tmp_path / "journals"
    before = fingerprint(db)
    made = _json(["fork", str(db), "54", "--dir", str(journals)], tmp_path)
    assert isinstance(made, dict)
    result = read_events(Path(made["path"]))
    assert result.ok
    start, *middle, last = result.events
    assert isinstance(start, RunStart) and start.cwd == str(workspace) and start.model == "kilo:fake-model"
    assert isinstance(last, Fork) and last.at_seq == 54
    messages = [e.message for e in middle if isinstance(e, Message)]
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"] * 2
    assert not any(SPINNER in m.content for m in messages)
    assert fingerprint(db) == before
    resumed = run_wren(
        ["resume", made["id"], "and hello.py?", "--dir", str(journals), "--model", "scripted"], cwd=tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"working in {workspace}" in resumed.stdout


def test_search_agent_kilo_finds_a_word_of_its_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    kilo_db(home / ".local" / "share" / "kilo", "multi-turn")
    found = run_wren(["search", "to-do list", "--agent", "kilo", "--json"], cwd=tmp_path, env={"HOME": str(home)})
    assert found.returncode == 0, found.stderr
    assert "kilo" in found.stdout and "to-do list" in found.stdout
    assert (
        SPINNER not in run_wren(["search", "snapshot", "--agent", "kilo"], cwd=tmp_path, env={"HOME": str(home)}).stdout
    )


@pytest.mark.parametrize("agent", ["opencode", "kilo"])
def test_the_text_said_before_a_call_is_shown_before_it_and_a_session_killed_in_the_call_is_never_done(
    agent: str, tmp_path: Path
) -> None:
    folder = tmp_path / agent
    if agent == "kilo":
        db = kilo_db(folder)
    else:
        folder.mkdir()
        db = folder / "opencode.db"
        shutil.copyfile(OPENCODE / "simple.opencode.db", db)
    said = _said(_json(["log", str(db)], tmp_path))
    assert said[1] == ("assistant", "I'll list the folder first.")  # before the call, as it was said
    assert said[2][0] == "assistant" and said[2][1] == "" and said[3][0] == "tool"
    atif = tmp_path / f"{agent}.atif.json"
    exported = run_wren(["export", str(db), "--format", "atif", "-o", str(atif)], cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    steps = json.loads(atif.read_text())["steps"]
    agent_texts = [s.get("message") for s in steps if s.get("source") == "agent"]
    assert agent_texts[0] == "I'll list the folder first."
    # Killed as the real run was: the call running, the text before it finished after it started, no result.
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("select seq, data from event order by seq").fetchall()
    text_end = next(seq for seq, data in rows if "I'll list the folder first." in data and '"end"' in data)
    started = [seq for seq, data in rows if '"status":"running"' in data and seq < text_end]
    assert started, "the call started before the text was finished"
    edit(db, f"delete from event where seq > {text_end}")
    listed = _json(["ls", "--agent", agent, "--dir", str(folder)], tmp_path)
    assert isinstance(listed, list) and [r["state"] for r in listed] == ["stopped mid-call"]
    events = _json(["log", str(db)], tmp_path)
    assert isinstance(events, dict)
    messages = [e["message"] for e in events["events"] if e["type"] == "message"]
    assert messages[-1]["toolCalls"][0]["name"] == "bash"  # the last thing said is the call, with no result
    assert not any(e["type"] == "tool_end" for e in events["events"])
