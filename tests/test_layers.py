"""The layers of wren_tui as a table, checked on its import graph; and the viewer's rule: it cannot write.

journal imports nothing of ours; snapshots (the workspace snapshot store, a fork with files, rewind,
blame) imports journal, and agent imports both; export, search, fleet and foreign (other agents' session
files) import journal, and search imports foreign too (it reads other agents' sessions); tui (the
viewer) imports journal, foreign, export, search, and fleet (a session mirrored to a fleet's server);
cli imports anything and nothing imports cli but the entry point (`python -m wren_tui`), which
the viewer starts only where CLIMBS lists it. Outside `journal.forking` and `foreign.fork` (a new
journal beside the one shown, or from another agent's session), `export` (a file that is never a
journal, written only by `export.atomic`) and its child `tui.write.__main__` (a fork with files), nothing
the viewer loads opens a file for writing, and neither does the child process it starts to decode a
huge line. The checker (tests/importgraph.py) is shown to catch each kind of violation on a small
package planted in tmp_path.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import wren_tui
from tests.importgraph import Module, closure, layer_of, layer_violations, scan, writers_in

PACKAGE = Path(wren_tui.__file__).parent

# Module (or package) -> layer; the longest prefix wins. Adding a layer is one line here and one below.
LAYERS: dict[str, str] = {
    "wren_tui": "base",  # the top package's __init__: the version
    "wren_tui.portable": "base",  # what the systems do differently, one named operation each
    "wren_tui.forwarding": "base",  # a member that is another object's (`Forward`)
    "wren_tui.records": "base",  # a value class without dataclasses' import (`Record`, `Frozen`)
    "wren_tui.journal": "journal",
    # The workspace's files through a session's history: the snapshot store, a fork with files, rewind, blame.
    "wren_tui.snapshots": "snapshots",
    "wren_tui.agent": "agent",
    "wren_tui.tui": "tui",
    # A session, whatever wrote it (a Wren journal, another agent's file, its export, a fleet's mirror): found by
    # what a person names and read; the floor below the viewer and the commands. Imports no Textual.
    "wren_tui.sessions": "sessions",
    "wren_tui.fleet": "fleet",
    "wren_tui.foreign": "foreign",
    "wren_tui.search": "search",
    # Wren's own store of other agents' sessions (`wren keep`): reads their files, writes only its own store.
    "wren_tui.keep": "keep",
    # Sessions written out for people without a terminal (Markdown, HTML, JSON): reads journals only.
    "wren_tui.export": "export",
    "wren_tui.cli": "cli",
    "wren_tui.__main__": "main",  # `python -m wren_tui`: runs the CLI
}
# Layer -> the layers it may import, besides itself.
ALLOWED: dict[str, tuple[str, ...]] = {
    "base": (),
    "journal": ("base",),
    "snapshots": ("base", "journal"),
    "agent": ("base", "journal", "snapshots"),
    # A fork with files and the changes since each point: through snapshots.forking.
    "sessions": ("base", "journal", "snapshots", "foreign", "fleet", "keep"),  # over a fleet: through fleet.remote
    # The snapshot store: only its child `tui.write` (a fork with files).
    "tui": ("base", "journal", "snapshots", "sessions", "foreign", "search", "export", "fleet", "keep"),
    "fleet": ("base", "journal"),
    "foreign": ("base", "journal"),
    "search": ("base", "journal", "foreign", "keep"),  # the kept copies of sessions the agents lost
    "keep": ("base", "journal", "foreign"),
    "export": ("base", "journal"),
    "cli": ("base", "journal", "snapshots", "agent", "sessions", "tui", "fleet", "foreign", "search", "export", "keep"),
    "main": ("base", "cli"),
}
# The viewer's ways to write: a fork (a new journal beside the one shown, or from another agent's
# session) and an export (a file that is never a journal: export.target refuses a .jsonl name and
# the journal itself).
FORK = "wren_tui.journal.forking"
FOREIGN_FORK = "wren_tui.foreign.fork"
EXPORT = "wren_tui.export"
# The third: a child process, `python -m wren_tui.tui.write` (a fork with files, and reading the snapshot
# store), which the viewer starts and never imports.
WRITE_CHILD = "wren_tui.tui.write.__main__"
# A session's fork with files and its points' changes (`sessions.local`'s clean_points and fork_at, loaded when
# called): the commands' way in. The viewer never calls them; its way is the child above.
FILES_FORK = "wren_tui.snapshots.forking"
# Climbs the viewer makes by starting the CLI itself as a child (`python -m wren_tui` runs its __main__),
# each listed with why; any other fails the layer test. The rewind: its preview and question are
# `wren rewind`'s own (cli/rewind.py), not yet a library call the viewer's child could make.
CLI_CHILD = "wren_tui.__main__"
CLIMBS = {"wren_tui.tui.wren_child (tui) imports wren_tui.__main__ (main)"}
# A session kept in a database or in Markdown is read through private places of Wren's own, never
# the agent's files: its export in an anonymous in-memory file (memfd: os.write, os.pwrite), and a
# database's copy in a temporary folder Wren makes and removes (`foreign.snapshot`).
PRIVATE = {
    "wren_tui.foreign.exported line": {"os.write"},
    "wren_tui.sessions.exported line": {"os.pwrite"},
    # The named operations write only where their caller says: copy_range into the descriptor it is
    # given, memory_file into an anonymous file (memfd, or where there is none, a 0600 file made in
    # a 0700 folder of its own and both removed at once).
    "wren_tui.portable line": {
        "os.write",
        "os.pwrite",
        "tempfile.mkdtemp",
        "os.open with O_RDWR, O_CREAT, O_EXCL",
        "os.unlink",
        "os.rmdir",
        "os.open with O_RDWR, O_CREAT, O_EXCL, O_TEMPORARY",  # memory_file on Windows: removed on close
        "os.fchmod",  # set_mode: an export's new temporary file
        "os.chmod",
    },
    # Another agent's session a host kept, read back from a fleet's server (`wren watch nats://`): laid out for its
    # reader in a private folder the viewer makes with mkdtemp and removes when it ends, never anywhere else.
    "wren_tui.fleet.kept line": {".mkdir()", "open in mode 'xb'"},
    "wren_tui.tui.fleet_app line": {"tempfile.mkdtemp", "shutil.rmtree"},
    # portable.copy_range writes into the copy it opened ('wb'), from a descriptor of the agent's file opened read-only.
    "wren_tui.foreign.snapshot line": {
        "open in mode 'wb'",
        "tempfile.mkdtemp",
        "shutil.rmtree",
        ".unlink()",
    },
}


def _not_private(writes: list[str]) -> list[str]:
    kept = []
    for sentence in writes:
        where, _sep, what = sentence.partition(": ")
        module = where.rsplit(" ", 1)[0]
        if what not in PRIVATE.get(module, set()):
            kept.append(sentence)
    return kept


def test_every_import_of_wren_tui_keeps_to_the_layer_table() -> None:
    modules = scan(PACKAGE)
    assert set(LAYERS) <= set(modules), "the layer table names a module that is not there"
    found = {re.sub(r" at line \d+$", "", sentence) for sentence in layer_violations(modules, LAYERS, ALLOWED)}
    assert found == CLIMBS


def test_the_cli_is_one_package_and_nothing_but_the_entry_point_imports_it() -> None:
    modules = scan(PACKAGE)
    cli = {name for name in modules if layer_of(name, LAYERS) == "cli"}
    assert cli == {name for name in modules if name == "wren_tui.cli" or name.startswith("wren_tui.cli.")}
    assert "wren_tui.cli.exits" in cli
    importers = {
        name
        for name, module in modules.items()
        if name not in cli and any(imported.startswith("wren_tui.cli") for imported in module.imports)
    }
    assert importers == {"wren_tui.__main__"}


def test_outside_fork_nothing_the_viewer_loads_opens_a_file_for_writing() -> None:
    modules = scan(PACKAGE)
    viewer = [name for name in modules if layer_of(name, LAYERS) == "tui"]
    assert "wren_tui.tui.screens.session" in viewer and not any(name.startswith("wren_tui.cli") for name in viewer)
    loaded = closure(modules, viewer, without=[FORK, FOREIGN_FORK, EXPORT, WRITE_CHILD, FILES_FORK, CLI_CHILD])
    assert _not_private(writers_in(modules, loaded)) == []
    # An export writes in one place: its atomic output (a temporary name, fsync, rename).
    exporting = [m for m in modules if m == EXPORT or m.startswith(EXPORT + ".")]
    assert {w.split(" line ")[0] for w in writers_in(modules, exporting)} == {"wren_tui.export.atomic"}
    # Nor the snapshot store: only the viewer's child (`tui.write`) reads it, for a fork with files.
    # (its package's __init__ is a docstring, imported on the way to the cut-out `snapshots.forking`).
    assert not any(name.startswith("wren_tui.snapshots.") for name in loaded)
    # Search's index: the viewer reads it (read-only), and never loads what writes it.
    assert "wren_tui.search.index" in loaded and "wren_tui.search.indexer" not in loaded
    # The cut is what keeps it so: through fork the viewer reaches the writer.
    assert "wren_tui.journal.writer" not in loaded
    assert "wren_tui.journal.writer" in closure(modules, viewer)
    assert writers_in(modules, closure(modules, viewer)) != []


def test_the_viewers_child_is_in_its_graph_and_reaches_no_cli() -> None:
    modules = scan(PACKAGE)
    # The viewer starts it (`python -m wren_tui.tui.write`) and does not import it.
    assert WRITE_CHILD in modules["wren_tui.tui.write_child"].imports
    importers = {name for name, module in modules.items() if WRITE_CHILD in module.imports and name != WRITE_CHILD}
    assert importers == {"wren_tui.tui.write_child"}
    assert not any(name.startswith("wren_tui.cli") for name in closure(modules, [WRITE_CHILD]))
    # It writes through the fork and the snapshot store: the cut above is what keeps the viewer's rule.
    assert FORK in closure(modules, [WRITE_CHILD])


def test_the_child_that_decodes_a_huge_line_is_in_the_viewer_graph_and_writes_nothing() -> None:
    modules = scan(PACKAGE)
    child = "wren_tui.journal.huge_line"
    # It starts itself (`python -m wren_tui.journal.huge_line`): that edge is in the graph, not a writer.
    assert child in modules[child].imports
    assert modules[child].writes == []
    viewer = [name for name in modules if layer_of(name, LAYERS) == "tui"]
    assert child in closure(modules, viewer, without=[FORK, FOREIGN_FORK, EXPORT, WRITE_CHILD, FILES_FORK, CLI_CHILD])
    # What it loads writes nothing either, but the private places of PRIVATE (`portable`'s memory file and
    # copy, which the child never calls: it only reads its descriptor).
    assert _not_private(writers_in(modules, closure(modules, [child]))) == []


def test_the_sessions_floor_loads_neither_textual_nor_the_viewer_nor_the_commands() -> None:
    names = sorted(
        f"wren_tui.sessions.{p.stem}" for p in (PACKAGE / "sessions").glob("*.py") if p.name != "__init__.py"
    )
    code = (
        f"import sys\nfor name in {names!r}:\n    __import__(name)\n"
        "print(sorted({m.split('.')[0] if not m.startswith('wren_tui.') else '.'.join(m.split('.')[:2])"
        " for m in sys.modules if m.startswith(('textual', 'rich', 'wren_tui.tui', 'wren_tui.cli'))}))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert len(names) >= 6 and result.stdout.strip() == "[]"


def test_loading_the_viewer_loads_no_agent_code() -> None:
    code = "import sys, wren_tui.tui.app; print(sorted(m for m in sys.modules if m.startswith('wren_tui.agent')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


# --- the checker catches what it should, on a package planted in tmp_path --------------------

FAKE_LAYERS = {"fake": "base", "fake.journal": "journal", "fake.tui": "tui", "fake.cli": "cli"}
FAKE_ALLOWED: dict[str, tuple[str, ...]] = {
    "base": (),
    "journal": ("base",),
    "tui": ("base", "journal", "fleet"),  # the viewer over a fleet reads it through fleet.remote
    "cli": ("base", "journal", "tui"),
}


def _plant(root: Path, files: dict[str, str]) -> Path:
    package = root / "fake"
    for name, text in {"__init__.py": "", "journal/__init__.py": "", "tui/__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return package


def test_the_layer_check_catches_imports_against_the_table_however_they_are_written(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "cli.py": "from .tui import view\n",
            "journal/reader.py": "def late():\n    from ..tui import view\n",  # inside a function, relative
            "tui/view.py": "import importlib\n\ndef run():\n    return importlib.import_module('fake.cli')\n",
            "tui/screen.py": "from .. import cli\nfrom ..journal import reader\n",
            "extra/__init__.py": "",  # a subpackage the table does not name
        },
    )
    found = layer_violations(scan(package), FAKE_LAYERS, FAKE_ALLOWED)
    assert sorted(found) == [
        "fake.extra is in no layer: add it to the layer table",
        "fake.journal.reader (journal) imports fake.tui (tui) at line 2",
        "fake.journal.reader (journal) imports fake.tui.view (tui) at line 2",
        "fake.tui.screen (tui) imports fake.cli (cli) at line 1",
        "fake.tui.view (tui) imports fake.cli (cli) at line 4",
    ]


def test_the_write_check_catches_each_way_of_writing_and_passes_reading(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "tui/reads.py": """
                import os
                from pathlib import Path

                def read(path, fd):
                    os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
                    open(path, encoding="utf-8").read()
                    Path(path).open("rb")
                    Path(path).read_text()
                    os.pread(fd, 10, 0)
                    return "a".replace("a", "b")
            """,
            "tui/writes.py": """
                import os
                import subprocess
                import sys
                from pathlib import Path
                from shutil import copy as duplicate

                def write(path, flags):
                    os.open(path, os.O_RDWR)
                    os.open(path, flags)
                    open(path, "a")
                    Path(path).open(mode="w")
                    Path(path).write_text("x")
                    Path(path).replace("elsewhere")
                    os.replace(path, "elsewhere")
                    duplicate(path, "copy")
                    subprocess.run(["rm", path])
                    subprocess.run([sys.executable, "-m", "fake.journal.child"])
            """,
            "journal/child.py": "import os\nos.unlink('x')\n",
        },
    )
    modules = scan(package)
    assert writers_in(modules, ["fake.tui.reads"]) == []
    assert writers_in(modules, ["fake.tui.writes"]) == [
        "fake.tui.writes line 9: os.open with O_RDWR",
        "fake.tui.writes line 10: os.open with flags the check cannot read (flags)",
        "fake.tui.writes line 11: open in mode 'a'",
        "fake.tui.writes line 12: .open in mode 'w'",
        "fake.tui.writes line 13: .write_text()",
        "fake.tui.writes line 14: .replace(target)",
        "fake.tui.writes line 15: os.replace",
        "fake.tui.writes line 16: shutil.copy",
        "fake.tui.writes line 17: subprocess.run starts a program the check cannot see into",
    ]
    # The child it starts as `python -m` is in its graph, with the child's own write.
    assert "fake.journal.child line 2: os.unlink" in writers_in(modules, closure(modules, ["fake.tui.writes"]))


def test_a_child_started_as_python_m_package_runs_its_main_and_an_unlisted_climb_is_caught(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "__main__.py": "from .cli import main\nmain()\n",
            "cli.py": "def main():\n    open('x', 'w')\n",
            "tui/child.py": "import subprocess\nimport sys\n\nsubprocess.run([sys.executable, '-m', 'fake'])\n",
        },
    )
    modules = scan(package)
    assert "fake.__main__" in modules["fake.tui.child"].imports
    layers = {**FAKE_LAYERS, "fake.__main__": "main"}
    allowed = {**FAKE_ALLOWED, "main": ("base", "cli")}
    assert layer_violations(modules, layers, allowed) == ["fake.tui.child (tui) imports fake.__main__ (main) at line 4"]
    assert "fake.cli line 2: open in mode 'w'" in writers_in(modules, closure(modules, ["fake.tui.child"]))


def test_the_viewer_rule_follows_imports_through_parent_packages_and_cuts_only_fork(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            # A package __init__ runs whenever one of its modules is imported.
            "journal/__init__.py": "from .writer import append\n",
            "journal/writer.py": "def append(path):\n    open(path, 'ab')\n",
            "journal/fork.py": "from .writer import append\n",
            "journal/reader.py": "",
            "tui/view.py": "from ..journal.reader import *\nfrom ..journal import fork\n",
        },
    )
    modules = scan(package)
    loaded = closure(modules, ["fake.tui", "fake.tui.view"], without=["fake.journal.fork"])
    assert "fake.journal.writer" in loaded  # reached through fake/journal/__init__.py, not through fork
    assert writers_in(modules, loaded) == ["fake.journal.writer line 2: open in mode 'ab'"]


_LAZY_INIT = """
    from __future__ import annotations

    import importlib
    from typing import TYPE_CHECKING

    from .reader import read

    if TYPE_CHECKING:
        from .writer import append

    _HOMES = {"append": "writer"}


    def __getattr__(name):
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
"""


def test_names_a_package_loads_on_first_use_are_imported_by_whoever_asks_for_them(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "journal/__init__.py": _LAZY_INIT,
            "journal/reader.py": "def read(path):\n    return open(path).read()\n",
            "journal/writer.py": "def append(path):\n    open(path, 'ab')\n",
            "tui/reads.py": "from ..journal import read\nfrom ..journal.reader import read as again\n",
            "tui/asks.py": "from ..journal import append\n",
            "tui/star.py": "from ..journal import *\n",
            "tui/attribute.py": "import fake.journal as j\n\ndef go(path):\n    j.append(path)\n",
        },
    )
    modules = scan(package)
    assert modules["fake.journal"].writes == []  # its run-time import is the table's, not an unseen one
    assert "fake.journal.writer" not in closure(modules, ["fake.tui.reads"])
    assert writers_in(modules, closure(modules, ["fake.tui.reads"])) == []
    for asker in ("fake.tui.asks", "fake.tui.star", "fake.tui.attribute"):
        assert "fake.journal.writer" in closure(modules, [asker]), asker
    # For the layers, the package's names loaded on first use are its own imports too.
    layers = {**FAKE_LAYERS, "fake.journal.writer": "tui"}
    assert "fake.journal (journal) imports fake.journal.writer (tui) at line 10" in layer_violations(
        modules, layers, FAKE_ALLOWED
    )


def test_a_run_time_import_without_a_table_of_names_or_type_only_imports_without_getattr_count_as_before(
    tmp_path: Path,
) -> None:
    package = _plant(
        tmp_path,
        {
            # __getattr__ imports at run time, with no TYPE_CHECKING block saying what.
            "journal/__init__.py": """
                import importlib

                def __getattr__(name):
                    return importlib.import_module(name)
            """,
            # TYPE_CHECKING imports with no __getattr__: what they name is the package's own import.
            "tui/__init__.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from ..journal import writer
            """,
            "journal/writer.py": "def append(path):\n    open(path, 'ab')\n",
        },
    )
    modules = scan(package)
    assert modules["fake.journal"].writes == [
        "line 5: imports a module it names at run time; the check cannot see which"
    ]
    assert "fake.journal.writer" in modules["fake.tui"].imports


