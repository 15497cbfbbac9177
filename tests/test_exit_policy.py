"""One exit policy: the same bad journal gives every command the same exit status and the same sentence on stderr.

A table over the commands that read a journal (`log`, `resume`, `chat --resume`, `fork ID`, `fork
ID SEQ` past the damage, `watch --pick`, `export`, `diff`) and four journals: one whose line 3 was changed after it
was written (its CRC fails), one with a torn tail, a missing one, and one another process is
writing (it holds the lock). Where commands differ, the row says why: a torn tail is a crash's
normal end, so resume and chat set it aside and go on, and a journal being written is read freely
by everything but a second writer.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.tmux import python_argv
from tests.tmux import terminal as own_terminal
from wren_tui.journal.events import ChatMessage, Message, RunEnd, RunStart
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import JournalWriter

SID = "s-20260101-000000-bad0"
CRC = "its CRC does not match its bytes (the line was changed after it was written)"
CUT = "the last line was cut short (no newline at its end)"
# The clean points of the whole journal: after each user message and each tool-free reply.
POINTS = [2, 3, 4, 5]


@dataclass
class Journal:
    """The case's journal (maybe not there), the folder it is in, the workspace its run worked in."""

    path: Path
    folder: Path
    workspace: Path
    case: str
    holder: int | None = None  # the pid of the process writing it


def _write(path: Path, workspace: Path) -> None:
    with JournalWriter.create(path, fsync="none") as writer:
        writer.append(RunStart(pid=1, cwd=str(workspace), model="scripted", version="test"))
        writer.append(Message(message=ChatMessage(role="user", content="run the tests")))
        writer.append(Message(message=ChatMessage(role="assistant", content="the tests pass")))
        writer.append(Message(message=ChatMessage(role="user", content="and now?")))
        writer.append(Message(message=ChatMessage(role="assistant", content="nothing left to do")))
        writer.append(RunEnd(reason="done"))


