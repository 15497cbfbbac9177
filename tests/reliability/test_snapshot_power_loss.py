"""Power loss under the snapshot store: a journal never names a snapshot whose objects a crash lost.

A session is recorded through `simfs.RecordingOps`, one layer for the journal and the store's loose
objects (`gitfiles.Objects.ops`): three snapshots of a workspace changed between them, each appended
to the journal as the agent appends it. Every prefix of the recorded system calls is cut, and for each
cut the writes and the folder changes not yet made durable are decided (all kept, all lost, random
mixes), as `tests/reliability/test_power_loss.py` does for the journal alone. In every crash state,
each snapshot the surviving journal names is in the store whole: every object of its tree there,
inflating to its id. An object written but not fsynced, or renamed into a folder (or a new fan-out
folder) that was not fsynced, is lost in the states that lose it: a test here fails when a snapshot
is journaled before its objects are durable.

And with the objects gone from under a journal that names them (what such a crash would leave), a
fork with files refuses with one sentence and writes no fork.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.agent.test_snapshot_forks import state_of
from tests.conftest import run_wren
from tests.reliability.dial import scaled
from tests.reliability.simfs import Op, RecordingOps, crash_state
from wren_tui.agent.snapshotting import Snapshotter
from wren_tui.journal.events import ChatMessage, Message, RunStart, Snapshot
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import JournalWriter
from wren_tui.snapshots import gitfiles
from wren_tui.snapshots.store import STORE

SID = "s-20260101-000000-abcd"
MIXES = scaled(3, 30)  # random crash states per cut, besides the two extremes


@dataclass
class Session:
    log: list[Op]
    folder: Path  # the journals folder the log wrote into
    baseline: Path  # the store as it was before the recording (made by git init: durable before it)
    expected: dict[str, tuple[int, dict[str, tuple[str, bytes]]]]  # each snapshot: its fork point, its files


def _record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    folder, ws = tmp_path / "journals", tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("print('a')\n")
    (ws / "notes.txt").write_text("first\n")
    (ws / "link").symlink_to("notes.txt")
    snapper = Snapshotter(folder, ws, SID)
    snapper.store.ensure()
    baseline = tmp_path / "baseline"
    shutil.copytree(snapper.store.path, baseline, symlinks=True)
    ops = RecordingOps()
    monkeypatch.setattr(gitfiles.Objects, "ops", ops)
    monkeypatch.setattr(gitfiles, "CHUNK", 1024)  # b.bin (3,000 bytes) takes the streamed path, in three chunks
    changes = [
        lambda: None,
        lambda: (ws / "src" / "a.py").write_text("print('changed')\n"),
        lambda: (
            (ws / "deep" / "er").mkdir(parents=True),
            (ws / "deep" / "er" / "b.bin").write_bytes(os.urandom(3000)),
        ),
    ]
    expected: dict[str, tuple[int, dict[str, tuple[str, bytes]]]] = {}
    with JournalWriter.create(folder / f"{SID}.jsonl", ops=ops) as writer:
        writer.append(RunStart(pid=os.getpid(), cwd=str(ws), model="scripted", version="test"))
        for number, change in enumerate(changes):
            change()  # a person's edit between turns; then a turn's message and its snapshot
            point = writer.append(Message(message=ChatMessage(role="user", content=f"turn {number}"))).seq
            event = snapper.take(None)
            assert event is not None and event.id
            expected[event.id] = (point, state_of(ws))
            writer.append(event)
    monkeypatch.undo()
    return Session(ops.log, folder, baseline, expected)


def _fanouts_lost(log: list[Op], cut: int, objects: Path) -> set[Path]:
    """The fan-out folders (objects/xx) made in the recording whose creation no fsync of objects/ covered by `cut`."""
    made: dict[Path, int] = {}
    for at, op in enumerate(log):
        for path in (op.path, op.dst):
            if path is not None and path.parent.parent == objects:
                made.setdefault(path.parent, at)
    synced = [at for at, op in enumerate(log[:cut]) if op.kind == "sync_dir" and op.path == objects]
    return {fanout for fanout, at in made.items() if not any(s > at for s in synced)}


def _crashed(session: Session, state: dict[Path, bytes], lost: set[Path], where: Path) -> Path:
    """The journals folder as the crash left it: the store's baseline, then what survived of the log."""
    store = where / STORE
    shutil.copytree(session.baseline, store, symlinks=True)
    for path, data in state.items():
        if path.parent in lost:
            continue
        copy = where / path.relative_to(session.folder)
        copy.parent.mkdir(parents=True, exist_ok=True)
        if copy.exists():
            copy.chmod(0o644)
        copy.write_bytes(data)
    return where


