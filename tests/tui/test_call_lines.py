"""The viewer's `b`: from a write, edit or command row, the lines that call changed, read from the snapshot store.

The session is a real scripted `wren run` and `wren resume` (an edit tool fixing a bug, then a
shell command that rewrites a line and makes a file); the viewer is driven through Pilot, and
what it shows is checked against the files themselves. Where the store cannot say (a snapshot
thinned, the one after a call not taken yet, another agent's session) one sentence says so.
"""

from __future__ import annotations

import difflib
import hashlib
from pathlib import Path

from tests.conftest import run_wren
from tests.foreign.sessions import copy_session
from tests.tui.conftest import FixedClock, screen_text, wait_for
from tests.tui.journals import START
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import Message, Snapshot, ToolEnd, ToolStart
from wren_tui.journal.reader import read_events
from wren_tui.snapshots.store import STORE
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.call_lines import CallLines
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.conversation import ConversationView

SHELL = "run `printf 'a\\nb\\n' > f.txt && sed -i '1s/.*/Title/' README.md`"


def scripted_session(tmp_path: Path) -> tuple[Path, Path]:
    """A real two-turn run: the edit tool fixes the failing case, then a command rewrites a line and makes f.txt."""
    workspace = prepare_workspace(tmp_path / "ws")
    journals = tmp_path / "journals"
    task = "run the tests, find the failing case and fix it"
    proc = run_wren(["run", "--yes", "--dir", str(journals), task], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    (journal,) = journals.glob("s-*.jsonl")
    proc = run_wren(["resume", "--yes", "--dir", str(journals), journal.stem, SHELL], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    return workspace, journal


def call_of(journal: Path, name: str) -> ToolStart:
    return next(e for e in read_events(journal).events if isinstance(e, ToolStart) and e.name == name)


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file under `folder` (the store and journals included) by its bytes' hash: the viewer writes none."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def app_of(journal: Path) -> WrenApp:
    return WrenApp(folder=journal.parent, session=journal, clock=FixedClock(START))  # type: ignore[arg-type]


async def open_lines(app: WrenApp, pilot: object, seq: int) -> str:
    """Put the cursor on the row of event `seq`, press b, and wait for the lines (or the sentence) to be read."""
    from textual.pilot import Pilot

    assert isinstance(pilot, Pilot)
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    await wait_for(pilot, lambda: screen.reader.indexing is None and len(screen.timeline) > 0, "the session")
    view = screen.query_one(ConversationView)
    view.select(next(i for i in range(len(view.timeline)) if view.timeline.event(i).seq == seq))
    await pilot.press("b")
    await wait_for(pilot, lambda: isinstance(app.screen, CallLines), "the lines screen")
    await wait_for(pilot, lambda: "Reading the snapshots" not in screen_text(app), "the store to be read", 30)
    return screen_text(app)


async def test_an_edit_rows_lines_are_the_ones_it_added_numbered_as_in_the_file(tmp_path: Path) -> None:
    workspace, journal = scripted_session(tmp_path)
    edit = call_of(journal, "edit_file")
    core = (workspace / "stats" / "core.py").read_text().splitlines()
    # The oracle, outside Wren: the file as the workspace began, compared with the file now by difflib.
    pristine = (prepare_workspace(tmp_path / "pristine") / "stats" / "core.py").read_text().splitlines()
    matcher = difflib.SequenceMatcher(None, pristine, core, autojunk=False)
    added = [n + 1 for tag, _a, _b, j1, j2 in matcher.get_opcodes() if tag != "equal" for n in range(j1, j2)]
    assert len(added) == 2
    before = fingerprint(tmp_path / "journals"), fingerprint(workspace)
    app = app_of(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        shown = await open_lines(app, pilot, edit.seq)
        assert f"Lines edit_file changed (call {edit.id}, seq {edit.seq})" in shown
        assert "stats/core.py  changed, +2 -0" in shown
        for number in added:
            assert f"{number:>6} │ {core[number - 1]}" in shown
        assert "README.md" not in shown  # only the files the call touched
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "back to the session")
    assert (fingerprint(tmp_path / "journals"), fingerprint(workspace)) == before


async def test_a_command_rows_lines_are_shown_for_each_file_it_changed_from_its_end_row_too(tmp_path: Path) -> None:
    workspace, journal = scripted_session(tmp_path)
    events = read_events(journal).events
    shell = [e for e in events if isinstance(e, ToolStart) and e.name == "run_command"][-1]
    end = next(e for e in events if isinstance(e, ToolEnd) and e.id == shell.id)
    app = app_of(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        shown = await open_lines(app, pilot, end.seq)  # the call's end row names the same call
        assert f"call {shell.id}, seq {shell.seq}" in shown
        assert "README.md  changed, +1 -1" in shown and "     1 │ Title" in shown
        assert "f.txt  added, +2 -0" in shown and "     1 │ a" in shown and "     2 │ b" in shown
    assert (workspace / "README.md").read_text().splitlines()[0] == "Title"


async def test_a_call_whose_snapshot_was_thinned_says_so_in_one_sentence(tmp_path: Path) -> None:
    _workspace, journal = scripted_session(tmp_path)
    shell = [e for e in read_events(journal).events if isinstance(e, ToolStart) and e.name == "run_command"][-1]
    proc = run_wren(["blame", "--dir", str(journal.parent), "--session", journal.stem, "--call", shell.id],
                    cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0 and "f.txt (added, +2 -0)" in proc.stdout, proc.stderr
    # The snapshot after the command, as a prune keeping the store within its budget drops it: its tree object gone.
    tree = [e.id for e in read_events(journal).events if isinstance(e, Snapshot) and e.id][-1]
    loose = journal.parent / STORE / "objects" / tree[:2] / tree[2:]
    assert loose.is_file(), "the last snapshot's tree is a loose object"
    loose.unlink()
    app = app_of(journal)
    async with app.run_test(size=(120, 40)) as pilot:
        shown = await open_lines(app, pilot, shell.seq)
        assert "the snapshots around this call were thinned from the store to keep it within its budget" in shown
        assert "f.txt" not in shown


async def test_a_call_cut_off_before_its_next_snapshot_says_it_is_not_taken_yet(tmp_path: Path) -> None:
    _workspace, journal = scripted_session(tmp_path)
    shell = [e for e in read_events(journal).events if isinstance(e, ToolStart) and e.name == "run_command"][-1]
    # What a run killed during the command leaves: its lines up to the call's start, in the same store.
    lines = journal.read_bytes().splitlines(keepends=True)
    cut = journal.parent / "s-20260101-000000-cut1.jsonl"
    cut.write_bytes(b"".join(lines[: shell.seq]))
    app = app_of(cut)
    async with app.run_test(size=(120, 40)) as pilot:
        shown = await open_lines(app, pilot, shell.seq)
        assert "the snapshot after this call is not taken yet" in shown


async def test_another_agents_call_row_says_there_are_no_snapshots_and_a_message_row_opens_nothing(
    tmp_path: Path,
) -> None:
    path = copy_session("claude", "tool-error", tmp_path)
    app = WrenApp(folder=path.parent, session=path, clock=FixedClock(START))  # type: ignore[arg-type]
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_for(pilot, lambda: len(screen.timeline) > 0 and screen.reader.indexing is None, "the session")
        view = screen.query_one(ConversationView)
        timeline = view.timeline
        # Another agent journals no call's start: its call rows are the reply asking for it, its end and its result.
        end = next(timeline.event(i) for i in range(len(timeline)) if isinstance(timeline.event(i), ToolEnd))
        first = timeline.event(0)
        assert isinstance(first, Message) and first.message.role == "user"
        view.select(0)
        await pilot.press("b")
        said = "Put the cursor on a write, edit or command row to see the lines it changed."
        await wait_for(pilot, lambda: any(n.message == said for n in app._notifications), "the sentence")
        assert not isinstance(app.screen, CallLines)
        shown = await open_lines(app, pilot, end.seq)
        assert "Lines Bash changed" in shown
        assert "claude sessions have no Wren snapshots, so the lines this call changed are not known." in shown
