"""`wren search` through its index, as a person runs it: files changed under the index, and processes killed.

Each search is compared with `wren search --no-index` (the files read as they are) on the same
folder: the index is a cache, so the two never differ, whatever happened to the files since the
index read them (appended to, rewritten in place, truncated, replaced) or to the process that was
writing the index (killed with SIGKILL at a random moment).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import descendants, run_wren
from tests.tui.journals import assistant, encode, finished_story, user, write_journal
from wren_tui.journal.events import Delta
from wren_tui.search.index import index_path

A = "s-20250301-093000-aaaa"
B = "s-20250302-100000-bbbb"


def searched(folder: Path, pattern: str, *extra: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of `wren search --json` through the index and with --no-index, in that order."""
    args = ["search", pattern, "--dir", str(folder), "--json", *extra]
    through = run_wren(args, cwd=folder.parent)
    scanned = run_wren([*args, "--no-index"], cwd=folder.parent)
    assert through.returncode == scanned.returncode and through.returncode in (0, 1), through.stderr
    assert through.stderr == scanned.stderr
    return [json.loads(x) for x in through.stdout.splitlines()], [json.loads(x) for x in scanned.stdout.splitlines()]


def same(folder: Path, pattern: str, *extra: str) -> list[dict[str, Any]]:
    through, scanned = searched(folder, pattern, *extra)
    assert through == scanned
    return through


def indexed_paths(folder: Path) -> set[str]:
    db = sqlite3.connect(index_path(folder))
    try:
        return {row[0] for row in db.execute("SELECT path FROM files")}
    finally:
        db.close()


def two_sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "journals"
    write_journal(folder / f"{A}.jsonl", finished_story())
    write_journal(folder / f"{B}.jsonl", [user("the parrot said hello"), assistant("hello parrot")])
    return folder


