"""Shared fixtures: paths to the reference fixtures and a helper to run the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# Copies kept in the repository (tests/fixtures/SOURCES.md says where each came from): a fresh clone
# has nothing beside it.
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The simulated systems (tests/os_sim/sitecustomize.py): WREN_SIMULATE_OS=macos with this folder on
# PYTHONPATH starts every Python without what CPython on macOS lacks, /proc hidden from Wren.
OS_SIM = Path(__file__).resolve().parent / "os_sim"
SIMULATED_OS = os.environ.get("WREN_SIMULATE_OS", "")
if SIMULATED_OS:
    # For every process the tests start; this process was started with it by .ci/run, or gets it now.
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if str(OS_SIM) not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(OS_SIM), *filter(None, paths)])
    sys.path.insert(0, str(OS_SIM))
    import sitecustomize  # noqa: F401  (applies the simulation to this process, once)

# The tests run again under the simulated macOS by `.ci/run` (`-m macos_sim`): what a Mac user does
# first. A file, or a file's test (without parameters). tests/test_portable.py checks each is there.
MACOS_SIM = (
    "tests/agent/test_run_and_resume.py::test_run_fixes_the_failing_case_and_the_tests_then_pass",
    "tests/agent/test_run_and_resume.py::test_resume_in_a_second_process_answers_the_failing_case_without_a_tool",
    "tests/agent/test_cancel_and_resume.py::test_ctrl_c_cancels_the_tool_records_it_exits_130_and_resume_waits_for_a_live_writer",
    "tests/agent/test_cancel_and_resume.py::test_a_torn_tail_is_moved_aside_and_the_session_continues",
    "tests/agent/test_signals.py::test_a_command_and_its_children_die_with_a_wren_run_killed_by_sigkill",
    "tests/agent/test_snapshots.py::test_a_run_snapshots_before_each_call_with_side_effects_and_at_the_end_of_its_turn",
    "tests/test_export.py",
    "tests/test_atif.py",
    "tests/tui/test_tail_first_exports.py",
    "tests/fleet/test_mirror.py",
    "tests/search/test_cli_search_agents.py",
    "tests/search/test_cli_search.py::test_search_lists_every_match_newest_session_first_with_its_place",
    "tests/foreign/test_opencode.py",
    "tests/foreign/test_aider.py",
    "tests/foreign/test_more_agents.py",
    "tests/tui/test_opencode_aider.py",
    "tests/foreign/test_ls_and_log.py::test_ls_all_reads_each_agents_folder_from_its_own_variable_and_names_the_agent",
    "tests/journal/test_store.py::test_a_journal_with_a_writer_is_live_and_names_its_pid",
    "tests/journal/test_fork.py",
    "tests/tui/test_terminal.py::test_demo_in_80x24_runs_the_agent_live_and_quitting_stops_it",
    "tests/tui/test_terminal.py::test_watch_shows_events_another_process_appends",
    "tests/test_portable.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        node = item.nodeid.split("[", 1)[0]
        if node in MACOS_SIM or node.split("::", 1)[0] in MACOS_SIM:
            item.add_marker(pytest.mark.macos_sim)


@pytest.fixture(autouse=True)
def state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own XDG_STATE_HOME, so a default journals folder never lands in the real home."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    # A user's shell (and CI) does not set it: wren's output is buffered there, and must work so.
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    # Nor this: Python writes __pycache__ folders there, into the workspaces the tests' agents work in.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    yield state


def run_wren(
    args: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`wren ARGS` as a user runs it: a separate process, its own cwd and environment.

    XDG_STATE_HOME is a temporary folder (the test's own, see state_home) unless `env` gives one.
    """
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_") or k == "WREN_SIMULATE_OS"}
    if not full_env.get("XDG_STATE_HOME"):
        full_env["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="wren-state-")
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "wren_tui", *args],
        cwd=cwd,
        env=full_env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def descendants(pid: int) -> list[int]:
    """The processes `pid` started, and theirs, as Linux's /proc says now."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat_line = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue  # gone meanwhile
            parent = int(stat_line.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
