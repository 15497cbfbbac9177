"""A family of sessions for the lineage, comparison and export tests: a parent, its forks, a fork of a fork.

Each fork is written as `fork` writes one (the parent's bytes up to the fork point, then a fork event)
and then its own events, all with fixed timestamps, so snapshots never see the wall clock and what
differs between parent and fork is known exactly. (tests/journal/test_fork.py checks `fork` itself.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from tests.tui.journals import SESSION, START, STEP, assistant, encode, finished_story, tool_result, user, write_journal
from wren_tui.journal.events import Fork, KnownEvent, RunEnd, RunStart, ToolCall, ToolEnd, ToolStart, Usage

# The parent's clean point after its first user message, and the one after its last answer.
FORK_AT = 2
LATE_FORK_AT = 25
FORK_START = START + timedelta(minutes=20)


def other_path() -> list[KnownEvent]:
    """What the fork did instead from seq 2: a different command that failed, and another answer."""
    check = ToolCall("call_9", "shell", '{"command": "python -m unittest -v"}')
    return [
        RunStart(pid=5151, cwd="/work/demo", model="scripted", version="0.1.0", resumed=True),
        assistant("I'll run unittest instead.", check),
        ToolStart(id="call_9", name="shell", read_only=False, approval="approved"),
        ToolEnd(id="call_9", ok=False, elapsed_ms=880, chars=40),
        tool_result("call_9", "Ran 8 tests\nFAILED (errors=1)"),
        Usage(input_tokens=700, output_tokens=30, model="scripted"),
        assistant("One test errors; stopping here."),
        RunEnd(reason="done"),
    ]


def later_turn() -> list[KnownEvent]:
    """A new question asked of a fork made after the parent's last answer."""
    return [
        RunStart(pid=6262, cwd="/work/demo", model="scripted", version="0.1.0", resumed=True),
        user("what was the failing case?"),
        assistant("test_mean_of_empty: the mean of an empty list divided by zero."),
        Usage(input_tokens=300, output_tokens=20, model="scripted"),
        RunEnd(reason="done"),
    ]


def write_fork(path: Path, parent: Path, at: int, own: list[KnownEvent], *, start: datetime = FORK_START) -> Path:
    """A fork as `fork` writes one (the parent's bytes through seq `at`, then a fork event), then its own events."""
    prefix = b"".join(parent.read_bytes().splitlines(keepends=True)[:at])
    events: list[KnownEvent] = [Fork(from_=parent.stem, at_seq=at), *own]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(prefix + encode(events, first_seq=at + 1, start=start - STEP * at))
    return path


@dataclass(frozen=True)
class Family:
    folder: Path
    parent: Path
    fork: Path  # forked at FORK_AT, then went another way
    late: Path  # forked at LATE_FORK_AT, then asked a new question
    grandchild: Path  # a fork of `fork`, at its last answer


FORK = "s-20250301-095000-frk1"
LATE = "s-20250301-095500-frk2"
GRANDCHILD = "s-20250301-100000-frk3"


def family(folder: Path) -> Family:
    """The parent (the finished demo session), two forks of it and a fork of the first fork, fixed ids and times."""
    parent = write_journal(folder / f"{SESSION}.jsonl", finished_story())
    first = write_fork(folder / f"{FORK}.jsonl", parent, FORK_AT, other_path())
    late = write_fork(
        folder / f"{LATE}.jsonl", parent, LATE_FORK_AT, later_turn(), start=FORK_START + timedelta(minutes=5)
    )
    answer = first.read_bytes().count(b"\n") - 1  # its last answer, before its run_end
    grandchild = write_fork(
        folder / f"{GRANDCHILD}.jsonl", first, answer, later_turn(), start=FORK_START + timedelta(minutes=10)
    )
    return Family(folder, parent, first, late, grandchild)
