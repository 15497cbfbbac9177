"""Search's index has one home, search/: the commands (cli/) and the viewer (tui/) open it through
`folder_index.Index` and hold no connection of their own, so none of their modules imports sqlite3,
runs a statement, names SQL or opens the database with the index's own functions.

Read from the source with `ast`, as tests/test_layers.py reads imports: every import counts, wherever it
is, and every string constant (a docstring too: a statement quoted in one is a statement moved back).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import wren_tui
from wren_tui.search import indexer
from wren_tui.search.agents import sessions_of
from wren_tui.search.engine import Filters, Hit, search
from wren_tui.search.folder_index import Index
from wren_tui.search.query import Query

PACKAGE = Path(wren_tui.__file__).parent
FENCED = ("cli", "tui")
# What opens or writes the index's database below `Index`: only search/ calls these.
INDEX_INTERNALS = {"connect_read", "connect_write", "refresh", "IndexRead", "StoredSummaries"}
# A statement as SQLite reads it, at the start of a string or after a quote, in capitals as the repo writes them.
SQL = re.compile(
    r"(^|[\"'`(]\s*)(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PRAGMA|VACUUM)"
    r"\b(?!:)"
    r"|\bSELECT\b.*\bFROM\b|\bMATCH \?"
)
EXECUTING = {"execute", "executemany", "executescript"}


def trespasses(source: str, where: str = "<text>") -> list[str]:
    """What in the module `source` reaches into the index's database: one line each, "line N: what"."""
    found = []
    for node in ast.walk(ast.parse(source, where)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            found += [f"line {line}: import {a.name}" for a in node.names if a.name.split(".")[0] == "sqlite3"]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] == "sqlite3":
                found.append(f"line {line}: from {module} import")
            found += [f"line {line}: imports {a.name}" for a in node.names if a.name in INDEX_INTERNALS]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTING:
            found.append(f"line {line}: calls .{node.func.attr}()")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
            found.append(f"line {line}: SQL {node.value[:60]!r}")
    return found


def _modules() -> list[Path]:
    return sorted(path for folder in FENCED for path in (PACKAGE / folder).rglob("*.py"))


def test_no_module_of_the_commands_or_the_viewer_imports_sqlite3_or_holds_sql() -> None:
    modules = _modules()
    assert any(path.name == "searching.py" for path in modules) and any(path.name == "results.py" for path in modules)
    found = {
        str(path.relative_to(PACKAGE)): said
        for path in modules
        if (said := trespasses(path.read_text(encoding="utf-8"), str(path)))
    }
    assert found == {}


@pytest.mark.parametrize(
    "source",
    [
        "import sqlite3\n",
        "def f():\n    import sqlite3.dbapi2 as db\n",
        "from sqlite3 import Connection\n",
        "from ..search.index import connect_read\n",
        "from ..search.indexer import connect_write, refresh\n",
        "def f(db):\n    db.execute('x')\n",
        "q = 'SELECT path FROM listings'\n",
        "def f():\n    '''Ends the read: COMMIT.'''\n    run(\"COMMIT\")\n",
        "x = f'SELECT i.id FROM {table} JOIN items'\n",
        "x = 'BEGIN IMMEDIATE'\n",
    ],
)
def test_the_fence_sees_each_way_back_in(source: str) -> None:
    assert trespasses(source) != []


@pytest.mark.parametrize(
    "source",
    [
        "from ..search.folder_index import Index\n",
        "x = 'Select a session, then press Enter'\n",
        "x = 'the search index could not be brought up to date'\n",
        "from ..search import indexer\n",
    ],
)
def test_the_fence_lets_the_commands_words_and_the_index_object_through(source: str) -> None:
    assert trespasses(source) == []


def _folder(tmp_path: Path) -> Path:
    from tests.tui.journals import SESSION, assistant, user, write_journal

    folder = tmp_path / "journals"
    folder.mkdir()
    write_journal(folder / f"{SESSION}.jsonl", [user("where is the parrot"), assistant("the parrot sleeps")])
    return folder


def test_an_index_opened_without_a_writer_makes_nothing_and_leaves_the_files_to_be_read(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    before = sorted(folder.rglob("*"))
    viewer = Index(folder)  # as the viewer opens it: no writer
    assert viewer.begin(Query.of("parrot")) is None and viewer.listing_cache() is None
    assert sorted(folder.rglob("*")) == before and not viewer.path.exists() and viewer.said == []


def test_an_index_with_the_writer_answers_what_a_search_without_it_finds_then_a_reader_reads_it(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    query = Query.of("parrot")

    def hits(index: Index | None) -> list[tuple[str, int]]:
        read = None if index is None else index.begin(query)
        sources = sessions_of("wren", folder)
        answers = None if index is None else index.answers(sources)
        assert (answers is None) == (index is None), None if index is None else index.said
        found = [
            (hit.snippet, hit.item.seq)
            for hit in search(sources, query, Filters(), index=answers)
            if isinstance(hit, Hit)
        ]
        if read is not None:
            read.close()
        return found

    without = hits(None)
    assert len(without) == 2
    assert hits(Index(folder, writer=indexer)) == without  # built, then answered
    assert Index(folder).path.is_file()
    assert hits(Index(folder)) == without  # read-only, as the viewer reads it: every file as the index knows it
