"""The terminal tests' tmux: a server of its own, the venv under test on PATH, nothing left behind."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tmux import BIN, terminal

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_a_terminal_runs_on_its_own_server_with_this_venvs_wren_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As inside a user's tmux: a TMUX that points at their server, whose environment has no venv.
    monkeypatch.setenv("TMUX", f"{tmp_path / 'users-server'},1,0")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with terminal() as term:
        term.start(["sh", "-c", "command -v wren; pwd"], tmp_path, (100, 10))
        screen = term.wait_for("WREN-EXITED-0")
        assert str(BIN / "wren") in screen
        assert str(tmp_path.resolve()) in screen
        server, socket = term.server, term.socket
        assert socket is not None and socket.name == server
        assert term.tmux("has-session", "-t", "t", check=False).returncode == 0
    gone = subprocess.run(["tmux", "-L", server, "has-session"], capture_output=True, text=True)
    assert gone.returncode != 0
    assert not socket.exists()
