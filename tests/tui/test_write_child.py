"""The viewer's child (`python -m wren_tui.tui.write`): each answer is what the `wren` command says of the same ask.

The session is a real `wren run` with snapshots; the child is asked through `tui/write_child.py`,
as the fork picker and the fork flow ask it, and each typed answer is held against the CLI's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec

from tests.agent.test_snapshot_forks import state_of
from tests.conftest import run_wren
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import Fork
from wren_tui.journal.reader import read_events
from wren_tui.tui.write import Answer, Diff, Failed, ForkMade
from wren_tui.tui.write_child import diff_files, files_changed, fork_with_files


def _session(tmp_path: Path) -> tuple[Path, dict[str, tuple[str, bytes]]]:
    """A real session's journal, and its workspace's files before the run (the files at seq 2)."""
    workspace = prepare_workspace(tmp_path / "ws")
    before = state_of(workspace)
    journals = tmp_path / "journals"
    proc = run_wren(["run", "--yes", "--dir", str(journals), "run the tests, find the failing case and fix it"],
                    cwd=workspace)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return next(journals.glob("s-*.jsonl")), before


def test_the_childs_counts_and_diff_are_what_wren_fork_json_and_wren_diff_files_say(tmp_path: Path) -> None:
    journal, _before = _session(tmp_path)
    listed = json.loads(run_wren(["fork", str(journal), "--json"], cwd=tmp_path).stdout)
    changed = files_changed(journal)
    assert changed == {row["seq"]: row["filesChanged"] for row in listed}
    assert any(changed.values()), "the fix changed a file since the first point"
    for row in listed:
        piped = run_wren(["diff-files", str(journal), str(row["seq"])], cwd=tmp_path)
        assert piped.returncode == 0, piped.stderr
        assert diff_files(journal, row["seq"]) == Diff(piped.stdout)


def test_the_child_forks_with_files_and_refuses_a_used_folder_in_the_words_of_wren_fork(tmp_path: Path) -> None:
    journal, before = _session(tmp_path)
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine\n")
    refused = fork_with_files(journal, 2, used)
    cli = run_wren(["fork", str(journal), "2", "--workspace", str(used)], cwd=tmp_path)
    assert cli.returncode == 2 and isinstance(refused, Failed)
    assert cli.stderr.strip() == f"wren: {refused.said}"
    assert [p.name for p in used.iterdir()] == ["keep.txt"] and len(list(journal.parent.glob("s-*.jsonl"))) == 1

    target = tmp_path / "fork-2"
    made = fork_with_files(journal, 2, target)
    assert isinstance(made, ForkMade) and made.workspace == str(target)
    assert state_of(target) == before and made.files_restored == len(before)
    fork_event = read_events(Path(made.path)).events[-1]
    assert isinstance(fork_event, Fork) and fork_event.workspace == str(target) and fork_event.at_seq == 2


def test_a_question_the_child_does_not_know_is_answered_failed_not_a_crash(tmp_path: Path) -> None:
    journal, _before = _session(tmp_path)
    gone = journal.with_name("s-20200101-000000-dead.jsonl")
    answer = files_changed(gone)
    assert answer == {}
    said = diff_files(gone, 2)
    assert isinstance(said, Failed) and str(gone) in said.said
    # Asked by hand, as `python -m wren_tui.tui.write`: a question it does not know is one sentence, exit 0.
    for words in (["diff", str(journal), "two"], ["rewind", str(journal), "2"], []):
        done = subprocess.run(
            [sys.executable, "-m", "wren_tui.tui.write", *words], capture_output=True, timeout=60, check=False
        )
        assert done.returncode == 0 and done.stderr == b"", words
        assert msgspec.json.decode(done.stdout, type=Answer) == Failed(
            f"not a question of the viewer's child: {' '.join(words)}"
        )
