"""A journal that can take no more bytes stops the run with a sentence naming the file, and loses nothing.

The child process gets a file-size limit (RLIMIT_FSIZE), so the kernel itself refuses the write that
would cross it (a short write, then EFBIG), exactly where a full disk would: in the middle of a line.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from tests.agent.conftest import only_journal
from wren_tui.journal.reader import read_events

LIMIT = 3_000  # bytes: the journal fills up a few events into the run


def _limited() -> None:
    # Ignored, SIGXFSZ turns into an EFBIG error from write(); the default would kill the process.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def test_a_full_disk_stops_the_run_with_a_sentence_naming_the_journal(tmp_path: Path, workspace: Path) -> None:
    journals = tmp_path / "journals"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "wren_tui",
            "run",
            "--yes",
            "--workspace",
            str(workspace),
            "--dir",
            str(journals),
            "run the tests, find the failing case and fix it",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        preexec_fn=_limited,
    )
    path = only_journal(journals)
    assert proc.returncode == 1, proc.stderr
    assert str(path) in proc.stderr
    assert "failed (File too large)" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "reopen it. The run stopped; nothing more was recorded." in proc.stderr
    # Nothing after a partial record: the journal ends on a whole line and reads to its end.
    result = read_events(path)
    assert result.stop is None
    assert path.stat().st_size == result.good_bytes <= LIMIT
    assert len(result.events) >= 3
    assert f"ends at seq {result.events[-1].seq}" in proc.stderr
