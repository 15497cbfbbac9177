"""Wren on Windows, simulated on Linux: never an import error, every reading command works, the agent refuses.

Each `wren` here runs with tests/simulated_windows on PYTHONPATH: its sitecustomize takes away what
CPython on Windows lacks (`fcntl`, `termios`, `pwd`, `grp`, `resource`; `os.pread`, `os.fork`,
`os.killpg`, `os.statvfs`, the `O_*` flags Windows has not; SIGHUP, SIGALRM, `setitimer`; `dir_fd`;
`/proc`; `ctypes.CDLL(None)`). The sessions it reads are recorded by the agent on Linux (a journal
made there and read on Windows, as a mirrored or copied one is) and the other agents' fixtures; what
each reading command prints is compared with what it prints on Linux. The agent's commands refuse
in one sentence naming WSL, exit 2, before anything is written. The fleet's viewer is in
tests/fleet/test_watch_on_windows.py; the operations of `wren_tui.portable` that stand in for the
missing calls are checked in-process at the end.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, REPO, run_wren
from tests.tmux import python_argv, terminal
from wren_tui import portable
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.store import journal_paths

SIMULATION = Path(__file__).resolve().parent / "simulated_windows"
AGENTS = FIXTURES / "agents"
TASK = "run the tests, find the failing case and fix it"
# One session file of each other agent (OpenCode's database and aider's Markdown included).
AGENT_FILES = [
    AGENTS / "claude-code" / "simple.jsonl",
    AGENTS / "codex" / "multi-turn.jsonl",
    AGENTS / "pi" / "tool-error.jsonl",
    AGENTS / "gemini-cli" / "simple.jsonl",
    AGENTS / "qwen-code" / "simple.jsonl",
    AGENTS / "copilot-cli" / "simple.jsonl",
    AGENTS / "opencode" / "simple.opencode.db",
    AGENTS / "aider" / "simple.chat.history.md",
]


def windows_env(**extra: str) -> dict[str, str]:
    """The environment of a `wren` on the simulated Windows."""
    return {"PYTHONPATH": os.pathsep.join([str(SIMULATION), str(REPO)]), **extra}


def on_windows(args: list[str], cwd: Path, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    return run_wren(args, cwd=cwd, env=windows_env(**env), timeout=timeout)


def on_linux(args: list[str], cwd: Path, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    # The same PYTHONPATH but for the simulation: the tests' own process may have one.
    return run_wren(args, cwd=cwd, env={"PYTHONPATH": str(REPO), **env}, timeout=timeout)


class Recorded:
    """A session the agent ran on Linux (the demo's fix, with snapshots), in a folder of its own."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.workspace = prepare_workspace(base / "ws")
        self.journals = base / "journals"
        done = on_linux(["run", "--yes", "--dir", str(self.journals), TASK], self.workspace, XDG_STATE_HOME=str(base))
        assert done.returncode == 0, done.stderr
        self.sid = journal_paths(self.journals)[0].stem

    def copy(self, to: Path) -> Path:
        """A copy of the journals folder, for a test that adds to it (a fork)."""
        shutil.copytree(self.journals, to)
        return to


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return Recorded(tmp_path_factory.mktemp("recorded"))


def test_the_simulation_lacks_what_windows_lacks(tmp_path: Path) -> None:
    probe = """
import ctypes, os, signal, json
gone = {}
for name in ("fcntl", "termios", "pwd", "grp", "resource", "tty"):
    try:
        __import__(name)
        gone[name] = False
    except ModuleNotFoundError:
        gone[name] = True
for name in ("pread", "pwrite", "fork", "killpg", "setsid", "getpgid", "statvfs", "fchmod",
             "O_NOFOLLOW", "O_CLOEXEC", "O_DIRECTORY", "O_NONBLOCK", "O_ACCMODE"):
    gone["os." + name] = not hasattr(os, name)
for name in ("SIGHUP", "SIGALRM", "SIGKILL", "setitimer", "alarm"):
    gone["signal." + name] = not hasattr(signal, name)
gone["/proc"] = not os.path.exists("/proc/self")
try:
    os.stat("x", dir_fd=0)
    gone["dir_fd"] = False
except NotImplementedError:
    gone["dir_fd"] = True
try:
    os.close(os.open(".", os.O_RDONLY))
    gone["a folder's descriptor"] = False
except PermissionError:
    gone["a folder's descriptor"] = True
try:
    ctypes.CDLL(None)
    gone["CDLL(None)"] = False
except TypeError:
    gone["CDLL(None)"] = True
print(json.dumps(gone))
"""
    result = subprocess.run(
        [sys.executable, "-c", probe], env={**os.environ, **windows_env()}, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    gone = json.loads(result.stdout)
    assert [name for name, absent in gone.items() if not absent] == []
    assert len(gone) == 28


def test_every_module_of_wren_imports_where_windows_lacks_posix(tmp_path: Path) -> None:
    walk = """
import importlib, pkgutil, wren_tui
failed = []
for module in pkgutil.walk_packages(wren_tui.__path__, "wren_tui."):
    if module.name != "wren_tui.__main__":  # it runs the CLI
        try:
            importlib.import_module(module.name)
        except BaseException as exc:
            failed.append(f"{module.name}: {exc!r}")
print(failed)
"""
    result = subprocess.run(
        [sys.executable, "-c", walk], env={**os.environ, **windows_env()}, capture_output=True, text=True, timeout=120
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "[]\n", "")


@pytest.mark.parametrize("args", [["--help"], ["export", "--help"], ["watch", "--help"]])
def test_help_says_what_it_says_on_linux(args: list[str], tmp_path: Path) -> None:
    windows, linux = on_windows(args, tmp_path), on_linux(args, tmp_path)
    assert (windows.returncode, windows.stdout, windows.stderr) == (0, linux.stdout, "")
    assert linux.returncode == 0 and linux.stdout


def test_version_says_the_same_but_for_the_calls_this_system_has(tmp_path: Path) -> None:
    windows, linux = on_windows(["--version"], tmp_path), on_linux(["--version"], tmp_path)
    assert windows.returncode == linux.returncode == 0 and windows.stderr == ""
    assert "Journal's durable sync: fsync\n" in windows.stdout  # FlushFileBuffers, through os.fsync
    assert "A writer seen live by: none\n" in windows.stdout  # no fcntl record locks, no /proc
    # The system's own lines differ (the simulation has no os.uname: platform names it from sys.platform).
    differ = ("Python:", "Journal's", "A writer")
    same = [line for line in linux.stdout.splitlines() if not line.startswith(differ)]
    assert [line for line in windows.stdout.splitlines() if not line.startswith(differ)] == same


# What each reading command is given: {dir}, {sid} and {agents} are filled in.
READING = [
    "ls --dir {dir}",
    "ls --dir {dir} --json",
    "log --dir {dir} {sid}",
    "log --dir {dir} {sid} --json",
    "search --dir {dir} failing",
    "search --dir {dir} --json --regex fail(ing|ed)",
    "fork --dir {dir} {sid}",
    "fork --dir {dir} {sid} --json",
    "diff --dir {dir} {sid} {sid}",
    "diff-files --dir {dir} {sid} 2",
    "snapshots --dir {dir} --json",
    "ls --agent all --dir {agents}",
    "search --agent all --dir {agents} notes",
    "search --agent all --dir {agents} --json hello.py",
] + [f"log {path}" for path in AGENT_FILES]


@pytest.mark.parametrize("command", READING)
def test_each_reading_command_prints_what_it_prints_on_linux(command: str, recorded: Recorded, tmp_path: Path) -> None:
    args = command.format(dir=recorded.journals, sid=recorded.sid, agents=AGENTS).split()
    # Each its own state folder: the search index one made is not the other's.
    windows = on_windows(args, tmp_path, XDG_STATE_HOME=str(tmp_path / "w"))
    linux = on_linux(args, tmp_path, XDG_STATE_HOME=str(tmp_path / "l"))
    assert linux.returncode == 0 and linux.stdout, linux.stderr
    assert (windows.returncode, windows.stdout, windows.stderr) == (0, linux.stdout, linux.stderr)


@pytest.mark.parametrize("form", ["md", "html", "json", "atif"])
def test_export_writes_each_format_byte_for_byte_as_on_linux_and_replaces_an_earlier_one(
    form: str, recorded: Recorded, tmp_path: Path
) -> None:
    for where, run in (("windows", on_windows), ("linux", on_linux)):
        result = run(
            ["export", "--dir", str(recorded.journals), recorded.sid, "--format", form, "-o", f"{where}.out"], tmp_path
        )
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "windows.out").read_bytes() == (tmp_path / "linux.out").read_bytes()
    # Again over the first: Windows' rename will not replace a file, os.replace does.
    (tmp_path / "windows.out").write_text("an earlier export")
    again = on_windows(
        ["export", "--dir", str(recorded.journals), recorded.sid, "--format", form, "-o", "windows.out"], tmp_path
    )
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "windows.out").read_bytes() == (tmp_path / "linux.out").read_bytes()


