"""What changed since each point (`wren fork --json`), `wren diff-files`, the log's line, the store's space, prune."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.test_snapshot_forks import state_of
from tests.conftest import run_wren
from wren_tui.journal.events import Snapshot
from wren_tui.journal.locks import read_locks
from wren_tui.journal.reader import read_events
from wren_tui.snapshots.store import LOCK, PENDING, STORE, SnapshotError, Store


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
    gone.unlink()
    before = store.size()
    said = wren(["snapshots", "prune", "--now", "--dir", str(journals)], tmp_path)
    assert said.startswith(f"pruned {store.path}: ")
    assert store.size() < before - 500_000
    for tree in kept_snaps:
        store.check_whole(tree)
    assert not any(store.has_tree(t) for t in gone_snaps - kept_snaps)


def test_prune_keeps_a_snapshot_only_a_fork_event_names_so_the_fork_of_a_fork_gets_its_files(
    workspace: Path, tmp_path: Path
) -> None:
    journals, sid = two_turns(workspace)
    point = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], tmp_path))[0]["seq"]
    first = tmp_path / "first"
    child = json.loads(
        wren(["fork", "--dir", str(journals), sid, str(point), "--workspace", str(first), "--json"], tmp_path)
    )
    child_events = events_of(Path(child["path"]))
    assert not any(isinstance(e, Snapshot) and e.id == child["snapshot"] for e in child_events)  # the fork names it
    (journals / f"{sid}.jsonl").unlink()
    said = json.loads(wren(["snapshots", "prune", "--now", "--json", "--dir", str(journals)], tmp_path))
    assert said["kept"] >= 1
    again = tmp_path / "again"
    wren(["fork", "--dir", str(journals), child["id"], str(point), "--workspace", str(again)], tmp_path)
    assert state_of(again) == state_of(first) and state_of(first)


def test_prune_refuses_changing_nothing_when_a_journal_has_a_damaged_line_or_is_a_link(
    workspace: Path, tmp_path: Path
) -> None:
    journals, sid = two_turns(workspace)
    journal = journals / f"{sid}.jsonl"
    trees = {e.id for e in events_of(journal) if isinstance(e, Snapshot) and e.id}
    store = Store(journals / STORE)
    whole = journal.read_bytes()
    lines = whole.split(b"\n")
    at = len(lines[0]) + 1 + len(lines[1]) + 1 + len(lines[2]) // 2  # line 3: snapshots come after it
    journal.write_bytes(whole[:at] + bytes([whole[at] ^ 1]) + whole[at + 1 :])
    damaged = read_events(journal).stop
    assert damaged is not None and not damaged.torn and damaged.line == 3
    other = tmp_path / "elsewhere"
    other.mkdir()

    def refused(why: str) -> None:
        before = sorted(os.listdir(store.path / "objects"))
        proc = run_wren(["snapshots", "prune", "--now", "--dir", str(journals)], cwd=tmp_path)
        assert proc.returncode == 1 and why in proc.stderr and "nothing was pruned" in proc.stderr, proc.stderr
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
        assert sorted(os.listdir(store.path / "objects")) == before
        for tree in trees:
            store.check_whole(tree)

    refused(f"{journal}: cannot be read past line 3 (")
    journal.write_bytes(whole)
    os.rename(journal, other / journal.name)
    journal.symlink_to(other / journal.name)
    refused(f"{journal}: not a journal file (a link, a folder or a FIFO)")
    journal.unlink()
    os.rename(other / journal.name, journal)
    wren(["snapshots", "prune", "--now", "--dir", str(journals)], tmp_path)
    for tree in trees:
        store.check_whole(tree)


def test_a_snapshot_taken_but_not_yet_named_by_its_journal_is_kept_and_one_of_a_deleted_session_is_not(
    workspace: Path, tmp_path: Path
) -> None:
    """The moment between `Store.take` and the journal line that names its tree: prune keeps the tree."""
    journals, sid = two_turns(workspace)
    store = Store(journals / STORE)
    (workspace / "only-in-the-next-snapshot.txt").write_text("written after the journal's last line\n")
    taken = store.take(workspace, sid, leave_out=(journals,))  # as the run does; its event not written yet
    assert taken.id not in {e.id for e in events_of(journals / f"{sid}.jsonl") if isinstance(e, Snapshot)}
    gone_ws = tmp_path / "gone-ws"
    gone_ws.mkdir()
    (gone_ws / "only-the-gone-session.txt").write_text("no journal names this\n")
    orphan = store.take(gone_ws, "s-20260101-000000-gone")  # a session whose journal is not there
    wren(["snapshots", "prune", "--now", "--dir", str(journals)], tmp_path)
    store.check_whole(taken.id)
    assert not store.has_tree(orphan.id)
    assert sorted(os.listdir(store.path / PENDING)) == [sid]


def _waiting_on(lock: Path, pid: int) -> bool:
    """Whether process `pid` waits for the flock on `lock` (/proc/locks: a blocked request's row has `->`)."""
    st = os.stat(lock)
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for row in read_locks().splitlines():
        parts = row.split()
        if len(parts) >= 7 and parts[1] == "->" and parts[5] == str(pid) and parts[6] == dev:
            return True
    return False


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs /proc/locks to see that prune waits")
@pytest.mark.parametrize("budget", [[], ["--budget", "1KB"]], ids=["no budget", "thinning to a tiny budget"])
def test_a_prune_started_while_a_snapshot_is_being_taken_waits_for_it_and_keeps_its_tree(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: list[str]
) -> None:
    """Prune starts after the snapshot's objects are written and before its tree is recorded: the worst moment."""
    journals, sid = two_turns(workspace)
    store = Store(journals / STORE)
    for i in range(80):  # enough for git add's pack, and loose objects in-process: both kinds are at stake
        (workspace / f"new{i}.txt").write_text(f"only in the snapshot being taken {i}\n")
    written, go = threading.Event(), threading.Event()
    register = Store._register

    def at_the_worst_moment(self: Store, session_id: str, tree: str) -> None:
        written.set()
        go.wait()
        register(self, session_id, tree)

    monkeypatch.setattr(Store, "_register", at_the_worst_moment)
    taken: list[str] = []
    taking = threading.Thread(target=lambda: taken.append(store.take(workspace, sid, leave_out=(journals,)).id))
    taking.start()
    written.wait()
    args = [sys.executable, "-m", "wren_tui", "snapshots", "prune", "--now", *budget, "--dir", str(journals)]
    prune = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # Until prune waits for the store's lock, or (were it not to wait) ends: a condition, not a time.
        while not _waiting_on(store.path / LOCK, prune.pid):
            with contextlib.suppress(subprocess.TimeoutExpired):
                prune.wait(0.01)
            if prune.returncode is not None:
                break
        assert prune.poll() is None, "prune ran while a snapshot was being taken"
    finally:
        go.set()
        taking.join()
        _, err = prune.communicate(timeout=120)
    assert prune.returncode == 0, err
    store.check_whole(taken[0])


def test_a_plain_prune_keeps_what_was_written_in_the_last_two_hours_and_prune_now_does_not(tmp_path: Path) -> None:
    """The grace: for a writer that does not take the store's lock (an earlier Wren, a system with no flock)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    journals = tmp_path / "journals"
    store = Store(journals / STORE)
    store.take(workspace, "s-20260101-000000-abcd")  # the store, made as a run makes it
    blob = store.git("hash-object", "-w", "--stdin", input=b"written just now, named by nothing\n").decode().strip()
    wren(["snapshots", "prune", "--dir", str(journals)], tmp_path)
    assert store.git("cat-file", "-t", blob) == b"blob\n"
    wren(["snapshots", "prune", "--now", "--dir", str(journals)], tmp_path)
    with pytest.raises(SnapshotError):
        store.git("cat-file", "-t", blob)


def test_snapshots_on_a_missing_folder_is_one_sentence_and_diff_files_past_the_last_event_lists_the_points(
    workspace: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-journals"
    for args in (["snapshots"], ["snapshots", "prune"], ["snapshots", "--json"]):
        proc = run_wren([*args, "--dir", str(missing)], cwd=tmp_path)
        assert proc.returncode == 1, proc
        assert proc.stderr.startswith(f"wren: {missing}: no such folder; name the journals folder with --dir")
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
        assert proc.stdout == ""
    assert not missing.exists()
    journals, sid = two_turns(workspace)
    points = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], tmp_path))
    for args in ([sid, "999"], [sid, str(points[0]["seq"]), "999"]):
        proc = run_wren(["diff-files", "--dir", str(journals), *args], cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert f"{sid}: there is no event 999 (its last is " in proc.stderr
        assert all(f"  {p['seq']}  {p['role']}: " in proc.stderr for p in points), proc.stderr
        # The command it names can be copied as it is: the journals folder is named, as the run named it.
        assert f"as `wren diff-files --dir {journals} {sid} SEQ [SEQ2]` shows:" in proc.stderr, proc.stderr
