"""The index keeps where a Wren journal's texts are, not the texts: read again from the journal, never at a wrong place.

Every search is compared with `wren search --no-index` (the files read as they are now). The journals
are changed under the index in the ways that keep an offset pointing somewhere: rewritten in place
with the same size and its time put back (the index takes such a file as unchanged), and changed in
the middle while it grew (the bytes the index checks at its start and before its end unchanged).
"""

from __future__ import annotations

import marshal
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.search.helpers import resealed
from tests.search.test_index_cli import A, B, indexed_paths, same, searched, two_sessions
from tests.search.test_index_kinds import CLAUDE, SAID
from tests.tui.journals import assistant, encode, user, write_journal
from wren_tui.journal.events import Delta, ToolCall
from wren_tui.search import indexer
from wren_tui.search.index import VERSION, index_path
from wren_tui.search.sources import Item


def rows(folder: Path, sql: str, *args: object) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(index_path(folder))
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def meta(folder: Path, key: str) -> object:
    found = rows(folder, "SELECT value FROM meta WHERE key = ?", key)
    return found[0][0] if found else None


def test_a_journals_items_are_kept_as_where_they_are_and_another_agents_whole(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    shutil.copyfile(CLAUDE, folder / "claude.jsonl")
    assert [r["seq"] for r in same(folder, "parrot")] == [1, 2]
    assert len(same(folder, SAID)) == 1
    kept = {
        Path(str(path)).name: [
            marshal.loads(data) for (data,) in rows(folder, "SELECT data FROM items WHERE file = ?", f)
        ]
        for f, path in rows(folder, "SELECT id, path FROM files")
    }
    journal = kept[f"{B}.jsonl"]
    assert len(journal) == 2 and all(len(each) == 5 and "parrot" not in repr(each) for each in journal)
    assert any(SAID in Item(*each).text for each in kept["claude.jsonl"])


def test_a_journal_rewritten_in_place_with_its_time_put_back_is_read_whole_not_at_the_old_offsets(
    tmp_path: Path,
) -> None:
    folder = two_sessions(tmp_path)
    same(folder, "parrot")
    path = folder / f"{B}.jsonl"
    before = path.stat()
    first, second = path.read_bytes().splitlines(keepends=True)
    # The first line one byte shorter, the second one longer: the same size, the second line one byte earlier.
    shifted = resealed(first, b"said hello", b"said hell") + resealed(second, b"hello parrot", b"hello parrots")
    assert len(shifted) == before.st_size
    with path.open("r+b") as out:
        out.write(shifted)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    now = path.stat()
    assert (now.st_ino, now.st_size, now.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    found = same(folder, "parrot")
    assert [(r["seq"], r["snippet"]) for r in found] == [(1, "the parrot said hell"), (2, "hello parrots")]
    # The same length, another text: each line's own CRC is not the one the index kept.
    swapped = resealed(shifted[: len(shifted) - len(second) - 1], b"parrot", b"falcon")
    with path.open("r+b") as out:
        out.write(swapped)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert [r["snippet"] for r in same(folder, "parrot")] == ["hello parrots"]


def test_a_line_replaced_by_one_of_the_same_length_with_other_items_is_read_whole(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    path = write_journal(folder / f"{B}.jsonl", [user("the parrot said hello"), assistant("hello parrot" + " " * 120)])
    assert len(same(folder, "parrot")) == 2
    before = path.stat()
    first, second = path.read_bytes().splitlines(keepends=True)
    # The same place, the same length, a valid line: a reply and a call, where the index knows one item.
    call = ToolCall(id="c1", name="say", args='{"word": "parrot"}')
    shorter = encode([assistant("parrot", call)], first_seq=2)
    line = encode([assistant("parrot" + " " * (len(second) - len(shorter)), call)], first_seq=2)
    assert len(line) == len(second)
    with path.open("r+b") as out:
        out.write(first + line)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert [(r["seq"], r["kind"]) for r in same(folder, "parrot")] == [(1, "message"), (2, "message"), (2, "call")]


def test_a_journal_changed_in_the_middle_as_it_grew_is_read_whole(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    path = write_journal(folder / f"{A}.jsonl", [user(f"note {n}: the weather is fine today " * 4) for n in range(80)])
    assert len(same(folder, "note 40:")) == 1
    lines = path.read_bytes().splitlines(keepends=True)
    middle = len(lines) // 2
    assert sum(map(len, lines[:middle])) > 8192  # past the 4 kB the index checks at the start and before the end
    lines[middle] = resealed(lines[middle], b"weather is fine", b"weather is foul")
    with path.open("r+b") as out:  # the same inode: the index would take it as grown
        out.write(b"".join(lines))
        out.write(encode([user("one more note")], first_seq=len(lines) + 1))
    found = same(folder, "weather is fine")
    assert len(found) == len(lines) - 1 and middle + 1 not in [r["seq"] for r in found]
    assert [r["seq"] for r in same(folder, "one more note")] == [len(lines) + 1]


def test_an_index_of_the_version_before_is_rebuilt_not_misread(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    same(folder, "parrot")
    # What version 7 kept: each item whole. Ones a version-8 reader would show if it read them.
    stale = marshal.dumps(tuple(Item(1, "2025-01-01T00:00:00Z", "user", "message", "a stale parrot", 0)))
    db = sqlite3.connect(index_path(folder))
    with db:
        db.execute("UPDATE items SET data = ?", (stale,))
        db.execute("UPDATE meta SET value = 7 WHERE key = 'version'")
    db.close()
    # Read-only: the old index is not read, the files are.
    folder.chmod(0o500)
    index_path(folder).parent.chmod(0o500)
    try:
        through, scanned = searched(folder, "parrot")
        assert through == scanned and all(r["snippet"] != "a stale parrot" for r in through)
    finally:
        index_path(folder).parent.chmod(0o700)
        folder.chmod(0o700)
    found = same(folder, "parrot")
    assert [r["snippet"] for r in found] == ["the parrot said hello", "hello parrot"]
    assert meta(folder, "version") == VERSION == 9
    assert all(len(marshal.loads(data)) == 5 for (data,) in rows(folder, "SELECT data FROM items"))


def test_a_removed_journals_full_text_rows_point_at_nothing_and_their_ids_are_never_given_again(
    tmp_path: Path,
) -> None:
    folder = two_sessions(tmp_path)
    assert len(same(folder, "tests")) > 2  # all in A
    gone = [int(str(ident)) for (ident,) in rows(folder, "SELECT id FROM items WHERE file = ?", file_of(folder, A))]
    assert max(gone) == rows(folder, "SELECT max(id) FROM items")[0][0]  # A's items are the last given
    (folder / f"{A}.jsonl").unlink()  # its texts are gone with it: its full-text rows cannot be taken out
    assert same(folder, "tests") == []
    assert indexed_paths(folder) == {str(folder / f"{B}.jsonl")}
    assert meta(folder, "orphans") == len(gone) and meta(folder, "top") == max(gone)
    left = {ident for (ident,) in rows(folder, """SELECT rowid FROM fts WHERE fts MATCH '"tes" AND "sts"'""")}
    assert left and left <= set(gone)  # still there, pointing at no item
    write_journal(folder / "s-20250303-100000-cccc.jsonl", [user("the tests again")])
    assert [r["snippet"] for r in same(folder, "tests")] == ["the tests again"]
    newest = rows(folder, "SELECT max(id) FROM items")[0][0]
    assert isinstance(newest, int) and newest > max(gone)


def file_of(folder: Path, session: str) -> int:
    return int(rows(folder, "SELECT id FROM files WHERE path = ?", str(folder / f"{session}.jsonl"))[0][0])


def test_an_index_whose_full_text_rows_mostly_point_at_nothing_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = two_sessions(tmp_path)
    same(folder, "parrot")
    (folder / f"{A}.jsonl").unlink()  # most of the items
    same(folder, "parrot")
    orphans = meta(folder, "orphans")
    assert isinstance(orphans, int) and orphans > 2
    monkeypatch.setattr(indexer, "ORPHANS", orphans + 1)
    indexer.connect_write(index_path(folder)).close()  # fewer than that: kept as it is
    assert meta(folder, "orphans") == orphans and rows(folder, "SELECT count(*) FROM items") == [(2,)]
    monkeypatch.setattr(indexer, "ORPHANS", orphans)
    indexer.connect_write(index_path(folder)).close()  # most of the ids given out point at nothing: made again
    assert meta(folder, "orphans") is None and rows(folder, "SELECT count(*) FROM items") == [(0,)]
    assert [r["snippet"] for r in same(folder, "parrot")] == ["the parrot said hello", "hello parrot"]


def test_a_reply_streaming_when_indexed_is_taken_out_with_its_text_read_again(tmp_path: Path) -> None:
    folder = two_sessions(tmp_path)
    path = folder / f"{B}.jsonl"
    with path.open("ab") as out:
        out.write(encode([Delta(text="half a macaw")], first_seq=3))
    assert [r["kind"] for r in same(folder, "macaw")] == ["partial"]
    with path.open("ab") as out:
        out.write(encode([Delta(text=" story"), assistant("half a macaw story")], first_seq=4))
    assert [(r["seq"], r["kind"]) for r in same(folder, "macaw")] == [(5, "message")]
    assert meta(folder, "orphans") is None  # the partial item's rows were taken out, its deltas read again
    items = {ident for (ident,) in rows(folder, "SELECT id FROM items")}
    assert {ident for (ident,) in rows(folder, "SELECT rowid FROM fts WHERE fts MATCH 'mac AND caw'")} <= items
