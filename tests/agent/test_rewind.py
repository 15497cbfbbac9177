"""`wren rewind`: a session's workspace and conversation back to a clean point, in place; `--undo` puts them back.

The expected files at each point are taken by the test itself, outside Wren (`state_of`: bytes, exec
bit, link targets), before and after each turn of a scripted multi-turn session whose turns edit,
write, delete, rename, link and chmod files from the shell, with a person's own edits between turns.
Every command is a separate `wren` process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.openai_server import Answer, OpenAIServer, reply_stream
from tests.agent.test_recorded_servers import model_env
from tests.agent.test_recorded_servers import wren as wren_async
from tests.agent.test_snapshot_forks import State, state_of
from tests.conftest import run_wren
from wren_tui.journal.events import Message, Rewind
from wren_tui.journal.writer import JournalWriter

TURNS = [
    "run the tests, find the failing case and fix it",
    "run `printf 'one\\ntwo\\n' > notes.txt && rm README.md && ln -s stats/core.py core-link`",
    "run `chmod +x tests/run.sh && mkdir -p deep/er && printf hi > deep/er/f && mv notes.txt deep/notes.txt`",
    "run `ln -sf deep/er/f out-link && rm stats/__init__.py && printf 'one\\nthree\\n' > deep/notes.txt`",
    "run `rm -r deep && chmod -x tests/run.sh && printf changed > empty.txt && mv core-link moved-link`",
]


def wren(args: list[str], cwd: Path, stdin: str | None = None) -> str:
    proc = run_wren(args, cwd=cwd, input=stdin)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def session(workspace: Path) -> tuple[str, list[State], list[dict[str, Any]]]:
    """The scripted session; the states before and after each turn, and its clean points (two a turn)."""
    journals = journals_of(workspace)
    dir_ = ["--dir", str(journals)]
    (workspace / "tests" / "run.sh").write_text("#!/bin/sh\necho run\n")
    (workspace / "empty.txt").write_bytes(b"")
    between = [
        lambda: None,
        lambda: (workspace / "stats" / "extra.py").write_text("X = 1\n"),  # a person's own edits between turns
        lambda: (workspace / "stats" / "extra.py").unlink(),
        lambda: os.symlink("deep/er/f", workspace / "dangling"),
        lambda: (workspace / "tests" / "run.sh").write_text("#!/bin/sh\necho changed by hand\n"),
    ]
    expected: list[State] = []
    sid = ""
    for number, (task, change) in enumerate(zip(TURNS, between, strict=True)):
        change()
        expected.append(state_of(workspace))
        if number == 0:
            wren(["run", "--yes", *dir_, task], cwd=workspace)
            sid = only_journal(journals).stem
        else:
            wren(["resume", "--yes", *dir_, sid, task], cwd=workspace)
        expected.append(state_of(workspace))
    points = json.loads(wren(["fork", *dir_, sid, "--json"], cwd=workspace.parent))
    assert len(points) == 2 * len(TURNS)
    return sid, expected, points


def lines_changed(old: State, new: State) -> tuple[int, int]:
    """Lines added and removed from `old` to `new`, summed over the paths that differ: each file's length less
    the longest common subsequence of its lines (what any minimal diff, git's among them, counts)."""
    added = removed = 0
    for path in set(old) | set(new):
        if old.get(path) == new.get(path):
            continue
        a = old[path][1].splitlines() if path in old else []
        b = new[path][1].splitlines() if path in new else []
        common = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(len(a) - 1, -1, -1):
            for j in range(len(b) - 1, -1, -1):
                common[i][j] = common[i + 1][j + 1] + 1 if a[i] == b[j] else max(common[i + 1][j], common[i][j + 1])
        added, removed = added + len(b) - common[0][0], removed + len(a) - common[0][0]
    return added, removed


def rewinds(journal: Path) -> list[Rewind]:
    return [e for e in events_of(journal) if isinstance(e, Rewind)]


def test_a_rewind_to_every_clean_point_gives_its_exact_files_and_undo_gives_back_the_files_before_it(
    workspace: Path,
) -> None:
    sid, expected, points = session(workspace)
    journals = journals_of(workspace)
    dir_ = ["--dir", str(journals)]
    journal = journals / f"{sid}.jsonl"
    assert len({json.dumps(sorted(s)) for s in expected}) > 5
    elsewhere = workspace.parent  # typed from outside the workspace: the session's own is rewound
    for index, point in enumerate(points):
        before, lines = state_of(workspace), journal.read_bytes()
        said = wren(["rewind", *dir_, sid, str(point["seq"]), "--yes"], elsewhere)
        assert state_of(workspace) == expected[index], f"point {point['seq']} (#{index}): {said}"
        changed = {p for p in set(before) | set(expected[index]) if before.get(p) != expected[index].get(p)}
        gone = {p for p in changed if p not in expected[index]}
        added, removed = lines_changed(before, expected[index])
        preview = f"restore {len(changed - gone)} file{'' if len(changed - gone) == 1 else 's'} (+{added} -{removed}), "
        assert preview + f"delete {len(gone)}, keep 0" in said, said
        assert journal.read_bytes().startswith(lines)  # append-only: nothing before it changed
        last = rewinds(journal)[-1]
        assert (last.at_seq, last.undoes, last.kept) == (point["seq"], None, None)
        wren(["rewind", *dir_, sid, "--undo", "--yes"], elsewhere)
        assert state_of(workspace) == before, f"undo of the rewind to {point['seq']}"
        assert rewinds(journal)[-1].undoes == last.seq
    # Rewinds one after another (each from the files the one before left), then undo of each in turn.
    order = [3, 8, 0, 9, 5]
    states = [state_of(workspace)]
    for index in order:
        wren(["rewind", *dir_, sid, str(points[index]["seq"]), "--yes"], elsewhere)
        assert state_of(workspace) == expected[index]
        states.append(state_of(workspace))
        if index == 9:  # the last turn's end: deep/ was removed then, and the rewind leaves no empty folder of it
            assert not (workspace / "deep").exists()
    wren(["rewind", *dir_, sid, "--undo", "--yes"], elsewhere)
    assert state_of(workspace) == states[-2]
    wren(["rewind", *dir_, sid, "--undo", "--yes"], elsewhere)  # undo of the undo: the rewind again
    assert state_of(workspace) == states[-1]
    # No file of Wren's own is left in the workspace, and no folder a rewind emptied.
    leftovers = [str(p) for p in workspace.rglob("*") if ".wren-rewind-" in p.name]
    assert not leftovers


def test_a_file_someone_else_changed_since_is_kept_and_listed_and_force_rewinds_it_too(workspace: Path) -> None:
    sid, expected, points = session(workspace)
    journals = journals_of(workspace)
    dir_ = ["--dir", str(journals)]
    journal = journals / f"{sid}.jsonl"
    # By hand after the session: one file the rewind would change, one it would leave, one new file.
    (workspace / "empty.txt").write_text("mine now\n")
    (workspace / "stats" / "core.py").write_text("# my own rewrite\n")
    (workspace / "mine.txt").write_text("new, by hand\n")
    mine = state_of(workspace)
    point = points[2]  # the second turn's start: empty.txt was empty then, core.py as fixed in turn 1
    assert expected[2]["empty.txt"] == ("f", b"")
    lines = journal.read_bytes()
    said = wren(["rewind", *dir_, sid, str(point["seq"])], workspace, stdin="n\n")
    assert "keep 3 changed since by someone else" in said and "nothing was changed" in said
    hands = ("empty.txt", "mine.txt", "stats/core.py")
    left = {p: v for p, v in mine.items() if p not in hands}
    goal = {p: v for p, v in expected[2].items() if p not in hands}
    changed = {p for p in set(left) | set(goal) if left.get(p) != goal.get(p)}
    gone = {p for p in changed if p not in goal}
    added, removed = lines_changed(left, goal)  # the kept files' lines are not counted
    assert f"restore {len(changed - gone)} files (+{added} -{removed}), delete {len(gone)}, keep 3" in said, said
    assert state_of(workspace) == mine and journal.read_bytes() == lines  # asked, declined: nothing at all

    said = wren(["rewind", *dir_, sid, str(point["seq"])], workspace, stdin="y\n")
    for path in ("empty.txt", "mine.txt", "stats/core.py"):
        assert f"keep    {path}  (changed since by someone else" in said
    now = state_of(workspace)
    assert {p: now[p] for p in ("empty.txt", "mine.txt", "stats/core.py")} == {
        p: mine[p] for p in ("empty.txt", "mine.txt", "stats/core.py")
    }
    others = {p: v for p, v in now.items() if p not in ("empty.txt", "mine.txt", "stats/core.py")}
    assert others == {p: v for p, v in expected[2].items() if p not in ("empty.txt", "mine.txt", "stats/core.py")}
    assert rewinds(journal)[-1].kept == ["empty.txt", "mine.txt", "stats/core.py"]

    # Kept files stay the person's for a later rewind too (the session's own files are what it had).
    wren(["rewind", *dir_, sid, "--undo", "--yes"], workspace)
    assert state_of(workspace) == mine
    said = wren(["rewind", *dir_, sid, str(point["seq"]), "--yes", "--force"], workspace)
    assert "keep 0" in said
    assert state_of(workspace) == expected[2]
    # Kept by one rewind, then put back by the person as the session had it: the next rewind rewinds it.
    (workspace / "empty.txt").write_text("by hand again\n")
    said = wren(["rewind", *dir_, sid, str(points[0]["seq"]), "--yes"], workspace)
    assert "keep    empty.txt" in said and rewinds(journal)[-1].kept == ["empty.txt"]
    (workspace / "empty.txt").write_bytes(expected[2]["empty.txt"][1])
    said = wren(["rewind", *dir_, sid, str(points[-1]["seq"]), "--yes"], workspace)
    assert "keep 0" in said and state_of(workspace) == expected[-1]


def test_a_rewind_is_refused_while_the_session_is_live_and_changes_nothing(workspace: Path) -> None:
    sid, _expected, points = session(workspace)
    journals = journals_of(workspace)
    journal = journals / f"{sid}.jsonl"
    files, lines = state_of(workspace), journal.read_bytes()
    with JournalWriter.open(journal):  # what a live run holds
        proc = run_wren(["rewind", "--dir", str(journals), sid, str(points[0]["seq"]), "--yes"], cwd=workspace)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"process {os.getpid()} is writing this session" in proc.stderr and "Nothing was changed" in proc.stderr
    assert state_of(workspace) == files and journal.read_bytes() == lines


def test_a_point_that_is_not_clean_or_an_undo_with_no_rewind_is_one_sentence_and_nothing_changes(
    workspace: Path,
) -> None:
    sid, _expected, points = session(workspace)
    journals = journals_of(workspace)
    journal = journals / f"{sid}.jsonl"
    files, lines = state_of(workspace), journal.read_bytes()
    not_clean = points[0]["seq"] + 1
    proc = run_wren(["rewind", "--dir", str(journals), sid, str(not_clean), "--yes"], cwd=workspace)
    assert proc.returncode == 2 and f"seq {not_clean} is not a clean point" in proc.stderr, proc.stderr
    proc = run_wren(["rewind", "--dir", str(journals), sid, "--undo", "--yes"], cwd=workspace)
    assert proc.returncode == 1 and "has no rewind to undo; nothing was changed" in proc.stderr, proc.stderr
    assert state_of(workspace) == files and journal.read_bytes() == lines


async def test_a_resume_after_a_rewind_sends_the_conversation_up_to_its_point_as_a_fork_there_does(
    workspace: Path,
) -> None:
    sid, _expected, points = session(workspace)
    journals = journals_of(workspace)
    dir_ = ["--dir", str(journals)]
    point = points[5]["seq"]  # the third turn's final answer
    forked = json.loads(wren(["fork", *dir_, sid, str(point), "--json"], workspace))
    wren(["rewind", *dir_, sid, str(point), "--yes"], workspace)

    def reply(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        return reply_stream("noted")

    async with OpenAIServer(reply) as srv:
        env = model_env("openai", srv)
        for resumed in (sid, forked["id"]):
            status, _out, err = await wren_async(
                ["resume", *dir_, "--model", "openai", "--yes", resumed, "what now?"], workspace, env
            )
            assert status == 0, err
    after_rewind, after_fork = srv.requests[0]["messages"], srv.requests[1]["messages"]
    assert after_rewind == after_fork
    upto = [e.message for e in events_of(journals / f"{sid}.jsonl") if isinstance(e, Message) and e.seq <= point]
    sent = [m for m in after_rewind if m["role"] != "system"]
    assert [(m["role"], m.get("content") or "") for m in sent] == [
        *((m.role, m.content) for m in upto),
        ("user", "what now?"),
    ]
    # The turns after the point are in the journal, never sent.
    assert all("rm -r deep" not in (m.get("content") or "") for m in sent)


def test_prune_keeps_what_a_rewind_names_so_its_undo_still_puts_the_files_back(workspace: Path) -> None:
    sid, expected, points = session(workspace)
    journals = journals_of(workspace)
    dir_ = ["--dir", str(journals)]
    (workspace / "mine.txt").write_text("written by hand, only in the rewind's before-snapshot\n")
    before = state_of(workspace)
    wren(["rewind", *dir_, sid, str(points[1]["seq"]), "--yes", "--force"], workspace)
    assert state_of(workspace) == expected[1]
    # A later turn takes newer snapshots (the store's record of the session's last tree moves on).
    wren(["resume", "--yes", *dir_, sid, "run `printf later > later.txt`"], workspace)
    wren(["snapshots", "prune", "--now", *dir_], workspace)
    wren(["rewind", *dir_, sid, "--undo", "--yes", "--force"], workspace)
    assert state_of(workspace) == before
