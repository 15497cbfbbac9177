"""The viewer is read-only by construction: it never imports the agent or the journal writer."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import wren_tui.tui

TUI = Path(wren_tui.tui.__file__).parent
FORBIDDEN = ("wren_tui.agent", "wren_tui.journal.writer")


def _imports(path: Path) -> list[str]:
    """Absolute names of every module a file imports, relative imports resolved."""
    package = "wren_tui." + ".".join(path.relative_to(TUI.parent).with_suffix("").parts[:-1])
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base]) if base else ".".join(parent)
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_no_viewer_module_imports_the_agent_or_the_writer() -> None:
    files = sorted(TUI.rglob("*.py"))
    assert len(files) > 5, f"expected the viewer's modules under {TUI}"
    offending = [
        f"{path.relative_to(TUI.parent.parent)} imports {name}"
        for path in files
        for name in _imports(path)
        if name.startswith(FORBIDDEN)
    ]
    assert offending == []


def test_the_import_check_sees_relative_imports(tmp_path: Path) -> None:
    # The check above must resolve `from ...agent import x` in a screen module to wren_tui.agent.
    screens = TUI / "screens" / "session.py"
    assert "wren_tui.journal.reader" in _imports(screens)
    assert "wren_tui.journal.forking.fork" in _imports(screens)


def test_loading_the_viewer_loads_no_agent_code() -> None:
    code = "import sys, wren_tui.tui.app; print(sorted(m for m in sys.modules if m.startswith('wren_tui.agent')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
