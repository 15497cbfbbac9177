"""`wren search -l` asks the index for its candidates in a thread while it lists the sessions (`IndexRead.ahead`).

What the thread must never do: answer differently from a read that asks in turn, lose an error it met, or outlive
the search (a Ctrl+C while the sessions are listed, an index closed mid-question). The answers are compared with
the scan's over random corpora in tests/search/test_files_first.py (`first_hits` asks both ways); here, the thread.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import run_wren
from tests.search.test_files_first import PHRASE, claude_folder, claude_line
from wren_tui.search import index
from wren_tui.search.index import IndexRead, connect_read, index_path
from wren_tui.search.query import Query

THREAD = "wren search: the index's candidates"


def _asking() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == THREAD]


def _made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sessions: int = 12) -> tuple[Path, list[str], str]:
    """A folder of Claude Code sessions holding the phrase and its index made (by a search, in a process of its
    own); this process's environment set as that one's. The arguments of -l over it, and what it printed."""
    folder = claude_folder(
        tmp_path, {f"s{n:02d}": claude_line(f"{n}: how many lines does it have", n) for n in range(sessions)}
    )
    args = ["search", PHRASE, "-l", "--dir", str(folder)]
    for name in [name for name in os.environ if name.startswith("WREN_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    made = run_wren(args, cwd=tmp_path, env={"XDG_STATE_HOME": str(tmp_path / "state")})
    assert made.returncode == 0 and made.stderr == "" and len(made.stdout.splitlines()) == sessions
    return folder, args, made.stdout


def _endless(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The candidates' question made one that never ends by itself (only SQLite's interrupt ends it; the deadline
    put out of reach): set, the event says the thread is inside SQLite with it."""
    monkeypatch.setattr(index, "QUERY_SECONDS", 1e6)
    inside = threading.Event()

    def endless(self: IndexRead, matching: str, asked: str) -> Sequence[int]:
        self.db.create_function("inside", 0, lambda: inside.set() or 1)
        count = "WITH RECURSIVE c(x) AS (SELECT inside() UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        self.db.execute(count).fetchone()
        raise AssertionError("an endless question ended by itself")

    monkeypatch.setattr(IndexRead, "_ids", endless)
    return inside


def test_l_asks_its_candidates_in_a_thread_and_lists_what_it_listed_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A warm -l starts the thread (the index opened read-only, before the sessions are listed), prints the same
    paths, and leaves no thread behind."""
    from wren_tui.cli import main

    _folder, args, printed = _made(tmp_path, monkeypatch)
    started: list[str] = []
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    assert main(args) == 0
    assert capsys.readouterr().out == printed
    assert started == [THREAD] and not _asking()


def test_an_error_met_by_the_thread_is_not_lost_the_files_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The index failing in the thread (a disk error, a database gone bad under it) is what it is in turn: the
    index is closed and each session read from its file, the same paths listed."""
    from wren_tui.cli import main

    _folder, args, printed = _made(tmp_path, monkeypatch)
    asked: list[str] = []

    def failing(self: IndexRead, matching: str, asked_for: str) -> Sequence[int]:
        asked.append(threading.current_thread().name)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(IndexRead, "_ids", failing)
    assert main(args) == 0
    assert capsys.readouterr().out == printed
    assert asked == [THREAD] and not _asking()


def test_a_ctrl_c_while_the_sessions_are_listed_leaves_no_thread_and_the_index_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl+C (KeyboardInterrupt in the main thread) during the walk: the question is interrupted, its thread
    waited for, and the index closed before the interrupt goes on up (said as every command says it)."""
    from wren_tui.cli import main, searching
    from wren_tui.cli.exits import Exit

    _folder, args, _printed = _made(tmp_path, monkeypatch)
    inside = _endless(monkeypatch)
    opened: list[sqlite3.Connection] = []
    connect = index.sqlite3.connect

    def kept(*args: object, **kwargs: object) -> sqlite3.Connection:
        db = connect(*args, **kwargs)  # type: ignore[arg-type]
        opened.append(db)
        return db

    def interrupted(*args: object, **kwargs: object) -> None:
        assert inside.wait(60), "the thread was not asking while the sessions were listed"
        raise KeyboardInterrupt

    monkeypatch.setattr(index.sqlite3, "connect", kept)
    monkeypatch.setattr(searching, "sessions_of", interrupted)
    said: list[int] = []
    searching_thread = threading.Thread(target=lambda: said.append(main(args)), name="searching")
    searching_thread.start()
    searching_thread.join(60)
    assert not searching_thread.is_alive(), "the search waited for a question that does not end"
    assert said == [Exit.INTERRUPTED]
    assert capsys.readouterr().err == "wren: interrupted\n"
    assert not _asking() and opened
    with pytest.raises(sqlite3.ProgrammingError):
        opened[-1].execute("SELECT 1")  # closed


def test_an_index_closed_mid_question_interrupts_sqlite_rather_than_waiting_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`close` while the thread is inside SQLite (a question that would not end by itself): SQLite is interrupted
    (`Connection.interrupt`), the thread ends, the connection is closed."""
    folder, _args, _printed = _made(tmp_path, monkeypatch, sessions=2)
    inside = _endless(monkeypatch)
    db = connect_read(index_path(folder))
    assert db is not None
    read = IndexRead(db, Query.of(PHRASE))
    assert read.begin()
    read.ahead()
    assert inside.wait(60), "the thread never began its question"
    closing = threading.Thread(target=read.close, name="closing")
    closing.start()
    closing.join(60)
    assert not closing.is_alive(), "close waited for a question that does not end"
    assert not _asking()
    with pytest.raises(sqlite3.ProgrammingError):
        db.execute("SELECT 1")


