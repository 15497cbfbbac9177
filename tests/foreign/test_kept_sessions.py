"""Deleted is not lost: a session `wren keep` copied is found by every command after its agent deletes, truncates or
rewrites it, each command saying so ("kept; deleted by its agent on DATE"), as a person runs them (subprocesses).

A session still in the agent's folder is read there; one Wren never kept and its agent deleted is simply gone; and no
command writes anything in the agent's folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import copy_session, fixture, fork_and_resume, lines_of, wren_json

GONE = "aaaa1111-0000-4000-8000-000000000001"
NEVER = "bbbb2222-0000-4000-8000-000000000002"


class Machine:
    """One person's machine: Claude Code's folder, Wren's journals and Wren's kept store, in `tmp`."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.config = tmp / "claude"
        self.projects = self.config / "projects"
        self.journals = tmp / "journals"
        self.kept = tmp / "kept"
        self.journals.mkdir()
        self.env = {
            "HOME": str(tmp),
            "CLAUDE_CONFIG_DIR": str(self.config),
            "WREN_DIR": str(self.journals),
            "WREN_KEEP_DIR": str(self.kept),
        }

    def wren(self, *args: str) -> tuple[int, str, str]:
        done = run_wren(list(args), cwd=self.tmp, env=self.env)
        return done.returncode, done.stdout, done.stderr

    def json(self, *args: str) -> object:
        return wren_json(list(args), self.tmp, self.env)

    def keep(self) -> None:
        code, _out, err = self.wren("keep")
        assert code == 0, err

    def session(self, name: str, stem: str) -> Path:
        """A recording copied as Claude Code names it, its workspace (a folder of the recording machine) made this
        test's own, so that a fork of it resumes."""
        path = copy_session("claude", name, self.projects, nested=True, stem=stem)
        workspace = self.tmp / "ws"
        workspace.mkdir(exist_ok=True)
        at = path.stat().st_mtime_ns
        path.write_bytes(
            re.sub(rb"/var/tmp/wren-claude-code-[a-z-]+-[a-z0-9_]+/ws", str(workspace).encode(), path.read_bytes())
        )
        os.utime(path, ns=(at, at))
        return path

    def agent_folder(self) -> dict[str, tuple[bytes, int]]:
        """Every file of Claude Code's folder: its bytes and modification time."""
        return {
            str(path.relative_to(self.config)): (path.read_bytes(), path.stat().st_mtime_ns)
            for path in sorted(self.config.rglob("*"))
            if path.is_file()
        }

    def ls(self, agent: str = "claude") -> list[dict[str, object]]:
        rows = self.json("ls", "--agent", agent)
        assert isinstance(rows, list)
        return rows

    def hits(self, word: str, *more: str) -> list[dict[str, object]]:
        agent = () if "--agent" in more else ("--agent", "claude")
        code, out, err = self.wren("search", word, *agent, "--json", *more)
        assert code == 0, err
        return [row for row in map(json.loads, out.splitlines()) if row["type"] == "hit"]


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def _places(hits: list[dict[str, object]]) -> list[tuple[object, object, object]]:
    return [(hit["line"], hit["role"], hit["snippet"]) for hit in hits]


