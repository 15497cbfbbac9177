"""The snapshot store runs git with nothing but Wren's own settings: no config, attributes or hooks from anywhere.

A store's `config` can name programs (filters, fsmonitor, textconv), its attributes can ask for them, its
hooks folder holds programs: a journals folder (a repository's `journals/`, a shared folder) can ship any of
them. Each planted program here leaves a file in `ran/` if it is ever started; none may be.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import journals_of, only_journal
from tests.conftest import run_wren
from wren_tui.journal.locks import read_locks
from wren_tui.snapshots.store import LOCK, MARK, STORE, SnapshotError, Store

MADE = b"a workspace snapshot store made by Wren (docs/snapshots.md); its config is Wren's own\n"

TASK = "run the tests, find the failing case and fix it"
HOOKS = ("post-index-change", "reference-transaction", "post-checkout", "pre-auto-gc", "post-commit")


def wren(args: list[str], cwd: Path) -> str:
    proc = run_wren(args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def seventy_files(workspace: Path) -> None:
    """A real project's first snapshot: over 64 new files, so git itself adds them (`git add`, filters and all)."""
    for i in range(70):
        (workspace / f"data{i:02}.txt").write_text(f"{i}\n")


def evil_program(tmp_path: Path) -> tuple[Path, Path]:
    """A program that leaves `ran/NAME` when started as `evil NAME`, and passes its input through (a filter)."""
    ran = tmp_path / "ran"
    ran.mkdir()
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\ntouch "{ran}/$1"\ncat\n')
    evil.chmod(0o755)
    return evil, ran


def plant_config(store: Path, evil: Path) -> None:
    """The finding's attack: a filter for every path (attributes) and its programs, fsmonitor, textconv (config)."""
    (store / "info").mkdir(exist_ok=True)
    (store / "info" / "attributes").write_text("* filter=qa4 diff=qa4\n")
    with open(store / "config", "a") as config:
        config.write(
            f'[filter "qa4"]\n\tclean = {evil} clean\n\tsmudge = {evil} smudge\n\tprocess = {evil} process\n'
            f'[diff "qa4"]\n\ttextconv = {evil} textconv\n[core]\n\tfsmonitor = {evil} fsmonitor\n'
        )


def plant_hooks(store: Path, evil: Path) -> None:
    hooks = store / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in HOOKS:
        (hooks / hook).write_text(f"#!/bin/sh\nexec {evil} {hook} </dev/null\n")
        (hooks / hook).chmod(0o755)


def a_session(workspace: Path) -> tuple[Path, str, int]:
    """A run with snapshots, in a store Wren made: its journals folder, id, and its first clean point's seq."""
    journals = journals_of(workspace)
    wren(["run", "--yes", "--dir", str(journals), TASK], workspace)
    sid = only_journal(journals).stem
    points = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], workspace))
    return journals, sid, points[0]["seq"]


def refused_everywhere(journals: Path, sid: str, seq: int, tmp_path: Path, workspace: Path, said: str) -> None:
    """`wren run`, `wren fork --workspace` and `wren snapshots prune` each refuse with `said`; nothing is forked."""
    ran = run_wren(["run", "--yes", "--dir", str(journals), "run `touch made-by-the-call`"], cwd=workspace)
    assert ran.returncode == 1 and said in ran.stderr, ran.stderr
    assert len(ran.stderr.splitlines()) == 1, ran.stderr
    assert not (workspace / "made-by-the-call").exists()
    target = tmp_path / "forked"
    forked = run_wren(["fork", "--dir", str(journals), sid, str(seq), "--workspace", str(target)], cwd=tmp_path)
    assert forked.returncode == 1 and said in forked.stderr and "nothing was forked" in forked.stderr, forked.stderr
    assert not target.exists()
    pruned = run_wren(["snapshots", "prune", "--now", "--dir", str(journals)], cwd=tmp_path)
    assert pruned.returncode == 1 and said in pruned.stderr, pruned.stderr


def test_programs_named_by_the_stores_config_and_attributes_never_run_at_run_fork_or_prune(
    workspace: Path, tmp_path: Path
) -> None:
    seventy_files(workspace)
    journals, sid, seq = a_session(workspace)
    evil, ran = evil_program(tmp_path)
    plant_config(journals / STORE, evil)
    plant_hooks(journals / STORE, evil)
    refused_everywhere(journals, sid, seq, tmp_path, workspace, "config: not the config Wren writes")
    assert sorted(os.listdir(ran)) == []


