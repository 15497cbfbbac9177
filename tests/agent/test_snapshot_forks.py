"""A fork with its files: every clean point of a multi-turn session forks back to the exact files.

The expected state at each point is taken by the test itself, outside Wren: the workspace is read
(bytes, exec bit, link targets) before and after each turn. Each turn is a separate `wren`
process; between turns the test changes files itself too, as a person would.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.conftest import run_wren
from wren_tui.journal.events import Fork, Message

State = dict[str, tuple[str, bytes]]


def state_of(folder: Path) -> State:
    """Every file and link under folder (outside .git, and the __pycache__ folders the demo's .gitignore leaves
    out of snapshots): ("x"/"f" and its bytes, or "l" and its target)."""
    found: State = {}
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
        for name in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("l", os.fsencode(os.readlink(path)))
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    found[rel] = ("x" if st.st_mode & 0o100 else "f", f.read())
    return found


def stamps(folder: Path) -> dict[str, tuple[int, int]]:
    """Size and mtime of every entry: a fork must not touch the parent's."""
    out: dict[str, tuple[int, int]] = {}
    for root, dirs, names in os.walk(folder):
        for name in dirs + names:
            st = os.lstat(os.path.join(root, name))
            out[os.path.relpath(os.path.join(root, name), folder)] = (st.st_size, st.st_mtime_ns)
    return out


def wren(args: list[str], cwd: Path) -> str:
    proc = run_wren(args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_every_clean_point_of_a_multi_turn_session_forks_back_to_its_exact_files(
    workspace: Path, tmp_path: Path
) -> None:
    journals = journals_of(workspace)
    dir_ = ["--dir", str(journals)]
    (workspace / "tests" / "run.sh").write_text("#!/bin/sh\necho run\n")
    (workspace / "empty.txt").write_bytes(b"")
    turns = [
        "run the tests, find the failing case and fix it",
        "run `printf 'one\\ntwo\\n' > notes.txt && rm README.md && ln -s stats/core.py core-link`",
        "run `chmod +x tests/run.sh && mkdir -p deep/er && printf hi > deep/er/f && mv notes.txt deep/notes.txt`",
        "run `ln -sf /etc/hostname out-link && rm stats/__init__.py`",
        "run `rm -r deep && chmod -x tests/run.sh && printf changed > empty.txt`",
    ]
    between = [
        lambda: None,
        lambda: (workspace / "stats" / "extra.py").write_text("X = 1\n"),  # a person's own edit between turns
        lambda: (workspace / "stats" / "extra.py").unlink(),
        lambda: os.symlink("deep/er/f", workspace / "dangling"),
        lambda: (workspace / "tests" / "run.sh").write_text("#!/bin/sh\necho changed by hand\n"),
    ]
    expected: list[State] = []  # before turn k, after turn k, ...
    sid = ""
    for number, (task, change) in enumerate(zip(turns, between, strict=True)):
        change()
        expected.append(state_of(workspace))
        if number == 0:
            wren(["run", "--yes", *dir_, task], cwd=workspace)
            sid = only_journal(journals).stem
        else:
            wren(["resume", "--yes", *dir_, sid, task], cwd=workspace)
        expected.append(state_of(workspace))
    assert expected[-1] != expected[-2] and len({json.dumps(sorted(s)) for s in expected}) > 3

    journal = only_journal(journals)
    points = json.loads(wren(["fork", *dir_, sid, "--json"], cwd=tmp_path))
    messages = {e.seq: e.message for e in events_of(journal) if isinstance(e, Message)}
    # One user point and one final-answer point per turn, in order: 2k before turn k, 2k+1 after.
    assert [messages[p["seq"]].role for p in points] == ["user", "assistant"] * len(turns)

    parent_files, parent_journal = stamps(workspace), (journal.read_bytes(), journal.stat().st_mtime_ns)
    forks: dict[int, str] = {}
    for index, point in enumerate(points):
        target = tmp_path / f"fork-{point['seq']}"
        forked = json.loads(
            wren(["fork", *dir_, sid, str(point["seq"]), "--workspace", str(target), "--json"], tmp_path)
        )
        assert forked["workspace"] == str(target) and forked["filesRestored"] == len(expected[index])
        assert state_of(target) == expected[index], f"point {point['seq']} (#{index})"
        fork_event = events_of(Path(forked["path"]))[-1]
        assert isinstance(fork_event, Fork) and fork_event.workspace == str(target)
        forks[point["seq"]] = forked["id"]
    # The parent's workspace and journal: not a byte, not an mtime changed.
    assert stamps(workspace) == parent_files
    assert (journal.read_bytes(), journal.stat().st_mtime_ns) == parent_journal

    # Resumed from anywhere, the fork of the second turn's start works in its own folder.
    start_of_turn_2 = points[2]["seq"]
    target = tmp_path / f"fork-{start_of_turn_2}"
    fork_path = journals / f"{forks[start_of_turn_2]}.jsonl"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    said = wren(["resume", "--yes", *dir_, fork_path.stem, "run `pwd && ls`"], cwd=elsewhere)
    assert f"working in {target}, the session's workspace" in said
    told = [e.message for e in events_of(fork_path) if isinstance(e, Message)][-2]
    assert told.role == "tool" and told.content.splitlines()[1] == str(target)
    assert stamps(workspace) == parent_files


def test_a_fork_without_its_files_says_so_and_one_into_a_used_folder_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    journals = journals_of(workspace)
    wren(["run", "--yes", "--dir", str(journals), "run the tests"], cwd=workspace)
    sid = only_journal(journals).stem
    point = json.loads(wren(["fork", "--dir", str(journals), sid, "--json"], tmp_path))[-1]["seq"]
    said = wren(["fork", "--dir", str(journals), sid, str(point)], tmp_path)
    assert "the files were not restored: the workspace is as the latest run left it" in said
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep").write_text("mine\n")
    before = sorted(journals.iterdir())
    proc = run_wren(["fork", "--dir", str(journals), sid, str(point), "--workspace", str(used)], cwd=tmp_path)
    assert proc.returncode == 2
    assert (
        proc.stderr
        == f"wren: --workspace {used}: not a new or empty folder; a fork writes its files into a fresh one\n"
    )
    assert sorted(journals.iterdir()) == before and (used / "keep").read_text() == "mine\n"

    off = journals_of(workspace).parent / "off-journals"
    wren(["run", "--yes", "--no-snapshots", "--dir", str(off), "run the tests"], cwd=workspace)
    sid_off = only_journal(off).stem
    point = json.loads(wren(["fork", "--dir", str(off), sid_off, "--json"], tmp_path))[-1]["seq"]
    proc = run_wren(["fork", "--dir", str(off), sid_off, str(point), "--workspace", str(tmp_path / "n")], cwd=tmp_path)
    assert proc.returncode == 1
    assert "cannot be restored: snapshots are off for this run (--no-snapshots). Fork without" in proc.stderr
    assert not (tmp_path / "n").exists() and len(list(off.glob("s-*.jsonl"))) == 1
