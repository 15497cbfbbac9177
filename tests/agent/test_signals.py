"""Signals end a run on the record, and a command never outlives the `wren` that started it.

SIGINT, SIGTERM and SIGHUP (a closed terminal) cancel the turn the same way: the command's process
group is killed, `tool_end` says `stoppedBy: cancel`, the model is told which signal stopped it,
`run_end` is `cancelled`, and wren exits 128 + the signal. A kill -9 of wren cannot be handled by
wren: the guard beside each command sees its pipe close and kills the command's group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.agent.conftest import events_of, journals_of, messages_of
from tests.agent.tty import Tty
from tests.waiting import until as wait_until
from wren_tui.journal.events import Event, RunEnd, ToolEnd, ToolStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.store import new_session_id

# The command writes its process group (its shell's pid) first, and a file only if it lives 5 s.
LATE = "echo $$ > group.pid; sleep 5; echo late > late.txt"


def group_members(pgid: int) -> list[int]:
    """The living (not zombie) processes of a process group, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields that follow start after the last ")".
        state, _ppid, group = stat[stat.rindex(")") + 2 :].split()[:3]
        if int(group) == pgid and state != "Z":
            members.append(int(entry))
    return members


def journal_has(journal: Path, kind: type[Event]) -> Callable[[], bool]:
    return lambda: journal.exists() and any(isinstance(e, kind) for e in read_events(journal).events)


def command_group(workspace: Path, journal: Path) -> int:
    """Wait until the command runs with its sleep, and return its process group."""
    pid_file = workspace / "group.pid"
    wait_until(journal_has(journal, ToolStart), "the command to start")
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "", "the command's group.pid")
    group = int(pid_file.read_text())
    # The shell and its sleep (and, since the guard, the guard beside them).
    wait_until(lambda: len(group_members(group)) >= 2, "the sleep to start")
    return group


def assert_stopped_and_recorded(journal: Path, cause: str) -> None:
    events = events_of(journal)
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert (end.ok, end.stopped_by) == (False, "cancel")
    told = messages_of(events)[-1].message.content
    assert told.startswith("interrupted: it ran for ") and f"was stopped by {cause} before it finished" in told
    assert "by the user" not in told
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "cancelled"


def spawn_run(workspace: Path, sid: str, command: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wren_tui",
            "run",
            "--dir",
            "../journals",
            "--yes",
            "--session-id",
            sid,
            f"run `{command}`",
        ],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_closing_the_terminal_mid_command_records_the_cancel_kills_the_command_and_exits_129(workspace: Path) -> None:
    sid = new_session_id()
    journal = journals_of(workspace) / f"{sid}.jsonl"
    tty = Tty(
        ["run", "--dir", "../journals", "--yes", "--session-id", sid, f"run `{LATE}`"], workspace, controlling=True
    )
    try:
        group = command_group(workspace, journal)
        tty.hang_up()
        assert tty.proc.wait(30) == 128 + signal.SIGHUP
    finally:
        tty.kill()
    wait_until(lambda: not group_members(group), "the command's group to end", timeout=10)
    assert not (workspace / "late.txt").exists()
    assert_stopped_and_recorded(journal, "SIGHUP (the terminal was closed)")


def test_sigterm_mid_command_says_sigterm_to_the_model_and_the_person_and_exits_143(workspace: Path) -> None:
    sid = new_session_id()
    journal = journals_of(workspace) / f"{sid}.jsonl"
    proc = spawn_run(workspace, sid, LATE)
    try:
        group = command_group(workspace, journal)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "[stopped by SIGTERM (Wren was told to stop)]" in out
    wait_until(lambda: not group_members(group), "the command's group to end", timeout=10)
    assert not (workspace / "late.txt").exists()
    assert_stopped_and_recorded(journal, "SIGTERM (Wren was told to stop)")


def test_signals_in_quick_succession_are_recorded_once_by_the_first(workspace: Path) -> None:
    sid = new_session_id()
    journal = journals_of(workspace) / f"{sid}.jsonl"
    proc = spawn_run(workspace, sid, LATE)
    try:
        command_group(workspace, journal)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode in (128 + signal.SIGTERM, 128 + signal.SIGINT, 128 + signal.SIGHUP), err
    assert "Traceback" not in err
    events = events_of(journal)
    assert [type(e).__name__ for e in events[-3:]] == ["ToolEnd", "Message", "RunEnd"]
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "cancelled"
    # The model is told the signal the exit status names.
    first = signal.Signals(proc.returncode - 128).name
    assert f"was stopped by {first} (" in messages_of(events)[-1].message.content


def test_a_command_and_its_children_die_with_a_wren_run_killed_by_sigkill(workspace: Path) -> None:
    sid = new_session_id()
    journal = journals_of(workspace) / f"{sid}.jsonl"
    proc = spawn_run(workspace, sid, LATE)
    try:
        group = command_group(workspace, journal)
        members = group_members(group)
        proc.kill()
        proc.wait(30)
        wait_until(lambda: not group_members(group), f"the command's group {members} to end", timeout=10)
    finally:
        proc.kill()
    # The sleep (a grandchild of wren) went with it before its 5 s were up: the group is gone and it never
    # wrote its file (had it lived to its end, late.txt would be there), whatever the machine's speed.
    assert not (workspace / "late.txt").exists()
    # Nothing recorded how it ended: resume refuses to guess, as before.
    assert isinstance(events_of(journal)[-1], ToolStart)


