"""Each command starts without the code it never runs; `wren --help` and `--version` import no command.

`wren search` does not import the export package or forking. `wren --help`, `--version`, no command
or an unknown one list the commands from `cli.SUMMARIES` without importing any command's module, and
each command imports its own module and no other command's.

The exit table knows their errors by where they are defined (`cli.exits.LAZY_EXITS`), so the
commands that raise them still exit with their status and sentence (tests/test_exit_policy.py for a
fork point, tests/test_export.py for a refused export); here, that the names there are the classes'.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wren_tui.cli import COMMANDS, SUMMARIES, build_parser, listing_parser
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


# The command modules each command loads besides its own (ls shows the snapshot store's space).
ALSO = {"ls": {"snapshots"}}


def _command_modules_loaded(args: list[str]) -> list[str]:
    code = (
        "import json, sys\nfrom wren_tui.cli import COMMANDS, main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "names = {'wren_tui.cli.' + c.replace('-', '_'): c for c in COMMANDS}\n"
        "print(json.dumps(sorted(names[m] for m in sys.modules if m in names)), file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    names: list[str] = json.loads(result.stderr.strip().splitlines()[-1])
    return names


@pytest.mark.parametrize("args", [["--help"], ["--version"], [], ["no-such-command"]], ids=repr)
def test_wren_help_and_version_import_no_commands_module(args: list[str]) -> None:
    assert _command_modules_loaded(args) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_imports_its_own_module_and_no_other_commands(command: str) -> None:
    assert set(_command_modules_loaded([command, "--help"])) == {command} | ALSO.get(command, set())


def test_wren_help_lists_each_command_as_its_module_registers_it() -> None:
    full, commands = build_parser()
    registered = {a.dest: a.help for a in full._subparsers._group_actions[0]._choices_actions}  # type: ignore[union-attr]
    assert registered == SUMMARIES and list(commands) == list(COMMANDS)
    assert listing_parser().format_help() == full.format_help()
