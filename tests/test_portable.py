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
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import wren_tui
from tests.conftest import MACOS_SIM, OS_SIM, REPO, run_wren
from wren_tui import portable

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
    # and what Windows lacks, which the reading commands reach: portable has each with its fallback
    r"|os\.(pread|pwrite|O_CLOEXEC|O_NOFOLLOW|O_NONBLOCK|O_DIRECTORY)\b"
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
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
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
    fd = _file(tmp_path / "k", b"y")
    try:
        portable.full_sync(fd)  # a fork's file before its rename: the same call, and the same fallback
        assert synced[-1] == fd
    finally:
        os.close(fd)


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
    if sys.argv[2] == "reopen":  # as `wren resume` does: the journal read under the lock, then appended to
        w.close()
        w = JournalWriter.open(sys.argv[1], fsync="none")
    print("ready", flush=True)
    sys.stdin.readline()
    w.close()
"""


def _writer(path: Path, env: dict[str, str], how: str = "create") -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), str(path), how],
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


def test_a_reopened_journal_is_live_though_its_reading_closed_a_descriptor_of_it(tmp_path: Path) -> None:
    # macOS's record locks belong to the process: closing the descriptor the reading used drops them.
    journal = tmp_path / "j" / "s-20261207-000000-dddd.jsonl"
    writer = _writer(journal, MAC, "reopen")
    try:
        assert _ls_state(journal.parent, MAC) == "live"
    finally:
        _end(writer)


def test_a_refused_second_writer_in_the_same_process_leaves_the_first_one_live(tmp_path: Path) -> None:
    from wren_tui.journal.errors import JournalLocked
    from wren_tui.journal.events import RunStart
    from wren_tui.journal.locks import lock_holder
    from wren_tui.journal.writer import JournalWriter

    path = tmp_path / "s-20261207-000000-eeee.jsonl"
    with JournalWriter.create(path, fsync="none") as first:
        first.append(RunStart(pid=os.getpid(), cwd="/w", model="scripted", version="test"))
        with pytest.raises(JournalLocked):
            JournalWriter.open(path)
        assert lock_holder(path) == os.getpid()
    assert lock_holder(path) is None


def test_a_forked_child_does_not_count_itself_among_the_journals_writers(tmp_path: Path) -> None:
    from wren_tui.journal import locks
    from wren_tui.journal.writer import JournalWriter

    path = tmp_path / "s-20261207-000000-ffff.jsonl"
    with JournalWriter.create(path, fsync="none"):
        st = path.stat()
        key = (st.st_dev, st.st_ino)  # this journal's: other tests of the same process may write others
        assert key in locks._held
        pid = os.fork()
        if pid == 0:
            os._exit(1 if key in locks._held else 0)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert key not in locks._held


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
            from wren_tui.sessions.local import LocalJournal
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
    workspace = tmp_path / "ws"
    prepared = run_wren(["demo", "--prepare", str(workspace)], cwd=tmp_path, env=MAC)
    assert prepared.returncode == 0, prepared.stderr
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


def test_plain_search_and_ls_over_every_agents_sessions_with_opencode_and_aider_under_the_simulated_macos(
    tmp_path: Path,
) -> None:
    from tests.foreign.test_aider import history
    from tests.foreign.test_opencode import database
    from tests.search.test_cli_search_agents import CLAUDE, CODEX, EXTERNAL, PI, WREN, sessions
    from tests.tui.journals import user, write_journal

    write_journal(tmp_path / "wren" / f"{WREN}.jsonl", [user("a function, please")])
    claude = tmp_path / "claude" / "projects" / "-Users-philipp-dev"
    codex = tmp_path / "codex" / "sessions" / "2026" / "01" / "25"
    pi = tmp_path / "pi" / "sessions" / "--Users-philipp-dev--"
    for folder in (claude, codex, pi):
        folder.mkdir(parents=True)
    (claude / "8122657c-fe54-4dc9-89a3-20049e8a84f7.jsonl").write_bytes(CLAUDE.read_bytes())
    (codex / "rollout-2026-01-25T10-31-58-crud.jsonl").write_bytes(CODEX.read_bytes())
    (pi / PI.name).write_bytes((EXTERNAL / "pi" / "agentlogs_crud.jsonl").read_bytes())
    database(tmp_path / "data" / "opencode")  # where OpenCode keeps it: $XDG_DATA_HOME/opencode/opencode.db
    project = tmp_path / "project"
    history(project)  # aider's, in the folder wren runs in
    env = {
        **MAC,
        "WREN_DIR": str(tmp_path / "wren"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    found = run_wren(["search", "--regex", "[a-z]", "--json"], cwd=project, env=env)
    assert found.returncode == 0, found.stderr
    assert {agent for agent, _session in sessions(found)} == {"wren", "claude", "codex", "pi", "opencode", "aider"}
    listed = run_wren(["ls", "--agent", "all"], cwd=project, env=env)
    assert listed.returncode == 0, listed.stderr
    assert all(agent in listed.stdout for agent in ("opencode", "aider", "claude", "codex", "pi"))


def test_a_run_killed_with_sigkill_under_the_simulated_macos_is_resumed_in_another_process(tmp_path: Path) -> None:
    from tests.waiting import until
    from wren_tui.journal.events import Recovery, RunEnd, ToolStart
    from wren_tui.journal.reader import read_events
    from wren_tui.journal.store import new_session_id

    workspace = tmp_path / "ws"
    assert run_wren(["demo", "--prepare", str(workspace)], cwd=tmp_path, env=MAC).returncode == 0
    sid, task = new_session_id(), "run `sleep 60`"
    journal = tmp_path / "journals" / f"{sid}.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")} | MAC
    run = subprocess.Popen(
        [sys.executable, "-m", "wren_tui", "run", "--dir", "../journals", "--yes", "--session-id", sid, task],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        until(
            lambda: journal.exists() and any(isinstance(e, ToolStart) for e in read_events(journal).events),
            "the command to start",
        )
        assert _ls_state(journal.parent, MAC) == "live"
    finally:
        run.kill()  # SIGKILL: nothing of Wren's runs after it
        run.wait(timeout=30)
    assert _ls_state(journal.parent, MAC) != "live"
    resumed = run_wren(["resume", "--dir", "../journals", "--yes", "--assume-failed", sid], cwd=workspace, env=MAC)
    assert resumed.returncode == 0, resumed.stderr
    events = read_events(journal).events
    assert any(isinstance(e, Recovery) for e in events)
    assert isinstance(events[-1], RunEnd)


def test_no_module_expands_a_home_with_path_expanduser() -> None:
    """`Path.expanduser` raises for `~user` of no user (a typo would be a traceback); `os.path.expanduser` leaves it
    as typed, and the command then says the path is not there."""
    offending = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ".expanduser()" in line
    ]
    assert offending == []