def _missing(objects: Path, oid: str) -> str | None:
    """What of the tree `oid` the store lacks or holds damaged (a sentence), or None when it is whole."""
    try:
        with open(objects / oid[:2] / oid[2:], "rb") as f:
            raw = zlib.decompress(f.read())
    except FileNotFoundError:
        return f"object {oid} is missing"
    except zlib.error:
        return f"object {oid} is damaged"
    if hashlib.sha1(raw).hexdigest() != oid:
        return f"object {oid} does not hash to its name"
    head, _, body = raw.partition(b"\0")
    if not head.startswith(b"tree "):
        return None
    while body:
        _mode_and_name, _, body = body.partition(b"\0")
        child, body = body[:20].hex(), body[20:]
        problem = _missing(objects, child)
        if problem:
            return problem
    return None


def test_a_power_loss_at_any_moment_never_leaves_a_journal_naming_a_snapshot_the_store_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _record(tmp_path / "recorded", monkeypatch)
    objects = session.folder / STORE / "objects"
    rng = random.Random(7)
    seen: set[frozenset[tuple[Path, bytes]]] = set()
    named = 0
    for cut in range(len(session.log) + 1):
        lost_fanouts = _fanouts_lost(session.log, cut, objects)
        outcomes = [(None, False), (None, True)] + [(rng, False)] * MIXES
        for chance, keep_all in outcomes:
            state = crash_state(session.log, cut, chance, keep_all=keep_all)
            lost = set() if keep_all else lost_fanouts
            key = frozenset((p, d) for p, d in state.items() if p.parent not in lost)
            if key in seen:
                continue
            seen.add(key)
            where = _crashed(session, state, lost, tmp_path / f"crash-{len(seen)}")
            journal = where / f"{SID}.jsonl"
            if journal.exists():
                for event in read_events(journal).events:
                    if isinstance(event, Snapshot) and event.id:
                        named += 1
                        problem = _missing(where / STORE / "objects", event.id)
                        assert problem is None, (
                            f"cut {cut} of {len(session.log)}: the journal names {event.id}; {problem}"
                        )
            shutil.rmtree(where)
    assert named > len(session.expected)  # the snapshots were named in many of the states, not in none

    # Everything lost that was not made durable, at the very end: a fork of each point restores its files.
    state = crash_state(session.log, len(session.log), None)
    where = _crashed(session, state, _fanouts_lost(session.log, len(session.log), objects), tmp_path / "last")
    for number, (point, files) in enumerate(session.expected.values()):
        target = tmp_path / f"fork-{number}"
        proc = run_wren(["fork", "--dir", str(where), SID, str(point), "--workspace", str(target)], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert state_of(target) == files


def test_a_fork_of_a_point_whose_objects_are_gone_refuses_with_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _record(tmp_path / "recorded", monkeypatch)
    objects = session.folder / STORE / "objects"
    point = list(session.expected.values())[-1][0]
    for fanout in objects.iterdir():  # as a crash that lost the objects' bytes would leave them: empty files
        if len(fanout.name) == 2:
            for loose in fanout.iterdir():
                loose.chmod(0o644)
                loose.write_bytes(b"")
    target = tmp_path / "fork"
    proc = run_wren(["fork", "--dir", str(session.folder), SID, str(point), "--workspace", str(target)], cwd=tmp_path)
    assert proc.returncode == 1
    assert len(proc.stderr.splitlines()) == 1 and "nothing was forked" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in session.folder.glob("*.jsonl")) == [f"{SID}.jsonl"]
