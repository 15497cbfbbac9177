"""`wren search` starts without the code it never runs: the export package and forking are not imported.

The exit table knows their errors by where they are defined (`cli.exits.LAZY_EXITS`), so the
commands that raise them still exit with their status and sentence (tests/test_exit_policy.py for a
fork point, tests/test_export.py for a refused export); here, that the names there are the classes'.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from wren_tui.cli.exits import LAZY_EXITS, Exit, exit_for
from wren_tui.export import ExportRefused
from wren_tui.journal.forking import NotAForkPoint

NEVER = ("wren_tui.export", "wren_tui.journal.forking")


def test_wren_search_imports_neither_the_export_package_nor_forking(tmp_path: Path) -> None:
    (tmp_path / "journals").mkdir()
    code = (
        "import sys\nfrom wren_tui.cli import main\n"
        f"status = main(['search', 'parrot', '--dir', {str(tmp_path / 'journals')!r}, '--json'])\n"
        f"print(sorted(m for m in sys.modules if m.startswith({NEVER!r})), status)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.stdout.split("\n")[-2:] == ["[] 1", ""], result.stderr


def test_the_errors_known_by_name_are_those_classes_and_keep_their_status() -> None:
    assert {(c.__module__, c.__qualname__) for c in (NotAForkPoint, ExportRefused)} == set(LAZY_EXITS)
    assert exit_for(NotAForkPoint(Path("s.jsonl"), 4, [])) is Exit.USAGE
    assert exit_for(ExportRefused("no such folder")) is Exit.ERROR
