"""Which folder a fork of another agent's session, and its `wren resume`, work in when the session's own is odd.

A session's `cwd` is carried into the fork only when it names one folder by an absolute path other
than `/`. A relative one would name a different folder from each place `wren resume` is typed in,
and `/` would make the whole disk the workspace: the fork records none and says so, and resume then
works where it is typed, saying so first. A journal that records such a workspace (written by hand,
or by an older fork) is refused by resume unless --workspace names the folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.foreign.sessions import AN_HOUR, age, fixture
from tests.tui.conftest import wait_for, wait_for_text
from wren_tui.journal.events import ChatMessage, Message, RunStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import JournalWriter
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.dialogs import Notice

ANSWER = 7  # pi's simple recording: its first answer, a clean point


def pi_session(folder: Path, cwd: str) -> Path:
    """pi's simple recording, its session line saying it worked in `cwd`."""
    lines = fixture("pi", "simple").read_bytes().splitlines(keepends=True)
    head = json.loads(lines[0])
    head["cwd"] = cwd
    path = folder / "pi" / "2026-11-30T10-00-00-000Z_odd.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(json.dumps(head).encode() + b"\n" + b"".join(lines[1:]))
    age(path, AN_HOUR)
    return path


def fork(session: Path, journals: Path, cwd: Path) -> tuple[str, Path, str]:
    made = run_wren(["fork", str(session), str(ANSWER), "--dir", str(journals)], cwd=cwd)
    assert made.returncode == 0, made.stderr
    as_json = run_wren(["fork", str(session), str(ANSWER), "--dir", str(journals), "--json"], cwd=cwd)
    forked = json.loads(as_json.stdout)
    return forked["id"], Path(forked["path"]), made.stdout


def run_starts(path: Path) -> list[str]:
    return [e.cwd for e in read_events(path).events if isinstance(e, RunStart)]


@pytest.mark.parametrize(
    ("cwd", "said"),
    [
        ("../../", "the session's folder '../../' is not an absolute path"),
        ("work/here", "the session's folder 'work/here' is not an absolute path"),
        ("/", "the session's folder is / (the whole disk)"),
        ("//", "the session's folder is / (the whole disk)"),
        ("/tmp/..", "the session's folder is / (the whole disk)"),
    ],
)
def test_a_fork_of_a_session_in_no_one_folder_records_no_workspace_and_resume_works_where_typed_saying_so(
    tmp_path: Path, cwd: str, said: str
) -> None:
    session = pi_session(tmp_path, cwd)
    journals = tmp_path / "journals"
    here = tmp_path / "a" / "b" / "c"
    here.mkdir(parents=True)
    new_id, path, printed = fork(session, journals, tmp_path)
    assert f"{said}, so the fork records no workspace; `wren resume` will work in the folder it is typed in" in printed
    assert run_starts(path) == [""]
    resumed = run_wren(["resume", "--yes", new_id, "run `pwd`", "--dir", str(journals)], cwd=here)
    assert resumed.returncode == 0, resumed.stderr
    said_first = resumed.stdout.index(f"working in {here}: the journal records no workspace, so the current folder")
    assert said_first < resumed.stdout.index("run_command `pwd`")
    assert f"$ pwd\n{here}\n" in resumed.stdout
    assert run_starts(path) == ["", str(here)]


def test_a_fork_carries_an_absolute_folder_written_with_dots_as_the_folder_it_names(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = pi_session(tmp_path, f"{tmp_path}/x/../ws/.")
    _id, path, printed = fork(session, tmp_path / "journals", tmp_path)
    assert "records no workspace" not in printed
    assert run_starts(path) == [str(workspace)]


def wren_journal(folder: Path, cwd: str) -> Path:
    """A Wren journal whose run recorded `cwd` as its workspace (as a fork made before this check did)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "s-20261130-100000-odd0.jsonl"
    with JournalWriter.create(path, fsync="none") as writer:
        writer.append(RunStart(pid=1, cwd=cwd, model="pi", version="test"))
        writer.append(Message(message=ChatMessage(role="user", content="list the files")))
        writer.append(Message(message=ChatMessage(role="assistant", content="There are two.")))
    return path


@pytest.mark.parametrize(
    ("cwd", "said"),
    [
        ("../..", "its workspace '../..' is not an absolute path, so it names no one folder"),
        ("/", "its workspace is / (the whole disk)"),
    ],
)
def test_resume_refuses_a_recorded_workspace_that_names_no_one_folder_until_one_is_given(
    tmp_path: Path, cwd: str, said: str
) -> None:
    journals = tmp_path / "journals"
    path = wren_journal(journals, cwd)
    before = path.read_bytes()
    here = tmp_path / "a" / "b"
    here.mkdir(parents=True)
    refused = run_wren(["resume", "--yes", path.stem, "run `pwd`", "--dir", str(journals)], cwd=here)
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"wren: will not resume {path.stem}: {said}")
    assert "Nothing was written" in refused.stderr and "--workspace" in refused.stderr
    assert "Traceback" not in refused.stderr and path.read_bytes() == before
    given = run_wren(
        ["resume", "--yes", path.stem, "run `pwd`", "--dir", str(journals), "--workspace", str(here)], cwd=tmp_path
    )
    assert given.returncode == 0, given.stderr
    assert f"$ pwd\n{here}\n" in given.stdout
    assert run_starts(path) == [cwd, str(here)]


async def test_the_viewers_fork_of_a_session_in_a_relative_folder_says_it_records_no_workspace(tmp_path: Path) -> None:
    session = pi_session(tmp_path, "../../")
    journals = tmp_path / "journals"
    app = WrenApp(folder=session.parent, session=session, journals=journals)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for_text(pilot, "hello.py")
        await pilot.press("p")
        await wait_for_text(pilot, "Fork points of pi")
        await pilot.press("enter")  # the last point listed: its answer
        await wait_for_text(pilot, f"Fork this pi session at line {ANSWER} into a new Wren journal?")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, Notice), "the fork's notice")
        notice = app.screen
        assert isinstance(notice, Notice)
        assert (
            "the session's folder '../../' is not an absolute path, so the fork records no workspace" in notice.message
        )
    (forked,) = journals.glob("s-*.jsonl")
    assert run_starts(forked) == [""]
