"""What changed since each point (`wren fork --json`), `wren diff-files`, the log's line, the store's space, prune."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.conftest import run_wren
from wren_tui.journal.events import Snapshot
from wren_tui.journal.snapshots import STORE, Store


def wren(args: list[str], cwd: Path) -> str:
    proc = run_wren(args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def two_turns(workspace: Path) -> tuple[Path, str]:
    """The demo's fix (an edit), then a turn whose shell command changes two files."""
    journals = journals_of(workspace)
    wren(["run", "--yes", "--dir", str(journals), "run the tests, find the failing case and fix it"], workspace)
    sid = only_journal(journals).stem
    task = "run `printf 'new\\n' > added.txt && rm README.md`"
    wren(["resume", "--yes", "--dir", str(journals), sid, task], workspace)
    return journals, sid


def test_fork_points_say_how_many_files_changed_since_and_by_which_calls(workspace: Path, tmp_path: Path) -> None:
    journals, sid = two_turns(workspace)
    points = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], tmp_path))
    assert [p["filesChanged"] for p in points] == [3, 2, 2, 0]
    first = points[0]["changedBy"]
    assert [(c["tool"], c["kind"], c["files"]) for c in first] == [
        ("edit_file", "edit", 1),
        ("run_command", "shell", 2),
    ]
    assert [(c["tool"], c["kind"]) for c in points[2]["changedBy"]] == [("run_command", "shell")]
    listing = wren(["fork", "--dir", str(journals), sid], tmp_path)
    assert "3 files changed since (by 1 edit, 1 shell command)" in listing
    assert listing.rstrip().endswith("· files as now")


def test_diff_files_prints_the_unified_diff_between_two_points_from_the_store(workspace: Path, tmp_path: Path) -> None:
    journals, sid = two_turns(workspace)
    points = [p["seq"] for p in json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], tmp_path))]
    whole = wren(["diff-files", "--dir", str(journals), sid, str(points[0])], tmp_path)
    assert "--- a/stats/core.py\n+++ b/stats/core.py\n" in whole and "+    if not values:\n" in whole
    assert "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+new\n" in whole
    assert "+++ /dev/null" in whole and "--- a/README.md" in whole
    # Between the two points of the first turn: the fix only; the same point twice: nothing.
    first_turn = wren(["diff-files", "--dir", str(journals), sid, str(points[0]), str(points[1])], tmp_path)
    assert first_turn.count("diff --git") == 1 and "a/stats/core.py" in first_turn
    assert wren(["diff-files", "--dir", str(journals), sid, str(points[3])], tmp_path) == ""
    # The workspace is not what is read: the diff comes from the store.
    shutil.rmtree(workspace)
    assert wren(["diff-files", "--dir", str(journals), sid, str(points[0])], tmp_path) == whole


def test_log_shows_each_snapshot_on_one_line_and_ls_the_space_the_store_takes(workspace: Path, tmp_path: Path) -> None:
    journals, sid = two_turns(workspace)
    log = wren(["log", "--dir", str(journals), sid], tmp_path).splitlines()
    snaps = [e for e in events_of(journals / f"{sid}.jsonl") if isinstance(e, Snapshot)]
    lines = [line for line in log if "  snapshot  " in line]
    assert len(lines) == len(snaps) > 2
    assert any(line.endswith("· end of turn") and f"{snaps[-1].id[:12]} · " in line for line in lines)
    assert any("before [" in line and " files, " in line and " changed" in line for line in lines)
    size = json.loads(wren(["snapshots", "--dir", str(journals), "--json"], tmp_path))
    assert size["store"] == str(journals / STORE) and size["bytes"] > 0
    listing = wren(["ls", "--dir", str(journals)], tmp_path)
    assert listing.splitlines()[-1].startswith("snapshots: ") and listing.rstrip().endswith(f" in {journals / STORE}")


def test_prune_drops_what_only_deleted_sessions_name_and_keeps_every_named_snapshot(tmp_path: Path) -> None:
    from wren_tui.agent.workspace import prepare_workspace

    journals = tmp_path / "journals"
    kept_ws, gone_ws = prepare_workspace(tmp_path / "kept"), prepare_workspace(tmp_path / "gone")
    (gone_ws / "big.bin").write_bytes(os.urandom(1 << 20))  # 1 MB only the deleted session's snapshots hold
    for ws in (kept_ws, gone_ws):
        wren(["run", "--yes", "--dir", str(journals), "run the tests, find the failing case and fix it"], ws)
    kept, gone = sorted(journals.glob("s-*.jsonl"), key=lambda p: p.stat().st_mtime)
    gone_snaps = {e.id for e in events_of(gone) if isinstance(e, Snapshot)}
    kept_snaps = {e.id for e in events_of(kept) if isinstance(e, Snapshot)}
    store = Store(journals / STORE)
    # A prune that keeps what is recent removes nothing yet: a run may be writing.
    wren(["snapshots", "prune", "--dir", str(journals)], tmp_path)
    assert all(store.has_tree(t) for t in gone_snaps | kept_snaps)
    gone.unlink()
    before = store.size()
    said = wren(["snapshots", "prune", "--now", "--dir", str(journals)], tmp_path)
    assert said.startswith(f"pruned {store.path}: ")
    assert store.size() < before - 500_000
    for tree in kept_snaps:
        store.check_whole(tree)
    assert not any(store.has_tree(t) for t in gone_snaps - kept_snaps)


def test_prune_while_a_run_is_snapshotting_keeps_everything_that_run_names(tmp_path: Path) -> None:
    from wren_tui.agent.workspace import prepare_workspace

    journals = tmp_path / "journals"
    ws = prepare_workspace(tmp_path / "ws")
    for i in range(300):
        (ws / f"data{i}.txt").write_text(f"{i}\n" * 100)
    task = "run the tests, find the failing case and fix it"
    args = [sys.executable, "-m", "wren_tui", "run", "--yes", "--pace-factor", "0.2", "--dir", str(journals), task]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    child = subprocess.Popen(args, cwd=ws, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    pruned = 0
    try:
        while child.poll() is None or pruned == 0:
            if (journals / STORE).exists():
                wren(["snapshots", "prune", "--dir", str(journals)], tmp_path)
                pruned += 1
    finally:
        child.wait(120)
    assert child.returncode == 0 and pruned >= 1
    store = Store(journals / STORE)
    snaps = [e for e in events_of(only_journal(journals)) if isinstance(e, Snapshot)]
    assert len(snaps) >= 4
    for snap in snaps:
        store.check_whole(snap.id)
