"""wren_tui.portable: each named operation does its work by the system's call and by its fallback, and
the CLI works as a Mac user's does (tests/os_sim: what CPython on macOS lacks removed, /proc hidden)."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import wren_tui
from tests.conftest import MACOS_SIM, OS_SIM, REPO, run_wren
from wren_tui import portable
from wren_tui.agent.workspace import prepare_workspace

PACKAGE = Path(wren_tui.__file__).parent
MAC = {"WREN_SIMULATE_OS": "macos", "PYTHONPATH": os.pathsep.join([str(OS_SIM), str(REPO)])}


def mac_python(code: str, *, stdin: int | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, **MAC}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# --- the grep: nothing outside portable.py names a Linux-only call ----------------------------------

LINUX_ONLY = re.compile(
    r"os\.(fdatasync|copy_file_range|memfd_create|O_NOATIME|O_PATH|O_DIRECT|O_TMPFILE|posix_fadvise|pipe2"
    r"|sched_getaffinity|MFD_\w+)\b|\"/proc\b|'/proc\b|fcntl\.F_SETPIPE_SZ|fcntl\.F_OFD_|hasattr\(os,|getattr\(os,"
)
# Left to the Windows work (issue 33's other half), never to grow: fcntl imported at the top, SIGHUP.
WINDOWS_LEFT = re.compile(r"signal\.SIGHUP|^\s*import fcntl", re.MULTILINE)
WINDOWS_LEFT_FILES = {
    "agent/chat.py",
    "agent/session.py",
    "cli/exits.py",
    "cli/mirror.py",
    "cli/options.py",
    "journal/huge_line.py",
    "journal/locks.py",
}


def _sources() -> Iterator[tuple[str, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name != "portable.py":
            yield name, path.read_text(encoding="utf-8")


def test_no_module_but_portable_names_a_linux_only_call_or_reads_proc() -> None:
    found = [f"{name}: {m.group(0)}" for name, text in _sources() for m in LINUX_ONLY.finditer(text)]
    assert found == []


def test_fcntl_at_import_and_sighup_are_in_no_more_modules_than_before() -> None:
    found = {name for name, text in _sources() if WINDOWS_LEFT.search(text)}
    assert found <= WINDOWS_LEFT_FILES


def test_every_test_the_simulated_macos_run_names_is_there() -> None:
    for node in MACOS_SIM:
        file, _sep, name = node.partition("::")
        text = (REPO / file).read_text(encoding="utf-8")
        assert not name or re.search(rf"^(async )?def {name}\(", text, re.MULTILINE), node


# --- the named operations, by the system's call and by the fallback ---------------------------------


@pytest.fixture(params=["system", "fallback"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "fallback":
        monkeypatch.setattr(portable, "_copy_file_range", None)
        monkeypatch.setattr(portable, "_memfd_create", None)
    return str(request.param)


def _file(path: Path, data: bytes = b"") -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, data)
    return fd


def test_copy_range_copies_the_range_appends_at_the_position_or_writes_at_an_offset(tmp_path: Path, way: str) -> None:
    data = bytes(range(256)) * 9000  # more than one buffer of the fallback
    src, dst = _file(tmp_path / "src", data), _file(tmp_path / "dst", b"head:")
    try:
        assert portable.copy_range(src, dst, 10, 1_500_000) == 1_500_000
        assert (tmp_path / "dst").read_bytes() == b"head:" + data[10:1_500_000]
        assert portable.copy_range(src, dst, 0, 4, dst_offset=1) == 4
        assert (tmp_path / "dst").read_bytes() == b"h" + data[:4] + data[10:1_500_000]
        # To the source's end (None), and a range past the end stops there.
        out = _file(tmp_path / "whole")
        assert portable.copy_range(src, out, 0, None, dst_offset=0) == len(data)
        assert portable.copy_range(src, out, len(data) - 3, len(data) + 100, dst_offset=len(data)) == len(data)
        assert (tmp_path / "whole").read_bytes() == data + data[-3:]
        os.close(out)
    finally:
        os.close(src)
        os.close(dst)


def test_copy_range_goes_on_by_reads_and_writes_where_the_kernel_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_args: object) -> int:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(portable, "_copy_file_range", refuse)
    src, dst = _file(tmp_path / "src", b"0123456789"), _file(tmp_path / "dst")
    assert portable.copy_range(src, dst, 2, 8) == 8
    assert (tmp_path / "dst").read_bytes() == b"234567"


def test_a_memory_file_is_private_readable_writable_and_leaves_no_name(
    tmp_path: Path, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(portable.tempfile, "tempdir", None)  # read TMPDIR again
    fd = portable.memory_file("wren-test")
    try:
        os.write(fd, b"lines\n")
        assert os.pread(fd, 100, 0) == b"lines\n"
        if way == "fallback":
            assert os.fstat(fd).st_mode & 0o777 == 0o600
        assert os.get_inheritable(fd) is False
    finally:
        os.close(fd)
    assert list(tmp_path.iterdir()) == []  # neither the file nor its folder is left


def test_the_full_fsync_falls_back_to_fsync_where_the_filesystem_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    monkeypatch.setattr(portable, "_F_FULLFSYNC", 51)  # macOS's number: an unknown command to Linux
    monkeypatch.setattr(portable, "_fcntl_mod", __import__("fcntl"))
    monkeypatch.setattr(portable.os, "fsync", synced.append)
    fd = _file(tmp_path / "j", b"x")
    try:
        portable._full_fsync(fd)
        assert synced == [fd]
    finally:
        os.close(fd)
    with pytest.raises(OSError) as raised:
        portable._full_fsync(fd)  # a closed descriptor is an error, not a reason to fall back
    assert raised.value.errno == errno.EBADF


def test_the_optional_flags_are_zero_where_the_system_has_none() -> None:
    code = """
        from wren_tui import portable
        print(portable.O_NOATIME, portable.O_PATH, portable.O_DIRECT, portable.O_TMPFILE)
        print(portable.DURABLE_SYNC, portable.COPY_RANGE, portable.MEMORY_FILE, portable.LIVENESS)
        print(portable.usable_cpus() >= 1, portable.HAS_FORK)
    """
    proc = mac_python(code)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split("\n")[:3] == [
        "0 0 0 0",
        "F_FULLFSYNC pread/write unlinked temporary file F_GETLK",
        "True True",
    ]


def test_proc_is_hidden_by_the_hook_and_each_reader_of_it_takes_its_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(portable, "_proc", None)
    assert not portable.has_proc()
    with pytest.raises(FileNotFoundError):
        portable.read_proc("locks")
    with pytest.raises(FileNotFoundError):
        portable.proc_pids()
    assert list(portable.open_files(str(os.getpid()), ".py")) == []
    assert portable.open_flags(str(os.getpid()), "0") is None


# --- the writer's mark: asked without taking it, from another process --------------------------------

WRITER = """
    import os, sys
    from wren_tui.journal.events import RunStart
    from wren_tui.journal.writer import JournalWriter
    w = JournalWriter.create(sys.argv[1])
    w.append(RunStart(pid=os.getpid(), cwd="/w", model="scripted", version="test"))
    print("ready", flush=True)
    sys.stdin.readline()
    w.close()
