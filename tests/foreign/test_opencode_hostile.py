"""OpenCode databases made to hurt the reader: a generated column, a value too long, a sparse or damaged file, a copy
left by a process killed with -9. Each is refused in one sentence (or left behind by nobody), in bounded memory,
with no more than one copy of it ever made."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.conftest import REPO, run_wren
from tests.foreign.sessions import peak_rss_kb_of_wren
from tests.foreign.test_opencode import SIMPLE_ID, database, edit, fingerprint
from wren_tui.foreign import snapshot
from wren_tui.foreign.opencode import export
from wren_tui.journal.errors import JournalError

BOMB = "printf('%.*c', 200000000, 'x')"  # 200 MB computed on each read of each row


def _generated(folder: Path) -> Path:
    """OpenCode's database whose event.data is a generated column: SQL of the file's own, run on every read."""
    db = database(folder)
    edit(
        db,
        "alter table event rename to event_plain",
        "create table event (id text primary key, aggregate_id text not null, seq integer not null, "
        f"type text not null, data text generated always as ({BOMB}) virtual)",
        "insert into event (id, aggregate_id, seq, type) select id, aggregate_id, seq, type from event_plain",
        "drop table event_plain",
    )
    return db


def _tmp_env(tmp_path: Path) -> dict[str, str]:
    private = tmp_path / "private-tmp"
    private.mkdir(exist_ok=True)
    return {"TMPDIR": str(private)}


def _copies(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "private-tmp").glob("wren-sqlite-*"))


def test_a_database_whose_columns_are_generated_is_refused_in_one_sentence_in_bounded_memory(tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    db = _generated(folder)
    before = fingerprint(db)
    env = _tmp_env(tmp_path)
    listed = run_wren(["ls", "--agent", "opencode", "--dir", str(folder), "--json"], cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["state"] == "unreadable"
    assert "its column event.data is computed by the database's own SQL (a generated column)" in row["reason"]
    peak_kb, logged = peak_rss_kb_of_wren(["log", str(db)], tmp_path, env)
    assert logged.returncode != 0 and "Traceback" not in logged.stderr and "MemoryError" not in logged.stderr
    assert "a generated column" in logged.stderr and logged.stderr.count("\n") == 1, logged.stderr
    # Nothing near a row's 200 MB was ever made (the columns are checked before a row is read).
    assert peak_kb < 150_000, f"{peak_kb} KB"
    assert fingerprint(db) == before and _copies(tmp_path) == []


def test_a_value_longer_than_the_cap_is_refused_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = database(tmp_path / "opencode")
    edit(db, "update event set data = '{\"pad\": \"' || printf('%.*c', 3000000, 'x') || '\"}' where seq = 1")
    monkeypatch.setattr(snapshot, "VALUE_CAP", 1 << 20)
    with pytest.raises(JournalError, match=r"a value in it is longer than 1 MiB, more than Wren reads of a value"):
        export(Path(f"{db}#{SIMPLE_ID}"))


def _sparse(path: Path, length: int, *, damaged: bool) -> Path:
    """A file of `length` bytes with only its first pages on disk: a SQLite database's, or its first page zeroed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    first = (REPO / "tests" / "fixtures" / "agents" / "opencode" / "simple.opencode.db").read_bytes()[:40960]
    if damaged:
        first = first[:100] + bytes(4096 - 100) + first[4096:]
    with open(path, "wb") as out:
        out.write(first)
        out.truncate(length)
    return path


