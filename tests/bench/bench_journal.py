"""The journal kernel against the bare system calls and the obvious alternatives (issue 2's four ratios).

Data is generated in a temporary folder (WREN_BENCH_DIR, else the system's) and measured in the
same run; WREN_BENCH_MB sets the big journal's size (default 100).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from itertools import islice
from pathlib import Path

import msgspec

from tests.bench import BenchRow, best_of, compare, speedup
from tests.bench.gen import generate_bytes, turns
from wren_tui import portable
from wren_tui.journal import _fastpath
from wren_tui.journal.events import KnownEvent
from wren_tui.journal.forking import fork, fork_points
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import FileOps, FsyncPolicy, JournalWriter

_DECODER = msgspec.json.Decoder(KnownEvent)
DURABLE_EVENTS = 1_000
FAST_EVENTS = 50_000


def _events(count: int) -> list[KnownEvent]:
    return list(islice(turns(random.Random(7)), count))


def _append(folder: Path, events: list[KnownEvent], fsync: FsyncPolicy) -> Path:
    path = folder / "ours.jsonl"
    path.unlink(missing_ok=True)
    with JournalWriter.create(path, fsync=fsync) as writer:
        for event in events:
            writer.append(event)
    return path


# The direct call the journal's durable sync is measured against (fsync where there is no fdatasync).
_DIRECT_SYNC: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)


def _bare_writes(folder: Path, lines: list[bytes], *, sync: Callable[[int], None] | None) -> None:
    path = folder / "bare.jsonl"
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for line in lines:
            os.write(fd, line)
            if sync is not None:
                sync(fd)
    finally:
        os.close(fd)


def _durable_sync(folder: Path) -> list[BenchRow]:
    """The durable append through wren_tui.portable against the direct call, and fsync (the fallback) against it.

    On the disk, run in turns (a, b, c, a, b, c ...) so the disk's moods fall on all three alike; then in
    memory (/dev/shm, where a sync has nothing to write), which leaves only what each call costs.
    F_FULLFSYNC (macOS) cannot run on Linux: docs/journal.md says what is known of it.
    """
    lines = _append(folder, _events(DURABLE_EVENTS), "none").read_bytes().splitlines(keepends=True)
    name = getattr(_DIRECT_SYNC, "__name__", "fsync")
    rows = []
    places = [(folder, lines, "on disk", 9)]
    if os.path.isdir("/dev/shm"):
        places.append((Path("/dev/shm"), lines * 20, "in memory (/dev/shm: the calls' own cost)", 5))
    for place, written, where, rounds in places:
        with tempfile.TemporaryDirectory(prefix="wren-bench-sync-", dir=place) as tmp:
            here = Path(tmp)
            ours, direct, fsync = _in_turns(
                lambda: _bare_writes(here, written, sync=portable.durable_sync),  # noqa: B023 (called at once)
                lambda: _bare_writes(here, written, sync=_DIRECT_SYNC),  # noqa: B023
                lambda: _bare_writes(here, written, sync=os.fsync),  # noqa: B023
                rounds=rounds,
            )
        rows.append(
            compare(
                f"durable append of {len(written):,} lines {where}: portable ({portable.DURABLE_SYNC}) vs os.{name}",
                ours,
                direct,
                at_most=1.15,
            )
        )
        fallback = f"the same with os.fsync (the fallback; Windows: FlushFileBuffers) vs os.{name}"
        rows.append(compare(fallback, fsync, direct))
    return rows


def _appends(folder: Path) -> list[BenchRow]:
    rows = []
    for count, policy, what in (
        (DURABLE_EVENTS, "event", f"append {DURABLE_EVENTS:,} events, fdatasync each, vs os.write + fdatasync"),
        (FAST_EVENTS, "none", f"append {FAST_EVENTS:,} events, no fsync, vs a bare os.write loop"),
    ):
        events = _events(count)
        lines = _append(folder, events, policy).read_bytes().splitlines(keepends=True)
        sync = _DIRECT_SYNC if policy == "event" else None
        ours = best_of(lambda: _append(folder, events, policy))  # noqa: B023 (called at once)
        bare = best_of(lambda: _bare_writes(folder, lines, sync=sync))  # noqa: B023
        rows.append(compare(what, ours, bare, at_most=1.3 if sync else 4))
        if sync is None:
            # The same appends with the line built in Python: what an install without a C compiler gets.
            saved, _fastpath.native_line = _fastpath.native_line, None
            try:
                pure = best_of(lambda: _append(folder, events, policy))  # noqa: B023
            finally:
                _fastpath.native_line = saved
            rows.append(compare("the same appends, line built in Python (an install with no C compiler)", pure, bare))
    return rows


def _json_loop(path: Path) -> int:
    count = 0
    with open(path, "rb") as f:
        for line in f:
            json.loads(line)
            count += 1
    return count


def _decode_only(path: Path) -> float:
    data = path.read_bytes()
    return best_of(lambda: _DECODER.decode_lines(data))


def _big(folder: Path, megabytes: int) -> list[BenchRow]:
    path = generate_bytes(folder / "s-20260101-000000-big0.jsonl", megabytes * 1_000_000)
    result = read_events(path)
    assert result.ok and len(result.events) == _json_loop(path), "read_events must read every line it is timed on"
    size = f"{path.stat().st_size / 1e6:.0f} MB, {len(result.events):,} events"
    ours = best_of(lambda: read_events(path))
    loop = best_of(lambda: _json_loop(path))
    rows = [speedup(f"read_events of a {size} journal vs a json.loads loop", ours, loop, at_least=5)]
    # The same reading with the line check in Python: what an install without a C compiler gets.
    saved, _fastpath.native_lines = _fastpath.native_lines, None
    try:
        pure = best_of(lambda: read_events(path))
    finally:
        _fastpath.native_lines = saved
    rows.append(speedup("the same read_events, line check in Python (an install with no C compiler)", pure, loop))
    # The floor of any reader that decodes every event with msgspec: decoding bytes already in
    # memory, with no reading, no CRC, no seq check.
    rows.append(speedup("msgspec decode_lines alone, the bytes in memory (the floor)", _decode_only(path), loop))
    # Issue 22: reading a journal costs little more than decoding it (floor / ours). Taken in turns,
    # so a burst of other work on the machine lands on both.
    ours, floor = _reading_and_floor(path)
    rows.append(speedup("read_events vs msgspec decode_lines (the floor), in turns", ours, floor, at_least=0.8))

    last = fork_points(result.events)[-1].seq
    del result
    forks = folder / "forks"
    forks.mkdir()

    def fork_last() -> None:
        fork(path, last, folder=forks)

    def copy(durable: bool) -> None:
        target = forks / "copy.jsonl"
        shutil.copyfile(path, target)
        if durable:
            fd = os.open(target, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
            FileOps().fsync_dir(forks)

    def clean() -> None:
        for child in forks.iterdir():
            child.unlink()
        os.sync()  # else one run's write-back lands on the next run's clock

    # In turns, each into an empty folder (a fork must not find the previous one's file).
    ours, plain, durable = _in_turns(fork_last, lambda: copy(False), lambda: copy(True), before=clean)
    clean()
    rows.append(compare(f"fork at the last point (seq {last:,}) vs shutil.copyfile", ours, plain, at_most=1.5))
    rows.append(compare("the same fork vs shutil.copyfile + fsync (a durable copy)", ours, durable, at_most=2))
    return rows


def _reading_and_floor(path: Path) -> list[float]:
    data = path.read_bytes()
    return _in_turns(lambda: read_events(path), lambda: _DECODER.decode_lines(data))


def _in_turns(*fns: Callable[[], object], before: Callable[[], object] | None = None, rounds: int = 5) -> list[float]:
    """The best time of each function, run in turns (a, b, a, b ...): what disturbs one round disturbs all of them."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            if before is not None:
                before()
            best[i] = min(best[i], best_of(fn, repeat=1))
    return best


def run() -> list[BenchRow]:
    base = os.environ.get("WREN_BENCH_DIR") or None
    megabytes = int(os.environ.get("WREN_BENCH_MB", "100"))
    with tempfile.TemporaryDirectory(prefix="wren-bench-", dir=base) as tmp:
        folder = Path(tmp)
        return _appends(folder) + _durable_sync(folder) + _big(folder, megabytes)