"""


def _writer(path: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), str(path)],
        env={**os.environ, **env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line == "ready\n", proc.stderr.read() if proc.stderr else line
    return proc


def _end(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("\n")
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0


def _ls_state(folder: Path, env: dict[str, str]) -> str:
    proc = run_wren(["ls", "--json", "--dir", str(folder)], cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert len(rows) == 1, rows
    return str(rows[0]["state"])


@pytest.mark.parametrize("writer_os", ["linux", "macos"])
def test_a_running_session_is_live_in_wren_ls_under_the_simulated_macos_and_not_after(
    tmp_path: Path, writer_os: str
) -> None:
    journal = tmp_path / "j" / "s-20261207-000000-aaaa.jsonl"
    writer = _writer(journal, MAC if writer_os == "macos" else {})
    try:
        assert _ls_state(journal.parent, MAC) == "live"
        assert _ls_state(journal.parent, {}) == "live"
    finally:
        _end(writer)
    assert _ls_state(journal.parent, MAC) != "live"


def test_a_second_writer_under_the_simulated_macos_is_refused_and_the_first_named(tmp_path: Path) -> None:
    journal = tmp_path / "j" / "s-20261207-000000-bbbb.jsonl"
    first = _writer(journal, MAC)
    try:
        second = mac_python(
            f"""
            from wren_tui.journal.errors import JournalLocked
            from wren_tui.journal.writer import JournalWriter
            try:
                JournalWriter.open({str(journal)!r})
            except JournalLocked as exc:
                print(exc.holder)
            """
        )
        out, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert out.strip() == str(first.pid)
    finally:
        _end(first)


def test_a_viewer_process_sees_its_writer_through_the_open_file_even_after_the_journal_moved(tmp_path: Path) -> None:
    journal = tmp_path / "j" / "s-20261207-000000-cccc.jsonl"
    writer = _writer(journal, MAC)
    try:
        reader = mac_python(
            f"""
            import os
            from wren_tui.tui.sources.local import LocalJournal
            source = LocalJournal({str(journal)!r})
            assert source.open()
            os.rename({str(journal)!r}, {str(journal.with_name("moved.jsonl"))!r})
            print(source.writer_alive())
            """
        )
        out, err = reader.communicate(timeout=60)
        assert reader.returncode == 0, err
        assert out.strip() == "True"
    finally:
        _end(writer)


# --- the CLI as a Mac user runs it -------------------------------------------------------------------


def test_the_demo_runs_under_the_simulated_macos_and_its_journal_is_whole(tmp_path: Path) -> None:
    workspace = prepare_workspace(tmp_path / "ws")
    proc = run_wren(
        ["run", "--dir", "../journals", "--yes", "run the tests, find the failing case and fix it"],
        cwd=workspace,
        env=MAC,
    )
    assert proc.returncode == 0, proc.stderr
    (journal,) = (tmp_path / "journals").glob("*.jsonl")
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    assert events[-1]["type"] == "run_end" and events[-1]["reason"] == "done"
    assert _ls_state(journal.parent, MAC) == "done"


def test_the_simulation_removes_what_macos_lacks_in_every_python_it_starts() -> None:
    proc = mac_python(
        """
        import fcntl, os, select, signal
        gone = [n for n in ("fdatasync", "copy_file_range", "memfd_create", "O_NOATIME", "pipe2") if hasattr(os, n)]
        gone += [n for n in ("F_OFD_GETLK", "F_SETPIPE_SZ") if hasattr(fcntl, n)]
        gone += [n for n in ("epoll",) if hasattr(select, n)]
        gone += [n for n in ("SIGRTMIN",) if hasattr(signal, n)]
        print(gone, fcntl.F_FULLFSYNC)
        """
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == "[] 51"
    assert signal.SIGHUP  # this process is untouched
