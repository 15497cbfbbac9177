"""What cannot be read is said, never silently left out: a link or FIFO named like a session, an agent's folder.

`wren ls` lists a link or a FIFO with a session's name in the journals folder as unreadable, with
why; `wren ls --agent` and `wren search --agent` say which of an agent's folders they could not read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.tui.journals import SESSION, finished_story, write_journal

AGENTS = Path(__file__).parent / "fixtures" / "agents"
LINK, FIFO = "s-20261201-000000-link", "s-20261201-000000-fifo"


def test_a_link_or_a_fifo_named_like_a_session_is_listed_as_unreadable_with_why(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    journal = write_journal(folder / f"{SESSION}.jsonl", finished_story())
    (folder / f"{LINK}.jsonl").symlink_to(journal)
    os.mkfifo(folder / f"{FIFO}.jsonl")
    proc = run_wren(["ls", "--dir", str(folder)], cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:]}
    assert set(rows) == {SESSION, LINK, FIFO}
    assert "unreadable" in rows[LINK] and "is a symbolic link; journals are opened only directly" in rows[LINK]
    assert "unreadable" in rows[FIFO] and "is a FIFO (named pipe), not a regular file" in rows[FIFO]
    assert proc.stderr.count("it is listed as unreadable") == 2
    listed = json.loads(run_wren(["ls", "--json", "--dir", str(folder)], cwd=tmp_path, timeout=60).stdout)
    assert {row["id"]: row["state"] for row in listed} == {SESSION: "done", LINK: "unreadable", FIFO: "unreadable"}


def _as_a_user_root_cannot_override() -> list[str]:
    """Root reads any folder: its override is dropped (setpriv), as another user's folder would be unreadable."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("needs setpriv to drop root's permission override")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]


def test_an_agent_folder_that_cannot_be_read_is_said_by_ls_and_search(tmp_path: Path) -> None:
    prefix = _as_a_user_root_cannot_override()
    projects = tmp_path / "home" / ".claude" / "projects"
    readable, closed = projects / "-work-a", projects / "-work-b"
    for folder, fixture in ((readable, "simple"), (closed, "multi-turn")):
        folder.mkdir(parents=True)
        shutil.copy(AGENTS / "claude-code" / f"{fixture}.jsonl", folder / f"{fixture}.jsonl")
    closed.chmod(0)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WREN_", "CLAUDE_"))}
    env.update(HOME=str(tmp_path / "home"), XDG_STATE_HOME=str(tmp_path / "state"))
    try:
        for argv, said in (
            (["ls", "--agent", "claude"], "they are not listed"),
            (["search", "--agent", "claude", "the"], "they were not searched"),
        ):
            proc = subprocess.run(
                [*prefix, sys.executable, "-m", "wren_tui", *argv],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 0, proc.stderr
            assert proc.stderr == f"wren: {closed}: permission denied, so its sessions cannot be read; {said}\n"
            assert "Traceback" not in proc.stderr and proc.stdout  # the readable folder's session is still there
    finally:
        closed.chmod(0o755)