@pytest.fixture
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Journal]:
    folder, workspace = tmp_path / "journals", tmp_path / "workspace"
    folder.mkdir()
    workspace.mkdir()
    case: str = request.param
    made = Journal(folder / f"{SID}.jsonl", folder, workspace, case)
    if case == "missing":
        yield made
        return
    _write(made.path, workspace)
    if case == "crc-at-line-3":
        lines = made.path.read_bytes().splitlines(keepends=True)
        lines[2] = lines[2].replace(b"the tests pass", b"the tests PASS")
        made.path.write_bytes(b"".join(lines))
    elif case == "torn":
        with open(made.path, "ab") as f:
            f.write(b'{"seq":7,"ts":"2026-')
    if case != "locked":
        yield made
        return
    code = (
        "import sys\nfrom wren_tui.journal.writer import JournalWriter\n"
        "w = JournalWriter.open(sys.argv[1])\nprint('held', flush=True)\nsys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(made.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        made.holder = holder.pid
        yield made
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


def sentence(case: str, j: Journal, command: str = "") -> str:
    """What every command that cannot go on says for this journal, exactly (without the `wren: ` prefix).

    An export of a damaged journal is still written (it says where reading stopped, first): that
    sentence says so where the others say nothing was written.
    """
    path = j.path
    if case == "crc-at-line-3":
        done = "The export holds what comes before it." if command == "export" else "Nothing was written."
        return (
            f"{path}: line 3: {CRC}. {done} Read it with `wren log {path}`, then fork from a point "
            f"before that line (`wren fork {path}` lists them)."
        )
    if case == "torn":
        return (
            f"{path}: line 7: {CUT}; this torn tail is the normal end of a crash, and resuming the session sets "
            "it aside."
        )
    if case == "missing":
        return f"no session {SID} in {j.folder}"
    assert case == "locked"
    return (
        f"{path}: process {j.holder} is still writing this session; wait for it to finish (or stop it), then "
        "resume. Nothing was written."
    )


@dataclass
class Said:
    status: int
    stdout: str
    stderr: str  # for the viewer: the terminal after it closed (Textual draws on stderr)


def _wren(command: str, j: Journal) -> Said:
    d, ws = str(j.folder), str(j.workspace)
    argv = {
        "log": ["log", "--dir", d, SID],
        "resume": ["resume", "--dir", d, "--workspace", ws, "--yes", SID, "go on"],
        "chat --resume": ["chat", "--dir", d, "--workspace", ws, "--yes", "--resume", SID],
        "fork ID": ["fork", "--dir", d, SID],
        "fork ID SEQ": ["fork", "--dir", d, SID, str(_past(j))],
        "export": ["export", "--dir", d, SID, "--format", "html", "-o", str(j.workspace.parent / "out.html")],
        "diff": ["diff", "--dir", d, SID, SID],  # the same journal on both sides: said once
    }[command]
    proc = run_wren(argv, cwd=j.workspace, input="/quit\n" if command == "chat --resume" else None)
    return Said(proc.returncode, proc.stdout, proc.stderr)


def _past(j: Journal) -> int:
    """A seq past where the journal can be read: the last line of the corrupt one, the torn line of the torn one."""
    return 7 if j.path.exists() and j.path.read_bytes().endswith(b'"ts":"2026-') else 5


def _watch_pick(j: Journal, tmp_path: Path) -> Said:
    """`wren watch --pick` in a real terminal, its stdout to a file; Enter on the point the picker highlights."""
    picked = tmp_path / "picked.txt"
    command = shlex.join(python_argv("watch", "--pick", "--dir", str(j.folder), SID)) + f" > {shlex.quote(str(picked))}"
    with own_terminal() as term:
        term.start(["sh", "-c", command], tmp_path, (220, 50))
        if j.path.exists():
            term.wait_for("printed as ID SEQ on exit")
            term.keys("Enter")
        term.wait_for("WREN-EXITED-")
        screen = term.capture(joined=True)
    status = re.search(r"WREN-EXITED-(\d+)", screen)
    assert status is not None
    return Said(int(status.group(1)), picked.read_text(), screen[: status.start()])


# (journal, command) -> (status, what stderr holds): "sentence" exactly the case's sentence, "sentence+" that
# sentence first and more after it, "" nothing.
ROWS: dict[tuple[str, str], tuple[int, str]] = {
    # A bad line before the end: nothing after it can be read, nothing is appended after it.
    ("crc-at-line-3", "log"): (4, "sentence"),  # the events before it on stdout, then where it stopped
    ("crc-at-line-3", "resume"): (4, "sentence"),
    ("crc-at-line-3", "chat --resume"): (4, "sentence"),
    ("crc-at-line-3", "fork ID"): (4, "sentence"),  # the points before it on stdout: points after it are lost
    ("crc-at-line-3", "fork ID SEQ"): (4, "sentence+"),  # then the seq, and the points before the damage
    ("crc-at-line-3", "watch --pick"): (4, "sentence"),  # after the pick: `ID SEQ` on stdout
    ("crc-at-line-3", "export"): (4, "sentence"),  # the export of what comes before it is written
    ("crc-at-line-3", "diff"): (4, "sentence"),  # what could be read is compared
    # A torn tail is the normal end of a crash: no committed line is lost.
    ("torn", "log"): (4, "sentence"),  # it still could not print the whole file
    ("torn", "resume"): (0, ""),  # sets the torn tail aside and goes on
    ("torn", "chat --resume"): (0, ""),  # the same
    ("torn", "fork ID"): (0, ""),  # every point is there (the torn line was never a point)
    ("torn", "fork ID SEQ"): (4, "sentence+"),  # seq 7 is the torn line: not in what can be read
    ("torn", "watch --pick"): (0, ""),
    ("torn", "export"): (4, "sentence"),  # as log: it could not export the whole file
    ("torn", "diff"): (4, "sentence"),
    # No journal: the same sentence from every command.
    ("missing", "log"): (1, "sentence"),
    ("missing", "resume"): (1, "sentence"),
    ("missing", "chat --resume"): (1, "sentence"),
    ("missing", "fork ID"): (1, "sentence"),
    ("missing", "fork ID SEQ"): (1, "sentence"),
    ("missing", "watch --pick"): (1, "sentence"),
    ("missing", "export"): (1, "sentence"),
    ("missing", "diff"): (1, "sentence"),
    # Another process is writing it: reading is free, a second writer is refused.
    ("locked", "log"): (0, ""),
    ("locked", "resume"): (1, "sentence"),
    ("locked", "chat --resume"): (1, "sentence"),
    ("locked", "fork ID"): (0, ""),
    ("locked", "fork ID SEQ"): (0, ""),  # seq 5 is a clean point of the live session: the fork is made
    ("locked", "watch --pick"): (0, ""),
    ("locked", "export"): (0, ""),
    ("locked", "diff"): (0, ""),
}
# What stdout holds besides, where it says something of its own (a substring).
STDOUT: dict[tuple[str, str], str] = {
    ("crc-at-line-3", "log"): "stopped at line 3 (byte ",
    ("crc-at-line-3", "fork ID"): "  2  user: run the tests\n",
    ("crc-at-line-3", "watch --pick"): f"{SID} 2\n",
    ("crc-at-line-3", "export"): "wrote ",
    ("crc-at-line-3", "diff"): "A: reading stopped at line 3 (byte ",
    ("torn", "log"): "stopped at line 7 (byte ",
    ("torn", "resume"): f"[the torn last line was moved aside to {SID}.jsonl.torn]",
    ("torn", "chat --resume"): f"[the torn last line was moved aside to {SID}.jsonl.torn]",
    ("torn", "fork ID"): "  5  assistant: nothing left to do\nstopped at line 7 (byte ",
    ("torn", "watch --pick"): f"{SID} 5\n",
    ("locked", "log"): "nothing left to do",
    ("locked", "fork ID"): "  5  assistant: nothing left to do\n",
    ("locked", "fork ID SEQ"): f"forked {SID} at seq 5 -> ",
    ("locked", "watch --pick"): f"{SID} 5\n",
    ("torn", "export"): "wrote ",
    ("locked", "export"): "wrote ",
    ("locked", "diff"): "the same",
}
NEEDS_TMUX = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _params() -> list[object]:
    return [
        pytest.param(
            case,
            command,
            id=f"{case}-{command.replace(' ', '-')}",
            marks=[pytest.mark.tmux, NEEDS_TMUX] if command == "watch --pick" else [],
        )
        for case, command in ROWS
    ]


@pytest.mark.parametrize(("journal", "command"), _params(), indirect=["journal"])
def test_the_same_bad_journal_gives_every_command_the_same_status_and_sentence(
    journal: Journal, command: str, tmp_path: Path
) -> None:
    case = journal.case
    status, stderr = ROWS[(case, command)]
    before = journal.path.read_bytes() if journal.path.exists() else None
    said = _watch_pick(journal, tmp_path) if command == "watch --pick" else _wren(command, journal)
    assert said.status == status, said
    expected = f"wren: {sentence(case, journal, command)}"
    if command == "watch --pick":
        # The terminal after the viewer closed: what it wrote on stderr, nothing else of wren's.
        assert "Traceback" not in said.stderr
        assert (expected in said.stderr) == (stderr == "sentence"), said.stderr
        assert (said.stderr.count("wren: ") == 1) == (stderr == "sentence"), said.stderr
    elif stderr == "sentence":
        assert said.stderr == expected + "\n"
    elif stderr == "sentence+":
        assert said.stderr.startswith(expected + "\n") and said.stderr.count("\n") > 1, said.stderr
    else:
        assert said.stderr == ""
    assert STDOUT.get((case, command), "") in said.stdout
    if status != 0 and before is not None:
        assert journal.path.read_bytes() == before  # refused: nothing written, nothing moved aside
        assert sorted(p.name for p in journal.folder.iterdir()) == [journal.path.name]


@pytest.mark.parametrize("journal", ["crc-at-line-3", "torn"], indirect=True)
def test_a_fork_past_where_reading_stops_says_where_and_why_then_the_points_before_it(journal: Journal) -> None:
    said = _wren("fork ID SEQ", journal)
    assert said.status == 4
    first, *rest = said.stderr.splitlines()
    assert first == f"wren: {sentence(journal.case, journal)}"
    points = [2] if journal.case == "crc-at-line-3" else POINTS
    again = shlex.join(["wren", "fork", "--dir", str(journal.folder), SID]) + " SEQ"
    assert rest[0] == f"seq {_past(journal)} is past that line. The clean points before it (fork with `{again}`):"
    assert [int(line.split()[0]) for line in rest[1:]] == points


@pytest.mark.parametrize("journal", ["crc-at-line-3"], indirect=True)
def test_a_fork_before_the_damage_works_and_the_fork_resumes(journal: Journal) -> None:
    """The remedy the sentence suggests: `wren fork` lists the points before the bad line; a fork there goes on."""
    listed = run_wren(["fork", "--json", "--dir", str(journal.folder), SID], cwd=journal.workspace)
    assert listed.returncode == 4
    assert [p["seq"] for p in json.loads(listed.stdout)] == [2]
    assert listed.stderr == f"wren: {sentence(journal.case, journal)}\n"
    forked = run_wren(["fork", "--json", "--dir", str(journal.folder), SID, "2"], cwd=journal.workspace)
    assert forked.returncode == 0, forked.stderr
    child = Path(json.loads(forked.stdout)["path"])
    assert read_events(child).ok and [e.seq for e in read_events(child).events] == [1, 2, 3]
    resumed = run_wren(
        ["resume", "--dir", str(journal.folder), "--workspace", str(journal.workspace), child.stem, "go on"],
        cwd=journal.workspace,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert read_events(child).ok and len(read_events(child).events) > 3


@pytest.mark.parametrize("journal", ["crc-at-line-3"], indirect=True)
def test_a_fork_at_an_unclean_point_before_the_damage_is_bad_usage_and_says_the_list_ends_there(
    journal: Journal,
) -> None:
    said = run_wren(["fork", "--dir", str(journal.folder), SID, "1"], cwd=journal.workspace)
    assert said.returncode == 2
    assert said.stderr.startswith(f"wren: {journal.path}: seq 1 is not a clean fork point")
    assert "  2  user: run the tests\n" in said.stderr
    assert said.stderr.endswith(f"Reading stops at line 3: {CRC}; points after it cannot be read.\n")


_SETTLE_CHILD = """
import os, sys
from wren_tui.cli import _settle_output
print("cancelled")  # the run's last line, still in stdout's buffer
os.read(0, 1)  # the parent closes the other end, then lets the child go on
if sys.argv[1] == "settle":
    _settle_output()
sys.exit(129)
"""


@pytest.mark.parametrize("settled", [True, False])
def test_a_command_whose_output_can_no_longer_be_written_exits_with_its_own_status_not_pythons_120(
    settled: bool,
) -> None:
    # A closed terminal (after SIGHUP) or a reader that left: what is still buffered for stdout
    # cannot be written, and Python's own flush at exit then turns the chosen status (129) into 120.
    out_r, out_w = os.pipe()
    go_r, go_w = os.pipe()
    child = subprocess.Popen(
        [sys.executable, "-c", _SETTLE_CHILD, "settle" if settled else "raw"],
        stdin=go_r,
        stdout=out_w,
        stderr=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},  # buffered, as in a user's shell
    )
    os.close(out_w)
    os.close(go_r)
    os.close(out_r)  # nothing reads its output any more
    os.write(go_w, b"x")
    os.close(go_w)
    assert child.wait(30) == (129 if settled else 120)
