"""`wren chat` driven through its stdin, the streamed deltas of a paced run, and secrets kept out of journals."""

from __future__ import annotations

from pathlib import Path

from tests.agent.conftest import events_of, journals_of, messages_of, only_journal
from tests.conftest import run_wren
from wren_tui.journal.events import Delta, Fork, Message, RunEnd, ToolEnd
from wren_tui.journal.store import journal_paths

FAILING_CASE = "test_mean_of_empty_list_is_zero"


def test_chat_answers_turn_by_turn_and_its_slash_commands_read_the_journal(workspace: Path) -> None:
    lines = ["run the tests and see which case fails", "what was the failing case?", "/log", "/fork", "/sessions"]
    proc = run_wren(["chat", "--dir", "../journals", "--yes"], cwd=workspace, input="\n".join([*lines, "/quit", ""]))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("you > ") == len(lines) + 1
    journal = only_journal(journals_of(workspace))
    events = events_of(journal)
    said = [m.message for m in messages_of(events)]
    assert [m.content for m in said if m.role == "user"] == lines[:2]
    assert FAILING_CASE in said[-1].content and not said[-1].tool_calls
    assert isinstance(events[-1], RunEnd) and events[-1].reason == "done"
    assert "run_command [call_1_0] started" in proc.stdout  # /log
    assert "clean fork points" in proc.stdout and "user: what was the failing case?" in proc.stdout  # /fork
    assert f"* {journal.name[:-6]}" in proc.stdout  # /sessions marks the current one


def test_chat_fork_switches_to_a_new_session_that_keeps_the_parent_intact(workspace: Path) -> None:
    first = run_wren(
        ["chat", "--dir", "../journals", "--yes"],
        cwd=workspace,
        input="run the tests and see which case fails\n/quit\n",
    )
    assert first.returncode == 0, first.stderr
    parent = only_journal(journals_of(workspace))
    parent_bytes = parent.read_bytes()
    proc = run_wren(
        ["chat", "--dir", "../journals", "--yes", "--resume"], cwd=workspace, input="/fork 2\nwhat did I ask?\n/quit\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "now in s-" in proc.stdout
    forked = next(p for p in journal_paths(journals_of(workspace)) if p != parent)
    events = events_of(forked)
    assert any(isinstance(e, Fork) and e.at_seq == 2 for e in events)
    said = [m.message for m in messages_of(events)]
    assert said[-1].role == "assistant" and "run the tests and see which case fails" in said[-1].content
    assert parent.read_bytes()[: len(parent_bytes)] == parent_bytes


def test_a_paced_reply_streams_as_few_deltas_that_add_up_to_the_message(workspace: Path) -> None:
    proc = run_wren(
        ["run", "--dir", "../journals", "--yes", "--pace-factor", "0.2", "run the tests and see which case fails"],
        cwd=workspace,
    )
    assert proc.returncode == 0, proc.stderr
    events = events_of(only_journal(journals_of(workspace)))
    pending: list[str] = []
    streamed = 0
    for event in events:
        if isinstance(event, Delta):
            pending.append(event.text)
        elif isinstance(event, Message) and event.message.role == "assistant":
            assert event.message.content.startswith("".join(pending))
            words = len(event.message.content.split())
            assert len(pending) < max(2, words // 3), "deltas were not batched"
            streamed += len(pending)
            pending = []
    assert streamed > 0, "a paced reply of several seconds sent no delta"


def test_a_run_with_secrets_in_the_environment_never_writes_them_to_the_journal(workspace: Path) -> None:
    key, token = "sk-live-" + "x7Y" * 8, "tok_" + "Q" * 20
    (workspace / "notes.txt").write_text("deploy with ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
    proc = run_wren(
        ["run", "--dir", "../journals", "--yes", "--model", "scripted", "run `env; cat notes.txt`"],
        cwd=workspace,
        env={"WREN_API_KEY": key, "DEPLOY_TOKEN": token},
    )
    assert proc.returncode == 0, proc.stderr
    data = only_journal(journals_of(workspace)).read_bytes()
    for secret in (key, token, "ghp_abcdefghijklmnopqrstuvwxyz0123456789"):
        assert secret.encode() not in data
    end = next(e for e in events_of(only_journal(journals_of(workspace))) if isinstance(e, ToolEnd))
    # The key and the token from `env`, and the GitHub-shaped token in the file.
    assert end.redacted == 3


def test_chat_makes_no_journal_until_the_first_message_is_typed(workspace: Path) -> None:
    proc = run_wren(["chat", "--dir", "../journals"], cwd=workspace, input="/sessions\n/log\n/fork\n")
    assert proc.returncode == 0, proc.stderr
    assert not journals_of(workspace).exists() or journal_paths(journals_of(workspace)) == []
    assert "continue with" not in proc.stdout
    assert proc.stdout.count("nothing yet: this session's journal is created with your first message") == 2


def test_ctrl_d_at_the_prompt_prints_continue_with_on_a_line_of_its_own(workspace: Path, state_home: Path) -> None:
    # The default journals folder (this test's own XDG_STATE_HOME), so the printed command needs no --dir.
    proc = run_wren(["chat"], cwd=workspace, input="what can you do?\n")  # then end of input: Ctrl+D
    assert proc.returncode == 0, proc.stderr
    sid = only_journal(state_home / "wren" / "journals").stem
    assert proc.stdout.endswith(f'you > \ncontinue with: wren resume {sid} "MESSAGE"\n')


def test_chat_resume_says_which_session_it_resumed_and_how_much_it_replayed(workspace: Path) -> None:
    first = run_wren(["chat", "--dir", "../journals"], cwd=workspace, input="what can you do?\n")
    assert first.returncode == 0, first.stderr
    sid = only_journal(journals_of(workspace)).stem
    proc = run_wren(["chat", "--dir", "../journals", "--resume"], cwd=workspace, input="")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"session {sid} resumed (2 messages replayed)\n")