def test_a_store_wren_did_not_make_is_refused_with_a_sentence_and_runs_nothing(workspace: Path, tmp_path: Path) -> None:
    """The finding's form: `.snapshots` made by someone else (a bare repository with a filter), then a run."""
    seventy_files(workspace)
    journals, sid, seq = a_session(workspace)
    evil, ran = evil_program(tmp_path)
    store = journals / STORE
    os.rename(store, tmp_path / "wrens-store")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", "--bare", str(store)], env=env, check=True)
    plant_config(store, evil)
    plant_hooks(store, evil)
    refused_everywhere(journals, sid, seq, tmp_path, workspace, f"{store}: not a snapshot store Wren made")
    # Its mark copied in does not make it Wren's: the config is not.
    (store / MARK).write_bytes((tmp_path / "wrens-store" / MARK).read_bytes())
    refused_everywhere(journals, sid, seq, tmp_path, workspace, "config: not the config Wren writes")
    assert sorted(os.listdir(ran)) == []


def test_the_stores_attributes_and_exclude_rules_are_wrens_own_and_its_hooks_never_run(
    workspace: Path, tmp_path: Path
) -> None:
    seventy_files(workspace)
    journals, sid, _ = a_session(workspace)
    evil, ran = evil_program(tmp_path)
    store = journals / STORE
    plant_hooks(store, evil)
    (store / "info" / "attributes").write_text("* filter=qa4 -binary\n")
    (store / "info" / "exclude").write_text("data*\n")  # would leave the workspace's files out of every snapshot
    (workspace / "data00.txt").write_text("changed after the first run\n")
    wren(["resume", "--yes", "--dir", str(journals), sid, "run `printf 'x\\n' > added.txt`"], workspace)
    target = tmp_path / "forked"
    last = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], workspace))[-1]["seq"]
    wren(["fork", "--dir", str(journals), sid, str(last), "--workspace", str(target)], tmp_path)
    assert (target / "data00.txt").read_text() == "changed after the first run\n"
    assert (target / "added.txt").read_text() == "x\n"
    wren(["snapshots", "prune", "--now", "--dir", str(journals)], tmp_path)
    assert (store / "info" / "attributes").read_bytes().startswith(b"* -text -ident -filter ")
    assert not (store / "info" / "exclude").exists()
    assert sorted(os.listdir(ran)) == []


def test_a_store_an_earlier_wren_made_is_adopted_and_one_in_a_folder_with_other_files_is_never_made(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    # An earlier Wren's store: git init's config, Wren's old attributes, an indexes folder, no mark.
    old = tmp_path / "old" / STORE
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", "--bare", "--template=", str(old)], env=env, check=True)
    (old / "info").mkdir()
    (old / "info" / "attributes").write_text("* -text -ident -filter -working-tree-encoding -crlf\n")
    (old / "indexes").mkdir()
    taken = Store(old).take(workspace, "s-20260101-000000-abcd")
    assert (old / MARK).is_file()
    Store(old).check_whole(taken.id)
    # A folder that is not empty is never made a store (a `.snapshots` link to the person's own files, say).
    elsewhere = tmp_path / "documents"
    elsewhere.mkdir()
    (elsewhere / "letter.txt").write_text("mine\n")
    (tmp_path / "journals").mkdir()
    (tmp_path / "journals" / STORE).symlink_to(elsewhere)
    with pytest.raises(SnapshotError, match="not empty and not a snapshot store, so no store is made there"):
        Store(tmp_path / "journals" / STORE).take(workspace, "s-20260101-000000-abcd")
    assert os.listdir(elsewhere) == ["letter.txt"]


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs /proc/locks to see that the run waits")
def test_a_run_starting_while_another_makes_the_store_waits_for_it_and_both_snapshot(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The moment after `git init` and before Wren's mark: a second run waits, never refuses a half-made store."""
    journals = journals_of(workspace)
    store = Store(journals / STORE)
    initialised, go = threading.Event(), threading.Event()
    run = Store._run

    def stop_after_init(self: Store, *args: str, **kwargs: Any) -> bytes:
        done = run(self, *args, **kwargs)
        if args[0] == "init":
            initialised.set()
            go.wait()
        return done

    monkeypatch.setattr(Store, "_run", stop_after_init)
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("b\n")
    taken: list[str] = []
    making = threading.Thread(target=lambda: taken.append(store.take(other, "s-20260101-000000-abcd").id))
    making.start()
    initialised.wait()
    assert (store.path / MARK).read_bytes() != MADE and (store.path / "objects").is_dir()  # the making mark
    args = [sys.executable, "-m", "wren_tui", "run", "--yes", "--dir", str(journals), TASK]
    second = subprocess.Popen(args, cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while not _waiting(store.path / LOCK, second.pid):
            with contextlib.suppress(subprocess.TimeoutExpired):
                second.wait(0.01)
            if second.returncode is not None:
                break
        assert second.returncode is None, "the second run did not wait for the store being made"
    finally:
        go.set()
        making.join()
        _, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    store.check_whole(taken[0])
    assert (store.path / MARK).read_bytes() and (store.path / "config").read_text().count("\n") == 4


def _waiting(lock: Path, pid: int) -> bool:
    """Whether process `pid` waits for the flock on `lock` (/proc/locks: a blocked request's row has `->`)."""
    st = os.stat(lock)
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    return any(
        len(parts) >= 7 and parts[1] == "->" and parts[5] == str(pid) and parts[6] == dev
        for parts in (row.split() for row in read_locks().splitlines())
    )


# A process that starts making the store in JOURNALS and is killed by kill -9 right after the git command named.
_KILLED_WHILE_MAKING = """
import os, signal, sys
from pathlib import Path
from wren_tui.snapshots.store import Store
run = Store._run
def killed_after(self, *args, **kwargs):
    done = run(self, *args, **kwargs)
    if args[0] == sys.argv[2]:
        os.kill(os.getpid(), signal.SIGKILL)
    return done
Store._run = killed_after
Store(Path(sys.argv[1])).ensure()
"""


@pytest.mark.parametrize("step", ["init", "add"])
def test_a_store_whose_making_a_kill_cut_short_is_made_again_by_the_next_run(workspace: Path, step: str) -> None:
    """kill -9 right after `git init` (no indexes, no config of Wren's yet) or after a first `git add`: never stuck."""
    journals = journals_of(workspace)
    if step == "add":  # a first snapshot's own git commands, after the store was made: the store is whole
        seventy_files(workspace)
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_WHILE_MAKING, str(journals / STORE), step], capture_output=True, timeout=120
    )
    if step == "init":
        assert child.returncode == -9, child.stderr
        assert (journals / STORE / MARK).read_bytes() != MADE and (journals / STORE / "objects").is_dir()
    wren(["run", "--yes", "--dir", str(journals), TASK], workspace)
    assert (journals / STORE / MARK).read_bytes() == MADE
    sid = only_journal(journals).stem
    seq = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], workspace))[0]["seq"]
    target = workspace.parent / f"forked-{step}"
    wren(["fork", "--dir", str(journals), sid, str(seq), "--workspace", str(target)], workspace.parent)
    assert sorted(p.name for p in target.iterdir() if p.is_file()) == sorted(
        p.name for p in workspace.iterdir() if p.is_file()
    )


