"""The index's place: never opened through a link, never another program's database, its owner's alone.

`<journals>/.index/search.sqlite` comes with the folder `--dir` names (a repository's `journals/`, a
shared folder): whatever is there may have been put there by someone else. A symbolic link (the file
or the folder) is refused with a sentence and the sessions are read; a database another program made
is moved aside untouched and a new index made; and what Wren makes is 0700 and 0600 whatever the umask,
beside the journals and in Wren's state folder (another agent's folder's index).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.tui.journals import assistant, user, write_journal
from wren_tui.search.index import APPLICATION_ID

CLAUDE = Path(__file__).resolve().parent.parent / "fixtures" / "external" / "claude-code" / "agentlogs_crud.jsonl"
SESSION = "s-20250302-100000-bbbb"


def journals(tmp_path: Path) -> Path:
    folder = tmp_path / "journals"
    write_journal(folder / f"{SESSION}.jsonl", [user("the parrot said hello"), assistant("hello parrot")])
    return folder


def other_program(path: Path) -> bytes:
    """Another program's database at `path`, of the shape the index once took for an old index of its own
    (a `meta` table holding a version, an `items` table): its bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value)")
    db.execute("INSERT INTO meta VALUES ('version', 3)")
    db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, note TEXT)")
    db.executemany("INSERT INTO items(note) VALUES (?)", [("the user's row",), ("another row",)])
    db.commit()
    db.close()
    return path.read_bytes()


def hits(folder: Path, *extra: str) -> tuple[list[tuple[str, int]], str]:
    result = run_wren(["search", "parrot", "--dir", str(folder), "--json", *extra], cwd=folder.parent)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    return [(r["session"], r["seq"]) for r in rows if r["type"] == "hit"], result.stderr


