"""How the `wren` process starts: it loads a command's modules with the cyclic garbage collector off and freezes what
they made (`cli.loading`), while a program that calls `cli.main` keeps its collector as it was; its help is laid
out as argparse lays it out, the terminal's width asked once (`cli.Formatter`)."""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wren_tui import cli
from wren_tui.cli import main


def test_a_program_that_calls_main_keeps_its_garbage_collector_as_it_was(tmp_path: Path) -> None:
    frozen, enabled = gc.get_freeze_count(), gc.isenabled()
    main(["search", "needle", "--dir", str(tmp_path)])
    main(["ls", "--dir", str(tmp_path), "--json"])
    assert (gc.get_freeze_count(), gc.isenabled()) == (frozen, enabled)


def test_the_wren_process_loads_its_command_with_the_collector_off_then_collects_again(tmp_path: Path) -> None:
    code = (
        "import gc, json, sys\nfrom wren_tui import cli\n"
        "seen = []\nreal = cli.parse_args\n"
        "def parse(argv=None):\n    seen.append(gc.isenabled())\n    return real(argv)\n"
        "cli.parse_args = parse\n"
        f"sys.argv = ['wren', 'search', 'needle', '--dir', {str(tmp_path)!r}]\n"
        "status = cli.main()\n"
        "print(json.dumps([status, seen, gc.isenabled(), gc.get_freeze_count() > 0]), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ)
    status, seen, enabled, frozen = json.loads(done.stderr.strip().splitlines()[-1])
    assert status == 1  # no match: grep's 1
    assert seen == [False]  # the command's parser and modules loaded with no collection
    assert enabled and frozen  # collecting again once they were loaded; what they made frozen


@pytest.mark.parametrize("columns", ["50", "120", None])
def test_every_commands_help_is_laid_out_as_argparses_own_formatter_lays_it_out(
    monkeypatch: pytest.MonkeyPatch, columns: str | None
) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(cli, "_width", None)  # asked again under this COLUMNS
    for name, parser in cli.build_parser()[1].items():
        ours = parser.format_help()
        parser.formatter_class = argparse.HelpFormatter
        assert ours == parser.format_help(), name