def test_a_session_kept_then_deleted_by_its_agent_is_found_by_every_command_and_marked(machine: Machine) -> None:
    original = machine.session("simple", GONE)
    recorded = original.read_bytes()
    code, logged, _ = machine.wren("log", str(original))
    assert code == 0
    points = machine.json("fork", str(original))
    hits = machine.hits("hello")
    atif = machine.tmp / "before.atif.json"
    assert machine.wren("export", str(original), "--format", "atif", "-o", str(atif))[0] == 0
    machine.keep()
    never = machine.session("tool-error", NEVER)  # made after `wren keep` ran: never kept
    folder = machine.agent_folder()
    original.unlink()
    never.unlink()

    # wren ls --agent: the kept copy, marked; the session never kept is gone, with no mark.
    (row,) = machine.ls()
    assert row["id"] == GONE and row["state"] == "done"
    assert str(row["kept"]).startswith("kept; deleted by its agent ")
    copy = Path(str(row["path"]))
    assert machine.kept in copy.parents and copy.read_bytes() == recorded
    code, table, _ = machine.wren("ls", "--agent", "all")
    assert code == 0 and GONE in table and f"{row['kept']}: {copy}" in table
    assert NEVER not in table

    # wren log, export, fork by the path the agent had: the kept copy read, the mark said.
    code, again, err = machine.wren("log", str(original))
    assert (code, again) == (0, logged)
    assert f"{original}: kept; deleted by its agent " in err
    exported = machine.tmp / "after.atif.json"
    code, _out, err = machine.wren("export", str(original), "--format", "atif", "-o", str(exported))
    assert code == 0 and "kept; deleted by its agent" in err
    assert json.loads(exported.read_text())["steps"] == json.loads(atif.read_text())["steps"]
    # Another agent's session goes out as ATIF only, kept or not: the other formats refuse it as they refuse a live one.
    for fmt in ("md", "html", "json"):
        code, _out, err = machine.wren("export", str(original), "--format", fmt)
        assert code == 2 and "--format atif" in err and "kept; deleted by its agent" in err
    assert machine.json("fork", str(original)) == points
    made = machine.json("fork", str(original), "28", "--dir", str(machine.journals))
    assert isinstance(made, dict)
    code, _out, err = machine.wren("resume", str(made["id"]), "and then?", "--model", "scripted")
    assert code == 0, err
    # The copy forks and resumes as the agent's file did, and is left as it was.
    _start, said, _ = fork_and_resume(copy, 28, machine.journals, machine.tmp)
    assert said[0] == ("user", "List the files in this folder and tell me what they are.")

    # wren search, through the index and without it: the same hits, each marked.
    for more in ((), ("--no-index",), ()):  # the index made, then read again
        found = machine.hits("hello", *more)
        assert _places(found) == _places(hits)
        assert {str(hit["path"]) for hit in found} == {str(copy)}
        assert all(str(hit["kept"]).startswith("kept; deleted by its agent ") for hit in found)
    code, text, _ = machine.wren("search", "hello", "--agent", "claude")
    assert code == 0 and f"{GONE}  claude" in text and "(kept; deleted by its agent " in text
    # wren search -l: the copy listed, its JSON row marked, through the index (its first candidate) and without it.
    for more in ((), ("--no-index",)):
        code, out, err = machine.wren("search", "hello", "--agent", "claude", "-l", "--json", *more)
        (row,) = map(json.loads, out.splitlines())
        assert code == 0 and (row["type"], row["agent"], row["session"]) == ("session", "claude", GONE), err
        assert row["path"] == str(copy) and str(row["kept"]).startswith("kept; deleted by its agent ")
        assert machine.wren("search", "hello", "--agent", "claude", "-l", *more)[:2] == (0, f"{copy}\n")

    # The session never kept is gone, with nothing said of a kept copy.
    code, _out, err = machine.wren("log", str(never))
    assert code != 0 and "no such journal file" in err and "kept;" not in err
    # Nothing was written in the agent's folder: every file but the two deleted is as it was, byte and time.
    left = {name: was for name, was in folder.items() if GONE not in name and NEVER not in name}
    assert machine.agent_folder() == left


def test_a_session_still_in_its_agents_folder_is_read_there_with_no_mark(machine: Machine) -> None:
    original = machine.session("simple", GONE)
    machine.keep()
    with original.open("ab") as grow:  # the agent writes on after `wren keep` copied it
        grow.write(lines_of("claude", "multi-turn")[-1])
    (row,) = machine.ls()
    assert (row["path"], row["kept"]) == (str(original), None)
    assert row["lines"] == len(lines_of("claude", "simple")) + 1  # the agent's file, grown: not the kept copy
    code, _out, err = machine.wren("log", str(original))
    assert code == 0 and "kept;" not in err


