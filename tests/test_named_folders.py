"""A journals folder named with --dir or WREN_DIR that is not there: every command that reads it refuses it alike.

The default folder may simply not be made yet; a named one is a typo until it exists. `ls` and
`search` said so; `watch` opened an empty browser and `mirror` shipped nothing, with exit 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_wren

COMMANDS = {
    "ls": ["ls"],
    "search": ["search", "anything"],
    "watch": ["watch"],
    "watch --serve": ["watch", "--serve", "--port", "1"],
    "mirror": ["mirror", "--url", "nats://127.0.0.1:1", "--once"],
}


@pytest.mark.parametrize("named_by", ["--dir", "WREN_DIR"])
def test_every_command_refuses_a_named_journals_folder_that_is_not_there(tmp_path: Path, named_by: str) -> None:
    missing = tmp_path / "no-such-folder"
    for name, argv in COMMANDS.items():
        if named_by == "--dir":
            proc = run_wren([*argv, "--dir", str(missing)], cwd=tmp_path, timeout=60)
        else:
            proc = run_wren(argv, cwd=tmp_path, env={"WREN_DIR": str(missing)}, timeout=60)
        assert proc.returncode == 1, (name, proc.stdout, proc.stderr)
        assert proc.stderr == (
            f"wren: {missing}: no such folder; name the journals folder with --dir (or WREN_DIR), or leave both out\n"
        ), name
        assert proc.stdout == "", name
    assert not missing.exists()  # nothing made it