@pytest.mark.parametrize("damaged", [True, False])
def test_a_sparse_database_is_refused_before_any_copy_is_made(damaged: bool, tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    db = _sparse(folder / "opencode.db", 3 << 30, damaged=damaged)
    if os.stat(db).st_blocks * 512 * 4 >= db.stat().st_size:
        pytest.skip("this filesystem does not keep sparse files")
    env = _tmp_env(tmp_path)
    listed = run_wren(["ls", "--agent", "opencode", "--dir", str(folder), "--json"], cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["state"] == "unreadable" and "a sparse file (3,221,225,472 bytes long" in row["reason"]
    logged = run_wren(["log", str(db)], cwd=tmp_path, env=env)
    assert logged.returncode != 0 and "Traceback" not in logged.stderr
    assert _copies(tmp_path) == []


def test_a_damaged_database_is_copied_once_then_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = database(tmp_path / "opencode")
    data = bytearray(db.read_bytes())
    data[4096:8192] = b"\xff" * 4096  # a page of the schema's b-tree, or of a table's: damaged as it stands
    data[100:112] = b"\x0d\x00\x00\x00\x05\x0f\x00\x00\x00\x00\x00\x00"  # page 1 still looks like a leaf
    db.write_bytes(bytes(data))
    copied: list[Path] = []
    real = snapshot._copy

    def counted(source: Path, target: Path) -> None:
        copied.append(source)
        real(source, target)

    monkeypatch.setattr(snapshot, "_copy", counted)
    with pytest.raises(JournalError) as refused, snapshot.snapshot(db) as snap:
        snap.query(lambda conn: conn.execute("select count(*) from event").fetchall())
    assert copied == [db]  # one copy: the file did not change, so another would be damaged the same way
    assert str(refused.value).startswith(f"{db}: ")


def test_a_file_with_a_damaged_header_or_schema_is_refused_without_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copied: list[Path] = []
    monkeypatch.setattr(snapshot, "_copy", lambda source, _target: copied.append(source))
    header = tmp_path / "header.db"
    header.write_bytes(snapshot.SQLITE_HEADER + b"\x00\x03" + bytes(4096))  # a page size of 3
    schema = database(tmp_path / "schema")
    data = bytearray(schema.read_bytes())
    data[100] = 0x42  # page 1 is no b-tree page
    schema.write_bytes(bytes(data))
    with pytest.raises(JournalError, match="its SQLite header is damaged"):
        snapshot.tables_in_file(header)
    with pytest.raises(JournalError, match="its schema pages are damaged"):
        snapshot.tables_in_file(schema)
    with pytest.raises(JournalError, match="its SQLite header is damaged"), snapshot.snapshot(header) as snap:
        snap.query(lambda conn: None)
    assert copied == []


def test_another_programs_database_in_the_folder_is_recognised_by_its_tables_without_being_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "cache.db"
    with closing(sqlite3.connect(other)) as conn:
        conn.execute("create table blobs (k text, v blob)")
        conn.commit()
    copied: list[Path] = []
    monkeypatch.setattr(snapshot, "_copy", lambda source, _target: copied.append(source))
    from wren_tui.foreign.opencode import claims_file, export_all

    assert snapshot.tables_in_file(other) == {"blobs"}
    assert not claims_file(other, other.read_bytes()[:100]) and export_all(other) == {}
    assert copied == []


_HOLD = """
import sys
from pathlib import Path
from wren_tui.foreign.snapshot import DatabaseCopy
snap = DatabaseCopy(Path(sys.argv[1]))
snap.query(lambda conn: conn.execute("select count(*) from event").fetchone())
print(snap._dir, flush=True)
sys.stdin.read()
"""


def _holder(db: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], Path]:
    """A process that has copied the database and holds its copy (as one copying is, when killed)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(db)],
        env={**os.environ, **env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    folder = Path(holder.stdout.readline().strip())
    assert (folder / "copy.db").is_file() and folder.name.startswith(f"wren-sqlite-{holder.pid}-")
    return holder, folder


def test_a_copy_left_by_a_process_killed_with_minus_9_is_removed_by_the_next_run(tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    db = database(folder)
    env = _tmp_env(tmp_path)
    killed, left = _holder(db, env)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert left.exists()  # kill -9: no exit handler ran
    alive, held = _holder(db, env)
    try:
        listed = run_wren(["ls", "--agent", "opencode", "--dir", str(folder), "--json"], cwd=tmp_path, env=env)
        assert listed.returncode == 0 and [r["id"] for r in json.loads(listed.stdout)] == [SIMPLE_ID]
        assert not left.exists()  # its owner is dead: swept
        assert held.exists()  # its owner still runs: left alone
    finally:
        assert alive.stdin is not None
        alive.stdin.close()
        alive.wait()
    assert _copies(tmp_path) == []  # every copy gone: the living one removed its own at exit


def test_a_row_whose_session_id_is_not_utf8_is_left_out_with_a_sentence_and_the_session_still_listed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "opencode"
    db = database(folder)
    edit(
        db,
        "insert into event (id, aggregate_id, seq, type, data)"
        " values ('bad', cast(x'ff61' as text), 0, 'session.updated.1', '{}')",
    )
    listed = run_wren(["ls", "--agent", "opencode", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["id"] == SIMPLE_ID and row["state"] == "done" and row["lines"] == 30
    (said,) = listed.stderr.strip().splitlines()
    assert said == (
        f"wren: {db}: event rows whose session id is not UTF-8 text belong to no session (1 of them; each session "
        "is listed without them, as `wren log` reads it); they are not listed"
    )
    logged = run_wren(["log", f"{db}#{SIMPLE_ID}", "--json"], cwd=tmp_path)
    assert logged.returncode == 0 and len(json.loads(logged.stdout)["events"]) > 0


def test_a_linked_opencode_database_is_refused_with_a_sentence_by_ls_and_log_never_silently_unlisted(
    tmp_path: Path,
) -> None:
    real = database(tmp_path / "elsewhere")
    folder = tmp_path / "opencode"
    folder.mkdir()
    link = folder / "opencode.db"
    link.symlink_to(real)
    before = fingerprint(real)
    env = _tmp_env(tmp_path)
    listed = run_wren(["ls", "--agent", "opencode", "--dir", str(folder)], cwd=tmp_path, env=env)
    assert listed.returncode == 0
    assert listed.stderr.strip() == (
        f"wren: {link}: is a link to a session, and Wren follows no link (name the file it points to); "
        "they are not listed"
    )
    for target in (str(link), f"{link}#{SIMPLE_ID}"):
        logged = run_wren(["log", target], cwd=tmp_path, env=env)
        assert logged.returncode != 0 and logged.stdout == ""
        assert logged.stderr.strip() == (
            f"wren: {link}: is a symbolic link; sessions are opened only directly (name the file it points to)"
        )
    assert fingerprint(real) == before and _copies(tmp_path) == []


@pytest.mark.parametrize("depth", [1_000, 50_000])
def test_an_opencode_row_nested_thousands_deep_stops_reading_in_one_sentence(depth: int, tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    db = database(folder)
    deep = '{"part": {"type": "text", "x": ' + "[" * depth + "]" * depth + "}}"
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("update event set data = ? where seq = (select max(seq) from event)", (deep,))
        conn.commit()
    listed = run_wren(["ls", "--agent", "opencode", "--dir", str(folder), "--json"], cwd=tmp_path)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert row["state"] == "corrupt" and row["lines"] == 29
    logged = run_wren(["log", str(db)], cwd=tmp_path)
    assert logged.returncode == 4 and "Traceback" not in logged.stderr
    assert "line 30: its JSON is nested too deeply to read" in logged.stderr


def test_a_row_written_over_several_lines_is_one_exported_line_read_as_it_was(tmp_path: Path) -> None:
    db = database(tmp_path / "opencode")
    before = run_wren(["log", str(db), "--json"], cwd=tmp_path)
    # The same rows pretty-printed (newlines between tokens; a newline inside a string is always escaped).
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("select id, data from event").fetchall()
        for row_id, data in rows:
            conn.execute("update event set data = ? where id = ?", (json.dumps(json.loads(data), indent=2), row_id))
        conn.commit()
    after = run_wren(["log", str(db), "--json"], cwd=tmp_path)
    assert after.returncode == before.returncode == 0, after.stderr
    assert json.loads(after.stdout)["events"] == json.loads(before.stdout)["events"]
