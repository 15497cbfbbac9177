"""`wren search -l` through the index: each session's first hit, as the scan finds it, however the index finds it.

With `-l` the index reads each file's first candidate only (`IndexRead.load(first=True)`). With many
candidates it gives each candidate its file by the files' spans of item ids, not by each candidate's row;
these tests run both ways (`by_spans`: always by the spans) over random corpora whose files
grow after indexing (a grown file's new items come after other files': the spans overlap) and whose
re-read tails leave rows in the full-text tables that point at no item. Then, as a person runs it (a
separate process): a phrase only in a JSON key or an id is no hit, a phrase written with JSON escapes
is one, and a session changed since the index was made is listed as it is now.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
import tempfile
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_wren
from tests.search.test_index_properties import corpora, drawn_queries, outcome, texts_of
from wren_tui.journal.events import RunStart
from wren_tui.search import index
from wren_tui.search.agents import sessions_of
from wren_tui.search.engine import FirstHit, Searched, search
from wren_tui.search.index import IndexRead, connect_read, index_path
from wren_tui.search.indexer import connect_write, refresh
from wren_tui.search.query import Query

BY_SPANS = pytest.mark.parametrize("spans", [True, False], ids=["by-spans", "by-rows"])
INDEX = pytest.mark.parametrize("use", [[], ["--no-index"]], ids=["index", "no-index"])
PHRASE = "many lines does"


@contextlib.contextmanager
def by_spans(always: bool) -> Iterator[None]:
    """`load(first=True)` finds each file's first candidate by the files' spans always (else as it chooses)."""
    saved = index._FEW_CANDIDATES, index._PER_FILE
    if always:
        index._FEW_CANDIDATES, index._PER_FILE = 0, 0
    try:
        yield
    finally:
        index._FEW_CANDIDATES, index._PER_FILE = saved


def first_hits(folder: Path, query: Query, *, update: bool) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Each session's first hit, read from the files and through the index's first candidates (brought up to date
    first, or as it is: a grown file read from where the index's reading ended)."""
    scanned = [row for row in outcome(list(search(sessions_of("all", folder, folder), query, first=True)))]
    db = connect_write(index_path(folder))
    try:
        if update:
            refresh(db, sessions_of("all", folder, folder))
            kept = db.execute("SELECT id, low, high FROM files ORDER BY id").fetchall()
            of = "FROM items WHERE file = files.id"
            spans = f"SELECT id, (SELECT min(id) {of}), (SELECT max(id) {of})"
            assert kept == db.execute(f"{spans} FROM files ORDER BY id").fetchall()  # each row's span: its items'
        snapshot = IndexRead(db, query)
        assert snapshot.begin()
        listed = sessions_of("all", folder, folder, recall=snapshot.wren_as_read)
        loaded = snapshot.load(first=True)
        indexed = outcome(list(search(listed, query, index=snapshot if loaded else None, first=True)))
    finally:
        db.close()
    # The same read with its candidates asked ahead, in a thread, while the sessions are listed (as -l asks them).
    reading = connect_read(index_path(folder))
    assert reading is not None
    early = IndexRead(reading, query)
    try:
        assert early.begin()
        early.ahead()
        listed = sessions_of("all", folder, folder, recall=early.wren_as_read)
        loaded = early.load(first=True)
        assert outcome(list(search(listed, query, index=early if loaded else None, first=True))) == indexed
    finally:
        early.close()
    hits = [row for row in scanned if row[0] != "end"]  # a session's end says the warnings read so far: not compared
    return hits, [row for row in indexed if row[0] != "end"]