def test_under_nohup_a_hangup_is_ignored_and_the_command_finishes(workspace: Path) -> None:
    sid = new_session_id()
    journal = journals_of(workspace) / f"{sid}.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}

    def ignore_hangups() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wren_tui",
            "run",
            "--dir",
            "../journals",
            "--yes",
            "--session-id",
            sid,
            "run `sleep 1; echo done > done.txt`",
        ],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_hangups,
    )
    try:
        wait_until(journal_has(journal, ToolStart), "the command to start")
        proc.send_signal(signal.SIGHUP)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert (workspace / "done.txt").read_text() == "done\n"
    end = next(e for e in events_of(journal) if isinstance(e, ToolEnd))
    assert (end.ok, end.stopped_by) == (True, None)


def test_a_command_that_ended_leaves_what_it_started_in_the_background_running(workspace: Path) -> None:
    sid = new_session_id()
    proc = spawn_run(workspace, sid, "sleep 30 >/dev/null 2>&1 & echo $! > bg.pid")
    try:
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        background = int((workspace / "bg.pid").read_text())
        # The guard stood down when the command ended: wren's exit does not take its background job.
        assert Path(f"/proc/{background}").exists()
        state = Path(f"/proc/{background}/stat").read_text()
        assert state[state.rindex(")") + 2] != "Z"
    finally:
        proc.kill()
        if (workspace / "bg.pid").exists():
            os.kill(int((workspace / "bg.pid").read_text()), signal.SIGKILL)


def _chat_at_its_second_prompt(workspace: Path) -> Tty:
    """A chat that has a journal (it is created with the first message), waiting at the prompt again."""
    tty = Tty(["chat", "--dir", "../journals"], workspace)
    tty.wait_for(b"you > ")
    tty.send(b"what can you do?\n")
    tty.wait_until(lambda: tty.data.count(b"you > ") == 2, "the prompt after the reply")
    return tty


def test_sigterm_at_the_chat_prompt_ends_the_chat_on_the_record_and_exits_143(workspace: Path) -> None:
    tty = _chat_at_its_second_prompt(workspace)
    try:
        tty.proc.send_signal(signal.SIGTERM)
        code = tty.finish()
    finally:
        tty.kill()
    assert code == 128 + signal.SIGTERM, tty.text()
    assert "[stopped by SIGTERM (Wren was told to stop)]" in tty.text()
    journal = next(journals_of(workspace).glob("*.jsonl"))
    last = events_of(journal)[-1]
    assert isinstance(last, RunEnd) and last.reason == "cancelled"


def test_ctrl_c_at_the_chat_prompt_ends_the_chat_on_the_record_and_exits_130(workspace: Path) -> None:
    tty = _chat_at_its_second_prompt(workspace)
    try:
        tty.proc.send_signal(signal.SIGINT)
        code = tty.finish()
    finally:
        tty.kill()
    assert code == 130, tty.text()
    last = events_of(next(journals_of(workspace).glob("*.jsonl")))[-1]
    assert isinstance(last, RunEnd) and last.reason == "cancelled"


def test_sigterm_at_the_first_chat_prompt_exits_143_and_leaves_no_journal(workspace: Path) -> None:
    tty = Tty(["chat", "--dir", "../journals"], workspace)
    try:
        tty.wait_for(b"you > ")
        tty.proc.send_signal(signal.SIGTERM)
        code = tty.finish()
    finally:
        tty.kill()
    assert code == 128 + signal.SIGTERM, tty.text()
    assert "[stopped by SIGTERM (Wren was told to stop)]" in tty.text()
    assert not any(journals_of(workspace).glob("*.jsonl"))


def test_chat_reads_its_lines_from_a_file_too(workspace: Path) -> None:
    script = workspace / "script.txt"
    script.write_text("what is your name?\nwhat did I ask first?\n/quit\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    with script.open() as stdin:
        proc = subprocess.run(
            [sys.executable, "-m", "wren_tui", "chat", "--dir", "../journals"],
            cwd=workspace,
            env=env,
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stderr
    assert "You asked: 'what is your name?'." in proc.stdout


def test_a_closed_terminal_during_a_chat_turn_ends_the_chat_instead_of_prompting_again(workspace: Path) -> None:
    tty = Tty(["chat", "--dir", "../journals", "--yes"], workspace, controlling=True)
    try:
        tty.wait_for(b"you > ")
        tty.send(f"run `{LATE}`\n".encode())
        journal = next(iter(wait_for_journal(workspace)))
        group = command_group(workspace, journal)
        tty.hang_up()
        assert tty.proc.wait(30) == 128 + signal.SIGHUP
    finally:
        tty.kill()
    wait_until(lambda: not group_members(group), "the command's group to end", timeout=10)
    assert_stopped_and_recorded(journal, "SIGHUP (the terminal was closed)")


def wait_for_journal(workspace: Path) -> list[Path]:
    folder = journals_of(workspace)
    wait_until(lambda: folder.is_dir() and any(folder.glob("*.jsonl")), "the chat's journal")
    return sorted(folder.glob("*.jsonl"))
