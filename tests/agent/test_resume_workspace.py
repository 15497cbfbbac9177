"""Resume works in the session's own workspace, from whatever folder it is typed in, and says so."""

from __future__ import annotations

from pathlib import Path

from tests.agent.conftest import events_of, messages_of, only_journal
from tests.conftest import run_wren
from wren_tui.journal.events import RunStart


def first_run(tmp_path: Path, workspace: Path) -> tuple[Path, str]:
    """A finished session of `workspace`, its journals outside it; the journal and the session id."""
    journals = tmp_path / "journals"
    proc = run_wren(["run", "--yes", "--dir", str(journals), "--workspace", str(workspace), "hi"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    journal = only_journal(journals)
    return journal, journal.stem


def workspaces_recorded(journal: Path) -> list[str]:
    return [e.cwd for e in events_of(journal) if isinstance(e, RunStart)]


def test_resume_from_another_folder_works_in_the_sessions_workspace_and_says_so(
    tmp_path: Path, workspace: Path
) -> None:
    journal, sid = first_run(tmp_path, workspace)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_wren(["resume", "--yes", "--dir", str(journal.parent), sid, "run `pwd`"], cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    told = messages_of(events_of(journal))[-2].message
    assert told.role == "tool" and told.content.splitlines()[1] == str(workspace)
    assert f"working in {workspace}, the session's workspace" in proc.stdout
    assert workspaces_recorded(journal) == [str(workspace), str(workspace)]


def test_resume_refuses_when_the_sessions_workspace_is_gone_unless_a_workspace_is_given(
    tmp_path: Path, workspace: Path
) -> None:
    journal, sid = first_run(tmp_path, workspace)
    workspace.rename(tmp_path / "moved")
    before = journal.read_bytes()
    refused = run_wren(["resume", "--yes", "--dir", str(journal.parent), sid, "run `pwd`"], cwd=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"wren: will not resume {sid}: its workspace {workspace} (where it last ran) no longer exists. "
        "Nothing was written. To continue it in another folder, give --workspace DIR.\n"
    )
    assert journal.read_bytes() == before

    other = tmp_path / "other"
    other.mkdir()
    args = ["resume", "--yes", "--dir", str(journal.parent), "--workspace", str(other), sid, "run `pwd`"]
    proc = run_wren(args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"working in {other} (--workspace); the session last worked in {workspace}" in proc.stdout
    assert messages_of(events_of(journal))[-2].message.content.splitlines()[1] == str(other)
    assert workspaces_recorded(journal) == [str(workspace), str(other)]


def test_chat_resume_works_in_the_sessions_workspace(tmp_path: Path, workspace: Path) -> None:
    journal, sid = first_run(tmp_path, workspace)
    proc = run_wren(
        ["chat", "--yes", "--dir", str(journal.parent), "--resume", sid], cwd=tmp_path, input="run `pwd`\n/quit\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert messages_of(events_of(journal))[-2].message.content.splitlines()[1] == str(workspace)
    assert f"working in {workspace}, the session's workspace" in proc.stdout
    assert workspaces_recorded(journal) == [str(workspace), str(workspace)]