# A process that starts making the store in JOURNALS and is killed by kill -9 as it puts the file named in place:
# the file's temporary copy is written, its rename never happens.
_KILLED_BEFORE_A_RENAME = """
import os, signal, sys
from pathlib import Path
from wren_tui.snapshots.store import Store
replace = os.replace
def killed_before(src, dst, *args, **kwargs):
    if Path(dst).name == sys.argv[2]:
        os.kill(os.getpid(), signal.SIGKILL)
    return replace(src, dst, *args, **kwargs)
os.replace = killed_before
Store(Path(sys.argv[1])).ensure()
"""


@pytest.mark.parametrize("name", [MARK, "config"])
def test_a_store_whose_maker_was_killed_before_putting_a_file_in_place_is_made_again_by_the_next_run(
    workspace: Path, name: str
) -> None:
    """kill -9 with the making mark (or Wren's config) written to its temporary file and not yet renamed."""
    journals = journals_of(workspace)
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_BEFORE_A_RENAME, str(journals / STORE), name], capture_output=True, timeout=120
    )
    assert child.returncode == -9, child.stderr
    assert any(left.endswith(".tmp") for left in os.listdir(journals / STORE))
    wren(["run", "--yes", "--dir", str(journals), TASK], workspace)
    assert (journals / STORE / MARK).read_bytes() == MADE
    assert not any(left.endswith(".tmp") for left in os.listdir(journals / STORE))
    sid = only_journal(journals).stem
    seq = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], workspace))[0]["seq"]
    target = workspace.parent / f"forked-{name}"
    wren(["fork", "--dir", str(journals), sid, str(seq), "--workspace", str(target)], workspace.parent)
    assert sorted(p.name for p in target.iterdir() if p.is_file()) == sorted(
        p.name for p in workspace.iterdir() if p.is_file()
    )


def test_an_unfinished_store_holding_a_file_making_never_writes_is_refused_and_left_as_it_is(
    workspace: Path, tmp_path: Path
) -> None:
    journals = journals_of(workspace)
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_WHILE_MAKING, str(journals / STORE), "init"], capture_output=True, timeout=120
    )
    assert child.returncode == -9, child.stderr
    (journals / STORE / "letter.txt").write_text("mine\n")
    before = sorted(os.listdir(journals / STORE))
    ran = run_wren(["run", "--yes", "--dir", str(journals), "run `touch made-by-the-call`"], cwd=workspace)
    assert ran.returncode == 1 and "making never writes" in ran.stderr and "'letter.txt'" in ran.stderr, ran.stderr
    assert sorted(os.listdir(journals / STORE)) == before
    assert not (workspace / "made-by-the-call").exists()
