"""`wren watch --serve` as a user runs it, where it cannot serve: one sentence, never a traceback."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.conftest import run_wren
from tests.tui.journals import SESSION, finished_story, write_journal
from wren_tui.cli.serve import is_loopback, viewer_command


def test_a_port_in_use_is_one_sentence_and_exit_1_before_anything_is_promised(tmp_path: Path) -> None:
    write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", finished_story())
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = run_wren(["watch", "--serve", "--port", str(port), "--dir", str(tmp_path / "journals")], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""  # "serving the viewer at ..." is said only once it listens
    assert (
        proc.stderr.startswith(f"wren: cannot serve on 127.0.0.1:{port} (") and "choose another --port" in proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_pick_cannot_be_served(tmp_path: Path) -> None:
    write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", finished_story())
    proc = run_wren(["watch", "--serve", "--pick", "--dir", str(tmp_path / "journals")], cwd=tmp_path)
    assert proc.returncode == 2 and "cannot be used with --serve" in proc.stderr


def test_each_browser_s_viewer_runs_this_wren_on_the_same_folder_or_session(tmp_path: Path) -> None:
    session = tmp_path / "journals" / f"{SESSION}.jsonl"
    command = viewer_command(tmp_path / "journals", session, poll=True)
    assert command.endswith(f"-m wren_tui watch --dir {tmp_path / 'journals'} {session} --poll")
    filtered = viewer_command(tmp_path / "journals", None, poll=False, only="tools")
    assert filtered.endswith(f"-m wren_tui watch --dir {tmp_path / 'journals'} --only tools")
    assert [is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "192.168.1.5")] == [
        True,
        True,
        True,
        False,
        False,
    ]
