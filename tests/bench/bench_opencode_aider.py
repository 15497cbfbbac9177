"""OpenCode's database and aider's chat history: the browser over a database of 1,000 sessions, a message inserted
into a live OpenCode session until it is on screen, and the first paint of a 50 MB session of each, against the same
measures on Wren's own journals in the same run.

- The browser over one OpenCode database of 1,000 sessions (each the real `simple` recording's rows with fresh
  ids, committed in WAL mode and left in the WAL): from the app's start until every row is in the table.
- Insert to screen: another process commits one OpenCode row (an assistant's finished text part) at a time into a
  live session's database in WAL mode, each timed from its commit to the frame that shows it, against Wren's writer
  appending to a journal at the same rate.
- First paint (process start to the first frame with the conversation drawn) of a 50 MB OpenCode session (the
  multi-turn recording's second turn repeated with fresh ids) and of a 50 MB aider history (its runs repeated),
  against a 10-event Wren journal.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from tests.bench import BenchRow, absolute, compare
from tests.bench.bench_agents import _LISTED
from tests.bench.bench_viewer import _first_paint
from tests.bench.gen import generate
from tests.bench.latency import percentiles, screen_latency
from tests.conftest import FIXTURES

SESSIONS = 1000
BIG_MB = 50
PAINT_RUNS = 3
INSERTS = 100
INSERT_RATE = 20  # rows a second
OPENCODE = FIXTURES / "agents" / "opencode"
AIDER = FIXTURES / "agents" / "aider"
_SCHEMA = "select sql from sqlite_master where sql is not null order by type desc"  # tables, then indexes
_TABLES = ("project", "session", "message", "part", "event", "event_sequence")


def _rows(db: Path, table: str) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(f"select * from {table}").fetchall()


def _fresh(value: object, old: str, new: str) -> object:
    return value.replace(old, new) if isinstance(value, str) else value


def many_sessions(db: Path, count: int) -> Path:
    """A database of `count` copies of the `simple` recording, each with its own ids, its rows left in the WAL."""
    recorded = OPENCODE / "simple.opencode.db"
    session = _rows(recorded, "session")[0]
    old = str(session[0])
    with closing(sqlite3.connect(recorded)) as src:
        schema = [row[0] for row in src.execute(_SCHEMA)]
    rows = {table: _rows(recorded, table) for table in _TABLES}
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute("pragma journal_mode=wal")
        conn.execute("pragma wal_autocheckpoint=0")  # as a live OpenCode leaves it: rows still in the WAL
        for sql in schema:
            conn.execute(sql)
        conn.execute("begin")
        marks = ",".join("?" * len(rows["project"][0]))
        conn.executemany(f"insert into project values ({marks})", rows["project"])
        for n in range(count):
            new = f"ses_bench{n:05d}{old[14:]}"[: len(old)]
            for table in _TABLES[1:]:
                marks = ",".join("?" * len(rows[table][0]))
                fresh = [tuple(_fresh(v, old, new) for v in row) for row in rows[table]]
                if table in ("message", "part", "event"):
                    fresh = [(f"{row[0]}-{n}", *row[1:]) for row in fresh]
                if table == "session":
                    fresh = [(*row[:25], int(str(row[25])) + n * 1000, *row[26:]) for row in fresh]
                conn.executemany(f"insert into {table} values ({marks})", fresh)
        conn.execute("commit")
    return db


def big_session(db: Path, size: int) -> Path:
    """One OpenCode session of about `size` bytes of rows: the multi-turn recording's second turn, repeated."""
    recorded = OPENCODE / "multi-turn.opencode.db"
    with closing(sqlite3.connect(recorded)) as src:
        schema = [row[0] for row in src.execute(_SCHEMA)]
    rows = {table: _rows(recorded, table) for table in _TABLES}
    events = sorted(rows["event"], key=lambda row: int(str(row[2])))
    turn = [row for row in events if int(str(row[2])) >= 24]
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute("pragma journal_mode=wal")
        for sql in schema:
            conn.execute(sql)
        conn.execute("begin")
        for table in ("project", "session", "message", "part", "event_sequence"):
            marks = ",".join("?" * len(rows[table][0]))
            conn.executemany(f"insert into {table} values ({marks})", rows[table])
        conn.executemany("insert into event values (?,?,?,?,?)", events)
        seq, written, n = len(events), sum(len(str(row[4])) for row in events), 0
        while written < size:
            n += 1
            batch = []
            for row in turn:
                # Fresh ids for every part, call and message of the repeated turn.
                data = str(row[4])
                for prefix in ("prt_", "call_", "msg_"):
                    data = data.replace(prefix, f"{prefix}{n}x")
                batch.append((f"{row[0]}-{n}", row[1], seq, row[3], data))
                seq += 1
                written += len(data)
            conn.executemany("insert into event values (?,?,?,?,?)", batch)
        conn.execute("commit")
        conn.execute("pragma wal_checkpoint(truncate)")
    return db


