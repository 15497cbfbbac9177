"""How `wren` reads its command line: options anywhere, each command's own usage, defaults in --help."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_wren
from wren_tui.cli import build_parser, parse_args

SID = "s-20260101-000000-abcd"

# Each command with its options both before and after its positionals: the same reading either way.
INTERMIXED = [
    (
        ["resume", "--yes", "--dir", "j", SID, "what", "failed?"],
        ["resume", SID, "--yes", "what", "--dir", "j", "failed?"],
    ),
    (["run", "--yes", "--max-steps", "3", "fix", "it"], ["run", "fix", "--max-steps", "3", "it", "--yes"]),
    (["chat", "--yes", "--resume", SID], ["chat", "--resume", SID, "--yes"]),
    (["fork", "--json", "--dir", "j", SID, "7"], ["fork", SID, "--json", "7", "--dir", "j"]),
    (["log", "--json", "--dir", "j", SID], ["log", SID, "--dir", "j", "--json"]),
    (["ls", "--json", "--dir", "j"], ["ls", "--dir", "j", "--json"]),
    (["watch", "--poll", "--dir", "j", SID], ["watch", SID, "--dir", "j", "--poll"]),
    (["demo", "--dir", "j", "--prepare", "ws"], ["demo", "--prepare", "ws", "--dir", "j"]),
    (
        ["mirror", "--once", "--url", "nats://127.0.0.1:4222", "--dir", "j"],
        ["mirror", "--dir", "j", "--once", "--url", "nats://127.0.0.1:4222"],
    ),
    (
        ["search", "--json", "--role", "tool", "--dir", "j", "pytest"],
        ["search", "pytest", "--role", "tool", "--json", "--dir", "j"],
    ),
    (["export", "--format", "html", "-o", "x.html", SID], ["export", SID, "-o", "x.html", "--format", "html"]),
    (["diff", "--json", "--dir", "j", SID, SID], ["diff", SID, "--dir", "j", SID, "--json"]),
    (
        ["otel", "--follow", "--endpoint", "http://127.0.0.1:4318", SID],
        ["otel", SID, "--endpoint", "http://127.0.0.1:4318", "--follow"],
    ),
    (["diff-files", "--dir", "j", SID, "3", "9"], ["diff-files", SID, "3", "--dir", "j", "9"]),
    (["snapshots", "--now", "--dir", "j", "prune"], ["snapshots", "prune", "--dir", "j", "--now"]),
    (["blame", "--json", "--session", SID, "f.py"], ["blame", "f.py", "--json", "--session", SID]),
    (["rewind", "--yes", "--force", "--dir", "j", SID, "7"], ["rewind", SID, "--yes", "7", "--dir", "j", "--force"]),
    (["keep", "--status", "--json", "--agent", "claude"], ["keep", "--agent", "claude", "--json", "--status"]),
    (["verify", "--json", "--agent", "claude"], ["verify", "--agent", "claude", "--json"]),
]


def _fields(args: argparse.Namespace) -> dict[str, object]:
    return {k: v for k, v in vars(args).items() if k != "handler"}


@pytest.mark.parametrize(("before", "after"), INTERMIXED, ids=[case[0][0] for case in INTERMIXED])
def test_every_command_takes_its_options_before_or_after_its_positionals(before: list[str], after: list[str]) -> None:
    assert _fields(parse_args(before)) == _fields(parse_args(after))


def test_every_command_is_covered_by_the_intermixed_cases() -> None:
    _, commands = build_parser()
    assert set(commands) == {case[0][0] for case in INTERMIXED}


def test_resume_with_an_option_between_the_id_and_the_message_reads_both(tmp_path: Path) -> None:
    args = parse_args(["resume", SID, "--yes", "what was the failing case?"])
    assert args.words == [SID, "what was the failing case?"] and args.yes


def test_a_wrong_option_shows_that_commands_usage_line_not_wrens(tmp_path: Path) -> None:
    proc = run_wren(["resume", SID, "--bogus", "--dir", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: wren resume ")
    assert "wren resume: error: unrecognized arguments: --bogus" in proc.stderr


def test_a_wrong_value_shows_that_commands_usage_line(tmp_path: Path) -> None:
    proc = run_wren(["fork", SID, "seven", "--dir", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: wren fork ")
    assert "invalid int value: 'seven'" in proc.stderr


def test_wren_with_no_command_prints_its_help_and_exits_2(tmp_path: Path) -> None:
    proc = run_wren([], cwd=tmp_path)
    assert proc.returncode == 2 and "COMMAND" in proc.stdout


def test_every_option_with_a_default_shows_it_in_help() -> None:
    _, commands = build_parser()
    missing = []
    for name, parser in commands.items():
        for action in parser._actions:
            if not action.option_strings or action.help == argparse.SUPPRESS:
                continue
            if action.default in (None, False) or isinstance(action, argparse._HelpAction):
                continue
            shown = f"{action.default:g}" if isinstance(action.default, float) else str(action.default)
            if f"default: {shown}" not in (action.help or ""):
                missing.append(f"wren {name} {action.option_strings[-1]} (default {action.default!r})")
    assert missing == []


def test_max_steps_help_shows_30_and_dir_help_names_the_per_user_state_folder(tmp_path: Path) -> None:
    proc = run_wren(["run", "--help"], cwd=tmp_path, env={"COLUMNS": "200"})
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "model replies per turn before it stops (default: 30)" in text
    assert "(default: $WREN_DIR, else $XDG_STATE_HOME/wren/journals, else ~/.local/state/wren/journals)" in text


@pytest.mark.parametrize(
    ("option", "named"),
    [
        (["--max-steps", "0"], "--max-steps 0: must be 1 or more"),
        (["--command-timeout", "0"], "--command-timeout 0: must be more than 0 seconds"),
        (["--pace-factor", "-1"], "--pace-factor -1: must be 0 or more"),
    ],
)
def test_a_bad_number_is_refused_naming_only_the_option_that_is_wrong(
    tmp_path: Path, option: list[str], named: str
) -> None:
    proc = run_wren(["run", *option, "--dir", str(tmp_path / "j"), "hi"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"wren: {named}")
    others = {"--max-steps", "--command-timeout", "--pace-factor"} - {option[0]}
    assert not any(other in proc.stderr for other in others)
    assert not (tmp_path / "j").exists()


def test_a_seq_fd_that_is_not_open_is_a_usage_error_before_the_run_starts(tmp_path: Path) -> None:
    proc = run_wren(["run", "--seq-fd", "99", "--dir", str(tmp_path / "j"), "hi"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "--seq-fd 99: no such open file descriptor" in proc.stderr
    assert not (tmp_path / "j").exists()


def test_a_seq_fd_open_only_for_reading_is_a_usage_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    source = tmp_path / "read-only.txt"
    source.write_text("")
    fd = os.open(source, os.O_RDONLY)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "wren_tui", "run", "--seq-fd", str(fd), "--dir", str(tmp_path / "j"), "hi"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            pass_fds=(fd,),
            timeout=60,
        )
    finally:
        os.close(fd)
    assert proc.returncode == 2
    assert f"--seq-fd {fd}: the descriptor is open for reading only" in proc.stderr
    assert not (tmp_path / "j").exists()


def test_parsing_one_command_loads_that_command_alone() -> None:
    # `wren run` starts often: it must not pay for the viewer, search or the other agents' readers.
    code = (
        "import sys; from wren_tui.cli import parse_args; args = parse_args(['run', 'fix the tests']); "
        "print(args.command, sorted(m for m in sys.modules if m.startswith("
        "('textual', 'wren_tui.tui', 'wren_tui.search', 'wren_tui.foreign', 'wren_tui.cli.watch', 'nats'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split(" ", 1) == ["run", "[]\n"]