def test_fork_makes_a_session_linux_reads_and_writes_the_files_as_they_were(recorded: Recorded, tmp_path: Path) -> None:
    journals = recorded.copy(tmp_path / "journals")
    files = tmp_path / "files at 2"
    result = on_windows(["fork", "--dir", str(journals), recorded.sid, "2", "--workspace", str(files)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"forked {recorded.sid} at seq 2 -> " in result.stdout and "(6 files)" in result.stdout
    new = next(p for p in journal_paths(journals) if p.stem != recorded.sid)
    # The files as they were before the agent's fix: the demo's own, untouched copy.
    original = prepare_workspace(tmp_path / "original")
    for path in original.rglob("*"):
        if path.is_file():
            assert (files / path.relative_to(original)).read_bytes() == path.read_bytes(), path
    # Linux (where the agent can resume it) reads the new session whole, forked at 2.
    log = on_linux(["log", "--dir", str(journals), new.stem, "--json"], tmp_path)
    assert log.returncode == 0, log.stderr
    fork = json.loads(log.stdout)["events"][-1]
    assert (fork["type"], fork["from"], fork["atSeq"], fork["workspace"]) == ("fork", recorded.sid, 2, str(files))
    # The conversation alone, too.
    alone = on_windows(["fork", "--dir", str(journals), recorded.sid, "2"], tmp_path)
    assert alone.returncode == 0 and len(journal_paths(journals)) == 3, alone.stderr


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that keeps the names of the spans it is sent."""

    received: list[str]

    def do_POST(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest.FromString(body)
        self.received.extend(s.name for r in request.resource_spans for ss in r.scope_spans for s in ss.spans)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _collector() -> tuple[ThreadingHTTPServer, list[str]]:
    received: list[str] = []
    handler = type("Collector", (_Collector,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, received


def test_otel_sends_the_spans_it_sends_on_linux(recorded: Recorded, tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed")
    sent = {}
    for where, run in (("windows", on_windows), ("linux", on_linux)):
        server, received = _collector()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}"
            result = run(["otel", "--dir", str(recorded.journals), recorded.sid, "--endpoint", url], tmp_path)
            assert result.returncode == 0, result.stderr
        finally:
            server.shutdown()
        sent[where] = sorted(received)
    assert sent["windows"] == sent["linux"] and "invoke_agent wren" in sent["linux"]


def test_a_catastrophic_regex_stops_at_its_budget_without_sigalrm(tmp_path: Path) -> None:
    from tests.search.test_hostile_regex import _folder_with_a_run_of_as

    folder = _folder_with_a_run_of_as(tmp_path)
    result = on_windows(
        ["search", "--regex", "(a|aa)+$", "--dir", str(folder)], tmp_path, timeout=60, WREN_REGEX_SECONDS="1"
    )
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert re.fullmatch(
        r"wren: the regular expression .* took more than 1 s (on one text|over the \d+ texts it was matched on), .*\n",
        result.stderr,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--yes", TASK],
        ["chat"],
        ["resume", "--yes", "go on"],
        ["demo"],
        ["demo", "--prepare", "demo-ws"],
    ],
    ids=["run", "chat", "resume", "demo", "demo --prepare"],
)
def test_the_agents_commands_refuse_in_one_sentence_naming_wsl_and_write_nothing(
    args: list[str], tmp_path: Path
) -> None:
    workspace = prepare_workspace(tmp_path / "ws")
    before = sorted((p.relative_to(tmp_path), p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    command = [args[0], "--dir", str(tmp_path / "journals"), *args[1:]]
    result = on_windows(command, workspace, XDG_STATE_HOME=str(tmp_path / "state"))
    assert (result.returncode, result.stdout) == (2, "")
    assert re.fullmatch(r"wren: the agent \(run, chat, resume, demo\) needs [^\n]*WSL[^\n]*\n", result.stderr)
    assert "Traceback" not in result.stderr
    assert sorted((p.relative_to(tmp_path), p.stat().st_mtime_ns) for p in tmp_path.rglob("*")) == before


# --- the viewer, in a real terminal (tmux) ----------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    ["folder", "claude-code folder", "codex file", "opencode database"],
)
@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_watch_shows_sessions_and_quits_with_0(target: str, recorded: Recorded, tmp_path: Path) -> None:
    args, first, inside = {
        "folder": (["--dir", str(recorded.journals)], recorded.sid, "Fixed: `test_mean_of_empty_list_is_zero`"),
        "claude-code folder": (
            ["--agent", "claude", "--dir", str(AGENTS / "claude-code")],
            "killed",  # the newest, where the cursor is
            "Starting the slow build.",
        ),
        "codex file": ([str(AGENTS / "codex" / "simple.jsonl")], None, "The folder holds two files"),
        "opencode database": ([str(AGENTS / "opencode" / "simple.opencode.db")], None, "The folder holds two files"),
    }[target]
    with terminal() as term:
        term.start(python_argv("watch", *args), tmp_path, (160, 40), env=windows_env())
        if first is not None:
            term.wait_for(first, timeout=30)
            term.keys("Enter")
        term.wait_for(inside, timeout=30)
        term.keys("q")
        term.wait_for("WREN-EXITED-0", timeout=30)


# --- portable's stand-ins, in this process ----------------------------------------------------------


def test_without_o_nofollow_a_link_is_refused_as_o_nofollow_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "real.jsonl").write_text("{}\n")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "real.jsonl")
    monkeypatch.setattr(portable, "O_NOFOLLOW", 0)
    with pytest.raises(OSError) as refused:
        portable.open_read_only(tmp_path / "link.jsonl")
    assert refused.value.errno == errno.ELOOP
    fd = portable.open_read_only(tmp_path / "real.jsonl")
    try:
        assert os.read(fd, 10) == b"{}\n"
    finally:
        os.close(fd)


def test_without_o_nofollow_a_name_swapped_while_it_is_opened_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.jsonl").write_text("a\n")
    (tmp_path / "b.jsonl").write_text("b\n")
    monkeypatch.setattr(portable, "O_NOFOLLOW", 0)
    real_lstat = os.lstat

    def lstat_then_swap(path: str | os.PathLike[str]) -> os.stat_result:
        st = real_lstat(path)
        os.replace(tmp_path / "b.jsonl", tmp_path / "a.jsonl")  # between the look and the open
        return st

    monkeypatch.setattr(os, "lstat", lstat_then_swap)
    with pytest.raises(OSError) as refused:
        portable.open_read_only(tmp_path / "a.jsonl")
    assert refused.value.errno == errno.ELOOP


def test_without_pread_reads_at_offsets_from_many_threads_get_their_own_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = bytes(range(256)) * 4096
    (tmp_path / "f").write_bytes(data)
    monkeypatch.setattr(portable, "_os_pread", None)
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    wrong: list[int] = []

    def reader(start: int) -> None:
        for offset in range(start, len(data) - 300, 7919):
            if portable.pread(fd, 300, offset) != data[offset : offset + 300]:
                wrong.append(offset)

    try:
        threads = [threading.Thread(target=reader, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        os.close(fd)
    assert wrong == []


def test_without_setitimer_a_catastrophic_regex_is_stopped_by_the_regex_librarys_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("regex", reason="the regex library is not installed (it is a dependency on Windows)")
    from wren_tui.search.query import PatternTooSlow, Query, regex_budget

    monkeypatch.delattr(signal, "setitimer")
    query = Query.of("(a|aa)+$", regex=True)  # some 10^8 ways to fail on 40 a's and a b, in either engine
    with portable.main_thread_ticks(0.2, lambda: None) as ticking:
        assert not ticking
    with pytest.raises(PatternTooSlow), regex_budget(0.5):
        assert query.find("baa") == (1, 3)  # the library matches as re does
        query.find("a" * 40 + "b")


def test_the_agent_is_refused_only_where_what_it_needs_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert portable.agent_unsupported() is None  # Linux has flock, process groups and /bin/sh
    monkeypatch.setattr(portable, "fcntl", None)
    monkeypatch.setattr(portable, "PROCESS_GROUPS", False)
    why = portable.agent_unsupported()
    assert why is not None and "file locks (fcntl) and process groups" in why and "WSL" in why


def test_without_the_loops_signal_handlers_a_signal_still_reaches_the_loop_and_is_put_back_after() -> None:
    import asyncio

    class WindowsLoop(asyncio.SelectorEventLoop):
        """An event loop as Windows' are: no add_signal_handler, no remove_signal_handler."""

        def add_signal_handler(self, sig: int, callback: object, *args: object) -> None:
            raise NotImplementedError

        def remove_signal_handler(self, sig: int) -> bool:
            raise NotImplementedError

    loop = WindowsLoop()
    got: list[str] = []
    before = signal.getsignal(signal.SIGTERM)
    try:
        remove = portable.add_signal_handler(loop, signal.SIGTERM, got.append, "stop")
        signal.raise_signal(signal.SIGTERM)
        loop.run_until_complete(asyncio.sleep(0))  # the handler ran in raise_signal: its call is due now
        remove()
    finally:
        loop.close()
    assert got == ["stop"] and signal.getsignal(signal.SIGTERM) is before
