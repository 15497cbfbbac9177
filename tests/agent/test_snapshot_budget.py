"""The snapshot store's budget: prune thins it under the budget and keeps every fork and rewind point restorable."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.test_snapshot_forks import state_of
from tests.conftest import run_wren
from wren_tui.journal.events import Fork, Rewind, Snapshot
from wren_tui.snapshots.budget import ENV, Snap, choose, parse_size
from wren_tui.snapshots.store import PENDING, STORE, Store

BIG = 256 * 1024  # each turn writes this many random bytes: nothing in the store shares them


def wren(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = run_wren(args, cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def turn(journals: Path, workspace: Path, sid: str | None, n: int) -> str:
    task = f"run `head -c {BIG} /dev/urandom > big.bin && echo turn {n} > turn.txt`"
    dir_ = ["--dir", str(journals)]
    if sid is None:
        wren(["run", "--yes", *dir_, task], workspace)
        return only_journal(journals).stem
    wren(["resume", "--yes", *dir_, sid, task], workspace)
    return sid


def test_a_session_writing_far_more_than_the_budget_is_thinned_under_it_and_every_fork_and_rewind_point_restores(
    workspace: Path, tmp_path: Path
) -> None:
    journals = journals_of(workspace)
    dir_ = ["--dir", str(journals)]
    sid = turn(journals, workspace, None, 0)
    for n in range(1, 3):
        turn(journals, workspace, sid, n)
    points = json.loads(wren(["fork", *dir_, sid, "--json"], tmp_path))
    fork_seq = points[1]["seq"]
    first = tmp_path / "first-fork"
    wren(["fork", *dir_, sid, str(fork_seq), "--workspace", str(first)], tmp_path)
    for n in range(3, 6):
        turn(journals, workspace, sid, n)
    points = json.loads(wren(["fork", *dir_, sid, "--json"], tmp_path))
    rewind_seq = points[-3]["seq"]
    wren(["rewind", *dir_, sid, str(rewind_seq), "--yes"], tmp_path)
    rewound = state_of(workspace)
    for n in range(6, 10):
        turn(journals, workspace, sid, n)
    store = Store(journals / STORE)
    budget = parse_size("1.6MB", "test")
    written = 10 * BIG
    assert written > budget * 1.5 and store.size() > budget  # far more than the budget went in

    status = json.loads(wren(["snapshots", *dir_, "--json"], tmp_path, env={"WREN_SNAPSHOT_BUDGET": "1.6MB"}))
    assert status["budget"] == budget and status["sessions"] == 2 and status["pruneWouldThin"] > 0
    assert status["pruneWouldFree"] > status["bytes"] - budget - 64 * 1024  # about what the prune frees, below

    said = wren(["snapshots", "prune", "--now", *dir_], tmp_path, env={"WREN_SNAPSHOT_BUDGET": "1.6MB"})
    assert "thinned " in said and "to keep within 1.6 MB" in said, said
    assert store.size() <= budget, said
    after = json.loads(wren(["snapshots", *dir_, "--json"], tmp_path, env={"WREN_SNAPSHOT_BUDGET": "1.6MB"}))
    assert after["thinned"] > 0 and after["snapshots"] == status["snapshots"] and after["bytes"] <= budget

    # Every snapshot a fork or rewind event names is whole, and so is each session's last.
    named: set[str] = set()
    for path in journals.glob("*.jsonl"):
        events = events_of(path)
        named.add([e.id for e in events if isinstance(e, Snapshot) and e.id][-1])
        for event in events:
            if isinstance(event, Fork) and event.snapshot:
                named.add(event.snapshot)
            elif isinstance(event, Rewind):
                named.update((event.snapshot, event.before))
    assert len(named) >= 4
    for tree in named:
        store.check_whole(tree)
    # The fork point restores the same files as the first fork; the rewind point the files the rewind gave.
    again = tmp_path / "fork-again"
    wren(["fork", *dir_, sid, str(fork_seq), "--workspace", str(again)], tmp_path)
    assert state_of(again) == state_of(first)
    at_rewind = tmp_path / "at-rewind"
    wren(["fork", *dir_, sid, str(rewind_seq), "--workspace", str(at_rewind)], tmp_path)
    assert state_of(at_rewind) == rewound
    # Blame still answers: each line from a kept snapshot's change, or "thinned" where the ones between were dropped.
    lines = json.loads(wren(["blame", *dir_, "--session", sid, "--json", str(workspace / "turn.txt")], tmp_path))
    rows = lines if isinstance(lines, list) else lines["lines"]
    assert [r["kind"] for r in rows] and {r["kind"] for r in rows} <= {"command", "thinned"}
    # The undo of the rewind still puts back the files it replaced (its `before`).
    wren(["rewind", *dir_, sid, "--undo", "--yes"], tmp_path)

    # The points that lost their files say so, and a fork with files there is one sentence, nothing made.
    points = json.loads(wren(["fork", *dir_, sid, "--json"], tmp_path))
    thinned = [p["seq"] for p in points if p["filesThinned"]]
    assert thinned and fork_seq not in thinned and rewind_seq not in thinned
    listing = wren(["fork", *dir_, sid], tmp_path)
    assert "· files thinned" in listing
    refused = run_wren(["fork", *dir_, sid, str(thinned[0]), "--workspace", str(tmp_path / "no")], cwd=tmp_path)
    assert refused.returncode == 1 and "were thinned from the snapshot store" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "no").exists()
    files = state_of(workspace)
    refused = run_wren(["rewind", *dir_, sid, str(thinned[0]), "--yes"], cwd=tmp_path)
    assert refused.returncode == 1 and "were thinned from the snapshot store" in refused.stderr, refused.stderr
    assert state_of(workspace) == files


def test_prune_under_a_tiny_budget_never_drops_what_a_live_run_recorded_and_not_yet_named(
    workspace: Path, tmp_path: Path
) -> None:
    """The moment between `Store.take` and the journal line naming its tree, with a budget nothing else fits."""
    journals = journals_of(workspace)
    sid = turn(journals, workspace, None, 0)
    turn(journals, workspace, sid, 1)
    store = Store(journals / STORE)
    (workspace / "only-in-the-next-snapshot.bin").write_bytes(bytes(range(256)) * 2048)
    taken = store.take(workspace, sid, leave_out=(journals,))  # as the run does; its event not written yet
    assert taken.id not in {e.id for e in events_of(journals / f"{sid}.jsonl") if isinstance(e, Snapshot)}
    said = wren(["snapshots", "prune", "--now", "--budget", "1KB", "--dir", str(journals)], tmp_path)
    assert "still over the budget" in said
    store.check_whole(taken.id)
    assert sorted(p.name for p in (store.path / PENDING).iterdir()) == [sid]
    last = [e.id for e in events_of(journals / f"{sid}.jsonl") if isinstance(e, Snapshot) and e.id][-1]
    store.check_whole(last)


def test_snapshots_taken_before_calls_are_thinned_after_the_days_kept_and_end_of_turn_ones_stay() -> None:
    now = datetime(2026, 12, 7, tzinfo=UTC)

    def at(days: float) -> str:
        return (now - timedelta(days=days)).isoformat()

    snaps = [
        Snap("a" * 40, "s1", at(30), False),
        Snap("b" * 40, "s1", at(30), True),
        Snap("c" * 40, "s1", at(1), False),
        Snap("d" * 40, "s1", at(1), True),
        Snap("e" * 40, "s1", at(40), False),  # named by a fork: never thinned
    ]
    thin = choose(snaps, {"e" * 40}, 10**9, lambda keep: 0, now=now, keep_days=7)
    assert thin.keep == {"b" * 40, "c" * 40, "d" * 40, "e" * 40}
    assert [s.tree for s in thin.dropped] == ["a" * 40]
    # Over the budget (90% of it the target): before calls first, oldest first, then end-of-turn ones.
    sizes = {"a" * 40: 1, "b" * 40: 10, "c" * 40: 100, "d" * 40: 1000, "e" * 40: 10000}
    thin = choose(snaps, {"e" * 40}, 12228, lambda keep: sum(sizes[t] for t in keep), now=now, keep_days=7)
    assert thin.keep == {"d" * 40, "e" * 40} and thin.over == 0
    thin = choose(snaps, {"e" * 40}, 100, lambda keep: sum(sizes[t] for t in keep), now=now, keep_days=7)
    assert thin.keep == {"e" * 40} and thin.over > 0


def test_a_budget_that_is_not_a_size_is_one_sentence(tmp_path: Path) -> None:
    proc = run_wren(["snapshots", "--dir", str(tmp_path), "--budget", "lots"], cwd=tmp_path)
    assert proc.returncode == 2 and "'lots' is not a size" in proc.stderr
    proc = run_wren(["snapshots", "--dir", str(tmp_path)], cwd=tmp_path, env={"WREN_SNAPSHOT_BUDGET": "0"})
    assert proc.returncode == 2 and "WREN_SNAPSHOT_BUDGET" in proc.stderr
    shutil.rmtree(tmp_path / "nothing", ignore_errors=True)


@pytest.mark.parametrize("ending", ["resume", "chat"])
def test_a_run_that_ends_with_the_store_over_its_budget_prunes_it_under_and_says_so(
    workspace: Path, tmp_path: Path, ending: str
) -> None:
    journals = journals_of(workspace)
    sid = turn(journals, workspace, None, 0)
    for n in range(1, 8):
        turn(journals, workspace, sid, n)
    store = Store(journals / STORE)
    budget = parse_size("1.2MB", "test")
    assert store.size() > budget
    # Objects older than the two hours a plain prune (the one after a run too) leaves alone.
    old = (datetime.now(UTC) - timedelta(hours=3)).timestamp()
    for folder, _dirs, files in os.walk(store.path / "objects"):
        for name in files:
            os.utime(os.path.join(folder, name), (old, old))
    task = "run `echo one more > turn.txt`"
    if ending == "resume":
        proc = run_wren(["resume", "--yes", "--dir", str(journals), sid, task], cwd=workspace, env={ENV: "1.2MB"})
    else:
        chat = ["chat", "--yes", "--dir", str(journals), "--resume", sid]
        proc = run_wren(chat, cwd=workspace, env={ENV: "1.2MB"}, input=f"{task}\n/quit\n")
    assert proc.returncode == 0, proc.stderr
    assert "was over its 1.2 MB budget" in proc.stderr and "thinned " in proc.stderr, proc.stderr
    assert store.size() <= budget
    events = events_of(journals / f"{sid}.jsonl")
    store.check_whole([e.id for e in events if isinstance(e, Snapshot) and e.id][-1])
    # Under its budget (the default here), a run does not prune: nothing said.
    proc = run_wren(["resume", "--yes", "--dir", str(journals), sid, task], cwd=workspace)
    assert proc.returncode == 0 and "budget" not in proc.stderr, proc.stderr


def test_snapshots_beside_a_damaged_journal_still_says_the_size_and_why_the_rest_is_not_known(
    workspace: Path, tmp_path: Path
) -> None:
    journals = journals_of(workspace)
    sid = turn(journals, workspace, None, 0)
    with open(journals / f"{sid}.jsonl", "ab") as f:
        f.write(b'{"not": "an event"}\n{"seq": 99}\n')
    proc = run_wren(["snapshots", "--dir", str(journals)], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("snapshots: ") and "budget" in proc.stdout
    assert "what a prune would free is not known" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_over_the_budget_prune_thins_the_fewest_snapshots_that_fit_it() -> None:
    """Against every budget, the oldest-first order cut as early as the budget allows (brute force as the oracle)."""
    now = datetime(2026, 12, 7, tzinfo=UTC)
    snaps = [Snap(f"{i:040x}", "s1", (now - timedelta(hours=30 - i)).isoformat(), i % 3 == 0) for i in range(20)]
    sizes = {s.tree: 1 + (i * 7) % 11 for i, s in enumerate(snaps)}
    order = sorted(snaps, key=lambda s: (s.end_of_turn, s.ts))

    def usage(keep: set[str]) -> int:
        return sum(sizes[t] for t in keep)

    for budget in range(1, 140):
        target = int(budget * 0.9)
        fewest = next((k for k in range(len(order) + 1) if usage({s.tree for s in order[k:]}) <= target), len(order))
        thin = choose(snaps, set(), budget, usage, now=now)
        assert len(thin.dropped) == fewest, budget
        assert thin.keep == {s.tree for s in order[fewest:]}
