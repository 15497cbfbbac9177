"""The fleet's layers: it builds on the journal alone; the agent, the core commands and the local viewer skip it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import wren_tui

PACKAGE = Path(wren_tui.__file__).parent


def imports_of(path: Path) -> list[str]:
    """Absolute names of every Wren module a file imports, relative imports resolved."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = parts[:-1]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = list(package[: len(package) - node.level + 1])
                base = ".".join([*parent, base]) if base else ".".join(parent)
            names.extend(f"{base}.{alias.name}" for alias in node.names)
    return [n for n in names if n.startswith("wren_tui")]


def test_the_fleet_imports_only_the_journal_of_wrens_own_code() -> None:
    files = sorted((PACKAGE / "fleet").glob("*.py"))
    assert len(files) > 5
    # The base modules below the journal too: what the systems do differently, a member forwarded to another's,
    # a value class without dataclasses.
    base = ("wren_tui.__version__", "wren_tui.portable", "wren_tui.forwarding", "wren_tui.records")
    allowed = ("wren_tui.journal.", "wren_tui.fleet.", *base)
    offending = [f"{p.name} imports {n}" for p in files for n in imports_of(p) if not n.startswith(allowed)]
    assert offending == []


def test_the_agent_and_the_journal_never_import_the_fleet() -> None:
    files = [p for layer in ("agent", "journal") for p in sorted((PACKAGE / layer).rglob("*.py"))]
    offending = [f"{p} imports {n}" for p in files for n in imports_of(p) if n.startswith("wren_tui.fleet")]
    assert offending == []


def test_the_viewer_reads_the_fleet_only_in_its_fleet_modules_and_the_local_viewer_loads_no_nats_client() -> None:
    files = sorted((PACKAGE / "tui").rglob("*.py"))
    readers = {
        p.relative_to(PACKAGE).as_posix() for p in files if any(n.startswith("wren_tui.fleet") for n in imports_of(p))
    }
    assert readers == {
        "tui/fleet_app.py",
        "tui/screens/fleet_browser.py",
    }
    # Below the viewer, the sessions floor: `opening` knows a fleet's session by its nats:// name, `remote` reads it.
    sessions = sorted((PACKAGE / "sessions").rglob("*.py"))
    fleet = {p.name for p in sessions if any(n.startswith("wren_tui.fleet") for n in imports_of(p))}
    assert fleet == {"opening.py", "remote.py"}
    code = (
        "import sys, wren_tui.tui.app, wren_tui.cli.watch, wren_tui.tui.screens.session; "
        "print(sorted(m for m in sys.modules if m.startswith(('nats', 'wren_tui.fleet.remote'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


def test_the_import_check_resolves_relative_imports() -> None:
    assert "wren_tui.journal.reader.open_for_reading" in imports_of(PACKAGE / "fleet" / "source.py")
    assert "wren_tui.fleet.FleetError" in imports_of(PACKAGE / "fleet" / "names.py")


def test_loading_the_command_line_loads_no_nats_client() -> None:
    code = (
        "import sys, wren_tui.cli; wren_tui.cli.build_parser(); "
        "print(sorted(m for m in sys.modules if m.startswith('nats')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


def _without_nats(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`wren ARGS` in a Python where nats-py cannot be imported (an install without the fleet extra)."""
    code = f"import sys; sys.modules['nats'] = None; from wren_tui.cli import main; sys.exit(main({args!r}))"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_without_the_fleet_extra_the_fleet_commands_say_how_to_install_it(tmp_path: Path) -> None:
    for args in (
        ["mirror", "--url", "nats://127.0.0.1:9", "--once"],
        ["ls", "nats://127.0.0.1:9"],
        ["watch", "nats://127.0.0.1:9"],
    ):
        result = _without_nats(args, tmp_path)
        assert result.returncode == 1, result.stderr
        assert result.stderr == (
            "wren: the fleet needs nats-py, which is not installed: pip install 'wren-tui[fleet]' "
            "(it brings nats-server too)\n"
        )


def test_without_the_fleet_extra_the_local_commands_work(tmp_path: Path) -> None:
    result = _without_nats(["ls", "--dir", str(tmp_path)], tmp_path)
    assert (result.returncode, result.stdout) == (0, f"no sessions in {tmp_path}\n")