@BY_SPANS
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(corpus=corpora(), data=st.data())
def test_each_sessions_first_hit_through_the_index_is_the_scans_as_files_grow(
    spans: bool, corpus: list[tuple[str, bytes, int]], data: st.DataObject
) -> None:
    with by_spans(spans), tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, whole, _cut in corpus:
            (folder / name).write_bytes(whole)
        texts = texts_of(folder)
        for name, whole, cut in corpus:
            (folder / name).write_bytes(whole[:cut])
        queries = drawn_queries(data, texts)
        for query in queries:
            scanned, indexed = first_hits(folder, query, update=True)
            assert indexed == scanned, query.pattern
        for name, whole, cut in corpus:
            with (folder / name).open("ab") as out:
                out.write(whole[cut:])
        for query in queries:
            scanned, indexed = first_hits(folder, query, update=False)
            assert indexed == scanned, query.pattern
            scanned, indexed = first_hits(folder, query, update=True)  # the grown files' items after the others'
            assert indexed == scanned, query.pattern


def claude_line(text: str, n: int, **more: Any) -> bytes:
    """A Claude Code user's line saying `text` (written as `json.dumps` writes it, unless the caller writes it)."""
    line = {
        "parentUuid": None,
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "timestamp": f"2026-11-30T09:00:{n:02d}.000Z",
        "cwd": "/work/demo",
        "sessionId": "s",
        **more,
    }
    return json.dumps(line).encode() + b"\n"


def claude_folder(tmp_path: Path, sessions: dict[str, bytes]) -> Path:
    """Claude Code sessions (name: bytes) in one folder, the first named the newest."""
    folder = tmp_path / "claude"
    folder.mkdir()
    for age, (name, data) in enumerate(sessions.items()):
        path = folder / f"{name}.jsonl"
        path.write_bytes(data)
        os.utime(path, (1_700_000_000 - age * 60, 1_700_000_000 - age * 60))
    return folder


def listed(tmp_path: Path, folder: Path, *args: str) -> list[str]:
    result = run_wren(["search", PHRASE, "-l", "--dir", str(folder), *args], cwd=tmp_path)
    assert result.returncode in (0, 1) and result.stderr == "", result.stderr
    return [Path(line).stem for line in result.stdout.splitlines()]


def hit_sessions(tmp_path: Path, folder: Path, *args: str) -> list[str]:
    result = run_wren(["search", PHRASE, "--json", "--dir", str(folder), *args], cwd=tmp_path)
    found = (json.loads(line) for line in result.stdout.splitlines())
    return list(dict.fromkeys(row["session"] for row in found if row["type"] == "hit"))


@INDEX
def test_a_phrase_only_in_a_json_key_or_an_id_lists_no_session_though_its_bytes_hold_it(
    tmp_path: Path, use: list[str]
) -> None:
    folder = claude_folder(
        tmp_path,
        {
            "said": claude_line("how many lines does it have?", 1),
            "keyed": claude_line("nothing here", 1, toolUseResult={PHRASE: 3}),
            "named": claude_line("nothing here", 1, uuid=PHRASE, promptId=PHRASE),
        },
    )
    assert all(PHRASE.encode() in path.read_bytes() for path in folder.iterdir())  # what `rg -l` lists
    assert listed(tmp_path, folder, *use) == ["said"] == hit_sessions(tmp_path, folder, *use)


@INDEX
def test_a_phrase_written_with_json_escapes_is_listed(tmp_path: Path, use: list[str]) -> None:
    escaped = claude_line("how MANY_LINES_DOES", 1).replace(b"MANY_LINES_DOES", b"many\\u0020lines\\u0020d\\u006fes")
    folder = claude_folder(tmp_path, {"escaped": escaped, "plain": claude_line("no such words", 1)})
    assert PHRASE.encode() not in (folder / "escaped.jsonl").read_bytes()
    assert listed(tmp_path, folder, *use) == ["escaped"] == hit_sessions(tmp_path, folder, *use)


