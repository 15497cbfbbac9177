"""`wren watch --only` in a real terminal (tmux) while a real run appends to the journal it shows."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.tmux import clean_env, python_argv, terminal

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

SID = "s-20260101-000000-abcd"
TASK = "run the tests, find the failing case and fix it"


def _wait_for_file(path: Path, run: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert run.poll() is None, f"the run ended (status {run.returncode}) before its journal appeared"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_watch_only_writes_filters_a_live_run_as_it_appends(tmp_path: Path) -> None:
    workspace, folder = tmp_path / "ws", tmp_path / "journals"
    prepared = subprocess.run(python_argv("demo", "--prepare", str(workspace)), env=clean_env(), capture_output=True)
    assert prepared.returncode == 0, prepared.stderr
    # The scripted model, paced like a real one (about 10 s): run the tests, read two files, edit, run again.
    argv = python_argv("run", "--yes", "--pace", "--dir", str(folder), "--session-id", SID, TASK)
    run = subprocess.Popen(argv, cwd=workspace, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_for_file(folder / f"{SID}.jsonl", run)
        with terminal() as term:
            term.start(python_argv("watch", SID, "--dir", str(folder), "--only", "writes"), tmp_path, (120, 40))
            screen = term.wait_for("only writes")
            assert run.poll() is None and " live " in screen, "the run ended before the viewer showed it live"
            # The edit lands while the run goes on; the replies that read files never show.
            screen = term.wait_for("edited stats/core.py", timeout=30)
            assert "→ read_file(" not in screen
            assert run.wait(timeout=60) == 0, run.stderr.read() if run.stderr else b""
            # 34 items besides the streamed deltas (each followed by its reply, so none is an item):
            # the 12 of the three write calls (ask, start, end, result) show, the other 22 are hidden,
            # the workspace snapshots among them (one before each write call, one at the turn's end).
            screen = term.wait_for(" done ")  # how the run ended, as `wren ls` says it
            assert "only writes: 22 hidden" in term.wait_for("only writes: 22 hidden")
            assert "Fixed:" not in screen
            term.keys("0")
            term.wait_for("Fixed: `test_mean_of_empty_list_is_zero` passes now")
            assert "only writes" not in term.capture()
            term.keys("3")
            term.wait_gone("Fixed: `test_mean_of_empty_list_is_zero` passes now")
            term.keys("q")
            term.wait_for("WREN-EXITED-0")
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
