"""The coverage-guided fuzzer (atheris, where it installs) over the reader and the Tail, bounded in runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO
from tests.journal.helpers import write_journal
from tests.reliability.dial import scaled

pytest.importorskip(
    "atheris",
    reason="atheris is not installed: it is in the fuzz extra (pip install -e '.[dev,fuzz]', as CI does), which has "
    "wheels for Linux x86_64 but not every platform; hypothesis fuzzes the reader meanwhile",
)


def _fuzz(corpus: Path, runs: int, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.reliability.atheris_reader",
            f"-runs={runs}",
            "-max_len=4096",
            *extra,
            str(corpus),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_atheris_finds_no_input_on_which_the_reader_and_the_tail_disagree(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write_journal(corpus / "session.jsonl")
    for seed in sorted((FIXTURES / "seed").glob("*.jsonl")):
        shutil.copy(seed, corpus / seed.name)
    runs = scaled(ci=5_000, torture=500_000)
    proc = _fuzz(corpus, runs, f"-artifact_prefix={tmp_path}/")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"Done {runs} runs" in proc.stderr
    assert not list(tmp_path.glob("crash-*"))


def test_atheris_reports_an_input_that_breaks_a_check(tmp_path: Path) -> None:
    """The harness can fail: a check that rejects a NUL byte is caught and the input is saved."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "nul").write_bytes(b'{"seq":1}\x00\n')
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import sys, atheris\n"
        "from tests.reliability import atheris_reader as h\n"
        "def check(data):\n"
        "    h.check(data)\n"
        "    assert b'\\x00' not in data\n"
        "atheris.Setup(sys.argv, check)\n"
        "atheris.Fuzz()\n"
    )
    proc = subprocess.run(
        [sys.executable, str(probe), "-runs=100", f"-artifact_prefix={tmp_path}/", str(corpus)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode != 0
    assert list(tmp_path.glob("crash-*"))