def test_a_session_changed_since_the_index_is_listed_as_it_is_now(tmp_path: Path) -> None:
    lines = [claude_line(f"turn {n}: how many lines does it have?", n) for n in range(6)]
    quiet = [claude_line(f"turn {n}: nothing", n) for n in range(6)]
    folder = claude_folder(
        tmp_path,
        {"grows": b"".join(quiet), "rewritten": b"".join(lines), "kept": b"".join(lines), "emptied": b"".join(lines)},
    )
    assert listed(tmp_path, folder) == ["rewritten", "kept", "emptied"]  # the index made
    with (folder / "grows.jsonl").open("ab") as out:
        out.write(claude_line("at last: many lines does", 7))
    (folder / "rewritten.jsonl").write_bytes(b"".join(quiet[:3] + lines[3:]))  # its first hit is now its 4th turn
    (folder / "emptied.jsonl").write_bytes(b"".join(quiet))
    for age, name in enumerate(("grows", "rewritten", "kept", "emptied")):
        os.utime(folder / f"{name}.jsonl", (1_700_000_000 - age * 60, 1_700_000_000 - age * 60))
    assert listed(tmp_path, folder) == ["grows", "rewritten", "kept"] == listed(tmp_path, folder, "--no-index")


def test_a_first_candidate_that_points_at_no_item_leaves_its_file_to_all_its_candidates(tmp_path: Path) -> None:
    """The full-text tables keep the rows of an item `_forget` could not read back (its file changed under it): a
    candidate there points at no item. The first candidate of a file, within its span (after its first item), is
    made one such here; -l then reads that file's candidates all, and lists it by its next hit."""
    said = [
        claude_line("turn 0: nothing yet", 0),
        *(claude_line(f"turn {n}: how many lines does it?", n) for n in (1, 2)),
    ]
    folder = claude_folder(tmp_path, {"newer": b"".join(said), "older": b"".join(said)})
    query = Query.of(PHRASE)
    scanned, _indexed = first_hits(folder, query, update=True)  # the index made
    db = connect_write(index_path(folder))
    try:
        snapshot = IndexRead(db, query)
        assert snapshot.begin() and snapshot.load(first=True)
        firsts = {file: ident for file, (ident,) in snapshot.candidates.items()}
        snapshot.close()
        db = connect_write(index_path(folder))
        (newer,) = (ident for (path, (ident, *_)) in snapshot.rows.items() if path.endswith("newer.jsonl"))
        db.execute("DELETE FROM items WHERE id = ?", (firsts[newer],))  # its full-text rows stay
        db.commit()
    finally:
        db.close()
    with by_spans(True):
        _scanned, indexed = first_hits(folder, query, update=False)
        db = connect_write(index_path(folder))
        try:
            snapshot = IndexRead(db, query)
            assert snapshot.begin() and snapshot.load(first=True)
            assert newer in snapshot.candidates and newer not in snapshot._first_rows  # the case asked for
        finally:
            db.close()
    assert [row[1] for row in indexed if row[0] == "hit"] == [row[1] for row in scanned if row[0] == "hit"]
    assert [row[2] for row in scanned if row[0] == "hit"] == [2, 2]
    assert [row[2] for row in indexed if row[0] == "hit"] == [3, 2]  # the newer listed by its next hit


def test_the_first_candidates_are_the_same_with_and_without_the_c_helper(tmp_path: Path) -> None:
    """The candidates' ids come back as one text, read by `_scan.ids` where it is built, else by Python."""
    said = [
        claude_line("turn 0: nothing yet", 0),
        *(claude_line(f"turn {n}: how many lines does it?", n) for n in (1, 2)),
    ]
    folder = claude_folder(tmp_path, {"newer": b"".join(said), "older": b"".join(said[:2]), "none": said[0]})
    query = Query.of(PHRASE)
    first_hits(folder, query, update=True)  # the index made
    found = []
    saved = index.native
    for spans in (True, False):
        for native in (index.native, None):
            index.native = native
            db = connect_write(index_path(folder))
            try:
                with by_spans(spans):
                    snapshot = IndexRead(db, query)
                    assert snapshot.begin() and snapshot.load(first=True)
                rows = snapshot._first_rows
                found.append(({file: list(ids) for file, ids in snapshot.candidates.items()}, rows))
            finally:
                db.close()
                index.native = saved
    assert len(found[0][0]) == 2 and all(each == found[0] for each in found)


