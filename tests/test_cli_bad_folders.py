"""A journals folder Wren cannot use: every command says so in one sentence naming it, never a traceback.

The folders: a file, /proc, /sys, a read-only file system, one without write permission, a full one.
Root's permission override is dropped with setpriv for the "no permission" case; the read-only and
full file systems are small tmpfs mounts, so those cases need a user allowed to mount.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import run_wren
from wren_tui.journal.events import ChatMessage, Message, RunEnd, RunStart
from wren_tui.journal.store import journal_paths
from wren_tui.journal.writer import JournalWriter

SID = "s-20260101-000000-abcd"
STATUSES = {0, 1, 2, 3, 4}
DROP_ROOT = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def _journal(folder: Path) -> Path:
    path = folder / f"{SID}.jsonl"
    with JournalWriter.create(path, fsync="none") as w:
        w.append(RunStart(pid=os.getpid(), cwd=str(folder), model="scripted", version="test"))
        w.append(Message(message=ChatMessage(role="user", content="hello")))
        w.append(Message(message=ChatMessage(role="assistant", content="hello to you")))
        w.append(RunEnd(reason="done"))
    return path


@contextlib.contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()}); the case needs one")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _read_only(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    with _tmpfs(tmp_path / "ro", "1m") as folder:
        _journal(folder)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder, []


def _full(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    with _tmpfs(tmp_path / "full", "256k") as folder:
        _journal(folder)
        filler = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(filler, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass  # full
        finally:
            os.close(filler)
        yield folder, []


def _no_permission(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    folder = tmp_path / "not mine"
    folder.mkdir()
    _journal(folder).chmod(0o444)
    folder.chmod(0o555)
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: root's permission override cannot be dropped")
        prefix = DROP_ROOT
    try:
        yield folder, prefix
    finally:
        folder.chmod(0o755)


def _a_file(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    path = tmp_path / "a file"
    path.write_text("not a folder\n")
    yield path, []


def _system(name: str) -> Callable[[Path], Iterator[tuple[Path, list[str]]]]:
    def folder(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
        if not Path(name).is_dir():
            pytest.skip(f"{name} is not mounted here")
        yield Path(name), []

    return folder


FOLDERS = {
    "a file": _a_file,
    "/proc": _system("/proc"),
    "/sys": _system("/sys"),
    "read-only": _read_only,
    "no permission": _no_permission,
    "full": _full,
}
COMMANDS = {
    "run": ["run", "--yes", "hello"],
    "chat": ["chat"],
    "fork": ["fork", SID, "2"],
    "resume": ["resume", SID, "hello again"],
    "ls": ["ls"],
    "log": ["log", SID],
    # A session that is not there: the viewer itself only reads, and would open on one that is.
    "watch": ["watch", "--pick", "s-20991231-000000-none"],
}


@pytest.fixture(params=list(FOLDERS))
def bad_folder(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path, list[str]]]:
    make = FOLDERS[request.param]
    for folder, prefix in make(tmp_path):
        yield request.param, folder, prefix


def _wren(prefix: list[str], args: list[str], cwd: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "wren_tui", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_folder_wren_cannot_use_gets_one_sentence_naming_it_never_a_traceback(
    bad_folder: tuple[str, Path, list[str]], command: str, tmp_path: Path
) -> None:
    kind, folder, prefix = bad_folder
    here = tmp_path / "here"
    here.mkdir(exist_ok=True)
    os.chmod(here, 0o777)  # reachable with root's override dropped
    proc = _wren(prefix, [*COMMANDS[command], "--dir", str(folder)], here, stdin="a first message\n")
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert proc.returncode in STATUSES, (proc.returncode, proc.stderr)
    if proc.returncode != 0:
        errors = [line for line in proc.stderr.splitlines() if line.startswith("wren: ")]
        assert errors and str(folder) in errors[0], proc.stderr
    if command in ("run", "chat") and kind not in ("/proc", "/sys"):
        assert proc.returncode == 1, (kind, proc.stdout, proc.stderr)
    if folder.is_dir() and os.access(folder, os.R_OK):
        assert [p.name for p in journal_paths(folder)] in ([], [f"{SID}.jsonl"]), "an empty journal was left"


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        # Ignored, SIGXFSZ turns into an EFBIG error from write(): the disk is "full" past `limit` bytes.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_run_whose_first_event_cannot_be_written_leaves_no_empty_journal_to_become_the_latest(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "journals"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    proc = subprocess.run(
        [sys.executable, "-m", "wren_tui", "run", "--yes", "--dir", str(folder), "hello"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_file_size_limit(50),  # the first line is longer
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "writing its first event failed (File too large), so it was removed" in proc.stderr
    assert journal_paths(folder) == []
    resumed = run_wren(["resume", "--dir", str(folder)], cwd=tmp_path)
    assert resumed.returncode == 1 and f"no sessions in {folder}" in resumed.stderr


def test_watch_of_a_journals_folder_that_is_a_file_says_so_before_opening_anything(tmp_path: Path) -> None:
    path = tmp_path / "a file"
    path.write_text("not a folder\n")
    proc = run_wren(["watch", "--dir", str(path)], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == f"wren: {path} is not a folder; give --dir the journals folder (or set WREN_DIR)\n"


def test_demo_with_a_journals_folder_that_is_a_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "a file"
    path.write_text("not a folder\n")
    proc = run_wren(["demo", "--dir", str(path)], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == f"wren: {path} is not a folder; give --dir a folder you can write (or set WREN_DIR)\n"