def test_a_session_its_agent_truncated_reads_the_longer_kept_copy(machine: Machine) -> None:
    original = machine.session("multi-turn", GONE)
    whole = original.read_bytes()
    code, logged, _ = machine.wren("log", str(original))
    assert code == 0
    machine.keep()
    original.write_bytes(b"".join(lines_of("claude", "multi-turn")[:3]))  # the agent cut it short
    machine.keep()
    assert original.read_bytes() == b"".join(lines_of("claude", "multi-turn")[:3])  # `wren keep` left it so

    (row,) = machine.ls()
    assert row["id"] == GONE
    assert row["lines"] == whole.count(b"\n")
    assert str(row["kept"]).startswith("kept; truncated by its agent on ")
    assert str(row["kept"]).endswith("; the kept copy is longer")
    assert Path(str(row["path"])).read_bytes() == whole
    code, again, err = machine.wren("log", str(original))
    assert (code, again) == (0, logged)
    assert "truncated by its agent" in err
    found = machine.hits("hello")
    assert found and all(str(hit["kept"]).startswith("kept; truncated") for hit in found)


def test_a_session_its_agent_rewrote_reads_the_newest_and_says_so(machine: Machine) -> None:
    original = machine.session("simple", GONE)
    machine.keep()
    newer = b"".join(lines_of("claude", "multi-turn"))
    original.write_bytes(newer)  # the agent rewrote it: another session's lines in the same file
    machine.keep()
    (row,) = machine.ls()
    assert (row["path"], row["id"]) == (str(original), GONE)  # the agent's own file, the newest, is read
    assert str(row["kept"]).startswith("kept; rewritten by its agent on ")
    code, logged, err = machine.wren("log", str(original))
    assert code == 0 and "How many lines does hello.py have?" in logged and "rewritten by its agent" in err

    original.unlink()  # then deleted: the newest kept copy is read
    (row,) = machine.ls()
    assert str(row["kept"]).startswith("kept; deleted by its agent ")
    assert Path(str(row["path"])).read_bytes() == newer
    code, again, _ = machine.wren("log", str(original))
    assert (code, again) == (0, logged)


def test_a_session_deleted_before_wren_keep_ran_again_says_deleted_after_it_was_kept(machine: Machine) -> None:
    original = machine.session("simple", GONE)
    machine.keep()
    original.unlink()
    (row,) = machine.ls()
    assert str(row["kept"]).startswith("kept; deleted by its agent after ")
    machine.keep()  # now `wren keep` saw it gone: the sentence says when
    (row,) = machine.ls()
    assert str(row["kept"]).startswith("kept; deleted by its agent on ")
    assert os.listdir(original.parent) == []


def test_a_database_of_sessions_kept_then_deleted_by_its_agent_lists_and_logs_its_sessions_from_the_copy(
    machine: Machine,
) -> None:
    data = machine.tmp / "data"
    machine.env["XDG_DATA_HOME"] = str(data)
    db = data / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    shutil.copyfile(fixture("opencode", "multi-turn"), db)
    before = machine.json("ls", "--agent", "opencode")
    assert isinstance(before, list) and len(before) == 1
    member = Path(str(before[0]["path"]))
    code, logged, _ = machine.wren("log", str(member))
    assert code == 0
    machine.keep()
    db.unlink()

    rows = machine.json("ls", "--agent", "opencode")
    assert isinstance(rows, list)
    (row,) = rows
    assert row["id"] == before[0]["id"] and str(row["kept"]).startswith("kept; deleted by its agent ")
    assert machine.kept in Path(str(row["path"])).parents
    code, again, err = machine.wren("log", str(member))  # DB#ID, as the agent had it
    assert (code, again) == (0, logged) and "kept; deleted by its agent" in err
    assert not db.exists() and os.listdir(db.parent) == []


def test_a_document_its_agent_rewrites_as_it_goes_is_not_marked_until_its_agent_deletes_it(machine: Machine) -> None:
    sessions = machine.tmp / "continue" / "sessions"
    machine.env["CONTINUE_GLOBAL_DIR"] = str(sessions.parent)
    sessions.mkdir(parents=True)
    document = sessions / "cccc3333-0000-4000-8000-000000000003.json"
    document.write_bytes(fixture("continue", "simple").read_bytes())
    machine.keep()
    newer = fixture("continue", "multi-turn").read_bytes()
    document.write_bytes(newer)  # Continue writes its whole document again as a session goes on
    machine.keep()
    (row,) = machine.ls("continue")
    assert (row["path"], row["kept"]) == (str(document), None)
    document.unlink()
    (row,) = machine.ls("continue")
    assert str(row["kept"]).startswith("kept; deleted by its agent ")
    assert Path(str(row["path"])).read_bytes() == newer  # the newest kept version


