"""Whose a file is, as `wren search --dir` tells it with its index warm: taken from the index only when that is safe.

A warm search does not open the journals its index read as Wren's to their end (no stop, no warning)
and holds as they are (device, inode, size, modification time to the nanosecond): every other file
has its first bytes read, as without an index. Each search here is compared with `--no-index` (each
file told by its content), after a journal was replaced by another agent's file of the same size (in
place, or under a new inode), renamed, or after the index read another agent's file as a journal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.conftest import run_wren
from tests.search.test_index_cli import indexed_paths, same
from tests.tui.journals import assistant, user, write_journal
from wren_tui.search.index import IndexRead, connect_read, index_path
from wren_tui.search.query import Query

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CLAUDE = FIXTURES / "agents" / "claude-code" / "simple.jsonl"
SAID = "List the files in this folder"  # in the Claude Code session's first prompt, in no journal
A = "s-20250301-093000-aaaa"
B = "s-20250302-100000-bbbb"


def journals(tmp_path: Path) -> Path:
    """Two journals, the second longer than the Claude Code session (so that session can be padded to its size)."""
    folder = tmp_path / "journals"
    write_journal(folder / f"{A}.jsonl", [user("the parrot said hello"), assistant("hello parrot")])
    write_journal(folder / f"{B}.jsonl", [user("a long story of a parrot " * 2000), assistant("a parrot indeed")])
    assert (folder / f"{B}.jsonl").stat().st_size > CLAUDE.stat().st_size
    return folder


def claude_of_size(size: int) -> bytes:
    """The Claude Code session, its first line padded with spaces (still the same JSON) to `size` bytes."""
    data = CLAUDE.read_bytes()
    assert data.startswith(b"{") and len(data) <= size
    return b"{" + b" " * (size - len(data)) + data[1:]


def agents_of(rows: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(row["agent"], row["session"]) for row in rows if row["type"] == "hit"}


def wren_as_read(folder: Path, name: str) -> bool:
    """What the index says of the file `name` now: a Wren journal it holds as it is (not to be opened)."""
    db = connect_read(index_path(folder))
    assert db is not None
    snapshot = IndexRead(db, Query.of("parrot"))
    try:
        assert snapshot.begin()
        return snapshot.wren_as_read(folder / name)
    finally:
        snapshot.close()


def test_a_journal_the_index_holds_as_it_is_is_not_looked_at_again_and_a_changed_one_is(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    assert len(same(folder, "parrot")) == 4
    assert wren_as_read(folder, f"{A}.jsonl") and wren_as_read(folder, f"{B}.jsonl")
    path = folder / f"{A}.jsonl"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # touched: its bytes may have changed
    assert not wren_as_read(folder, f"{A}.jsonl")
    assert not wren_as_read(folder, "s-20250303-000000-none.jsonl")  # not in the index


def test_a_journal_rewritten_in_place_by_another_agents_file_of_the_same_size_is_that_agents(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    same(folder, "parrot")
    path = folder / f"{B}.jsonl"
    before = path.stat()
    with path.open("r+b") as out:  # same inode, same size: only the bytes and the time change
        out.write(claude_of_size(before.st_size))
    assert (path.stat().st_ino, path.stat().st_size) == (before.st_ino, before.st_size)
    assert agents_of(same(folder, SAID)) == {("claude", B)}
    assert agents_of(same(folder, "parrot")) == {("wren", A)}


def test_a_journal_replaced_by_another_agents_file_of_the_same_size_is_that_agents(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    same(folder, "parrot")
    path = folder / f"{B}.jsonl"
    size = path.stat().st_size
    fresh = folder / "new.tmp"
    fresh.write_bytes(claude_of_size(size))
    os.replace(fresh, path)  # a new inode under the same name
    assert agents_of(same(folder, SAID)) == {("claude", B)}
    # Removed, and another agent's file of the same size written under its name (its inode may come back).
    path.unlink()
    path.write_bytes(claude_of_size(size))
    assert agents_of(same(folder, SAID)) == {("claude", B)}


def test_a_renamed_journal_is_found_under_its_new_name(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    same(folder, "parrot")
    renamed = folder / "s-20250304-120000-cccc.jsonl"
    os.rename(folder / f"{A}.jsonl", renamed)
    assert agents_of(same(folder, "said hello")) == {("wren", renamed.stem)}
    assert str(renamed) in indexed_paths(folder) and str(folder / f"{A}.jsonl") not in indexed_paths(folder)


def test_another_agents_file_the_index_read_as_a_journal_is_still_told_by_its_content(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    (folder / "s-20250305-080000-dddd.jsonl").write_bytes(CLAUDE.read_bytes())
    # Searched as the journals folder (no --dir): every .jsonl file there is read as a journal, so the index
    # holds the Claude Code session as a Wren journal that stops at its first line.
    searched = run_wren(["search", SAID, "--agent", "wren", "--json"], cwd=tmp_path, env={"WREN_DIR": str(folder)})
    assert searched.returncode == 1, searched.stderr
    assert [json.loads(line)["type"] for line in searched.stdout.splitlines()] == ["stopped"]
    assert not wren_as_read(folder, "s-20250305-080000-dddd.jsonl")
    # With --dir, each file is told by its content: the session is Claude Code's, as --no-index says.
    assert agents_of(same(folder, SAID)) == {("claude", "s-20250305-080000-dddd")}


def test_candidates_the_index_confirms_by_their_bytes_keep_every_case_of_the_phrase(tmp_path: Path) -> None:
    """The index drops a candidate whose bytes cannot hold the phrase before decoding it: never one that
    matches in another case, with ſ for s or the Kelvin sign for k, or inside a longer word."""
    folder = tmp_path / "journals"
    texts = [
        "zero because the guard",
        "ZERO BECAUSE THE GUARD",
        "zero becau\u017fe the guard",
        "nonzero because the guards",
        "only because the guard said so",  # the pairs, not the phrase
        "the \u212aeeper zero because the guard",
    ]
    write_journal(folder / f"{A}.jsonl", [user(text) for text in texts])
    rows = same(folder, "zero because the guard")
    assert [row["seq"] for row in rows] == [1, 2, 3, 4, 6]
    assert [row["seq"] for row in same(folder, "keeper zero")] == [6]