def test_the_layer_table_in_the_docs_says_what_the_layer_data_allows() -> None:
    # docs/development.md ("Where things live") is read by people; LAYERS and ALLOWED are what is checked.
    docs = (PACKAGE.parent / "docs" / "development.md").read_text()
    rows = re.findall(r"^\| `wren_tui/(\w+)/`[^|]*\|[^|]*\| ([^|]+) \|$", docs, flags=re.MULTILINE)
    assert rows, "docs/development.md has no layer table"
    ours = {layer for layer in ALLOWED if layer not in ("base", "main")}
    documented = {}
    for package, cell in rows:
        layer = LAYERS[f"wren_tui.{package}"]
        if cell.startswith("nothing of ours"):
            documented[layer] = set()
        elif cell.startswith("anything"):
            documented[layer] = ours - {layer}
        else:
            documented[layer] = set(cell.split(", "))
    assert documented == {layer: set(ALLOWED[layer]) - {"base"} for layer in ours}


def _circles(modules: dict[str, Module]) -> list[list[str]]:
    """The import circles among `modules`: each a set of two or more that import one another, sorted.

    Every import counts (in functions too); a module reaching its own parent package does not, since
    Python runs the parents first whatever a module imports.
    """
    edges = {
        name: sorted(t for t in module.imports if t in modules and t != name and not name.startswith(t + "."))
        for name, module in modules.items()
    }
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in order:
            continue
        # Tarjan's strongly connected components, without recursion (a deep chain would exhaust it).
        work = [(root, iter(edges[root]))]
        order[root] = low[root] = len(order)
        stack.append(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    work.append((target, iter(edges[target])))
                elif target in stack:
                    low[node] = min(low[node], order[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_two_modules_of_wren_tui_import_each_other() -> None:
    assert _circles(scan(PACKAGE)) == []


def test_the_circle_check_finds_a_circle_through_a_function_level_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def later():\n    from .c import C\n")
    (package / "c.py").write_text("from .a import b\nclass C: ...\n")
    (package / "d.py").write_text("from . import a\n")
    assert _circles(scan(package)) == [["pkg.a", "pkg.b", "pkg.c"]]
