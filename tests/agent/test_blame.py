"""`wren blame`: every line's origin in a session whose every line's origin the test knows.

The session's turns write, `sed -i`, reorder, delete and recreate a file from the shell, the edit
tool fixes a bug, and a person appends a line between turns; the test knows which turn made each
line and compares with `wren blame --json` (a separate process) after each turn.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path
from typing import Any

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.conftest import run_wren
from wren_tui.journal.events import ChatMessage, Message, RunStart, Snapshot, ToolCall, ToolStart
from wren_tui.journal.writer import JournalWriter
from wren_tui.snapshots.store import STORE, Store

TURNS = [
    "run `printf 'a\\nb\\nc\\n' > f.txt && sed -i '1s/.*/Title/' README.md`",
    "run `sed -i 's/^b$/B/' f.txt`",
    "run `printf 'c\\na\\nB\\nd\\n' > f.txt`",  # c moved to the top; d is the person's
    "run `rm f.txt`",
    "run `printf 'a\\nz\\n' > f.txt`",  # made again: all its lines new
    "run the tests, find the failing case and fix it",
]


def blame(journals: Path, workspace: Path, path: str, *more: str) -> list[dict[str, Any]]:
    proc = run_wren(["blame", "--dir", str(journals), path, "--json", *more], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout))


def calls_by_turn(journal: Path) -> dict[int, ToolStart]:
    """The call with side effects of each turn (one a turn here), by turn number from 1."""
    turn, found = 0, {}
    for event in events_of(journal):
        if isinstance(event, Message) and event.message.role == "user":
            turn += 1
        elif isinstance(event, ToolStart) and not event.read_only:
            found[turn] = event
    return found


def test_every_line_is_blamed_on_the_turn_and_call_that_last_changed_it(workspace: Path) -> None:
    journals = journals_of(workspace)
    readme = (workspace / "README.md").read_text().splitlines()
    core_before = (workspace / "stats" / "core.py").read_text().splitlines()
    sid = ""
    for number, task in enumerate(TURNS, 1):
        if number == 1:
            proc = run_wren(["run", "--yes", "--dir", str(journals), task], cwd=workspace)
            sid = only_journal(journals).stem
        else:
            proc = run_wren(["resume", "--yes", "--dir", str(journals), sid, task], cwd=workspace)
        assert proc.returncode == 0, proc.stderr
        journal = journals / f"{sid}.jsonl"
        calls = calls_by_turn(journal)

        def by(turn: int) -> tuple[str, int, int, str]:
            return ("command", turn, calls[turn].seq, calls[turn].id)  # noqa: B023 (used at once)

        if number == 1:
            (workspace / "f.txt").write_text("a\nb\nc\nd\n")  # the person adds d between turns
        got = {}
        if (workspace / "f.txt").exists():
            got = {
                (r["text"]): (r["kind"], r["turn"], r["seq"], r["call"]) for r in blame(journals, workspace, "f.txt")
            }
        if number == 1:
            assert got == {"a": by(1), "b": by(1), "c": by(1), "d": ("unsnapshotted", None, None, None)}
        elif number == 2:
            assert got["a"] == by(1) and got["B"] == by(2) and got["c"] == by(1)
            assert got["d"][:2] == ("outside", 2)  # the person's, seen by turn 2's first snapshot
        elif number == 3:
            assert got["c"] == by(3) and got["a"] == by(1) and got["B"] == by(2) and got["d"][0] == "outside"
        elif number == 5:
            assert got == {"a": by(5), "z": by(5)}  # deleted in turn 4, made again: nothing carried over
        rows = blame(journals, workspace, "README.md", "--session", sid)
        assert [r["text"] for r in rows] == ["Title", *readme[1:]]
        assert (rows[0]["kind"], rows[0]["turn"], rows[0]["seq"]) == ("command", 1, calls[1].seq)
        assert {r["kind"] for r in rows[1:]} == {"before"} and all(r["seq"] is None for r in rows[1:])
    # The edit tool's fix: the lines it put in are its, every other line is older than the first snapshot.
    core_after = (workspace / "stats" / "core.py").read_text().splitlines()
    edit = next(
        json.loads(c.args)
        for e in events_of(journals / f"{sid}.jsonl")
        if isinstance(e, Message)
        for c in e.message.tool_calls or ()
        if c.name == "edit_file"
    )
    old, new = edit["old"].splitlines(), edit["new"].splitlines()
    assert new[len(new) - len(old) :] == old  # the scripted fix puts lines in before the old ones
    at = next(i for i in range(len(core_after)) if core_after[i : i + len(new)] == new)
    put_in = set(range(at, at + len(new) - len(old)))
    assert put_in and len(core_after) == len(core_before) + len(put_in)
    calls = calls_by_turn(journals / f"{sid}.jsonl")
    for index, row in enumerate(blame(journals, workspace, "stats/core.py")):
        if index in put_in:
            assert (row["kind"], row["turn"], row["tool"]) == ("edit", 6, "edit_file"), row
            assert row["seq"] > calls[5].seq
        else:
            assert row["kind"] == "before", row
    text = run_wren(["blame", "--dir", str(journals), "README.md"], cwd=workspace).stdout.splitlines()
    assert text[0].split()[:4] == [str(calls[1].seq), "turn", "1", "command"] and text[0].endswith("│ Title")
    assert text[1].startswith("older than the first snapshot")


def test_blame_call_gives_each_file_a_call_changed_and_the_lines_it_put_in_numbered_as_after_it(
    workspace: Path,
) -> None:
    journals = journals_of(workspace)
    proc = run_wren(["run", "--yes", "--dir", str(journals), TURNS[0]], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    journal = only_journal(journals)
    call = calls_by_turn(journal)[1]
    found = json.loads(run_wren(["blame", "--dir", str(journals), "--session", journal.stem, "--call", call.id,
                                 "--json"], cwd=workspace).stdout)  # fmt: skip
    assert (found["call"], found["tool"], found["seq"]) == (call.id, "run_command", call.seq)
    files = {f["path"]: f for f in found["files"]}
    assert set(files) == {"README.md", "f.txt"}  # the command's two files, no other
    assert files["f.txt"]["status"] == "added" and files["f.txt"]["removed"] == 0
    assert [(r["line"], r["text"]) for r in files["f.txt"]["lines"]] == [(1, "a"), (2, "b"), (3, "c")]
    assert files["README.md"]["status"] == "changed" and files["README.md"]["removed"] == 1
    assert [(r["line"], r["text"]) for r in files["README.md"]["lines"]] == [(1, "Title")]
    text = run_wren(["blame", "--dir", str(journals), "--session", journal.stem, "--call", call.id], cwd=workspace)
    assert "f.txt (added, +3 -0)" in text.stdout and "     1 │ Title" in text.stdout
    # A call the session lacks, and --call without a session, are usage errors in one sentence.
    wrong = run_wren(["blame", "--dir", str(journals), "--session", journal.stem, "--call", "nope"], cwd=workspace)
    assert wrong.returncode == 2 and f"{journal.stem} has no call nope" in wrong.stderr
    alone = run_wren(["blame", "--dir", str(journals), "--call", call.id], cwd=workspace)
    assert alone.returncode == 2 and "needs --session ID" in alone.stderr


def test_blame_call_names_files_with_spaces_and_non_ascii_names_as_they_are(workspace: Path) -> None:
    journals = journals_of(workspace)
    task = "run `printf 'one\\ntwo\\n' > 'my notes.txt' && printf 'x\\n' > 'é.txt'`"
    proc = run_wren(["run", "--yes", "--dir", str(journals), task], cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    journal = only_journal(journals)
    call = calls_by_turn(journal)[1]
    found = json.loads(run_wren(["blame", "--dir", str(journals), "--session", journal.stem, "--call", call.id,
                                 "--json"], cwd=workspace).stdout)  # fmt: skip
    files = {f["path"]: [(r["line"], r["text"]) for r in f["lines"]] for f in found["files"]}
    assert files == {"my notes.txt": [(1, "one"), (2, "two")], "é.txt": [(1, "x")]}


def _history_in_store_and_in_git(root: Path, versions: list[bytes]) -> tuple[Path, Path, Path, str]:
    """A session whose snapshots hold `versions` of f.txt, one a command; the same versions as commits in git."""
    ws, journals, scratch = root / "ws", root / "journals", root / "scratch"
    ws.mkdir()
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    subprocess.run(["git", "init", "-q"], cwd=scratch, env=env, check=True)
    sid = "s-20260101-000000-orcl"
    store = Store(journals / STORE)
    with JournalWriter.create(journals / f"{sid}.jsonl", fsync="none") as writer:
        writer.append(RunStart(pid=1, cwd=str(ws), model="scripted", version="test"))
        writer.append(Message(message=ChatMessage(role="user", content="change it")))
        for number, data in enumerate(versions):
            (ws / "f.txt").write_bytes(data)
            (scratch / "f.txt").write_bytes(data)
            subprocess.run(["git", "add", "f.txt"], cwd=scratch, env=env, check=True)
            subprocess.run(["git", "commit", "-q", "-m", str(number)], cwd=scratch, env=env, check=True)
            call = f"c{number + 1}" if number < len(versions) - 1 else None
            writer.append(Snapshot(id=store.take(ws, sid).id, files=1, changed=1, before=call))
            if call is not None:
                command = ToolCall(id=call, name="run_command", args='{"command": "edit"}')
                writer.append(Message(message=ChatMessage(role="assistant", content="", tool_calls=[command])))
                writer.append(ToolStart(id=call, name="run_command", read_only=False, approval="approved"))
                writer.append(Message(message=ChatMessage(role="tool", content="ok", tool_call_id=call)))
    return ws, journals, scratch, sid


def test_blame_gives_every_line_the_version_git_blame_gives_it_over_forty_versions(tmp_path: Path) -> None:
    # Scattered rewrites, insertions (two equal lines at once) and deletions, the file's last line without its
    # newline for a while, and a line holding a lone CR: each line's version is the same one git blame names.
    rng = random.Random(38)
    lines = [b"line %d of the first version\n" % i for i in range(300)]
    versions = [b"".join(lines)]
    for event in range(1, 41):
        for _ in range(4):
            at = rng.randrange(len(lines))
            lines[at] = b"rewritten by %d at %d\n" % (event, at)
        for _ in range(2):
            lines.insert(rng.randrange(len(lines)), b"put in by %d\n" % event)
        del lines[rng.randrange(len(lines))]
        if event == 7:
            lines.insert(100, b"a lone\rcarriage return, by 7\n")
        text = b"".join(lines)
        versions.append(text.rstrip(b"\n") if 10 <= event < 20 else text)
    ws, journals, scratch, sid = _history_in_store_and_in_git(tmp_path, versions)
    proc = run_wren(["blame", "--dir", str(journals), "--session", sid, str(ws / "f.txt"), "--json"], cwd=ws)
    assert proc.returncode == 0, proc.stderr
    mine = [0 if row["call"] is None else int(row["call"][1:]) for row in json.loads(proc.stdout)]
    porcelain = subprocess.run(
        ["git", "blame", "--line-porcelain", "f.txt"], cwd=scratch, check=True, capture_output=True
    ).stdout.decode()
    theirs = [int(line.split(" ", 1)[1]) for line in porcelain.splitlines() if line.startswith("summary ")]
    assert len(mine) == len(lines) and mine == theirs
    assert 7 in mine  # the line with a lone CR is one line, and event 7's


def test_a_version_git_calls_binary_pairs_no_lines_so_the_next_change_made_every_line(tmp_path: Path) -> None:
    # As git's diff: a NUL in a file's first 8,000 bytes makes it binary, and a change to or from it pairs no line.
    text = b"".join(b"line %d\n" % i for i in range(20))
    versions = [text, text + b"one more\n", b"\0\n" + text, text, text.replace(b"line 5\n", b"five\n")]
    ws, journals, _scratch, sid = _history_in_store_and_in_git(tmp_path, versions)
    proc = run_wren(["blame", "--dir", str(journals), "--session", sid, str(ws / "f.txt"), "--json"], cwd=ws)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["text"] for r in rows] == versions[-1].decode().splitlines()
    # Back to text after the binary version (which held every line too): each is that change's (c3), but c4's.
    assert [r["call"] for r in rows] == ["c3"] * 5 + ["c4"] + ["c3"] * 14
