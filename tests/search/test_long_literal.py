"""A long literal (a pasted paragraph) through the index: answered, bounded, and stopped by Ctrl+C.

A phrase of a paragraph's 2,000 word pairs, each in most of the index's rows, took FTS5 seconds to a
minute to answer and no SIGINT reached it (Python runs a signal's handler only between its own
instructions, never inside SQLite). The index is asked for a bounded piece of the pattern, and what it
is asked runs under SQLite's progress handler: a time budget (after it, the files are read instead) and
Ctrl+C (exit 130).
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import run_wren
from tests.tui.journals import assistant, user, write_journal
from wren_tui.search.index import LONGEST, MOST_PAIRS, MOST_PHRASES, needle_of, pair_query
from wren_tui.search.query import Query

ROOT = Path(__file__).resolve().parent.parent.parent
PARAGRAPH = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of "
    "foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of Light. "
)


def corpus(tmp_path: Path, sessions: int = 30) -> Path:
    folder = tmp_path / "journals"
    for n in range(sessions):
        texts = [PARAGRAPH * (1 + (n + k) % 12) for k in range(20)]
        events = [user(text) if k % 2 == 0 else assistant(text) for k, text in enumerate(texts)]
        write_journal(folder / f"s-20250301-{n:06d}-aaaa.jsonl", events)
    return folder


def rows(result: subprocess.CompletedProcess[str]) -> list[tuple[str, int]]:
    return [(r["session"], r["seq"]) for r in map(json.loads, result.stdout.splitlines()) if r["type"] == "hit"]


def test_a_pasted_paragraph_through_the_index_gives_the_scans_hits(tmp_path: Path) -> None:
    folder = corpus(tmp_path)
    found = []
    for literal in ((PARAGRAPH * 10).strip(), (PARAGRAPH * 120)[:11_000].strip()):
        args = ["search", literal, "--dir", str(folder), "--json"]
        through = run_wren(args, cwd=tmp_path)
        scanned = run_wren([*args, "--no-index"], cwd=tmp_path)
        assert through.returncode == scanned.returncode and through.stderr == scanned.stderr == ""
        assert rows(through) == rows(scanned)
        found.append(len(rows(through)))
    assert found[0] > 0 and found[1] == 0  # the texts hold 10 paragraphs at most


def test_the_index_is_asked_for_a_bounded_piece_of_a_long_pattern() -> None:
    query = Query.of((PARAGRAPH * 500)[:114_000])
    pairs = pair_query(query)
    assert pairs is not None and len(pairs.split()) == MOST_PAIRS
    needle = needle_of(Query.of("x" * 5_000))
    assert needle is not None and len(needle) == LONGEST
    runs = Query.of("(alpha beta gamma).*(delta epsilon zeta).*" * 6, regex=True)
    asked = pair_query(runs)
    assert asked is not None and asked.count(" AND ") == MOST_PHRASES - 1


# SQLite's work that never ends on its own, inside `_bounded` (what the index's query runs under): only the
# progress handler can stop it. The script says when SQLite is at it, and how it ended.
ENDLESS = textwrap.dedent(
    """
    import sqlite3, sys
    from wren_tui.search.index import _bounded
    db = sqlite3.connect(":memory:")
    db.create_function("started", 0, lambda: print("started", flush=True) or 1)
    endless = "WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    try:
        with _bounded(db, float(sys.argv[1])):
            db.execute(endless).fetchone()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    except sqlite3.OperationalError as exc:
        print("budget:", exc, flush=True)
    """
)


@contextlib.contextmanager
def endless(seconds: float) -> Iterator[subprocess.Popen[str]]:
    """The script, run with a budget of `seconds`; killed if a test left it running."""
    process = subprocess.Popen(
        [sys.executable, "-c", ENDLESS, str(seconds)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_ctrl_c_stops_the_index_inside_sqlite() -> None:
    with endless(1e9) as process:
        assert process.stdout is not None
        assert process.stdout.readline() == "started\n"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)  # a generous bound: without the handler it never ends
    assert (process.returncode, out, err) == (0, "interrupted\n", "")


def test_the_index_query_stops_at_its_budget() -> None:
    with endless(0.2) as process:
        out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (0, "started\nbudget: interrupted\n", "")


def test_ctrl_c_during_a_long_literal_search_exits_130(tmp_path: Path) -> None:
    folder = corpus(tmp_path, sessions=60)
    literal = (PARAGRAPH * 2).strip()
    assert run_wren(["search", "wisdom", "--dir", str(folder)], cwd=tmp_path).returncode == 0  # the index built
    process = subprocess.Popen(
        [sys.executable, "-m", "wren_tui", "search", literal, "--dir", str(folder)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        # About 1,100 hits, 180 KB: more than the pipe holds, so the search is still at it (its write waits for this
        # reader) when the signal comes, whatever the machine's speed.
        assert process.stdout.readline()
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130 and err.strip().endswith("interrupted"), err