def test_the_candidates_asked_ahead_are_those_asked_in_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same ids, the same first candidates and rows, whether asked ahead or when loading."""
    folder, _args, _printed = _made(tmp_path, monkeypatch, sessions=30)
    query = Query.of(PHRASE)
    loaded = []
    for ahead in (False, True):
        db = connect_read(index_path(folder))
        assert db is not None
        read = IndexRead(db, query)
        assert read.begin()
        if ahead:
            read.ahead()
        assert read.load(first=True)
        loaded.append((dict(read.candidates), dict(read._first_rows)))
        read.close()
    assert loaded[0] == loaded[1] and len(loaded[0][1]) == 30
    assert "threading" in sys.modules


class _Watched:
    """The index's connection as `IndexRead` uses it, recording each use of it by another thread while the thread
    asking ahead is still inside SQLite (there must be none but `interrupt`, made for that: a statement would wait
    for the thread, a close free the connection under it)."""

    def __init__(self, db: sqlite3.Connection, release: threading.Event) -> None:
        self._db = db
        self._release = release
        self.used_while_asking: list[str] = []

    def __getattr__(self, name: str) -> object:
        if name != "interrupt" and threading.current_thread().name != THREAD and _asking():
            self.used_while_asking.append(name)
            self._release.set()  # the question let go, not to wait for it (an interrupt ends it at its next step)
        return getattr(self._db, name)

    def close(self) -> None:
        self.__getattr__("close")
        self._db.close()


def _held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interrupts: int = 0
) -> tuple[IndexRead, _Watched, threading.Event]:
    """A read of a made index whose question, once inside SQLite, stays there (in a function SQLite called) until it
    is let go: by the read's waiting for its thread (after `interrupts` Ctrl+Cs, each raised by that wait), or by the
    connection's close. The read, its watched connection, and the event set once the thread is inside."""
    folder, _args, _printed = _made(tmp_path, monkeypatch, sessions=2)
    monkeypatch.setattr(index, "QUERY_SECONDS", 1e6)
    inside, release = threading.Event(), threading.Event()

    def held(self: IndexRead, matching: str, asked: str) -> Sequence[int]:
        def step() -> int:
            if not inside.is_set():
                inside.set()
                assert release.wait(60), "the question was never let go"
            return 1

        self.db.create_function("step", 0, step)
        count = "WITH RECURSIVE c(x) AS (SELECT step() UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        self.db.execute(count).fetchone()
        raise AssertionError("an endless question ended by itself")

    monkeypatch.setattr(IndexRead, "_ids", held)
    left = [interrupts]
    waited = index._waited

    def interrupted(done: threading.Event) -> None:
        if left[0] > 0:
            left[0] -= 1
            raise KeyboardInterrupt  # Ctrl+C, again and again, while the search waits for the thread
        release.set()
        waited(done)

    monkeypatch.setattr(index, "_waited", interrupted)
    db = connect_read(index_path(folder))
    assert db is not None
    watched = _Watched(db, release)
    read = IndexRead(watched, Query.of(PHRASE))  # type: ignore[arg-type]
    assert read.begin()
    return read, watched, inside


def test_a_second_ctrl_c_while_the_question_is_interrupted_still_leaves_the_index_to_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+C twice while -l waits for its candidates (the second while the question is being interrupted): the
    interrupt goes on up, and the close that follows still waits for the thread before the connection is closed."""
    read, watched, inside = _held(tmp_path, monkeypatch, interrupts=2)
    read.ahead()
    assert inside.wait(60), "the thread never began its question"
    with pytest.raises(KeyboardInterrupt):
        read.load(first=True)
    read.close()
    assert watched.used_while_asking == []
    assert not _asking()


def test_a_ctrl_c_while_the_thread_starts_still_leaves_the_index_to_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+C while the thread is being started (`Thread.start` waits for it to run, and the thread is asking
    already): the interrupt goes on up, and the close that follows waits for the thread first."""
    read, watched, inside = _held(tmp_path, monkeypatch)
    start = threading.Thread.start

    def interrupted(thread: threading.Thread) -> None:
        start(thread)
        if thread.name == THREAD:
            assert inside.wait(60), "the thread never began its question"
            raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", interrupted)
    with pytest.raises(KeyboardInterrupt):
        read.ahead()
    read.close()
    assert watched.used_while_asking == []
    assert not _asking()