@given(st.lists(st.integers(0, 2**63 - 1), max_size=50))
def test_the_c_helper_reads_a_list_of_ids_as_python_does_or_leaves_it_to_python(ids: list[int]) -> None:
    if index.native is None:
        pytest.skip("the C helpers are not built here")
    text = ",".join(map(str, ids))
    packed = index.native.ids(text)
    ascending = all(a < b for a, b in itertools.pairwise(ids))
    if packed is not None:
        assert list(array("q", packed)) == ids and ascending
    else:
        assert not ascending or any(len(str(each)) > 18 for each in ids)
    for bad in (text + ",", "," + text, text.replace(",", ",,", 1), text + "x", "-1"):
        assert bad == text or index.native.ids(bad) is None


@pytest.mark.parametrize("agent", ["wren", "claude"])
def test_with_many_sessions_the_index_is_asked_a_few_statements_not_one_a_session(tmp_path: Path, agent: str) -> None:
    """-l over 40 sessions, each holding the phrase: the first candidates, their rows and the files rows the
    answers need are read a few hundred at a time (a statement a session made -l of 2,000 sessions slow)."""
    from tests.tui.journals import user, write_journal

    folder = tmp_path / "sessions"
    for n in range(40):
        if agent == "wren":
            write_journal(folder / f"s-20260101-0000{n:02d}-x.jsonl", [user(f"{n}: how many lines does it have")])
        else:
            folder.mkdir(exist_ok=True)
            (folder / f"session-{n:02d}.jsonl").write_bytes(claude_line(f"{n}: how many lines does it have", n))
    query = Query.of(PHRASE)
    scanned, _indexed = first_hits(folder, query, update=True)  # the index made
    said: list[str] = []
    db = connect_write(index_path(folder))
    try:
        snapshot = IndexRead(db, query)
        assert snapshot.begin()
        listed = sessions_of("all", folder, folder, recall=snapshot.wren_as_read)
        db.set_trace_callback(said.append)
        with by_spans(True):
            assert snapshot.load(first=True)
        indexed = [row for row in outcome(list(search(listed, query, index=snapshot, first=True))) if row[0] != "end"]
    finally:
        db.close()
    assert indexed == scanned and len([row for row in indexed if row[0] == "hit"]) == 40
    asked = [sql for sql in said if sql.startswith("SELECT") and (" FROM items " in sql or " FROM files " in sql)]
    assert len(asked) <= 6, asked


def test_a_session_listed_from_the_index_has_its_first_candidate_matched_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-l's common case (a file as the index read it, its first candidate a hit) is answered by `first_hit`: the
    candidate matched once, not by the index and again by search, and, quiet, no session's end said after its hit."""
    said = [claude_line("turn 0: nothing yet", 0), claude_line("turn 1: how many lines does it?", 1)]
    names = ("one", "two", "three", "four")
    folder = claude_folder(tmp_path, {name: b"".join(said) for name in names})
    query = Query.of(PHRASE)
    scanned, _ = first_hits(folder, query, update=True)  # the index made
    matched: list[str] = []
    find = Query.find

    def counted(self: Query, text: str) -> tuple[int, int] | None:
        matched.append(text)
        return find(self, text)

    monkeypatch.setattr(Query, "find", counted)
    db = connect_write(index_path(folder))
    try:
        snapshot = IndexRead(db, query)
        assert snapshot.begin()
        listed = sessions_of("all", folder, folder, recall=snapshot.wren_as_read)
        snapshot.stale((source.path, None) for source in listed)
        assert snapshot.load(first=True)
        results = list(search(listed, query, index=snapshot, quiet=True, first=True))
    finally:
        db.close()
    assert all(isinstance(each, FirstHit) for each in results)  # no Hit made, no snippet cut: -l prints none
    found = outcome(results)
    assert matched == ["turn 1: how many lines does it?"] * len(names)
    assert found == scanned and [row[1] for row in found[::2]] == list(names)  # hits alone, each session's first