def test_a_session_its_agent_deleted_from_a_database_it_still_has_is_read_from_the_kept_version(
    machine: Machine,
) -> None:
    data = machine.tmp / "data"
    machine.env["XDG_DATA_HOME"] = str(data)
    db = data / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    shutil.copyfile(fixture("opencode", "multi-turn"), db)
    (before,) = machine.ls("opencode")
    member = Path(str(before["path"]))
    code, logged, _ = machine.wren("log", str(member))
    assert code == 0
    hits = machine.hits("hello", "--agent", "opencode")
    machine.keep()
    with closing(sqlite3.connect(db)) as conn:  # OpenCode deletes the session; its database stays
        for table in ("part", "message", "event", "session"):  # its only session, and everything of it
            conn.execute(f"delete from {table}")
        conn.commit()
    assert machine.ls("opencode") != []  # before the next keep: the latest kept version still holds it
    machine.keep()

    (row,) = machine.ls("opencode")
    assert row["id"] == before["id"] and str(row["kept"]).startswith("kept; deleted by its agent on ")
    assert machine.kept in Path(str(row["path"])).parents
    code, again, err = machine.wren("log", str(member))  # DB#ID, as the agent had it
    assert (code, again) == (0, logged) and "kept; deleted by its agent on " in err
    found = machine.hits("hello", "--agent", "opencode")
    assert _places(found) == _places(hits) and all(str(hit["kept"]).startswith("kept; deleted") for hit in found)


def test_a_kept_session_its_agent_deleted_reads_the_same_on_the_simulated_windows(machine: Machine) -> None:
    from tests.test_simulated_windows import on_linux, on_windows

    original = machine.session("simple", GONE)
    machine.keep()
    original.unlink()
    for args in (
        ["ls", "--agent", "claude", "--json"],
        ["log", str(original)],
        ["search", "hello", "--agent", "claude", "--json", "--no-index"],
    ):
        linux = on_linux(args, machine.tmp, **machine.env)
        windows = on_windows(args, machine.tmp, **machine.env)
        assert linux.returncode == 0 and "kept; deleted by its agent" in linux.stdout + linux.stderr
        assert (windows.returncode, windows.stdout, windows.stderr) == (0, linux.stdout, linux.stderr)


def test_an_aider_history_kept_from_its_project_and_still_there_is_listed_once_with_no_mark(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    history = project / ".aider.chat.history.md"
    shutil.copy(fixture("aider", "simple"), history)
    env = {"HOME": str(tmp_path), "WREN_KEEP_DIR": str(tmp_path / "kept")}
    kept = run_wren(["keep", "--agent", "aider", "--from", str(project)], cwd=tmp_path, env=env)
    assert kept.returncode == 0, kept.stderr
    rows = wren_json(["ls", "--agent", "aider"], project, env)
    assert isinstance(rows, list)
    assert [(r["path"], r.get("kept")) for r in rows] == [(".aider.chat.history.md", None)]
    history.unlink()  # now its agent's history is gone: the kept copy is read, and says so
    rows = wren_json(["ls", "--agent", "aider"], project, env)
    assert isinstance(rows, list) and len(rows) == 1 and rows[0]["kept"].startswith("kept; deleted by its agent")


def test_a_kept_session_is_searched_when_its_agents_whole_folder_is_gone(machine: Machine) -> None:
    machine.session("simple", GONE)
    hits = machine.hits("hello")
    assert hits
    machine.keep()
    shutil.rmtree(machine.config)  # the agent's folder itself is gone: only Wren's kept copy is left
    for agent in ("claude", "all"):
        again = machine.hits("hello", "--agent", agent)
        assert _places(again) == _places(hits)
        assert all(str(hit["kept"]).startswith("kept; deleted by its agent ") for hit in again)