def big_history(path: Path, size: int) -> Path:
    """An aider history of about `size` bytes: the multi-turn recording's runs, repeated."""
    runs = (AIDER / "multi-turn.chat.history.md").read_bytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        written = 0
        while written < size:
            written += out.write(runs)
    return path


# Commits one finished assistant text part at a time into the session, as OpenCode does when a reply ends.
_INSERTER = r"""
import json, sqlite3, sys, time
path, count, gap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
with sqlite3.connect(path, isolation_level=None) as db:
    session, seq = db.execute("select aggregate_id, max(seq) from event").fetchone()
    message = db.execute("select id from message where json_extract(data, '$.role') = 'assistant'").fetchone()[0]
    sys.stdin.readline()  # wait until the reader is ready
    due = time.monotonic()
    for n in range(count):
        seq += 1
        now = int(time.time() * 1000)
        part = {"id": f"prt_bench{n:06d}", "sessionID": session, "messageID": message, "type": "text",
                "text": f"appended reply {n}", "time": {"start": now, "end": now}}
        data = json.dumps({"sessionID": session, "part": part, "time": now})
        db.execute("begin immediate")
        row = (f"evt_bench{n}", session, seq, "message.part.updated.1", data)
        db.execute("insert into event values (?, ?, ?, ?, ?)", row)
        db.execute("commit")
        print(seq + 1, time.monotonic(), flush=True)  # its line: the session's rows are numbered from seq 0
        due += gap
        time.sleep(max(due - time.monotonic(), 0))
"""


def _inserter(path: Path, count: int, rate: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _INSERTER, str(path), str(count), str(1 / rate)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _listed(root: Path, count: int) -> float:
    """Seconds from the browser app's start until every session of the database is in its table."""
    out = subprocess.run(
        [sys.executable, "-c", _LISTED, str(count), "opencode", str(root)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    times = dict(line.split(" ", 1) for line in out.splitlines())
    return float(times["listed"]) - float(times["app"])


def _ls(root: Path) -> float:
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "wren_tui", "ls", "--agent", "opencode", "--dir", str(root), "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    took = time.monotonic() - start
    assert len(json.loads(out)) == SESSIONS
    return took


def run() -> list[BenchRow]:
    with tempfile.TemporaryDirectory(prefix="wren-bench-opencode-aider-") as tmp:
        folder = Path(tmp)
        many = folder / "many"
        many.mkdir()
        many_sessions(many / "opencode.db", SESSIONS)
        _listed(many, SESSIONS)  # warm
        listed = min(_listed(many, SESSIONS) for _ in range(2))
        ls = _ls(many)

        small = generate(folder / "s-20250101-000000-sml1.jsonl", 10)
        (folder / "big").mkdir()
        big_db = big_session(folder / "big" / "opencode.db", BIG_MB << 20)
        history = big_history(folder / "aider" / ".aider.chat.history.md", BIG_MB << 20)
        os.utime(history, (time.time() - 3600, time.time() - 3600))
        _first_paint(small)
        small_runs, db_runs, md_runs = [], [], []
        for _ in range(PAINT_RUNS):
            small_runs.append(_first_paint(small))
            db_runs.append(_first_paint(big_db))
            md_runs.append(_first_paint(history))
        small_paint, db_paint, md_paint = min(small_runs)[0], min(db_runs)[0], min(md_runs)[0]
        db_mb = big_db.stat().st_size / 1e6

        live = folder / "live"
        live.mkdir()
        followed = live / "opencode.db"
        many_sessions(followed, 1)
        ours = asyncio.run(screen_latency(followed, INSERTS, INSERT_RATE, (120, 40), _inserter))
        journal = generate(live / "s-20250101-000000-liv1.jsonl", 20)
        wren = asyncio.run(screen_latency(journal, INSERTS, INSERT_RATE, (120, 40)))
    ours_p50, ours_p95 = percentiles(ours)
    wren_p50, wren_p95 = percentiles(wren)
    return [
        absolute(
            f"opencode: browser lists a database of {SESSIONS} sessions, from the app's start", listed, at_most=1.0
        ),
        absolute(f"opencode: wren ls --agent opencode over {SESSIONS} sessions", ls),
        compare(
            f"opencode: insert-to-screen p95, one row committed in WAL mode vs a Wren journal ({INSERTS} each)",
            ours_p95,
            wren_p95,
            at_most=2.0,
        ),
        compare("opencode: insert-to-screen p50 vs a Wren journal", ours_p50, wren_p50),
        compare(
            f"opencode: first paint, a {db_mb:.0f} MB session vs a 10-event Wren journal",
            db_paint,
            small_paint,
            at_most=1.2,
        ),
        compare(
            f"aider: first paint, a {BIG_MB} MB chat history vs a 10-event Wren journal",
            md_paint,
            small_paint,
            at_most=1.2,
        ),
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
    os._exit(0)
