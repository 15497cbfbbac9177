"""Names git refuses to hold (`.GIT`, `git~1`, `.git.`, `.git `...) are listed as not covered, never stored.

Stored, they made every fork with files of the session fail (`git read-tree`: invalid path); past 300 files
`git add` refused them and no call with side effects could run. Both ways a snapshot is taken are tried: in
this process (a small workspace) and by `git add` (a large one).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.test_snapshot_forks import state_of
from tests.conftest import run_wren
from wren_tui.journal.events import Snapshot
from wren_tui.snapshots import gitfiles
from wren_tui.snapshots.store import STORE, Store, git_refuses

# Each a name git refuses on every platform with core.protectNTFS and core.protectHFS (the store's settings).
REFUSED_FILES = [".GIT/config", "git~1", "GIT~1/inside.txt", ".git.", ".git ", "sub/.Git/HEAD", "sub/.git. ./x"]
REFUSED_SHOWN = [".GIT/", "git~1", "GIT~1/", ".git.", ".git ", "sub/.Git/", "sub/.git. ./"]


def wren(args: list[str], cwd: Path) -> str:
    proc = run_wren(args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def plant(workspace: Path) -> None:
    for name in REFUSED_FILES:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(f"{name}\n")


@pytest.mark.parametrize("extra", [0, 320], ids=["in-process", "git-add"])
def test_names_git_refuses_are_listed_not_covered_and_the_session_still_runs_and_forks_with_its_files(
    workspace: Path, tmp_path: Path, extra: int
) -> None:
    for i in range(extra):
        (workspace / f"data{i:03}.txt").write_text(f"{i}\n")
    plant(workspace)
    journals = journals_of(workspace)
    wren(["run", "--yes", "--dir", str(journals), "run `touch made-by-the-call`"], workspace)
    assert (workspace / "made-by-the-call").exists()  # the call ran: its snapshot was taken
    sid = only_journal(journals).stem
    snaps = [e for e in events_of(only_journal(journals)) if isinstance(e, Snapshot)]
    assert snaps and all(s.id for s in snaps)
    for snap in snaps:
        listed = [n for n in snap.not_covered or [] if "a name git refuses" in n]
        assert sorted(n.split(" (")[0] for n in listed) == sorted(REFUSED_SHOWN)
    points = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], tmp_path))
    target = tmp_path / "forked"
    wren(["fork", "--dir", str(journals), sid, str(points[-1]["seq"]), "--workspace", str(target)], tmp_path)
    expected = {k: v for k, v in state_of(workspace).items() if git_refuses(os.fsencode(k)) is None}
    assert state_of(target) == expected
    assert len(expected) > extra


PROTECTED = [b"git", b"-c", b"core.protectNTFS=true", b"-c", b"core.protectHFS=true"]


def _git_says(repo: Path, name: bytes, mode: str) -> bool:
    """Whether git (the store's protectNTFS and protectHFS) accepts `name` as a path of the given mode."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_DIR=str(repo), GIT_INDEX_FILE=str(repo / "probe-index"), GIT_CONFIG_NOSYSTEM="1")
    blob = b"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    done = subprocess.run(
        [*PROTECTED, b"update-index", b"--add", b"--cacheinfo", mode.encode() + b"," + blob + b"," + name],
        env=env,
        capture_output=True,
    )
    return done.returncode == 0


def test_every_name_git_refuses_is_refused_by_wren_before_git_sees_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--bare", "--template=", str(repo)], check=True)
    git = [b".git", b".GIT", b".Git", b"git~1", b"GIT~1", b".git.", b".git ", b".git. . ", b"git~1..", b"git~1 "]
    hfs = [".g\u200cit", "\u200e.git", ".git\ufeff", ".GI\u200dT", "\u206a.git"]
    names = [*git, *(n.encode() for n in hfs), b"a\\.git", b"a\\git~1\\b"]
    names += [prefix + n + suffix for n in git for prefix in (b"", b"a/", b"a/b/") for suffix in (b"", b"/c")]
    links = [b".gitmodules", b".GITMODULES", b"a/.gitmodules", b".gitmodules .", b"gitmod~1", b"gi7eba~1", b"gi7e~123"]
    ordinary = [b"git", b".gitignore", b".gitattributes", b"a.git", b"git~2", b"x.git.y", b".github/ci.yml", b"gitx"]
    ordinary += [b".gitmodules", b"normal.txt", b"sub/.gitkeep", b".g", b"git~", b"~1"]
    ordinary += [".gi\u200ct2".encode(), "\u200b.git".encode()]  # U+200B is not one HFS+ ignores
    for name in names:
        assert not _git_says(repo, name, "100644"), name  # the list is of names git refuses
        refused = git_refuses(name)
        assert refused is not None, name
        assert name.startswith(refused), name
    for name in links:
        assert not _git_says(repo, name, "120000"), name
        assert git_refuses(name, lambda _: True) is not None, name
    for name in ordinary:
        assert _git_says(repo, name, "100644"), name
        assert git_refuses(name) is None, name
    # A name that is a link only when it is one: the check asks.
    assert git_refuses(b".gitmodules", lambda _: False) is None


def test_a_name_git_refuses_in_an_index_an_earlier_wren_wrote_is_dropped_so_the_next_snapshot_forks(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    store = Store(tmp_path / "journals" / STORE)
    sid = "s-20260101-000000-abcd"
    store.take(workspace, sid)
    # What an earlier Wren left: `.GIT/config` stored in the session's index (and so in its trees).
    (workspace / ".GIT").mkdir()
    bad = workspace / ".GIT" / "config"
    bad.write_text("[core]\n")
    index = store.index_for(sid, workspace)
    entries = dict(gitfiles.read_index(index).entries)
    st = os.lstat(bad)
    mode = gitfiles.mode_of(st)
    assert mode is not None
    oid = gitfiles.Objects(store.path / "objects").write(b"blob", bad.read_bytes())
    entries[b".GIT/config"] = gitfiles.Entry(gitfiles.stat_of(st, mode), oid)
    gitfiles.write_index(index, entries)
    taken = store.take(workspace, sid)
    assert b".GIT/config" not in store.files_of(taken.id)
    assert store.materialise(taken.id, tmp_path / "forked", "s-20260101-000001-abcd") == 1
    assert (tmp_path / "forked" / "a.txt").read_text() == "a\n"
    again = store.take(workspace, sid)  # and from then on it is listed, as any new such name
    assert ".GIT/ (a name git refuses, a spelling of .git: not covered)" in again.not_covered