def test_the_first_search_builds_the_index_and_later_ones_answer_from_it(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    assert [(r["session"], r["seq"]) for r in same(folder, "parrot")] == [(B, 1), (B, 2)]
    assert indexed_paths(folder) == {str(folder / f"{A}.jsonl"), str(folder / f"{B}.jsonl")}
    assert len(same(folder, "zerodivisionerror")) == 2
    # A short pattern, a regex with no literal, and filters: the same hits as the files give.
    same(folder, "he")
    same(folder, r"\d+ passed", "--regex")
    same(folder, "tests", "--role", "assistant")


def test_appended_lines_are_found_without_a_rebuild(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    same(folder, "parrot")
    path = folder / f"{B}.jsonl"
    with path.open("ab") as out:
        out.write(encode([user("a second parrot, green")], first_seq=3))
    rows = same(folder, "green parrot|parrot, green", "--regex")
    assert [(r["session"], r["seq"]) for r in rows] == [(B, 3)]
    # A reply streaming when the index read the file, then its end: the partial text, then the reply.
    with path.open("ab") as out:
        out.write(encode([Delta(text="half a macaw")], first_seq=4))
    assert [r["kind"] for r in same(folder, "macaw")] == ["partial"]
    with path.open("ab") as out:
        out.write(encode([Delta(text=" story"), assistant("half a macaw story")], first_seq=5))
    assert [(r["seq"], r["kind"]) for r in same(folder, "macaw")] == [(6, "message")]


def test_a_file_rewritten_in_place_is_read_again(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    same(folder, "parrot")
    path = folder / f"{B}.jsonl"
    before = path.stat()
    data = encode([user("the falcon said hello"), assistant("hello falcon")])
    assert len(data) == before.st_size
    with path.open("r+b") as out:  # same inode, same size: only the bytes and the time change
        out.write(data)
    assert path.stat().st_ino == before.st_ino
    assert same(folder, "parrot") == []
    assert [r["seq"] for r in same(folder, "falcon")] == [1, 2]


def test_a_file_rewritten_with_more_bytes_is_read_again_not_taken_as_grown(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    same(folder, "parrot")
    path = folder / f"{B}.jsonl"
    with path.open("r+b") as out:  # the indexed bytes change, and the file is longer: not an append
        out.write(encode([user("the falcon said hello"), assistant("hello falcon"), user("and parrot")]))
    assert [r["seq"] for r in same(folder, "parrot")] == [3]
    assert [r["seq"] for r in same(folder, "falcon")] == [1, 2]


def test_a_truncated_file_loses_its_hits_and_a_damaged_one_says_where_it_stops(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    assert len(same(folder, "tests")) > 2
    path = folder / f"{A}.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    os.truncate(path, sum(len(x) for x in lines[:3]))
    assert [r["seq"] for r in same(folder, "tests")] == [2]
    # Truncated inside a line: a torn tail, said as the scan says it.
    os.truncate(path, sum(len(x) for x in lines[:3]) - 5)
    rows = same(folder, "tests")
    assert [r["type"] for r in rows] == ["hit", "stopped"] and rows[1]["torn"]
    # A damaged line in the middle: searched up to it, the stop reported the same.
    path.write_bytes(lines[0] + lines[1].replace(b"run", b"RUN") + b"".join(lines[2:]))
    rows = same(folder, "tests")
    assert [r["type"] for r in rows] == ["stopped"] and rows[0]["stoppedAtLine"] == 2 and not rows[0]["torn"]


def test_a_replaced_or_removed_file_is_read_again_or_forgotten(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    same(folder, "parrot")
    path = folder / f"{B}.jsonl"
    fresh = folder / "new.tmp"
    fresh.write_bytes(encode([user("a heron"), assistant("a parrot and a heron")]))
    os.replace(fresh, path)  # a new inode under the same name
    assert [r["seq"] for r in same(folder, "parrot")] == [2]
    path.unlink()
    assert same(folder, "parrot") == []
    assert indexed_paths(folder) == {str(folder / f"{A}.jsonl")}


def test_deleting_the_index_loses_nothing_and_an_unwritable_one_is_not_needed(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    first = same(folder, "hello")
    index_path(folder).unlink()
    assert same(folder, "hello") == first
    # A damaged index file: searched from the files, and rebuilt.
    index_path(folder).write_bytes(b"not a database at all" * 100)
    through, scanned = searched(folder, "hello")
    assert through == scanned == first


# --- a kill -9 at any moment of indexing ------------------------------------------------------


def big_folder(tmp_path: Path, sessions: int = 40) -> Path:
    """Sessions enough that building their index takes a while: each a story and some lines of its own."""
    folder = tmp_path / "many"
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "kestrel", "osprey", "merlin", "hobby", "tests", "parrot"]
    for number in range(sessions):
        extra = [user(" ".join(rng.choice(words) for _ in range(30)) + f" n{number}") for _ in range(200)]
        write_journal(folder / f"s-20250301-{number:06d}-k.jsonl", [*finished_story(), *extra])
    return folder


def start_search(folder: Path, pattern: str, *, ahead: bool = False) -> subprocess.Popen[bytes]:
    """`wren search` started on `folder`; `ahead`: files new to the index read by worker processes, however few."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    if ahead:
        env["WREN_INDEX_READAHEAD_BYTES"] = "0"
    return subprocess.Popen(
        [sys.executable, "-m", "wren_tui", "search", pattern, "--dir", str(folder), "--json"],
        cwd=folder.parent,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("ahead", [False, True], ids=["in-process", "read-ahead"])
def test_a_search_killed_at_any_moment_of_indexing_never_leaves_wrong_or_missing_hits(
    tmp_path: Path, ahead: bool
) -> None:
    folder = big_folder(tmp_path)
    began = time.monotonic()
    build = start_search(folder, "kestrel", ahead=ahead)
    assert build.wait(timeout=300) == 0
    took = time.monotonic() - began
    rng = random.Random(11)
    kills = 0
    for round in range(8):
        index_path(folder).unlink()
        if round % 2:  # half the rounds: the index half built, then files grown and rewritten under it
            partial = start_search(folder, "osprey", ahead=ahead)
            time.sleep(rng.uniform(0, took))
            partial.send_signal(signal.SIGKILL)
            partial.wait()
            victim = folder / f"s-20250301-{rng.randrange(40):06d}-k.jsonl"
            with victim.open("ab") as out:
                out.write(encode([user(f"round {round} merlin")], first_seq=10_000))
        process = start_search(folder, "merlin", ahead=ahead)
        time.sleep(rng.uniform(0, took))
        process.send_signal(signal.SIGKILL)
        kills += process.wait() == -signal.SIGKILL
        for pattern in ("merlin", "round", "n17 "):
            same(folder, pattern)
    assert kills >= 1  # at least one process was killed while it worked, not after it finished


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has: it waits only to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_the_workers_of_a_killed_search_end_with_it(tmp_path: Path) -> None:
    """A search's workers (forked from it) read ahead of it into pipes only it reads: when it is killed, they
    find their pipes closed and end, rather than wait on them for ever."""
    folder = big_folder(tmp_path, sessions=80)  # more than the workers' pipes hold: they wait for the writer
    search = start_search(folder, "kestrel", ahead=True)
    try:
        deadline = time.monotonic() + 60
        while not (workers := descendants(search.pid)) and search.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert workers, "the search started no worker"
        search.send_signal(signal.SIGSTOP)  # the writer stops taking what they read: their pipes fill
        assert all(running(pid) for pid in workers), "a worker ended before its search was killed"
        search.send_signal(signal.SIGKILL)
        search.wait()
        deadline = time.monotonic() + 30
        while any(running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(running(pid) for pid in workers)
    finally:
        search.kill()
        search.wait()