def test_a_linked_index_is_refused_and_the_linked_database_is_untouched(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    elsewhere = tmp_path / "elsewhere" / "app.sqlite"
    before = other_program(elsewhere)
    (folder / ".index").mkdir()
    (folder / ".index" / "search.sqlite").symlink_to(elsewhere)
    found, said = hits(folder)
    assert found == [(SESSION, 1), (SESSION, 2)] == hits(folder, "--no-index")[0]
    assert said.count("\n") == 1 and "is a symbolic link" in said and "search.sqlite" in said, said
    assert elsewhere.read_bytes() == before
    assert sorted(p.name for p in elsewhere.parent.iterdir()) == ["app.sqlite"]  # no -wal, no -shm made there
    # `wren ls --agent` keeps its listings in the same file: it refuses it too.
    claude = tmp_path / "claude" / "projects" / "-home-dev"
    claude.mkdir(parents=True)
    shutil.copy(CLAUDE, claude / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "WREN_DIR": str(folder)}
    listing = run_wren(["ls", "--agent", "claude"], cwd=tmp_path, env=env)
    assert listing.returncode == 0 and "8122657c" in listing.stdout, listing.stderr
    assert "is a symbolic link" in listing.stderr
    assert elsewhere.read_bytes() == before


def test_a_linked_index_folder_is_refused_and_the_database_in_its_target_is_untouched(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    target = tmp_path / "shared"
    before = other_program(target / "search.sqlite")
    (folder / ".index").symlink_to(target)
    found, said = hits(folder)
    assert found == [(SESSION, 1), (SESSION, 2)]
    assert "is a symbolic link" in said and ".index" in said, said
    assert (target / "search.sqlite").read_bytes() == before
    assert sorted(p.name for p in target.iterdir()) == ["search.sqlite"]


def test_another_programs_database_in_the_index_place_is_moved_aside_untouched(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    place = folder / ".index" / "search.sqlite"
    before = other_program(place)
    found, said = hits(folder)
    assert found == [(SESSION, 1), (SESSION, 2)]
    aside = place.with_name("search.sqlite.other-1")
    assert f"moved to {aside} untouched" in said, said
    assert aside.read_bytes() == before
    db = sqlite3.connect(place)
    try:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    finally:
        db.close()
    # The next search answers from the new index, with nothing more to say; the one set aside stays as it is.
    assert hits(folder) == (found, "")
    assert aside.read_bytes() == before


def test_an_index_wren_made_is_recognised_by_its_header_alone(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    hits(folder)
    place = folder / ".index" / "search.sqlite"
    header = place.read_bytes()[:100]
    assert header.startswith(b"SQLite format 3\x00") and int.from_bytes(header[68:72], "big") == APPLICATION_ID
    assert hits(folder) == ([(SESSION, 1), (SESSION, 2)], "")


@pytest.fixture
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    mask = int(request.param)
    was = os.umask(mask)
    try:
        yield mask
    finally:
        os.umask(was)


def modes(place: Path) -> dict[str, int]:
    """The permission bits of the index's folder and of each file SQLite keeps there."""
    found = {"folder": stat.S_IMODE(os.lstat(place.parent).st_mode)}
    for name in ("", "-wal", "-shm", "-journal"):
        if os.path.lexists(f"{place}{name}"):
            found[f"search.sqlite{name}"] = stat.S_IMODE(os.lstat(f"{place}{name}").st_mode)
    return found


@pytest.mark.parametrize("umask", [0o000, 0o022], indirect=True)
def test_the_index_is_its_owners_alone_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    folder = journals(tmp_path)
    place = folder / ".index" / "search.sqlite"
    hits(folder)
    # A reader holding the index open keeps SQLite's -wal and -shm there while the next search writes.
    reader = sqlite3.connect(f"file:{place}?mode=ro", uri=True)
    try:
        reader.execute("SELECT count(*) FROM files").fetchone()
        write_journal(folder / "s-20250303-100000-cccc.jsonl", [user("a second parrot")])
        hits(folder)
        seen = modes(place)
    finally:
        reader.close()
    assert {"search.sqlite-wal", "search.sqlite-shm"} <= seen.keys(), seen
    assert seen == {"folder": 0o700, **dict.fromkeys(set(seen) - {"folder"}, 0o600)}
    # Another agent's folder's index, kept in Wren's state folder.
    claude = tmp_path / "claude" / "projects" / "-home-dev"
    claude.mkdir(parents=True)
    shutil.copy(CLAUDE, claude / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl")
    state = tmp_path / "state"
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "XDG_STATE_HOME": str(state)}
    result = run_wren(["search", "joke", "--dir", str(claude)], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    name = hashlib.sha256(os.fsencode(os.path.realpath(claude))).hexdigest()[:16]
    kept = state / "wren" / "indexes" / name / "search.sqlite"
    assert modes(kept) == {"folder": 0o700, "search.sqlite": 0o600}


def test_an_index_an_older_wren_left_readable_by_all_is_made_private(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    hits(folder)
    place = folder / ".index" / "search.sqlite"
    place.chmod(0o644)
    hits(folder)
    assert stat.S_IMODE(place.stat().st_mode) == 0o600


def stamped(place: Path, application_id: int) -> None:
    db = sqlite3.connect(place)
    try:
        db.execute(f"PRAGMA application_id={application_id}")
        db.commit()
    finally:
        db.close()


def test_an_index_an_older_wren_made_without_the_application_id_is_kept_and_given_it(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    found, _ = hits(folder)
    place = folder / ".index" / "search.sqlite"
    stamped(place, 0)  # as a Wren before this one made it
    assert hits(folder) == (found, "")
    assert sorted(p.name for p in place.parent.iterdir() if ".other" in p.name) == []
    assert int.from_bytes(place.read_bytes()[68:72], "big") == APPLICATION_ID


def test_a_database_with_wrens_tables_and_one_more_is_not_taken_for_an_index(tmp_path: Path) -> None:
    folder = journals(tmp_path)
    hits(folder)
    place = folder / ".index" / "search.sqlite"
    stamped(place, 0)
    db = sqlite3.connect(place)
    db.execute("CREATE TABLE notes(body TEXT)")
    db.execute("INSERT INTO notes VALUES ('mine')")
    db.commit()
    db.close()
    before = place.read_bytes()
    found, said = hits(folder)
    assert found == [(SESSION, 1), (SESSION, 2)] and "moved to" in said
    assert place.with_name("search.sqlite.other-1").read_bytes() == before
