"""wren_tui.journal as a library: one curated, typed surface, loaded part by part."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import wren_tui
import wren_tui.journal as journal

INIT = Path(journal.__file__)


def _imports(body: list[ast.stmt]) -> dict[str, str]:
    """Each name imported by the `from .module import ...` statements of `body`, and its module."""
    return {
        alias.name: node.module or ""
        for node in body
        if isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names
    }


def test_every_public_name_is_loaded_on_first_use_from_the_module_the_type_checker_sees() -> None:
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    # Nothing is imported with the package: each name with its own module, when it is first asked for.
    assert _imports(tree.body) == {}
    lazy = _imports(guarded.body)
    assert lazy == journal._HOMES
    assert sorted(journal.__all__) == sorted(lazy)
    for name in journal.__all__:
        home = importlib.import_module(f"wren_tui.journal.{lazy[name]}")
        assert getattr(journal, name) is getattr(home, name), name


def test_no_internal_name_is_public() -> None:
    assert not [name for name in journal.__all__ if name.startswith("_")]
    for internal in ("native_line", "python_line", "write_all", "ensure_dir", "native_lines", "LineError", "Lines"):
        assert not hasattr(journal, internal), internal


def test_reading_loads_neither_the_writer_nor_the_fork_until_they_are_asked_for() -> None:
    code = (
        "import sys\nfrom wren_tui.journal import read_events, Stop\n"
        "print(sorted(m for m in sys.modules if m.startswith('wren_tui.journal')))\n"
        "from wren_tui.journal import fork, JournalWriter\n"
        "print(fork.__module__, JournalWriter.__module__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded, used = done.splitlines()
    assert "wren_tui.journal.reader" in loaded
    assert "wren_tui.journal.writer" not in loaded and "wren_tui.journal.forking" not in loaded
    assert used == "wren_tui.journal.forking wren_tui.journal.writer"


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        journal.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("an unknown name was found")


def test_the_package_says_it_is_typed() -> None:
    assert (Path(wren_tui.__file__).parent / "py.typed").is_file()
    assert "py.typed" in (Path(wren_tui.__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
