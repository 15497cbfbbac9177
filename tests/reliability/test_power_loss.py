"""Power loss: every crash state of a recorded session recovers to its synced prefix plus at most a torn tail.

The session: create a journal, append (fdatasync per event), be killed mid-write, reopen (the torn
tail moved aside), append more, fork. Every prefix of its system calls is cut, and for each cut the
unsynced writes and folder changes are decided (all kept, all lost, and random mixes).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

from tests.journal.helpers import session_events
from tests.reliability.dial import scaled
from tests.reliability.simfs import Op, RecordingOps, crash_state
from wren_tui.journal.events import ChatMessage, Event, Fork, KnownEvent, Message
from wren_tui.journal.forking import fork
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import JournalWriter

NAME = "s-20260101-000000-abcd.jsonl"
MIXES = scaled(4, 40)  # random crash states per cut, besides the two extremes


@dataclass
class Session:
    log: list[Op]
    folder: Path
    appended: list[KnownEvent]
    acked: list[int]  # acked[i]: log length when appended[i] had been made durable
    fork_acked: int  # log length when the fork had returned
    fork_seq: int


def _record(folder: Path) -> Session:
    ops = RecordingOps()
    path = folder / NAME
    events = session_events()
    appended, acked = [], []
    with JournalWriter.create(path, ops=ops) as writer:
        for event in events[:7]:
            appended.append(writer.append(event))
            acked.append(len(ops.log))
    fd = ops.open(path, os.O_WRONLY | os.O_APPEND)  # a killed writer's last, partial line
    ops.write(fd, b'{"seq":8,"ts":"2026-01-01T00:00:00.000Z","type":"mess')
    ops.close(fd)
    with JournalWriter.open(path, ops=ops) as writer:
        for event in events[7:]:
            appended.append(writer.append(event))
            acked.append(len(ops.log))
    forked = fork(path, 12, ops=ops)
    assert forked.path.exists()
    return Session(ops.log, folder, appended, acked, len(ops.log), 12)


def _check(state: dict[Path, bytes], session: Session, cut: int, where: Path) -> None:
    where.mkdir()
    for path, data in state.items():
        (where / path.name).write_bytes(data)
    journal = where / NAME
    durable = [e for e, at in zip(session.appended, session.acked, strict=True) if at <= cut]
    if not journal.exists():
        assert not durable, f"cut {cut}: the journal vanished after {len(durable)} durable events"
        return
    result = read_events(journal)
    assert result.ok or result.torn, f"cut {cut}: {result.stop}"
    assert result.events == session.appended[: len(result.events)], f"cut {cut}: not a prefix"
    assert len(result.events) >= len(durable), f"cut {cut}: lost synced events"
    with JournalWriter.open(journal) as writer:  # recovery: always possible, seq continues
        event = writer.append(Message(message=ChatMessage(role="user", content="after the power cut")))
    assert event.seq == (result.events[-1].seq + 1 if result.events else 1)
    assert read_events(journal).ok
    forks = [p for p in where.glob("*.jsonl") if p.name != NAME]
    if cut >= session.fork_acked:
        assert len(forks) == 1, f"cut {cut}: the fork returned but is not on disk"
    for fork_path in forks:  # no fork, or a whole one
        got = read_events(fork_path)
        last: Event | None = got.events[-1] if got.events else None
        assert got.ok and isinstance(last, Fork) and last.at_seq == session.fork_seq, f"cut {cut}: half a fork"
        assert got.events[:-1] == session.appended[: session.fork_seq]


def test_every_crash_state_recovers_the_synced_prefix_and_forks_are_whole_or_absent(tmp_path: Path) -> None:
    session = _record(tmp_path / "recorded")
    rng = random.Random(20260101)
    states = 0
    for cut in range(len(session.log) + 1):
        variants = [crash_state(session.log, cut, None), crash_state(session.log, cut, None, keep_all=True)]
        variants += [crash_state(session.log, cut, rng) for _ in range(MIXES)]
        for n, state in enumerate(variants):
            _check(state, session, cut, tmp_path / f"cut{cut}-{n}")
            states += 1
    assert states >= len(session.log) * 2
    print(f"power loss: {len(session.log)} recorded calls, {states} crash states recovered")


def test_the_recorded_session_covers_every_kind_of_call(tmp_path: Path) -> None:
    session = _record(tmp_path)
    assert {op.kind for op in session.log} == {"create", "write", "truncate", "sync", "rename", "sync_dir"}
    torn = tmp_path / f"{NAME}.torn"
    assert torn.read_bytes().startswith(b'{"seq":8')
