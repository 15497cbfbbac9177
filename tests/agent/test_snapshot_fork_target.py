"""`wren fork --workspace DIR` never writes into the snapshot store, the journals folder, or through a link.

Accepted, a fork's files became the store's refs and `objects/info/*` (a file named `alternates` sent the
store looking for objects elsewhere), or journals, or were written wherever a dangling link pointed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.agent.conftest import journals_of, only_journal
from tests.agent.test_snapshot_forks import stamps, state_of
from tests.conftest import run_wren
from wren_tui.snapshots.store import STORE


def wren(args: list[str], cwd: Path) -> str:
    proc = run_wren(args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_fork_into_the_store_the_journals_folder_or_through_a_link_is_refused_and_nothing_is_made(
    workspace: Path, tmp_path: Path
) -> None:
    journals = journals_of(workspace)
    wren(["run", "--yes", "--dir", str(journals), "run the tests, find the failing case and fix it"], workspace)
    sid = only_journal(journals).stem
    seq = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], tmp_path))[0]["seq"]
    store = journals / STORE
    (store / "objects" / "info").mkdir(exist_ok=True)
    (tmp_path / "into-journals").symlink_to(journals)
    (tmp_path / "dangling").symlink_to(tmp_path / "not-yet")
    (tmp_path / "to-a-folder").symlink_to(tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    cases = {
        store / "objects" / "info": "where Wren keeps journals and snapshots",
        store / "refs" / "tags": "where Wren keeps journals and snapshots",
        store / "new": "where Wren keeps journals and snapshots",
        journals / "new-folder": "where Wren keeps journals and snapshots",
        tmp_path / "into-journals" / "new": "where Wren keeps journals and snapshots",
        tmp_path / "dangling": "a symbolic link, and a fork writes its files into a real folder",
        tmp_path / "to-a-folder": "a symbolic link, and a fork writes its files into a real folder",
    }
    before = stamps(journals)
    for target, said in cases.items():
        proc = run_wren(["fork", "--dir", str(journals), sid, str(seq), "--workspace", str(target)], cwd=tmp_path)
        assert proc.returncode == 2, (target, proc.stderr)
        assert said in proc.stderr and f"--workspace {target}: " in proc.stderr, proc.stderr
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert stamps(journals) == before  # no journal, no ref, no object, no index
    assert not os.path.lexists(tmp_path / "not-yet")
    assert os.listdir(tmp_path / "empty") == []
    # The folder a link points to, named itself, is fine.
    wren(["fork", "--dir", str(journals), sid, str(seq), "--workspace", str(tmp_path / "empty")], tmp_path)
    assert state_of(tmp_path / "empty")