def test_a_ctrl_c_before_the_thread_ran_leaves_a_close_that_waits_for_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+C before the thread was started at all: the close neither waits for a thread that never ran nor fails
    joining it, and the connection is closed."""
    read, watched, inside = _held(tmp_path, monkeypatch)

    def interrupted(thread: threading.Thread) -> None:
        raise KeyboardInterrupt  # before the thread is made to run

    monkeypatch.setattr(threading.Thread, "start", interrupted)
    with pytest.raises(KeyboardInterrupt):
        read.ahead()
    read.close()
    assert watched.used_while_asking == [] and not inside.is_set()


@pytest.mark.parametrize("asked_ahead", [False, True], ids=["in turn", "ahead"])
def test_the_question_asked_ahead_and_the_loads_share_the_indexs_seconds_as_one_read_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, asked_ahead: bool
) -> None:
    """QUERY_SECONDS bound all of SQLite's work for -l's candidates: a question that took nine tenths of them in the
    thread leaves `load` the last tenth, not the whole again; past it the index gives up and the files are read
    (`load` False), as a read asking in turn does. On a clock of the test's (SQLite's progress looked at each step)."""
    folder, _args, _printed = _made(tmp_path, monkeypatch, sessions=2)
    now = [1000.0]
    monkeypatch.setattr(index, "time", SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(index, "_STEPS", 1)
    ids, firsts = IndexRead._ids, IndexRead._firsts

    def slow(self: IndexRead, matching: str, asked: str) -> Sequence[int]:
        found = ids(self, matching, asked)
        now[0] += index.QUERY_SECONDS * 0.9
        return found

    def later(self: IndexRead, *args: object) -> None:
        now[0] += index.QUERY_SECONDS * 0.2
        firsts(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(IndexRead, "_ids", slow)
    monkeypatch.setattr(IndexRead, "_firsts", later)
    db = connect_read(index_path(folder))
    assert db is not None
    read = IndexRead(db, Query.of(PHRASE))
    assert read.begin()
    if asked_ahead:
        read.ahead()
    assert read.load(first=True) is False
    assert not _asking()


def test_a_thread_that_cannot_be_started_leaves_l_asking_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No thread to be had (a process or container at its limit of threads: `can't start new thread`): -l asks the
    index in turn, as it did before it had a thread, and lists the same paths, saying nothing."""
    from wren_tui.cli import main

    _folder, args, printed = _made(tmp_path, monkeypatch)
    start = threading.Thread.start

    def refused(thread: threading.Thread) -> None:
        if thread.name == THREAD:
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", refused)
    assert main(args) == 0
    assert capsys.readouterr() == (printed, "")
    assert not _asking()


def test_a_ctrl_c_not_sent_as_a_signal_still_cuts_the_wait_for_the_thread_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On Windows a wait with no timeout cannot be interrupted by Ctrl+C; nor, anywhere, by an interrupt that is not
    a signal (`_thread.interrupt_main`). Waiting for the question asked ahead, `load` takes one at once all the same:
    SQLite interrupted, its thread waited for, KeyboardInterrupt raised. In a process of its own, bounded: a wait
    that cannot be cut short fails the test rather than hanging it."""
    folder, _args, _printed = _made(tmp_path, monkeypatch, sessions=2)
    script = f"""
import _thread, sys, threading
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from pathlib import Path
from wren_tui.search import index
from wren_tui.search.index import IndexRead, connect_read, index_path
from wren_tui.search.query import Query
index.QUERY_SECONDS = 1e6
waiting = threading.Event()
def tick():
    # The question's thread runs this only while the main thread lets go of Python's lock: once it waits, blocked.
    if waiting.is_set() and not getattr(tick, "sent", False):
        tick.sent = True
        _thread.interrupt_main()  # a Ctrl+C as Windows gives it to a blocked wait: taken only when the wait ends
    return 1
def endless(self, matching, asked):
    self.db.create_function("tick", 0, tick)
    count = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE tick()) SELECT count(*) FROM c"
    self.db.execute(count)
    raise AssertionError("ended by itself")
IndexRead._ids = endless
wait = threading.Event.wait
def waited(event, timeout=None):
    if threading.current_thread() is threading.main_thread():
        waiting.set()
    return wait(event, timeout)
threading.Event.wait = waited
read = IndexRead(connect_read(index_path(Path({str(folder)!r}))), Query.of({PHRASE!r}))
assert read.begin()
read.ahead()
try:
    read.load(first=True)
except KeyboardInterrupt:
    print("interrupted", tick.sent, [t.name for t in threading.enumerate() if t.name != "MainThread"])
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "interrupted True []\n"
