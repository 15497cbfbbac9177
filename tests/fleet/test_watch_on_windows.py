"""A fleet read from the simulated Windows: `wren ls`, `log` and `watch` on a server a Linux mirror ships to.

The mirror (a writer: Linux's) ships a journal; the reading commands run with Windows' import surface
simulated (tests/simulated_windows, as in tests/test_simulated_windows.py) and print what they print
on Linux, and the viewer shows the session and quits with 0.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fleet.conftest import NatsServer
from tests.fleet.test_mirror import mirror_once, write_journal
from tests.test_simulated_windows import on_linux, on_windows, windows_env
from tests.tmux import python_argv, terminal


def test_ls_and_log_of_a_fleet_print_what_they_print_on_linux(nats_server: NatsServer, tmp_path: Path) -> None:
    journal = write_journal(tmp_path / "laptop")
    assert mirror_once(nats_server, journal.parent, "laptop")[0] == 0
    for args in (
        ["ls", nats_server.url],
        ["ls", "--json", nats_server.url],
        ["log", f"{nats_server.url}/laptop/{journal.stem}"],
    ):
        windows, linux = on_windows(args, tmp_path), on_linux(args, tmp_path)
        assert linux.returncode == 0 and linux.stdout, linux.stderr
        assert (windows.returncode, windows.stdout, windows.stderr) == (0, linux.stdout, linux.stderr)


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_watch_of_a_fleet_shows_a_session_a_mirror_shipped(nats_server: NatsServer, tmp_path: Path) -> None:
    journal = write_journal(tmp_path / "laptop")
    assert mirror_once(nats_server, journal.parent, "laptop")[0] == 0
    here = tmp_path / "here"
    with terminal() as term:
        term.start(python_argv("watch", "--dir", str(here), nats_server.url), tmp_path, (160, 30), env=windows_env())
        screen = term.wait_for(journal.stem, timeout=30)
        assert "laptop" in screen
        term.keys("Enter")
        term.wait_for("divide() has no guard for b == 0", timeout=30)
        term.keys("q")
        term.wait_for("WREN-EXITED-0", timeout=30)
    assert not here.exists()  # the viewer wrote nothing