def test_with_both_streams_in_one_pipe_the_paths_listed_before_a_warning_come_before_it(tmp_path: Path) -> None:
    """-l lists the sessions the index answers without a write each; what it listed is out before it says on stderr
    that a session's reading stopped (both streams in one pipe, as `2>&1 | less` reads them)."""
    from tests.tui.journals import assistant, encode, user

    folder = claude_folder(tmp_path, {"newer": claude_line("how many lines does it have", 1)})
    (folder / "older.jsonl").write_bytes(claude_line("how many lines does it have", 1))
    events = [RunStart(pid=7, cwd="/work/demo", model="scripted", version="0.1.0"), user("nothing yet")]
    events += [assistant(f"line {k}") for k in range(10)] + [user("many lines does, after the damage")]
    lines = encode(events).splitlines(keepends=True)
    digit = lines[6][-4:-3]  # line 7 gets a wrong CRC: reading stops there, before the only phrase
    lines[6] = lines[6][:-4] + (b"1" if digit == b"0" else b"0") + lines[6][-3:]
    damaged = folder / "s-20250301-090000-dmg1.jsonl"
    damaged.write_bytes(b"".join(lines))
    for age, path in enumerate((folder / "newer.jsonl", damaged, folder / "older.jsonl")):
        os.utime(path, (1_700_000_000 - age * 60, 1_700_000_000 - age * 60))
    args = ["search", PHRASE, "-l", "--dir", str(folder)]
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    made = run_wren(args, cwd=tmp_path, env=state)  # the index made: the Claude Code sessions answered from it next
    assert made.stdout.splitlines() == [str(folder / "newer.jsonl"), str(folder / "older.jsonl")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")} | state
    both = subprocess.run(
        [sys.executable, "-m", "wren_tui", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=False,
    )
    (warning,) = made.stderr.splitlines()
    assert warning.startswith(f"wren: warning: {damaged}: reading stops at line 7")
    assert both.stdout.splitlines() == [str(folder / "newer.jsonl"), warning, str(folder / "older.jsonl")]


class _CountedBytes(io.BytesIO):
    """A stream's bytes, and how many writes brought them (each one a system call with PYTHONUNBUFFERED)."""

    writes = 0

    def write(self, data: Any) -> int:
        self.writes += 1
        return super().write(data)


@pytest.mark.parametrize("as_json", [False, True], ids=["paths", "json"])
def test_a_page_the_index_answers_is_written_at_once_not_a_write_a_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    from wren_tui.cli import main

    folder = claude_folder(
        tmp_path, {f"s{n:02d}": claude_line(f"{n}: how many lines does it have", n) for n in range(30)}
    )
    args = ["search", PHRASE, "-l", "--dir", str(folder), *(["--json"] if as_json else [])]
    for name in [name for name in os.environ if name.startswith("WREN_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    made = run_wren(args, cwd=tmp_path, env={"XDG_STATE_HOME": str(tmp_path / "state")})  # the index made
    assert made.returncode == 0 and made.stderr == ""
    raw = _CountedBytes()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="utf-8", write_through=True))  # unbuffered
    assert main(args) == 0
    sys.stdout.flush()
    assert raw.getvalue().decode() == made.stdout and len(made.stdout.splitlines()) == 30
    assert raw.writes == 1


def test_a_first_candidate_matched_by_its_tool_name_alone_is_said_as_such_through_the_index(tmp_path: Path) -> None:
    """-l's first hit from the index (`first_hit`) is the scan's where the match is a tool call's name, not its
    arguments: its snippet is the name, `in_name` set."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "count_lines_fast", "input": {"path": "notes.txt"}}
    message = {"role": "assistant", "content": [call]}
    said = claude_line("nothing yet", 0) + claude_line("", 1, type="assistant", message=message)
    folder = claude_folder(tmp_path, {"named": said, "other": claude_line("nothing", 0)})
    query = Query.of("count_lines_fast")
    scanned, indexed = first_hits(folder, query, update=True)
    assert indexed == scanned
    assert len(scanned) == 2 and scanned[0][:2] == ("hit", "named")
    assert scanned[1][:4] == ("count_lines_fast", 0, 16, True)  # the snippet, the match in it, in the name


def _next_page(result: subprocess.CompletedProcess[str]) -> str | None:
    """The cursor a page printed (its last JSON row, or its line on stderr), if any."""
    for line in result.stdout.splitlines():
        row = json.loads(line) if line.startswith("{") else {}
        if row.get("type") == "page":
            return str(row["after"])
    for line in result.stderr.splitlines():
        if line.startswith("next page: --after "):
            return line.removeprefix("next page: --after ")
    return None


@pytest.mark.parametrize("shape", [[], ["--json"], ["--limit", "2"], ["--limit", "2", "--json"]])
def test_the_sessions_the_index_lists_are_printed_as_reading_the_files_prints_them(
    tmp_path: Path, shape: list[str]
) -> None:
    """-l's sessions the index answers from their first candidate (no `Hit` made, no snippet cut) are printed byte for
    byte as those found by reading the files (--no-index): each path (one with a control character and a tab in its
    name, shown as placeholders), each JSON row (agent, session, path, kept), a page's cursor and the next page."""
    sessions = {f"s{n}": claude_line(f"{n}: how many lines does it have", n) for n in range(4)}
    if sys.platform != "win32":  # no such name there
        sessions["odd\x1bname\tx"] = claude_line("how many lines does it hold", 9)
    sessions["none"] = claude_line("nothing here", 0)
    folder = claude_folder(tmp_path, sessions)
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    args = ["search", PHRASE, "-l", "--dir", str(folder), *shape]
    assert run_wren(args, cwd=tmp_path, env=state).returncode == 0  # the index made
    pages = 0
    while True:
        warm = run_wren(args, cwd=tmp_path, env=state)
        read = run_wren([*args, "--no-index"], cwd=tmp_path, env=state)
        assert (warm.stdout, warm.stderr, warm.returncode) == (read.stdout, read.stderr, read.returncode)
        assert warm.returncode == 0 and warm.stdout
        pages += 1
        after = _next_page(warm)
        if after is None:
            break
        args = ["search", PHRASE, "-l", "--dir", str(folder), *shape, "--after", after]
    assert pages == (1 if not shape or shape == ["--json"] else 3)
    if sys.platform != "win32" and not shape:  # the page of paths: the odd one shown, nothing a terminal obeys
        assert f"{folder / 'odd'}\u241bname    x.jsonl\n" in warm.stdout and "\x1b" not in warm.stdout


def test_a_cancelled_listing_yields_nothing_more_whether_the_index_or_the_file_answered_last(tmp_path: Path) -> None:
    """-l's lane asks `cancelled` between sessions and, for a session the index does not answer from its first
    candidate (a file new since it was made), between its items: once it says yes, nothing more comes."""
    said = claude_line("how many lines does it have", 0)
    folder = claude_folder(tmp_path, {name: said for name in ("one", "two", "three", "four")})
    query = Query.of(PHRASE)
    first_hits(folder, query, update=True)  # the index made
    newest = folder / "new.jsonl"
    newest.write_bytes(claude_line("nothing yet", 0) + said)  # not in the index: read from its file, first of all
    db = connect_write(index_path(folder))
    try:
        snapshot = IndexRead(db, query)
        assert snapshot.begin()
        listed = sessions_of("all", folder, folder, recall=snapshot.wren_as_read)
        assert listed[0].path == newest
        assert snapshot.load(first=True)
        for stop_after in range(4):
            shown: list[object] = []  # the sessions given (a session read from its file ends with its Searched)

            def enough(shown: list[object] = shown, stop_after: int = stop_after) -> bool:
                return len(shown) > stop_after

            for each in search(listed, query, index=snapshot, quiet=True, first=True, cancelled=enough):
                if not isinstance(each, Searched):
                    shown.append(each)
            assert len(shown) == stop_after + 1  # the one given when it said yes, and none after
            assert [type(each).__name__ for each in shown] == ["Hit"] + ["FirstHit"] * stop_after
    finally:
        db.close()
