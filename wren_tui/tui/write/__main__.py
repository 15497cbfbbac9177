"""`python -m wren_tui.tui.write VERB ...`: what the viewer asks a child to write or to read from the snapshot store.

    fork JOURNAL SEQ TARGET   a fork at SEQ with its files written into TARGET (new or empty)
    changes JOURNAL           how many files changed since each clean point
    diff JOURNAL SEQ          the diff of the files at SEQ to the session's last snapshot

It prints one answer of `tui/write/__init__.py` (a msgspec Struct, as JSON) and exits 0; a failure is
the answer `Failed`, with the sentence `wren` itself would say. The viewer never imports this
module: it is the viewer's third way to write (beside `journal.forking` and `export`), in its own
process, listed as such in tests/test_layers.py.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from ...journal.errors import JournalError
from ...journal.forking import fork_points
from ...journal.reader import read_events
from ...journal.store import journals_dir, session_id_of, write_problem
from ...snapshots.forking import FilesNotForked, changes_since_points, fork_with_files
from ...snapshots.store import SnapshotError, Store, files_at, last_snapshot, store_of
from . import Answer, Changes, Diff, Failed, ForkMade


def fork(journal: Path, seq: int, given: str) -> ForkMade | Failed:
    try:
        made = fork_with_files(journal, seq, given, journals=(journals_dir(None),))
    except (FilesNotForked, JournalError) as exc:
        return Failed(str(exc))
    except OSError as exc:
        return Failed(
            f"{write_problem(journal.parent, exc)}, so the fork (written beside {journal.name}) was not made; copy "
            "the journal to a folder you can write and fork it there"
        )
    assert made.workspace is not None and made.files_restored is not None
    return ForkMade(made.forked.id, str(made.forked.path), str(made.workspace), made.files_restored)


def changes(journal: Path) -> Changes:
    """Each clean point's count; none at all when the journal is damaged before its end (its points may be missing)."""
    result = read_events(journal)
    if result.stop is not None and not result.stop.torn:
        return Changes({})
    points = fork_points(result.events)
    try:
        found = changes_since_points(journal, result.events, points)
    except SnapshotError:
        found = {}
    return Changes({p.seq: (c.files_changed if (c := found.get(p.seq)) else None) for p in points})


def diff(journal: Path, seq: int) -> Diff | Failed:
    events = read_events(journal).events
    start, end = files_at(events, seq), last_snapshot(events)
    if start.id is None or end is None:
        return Failed(f"{session_id_of(journal)}: no snapshot holds the files at seq {seq}: {start.why}")
    try:
        return Diff(Store(store_of(journal.parent)).diff(start.id, end).decode("utf-8", "replace"))
    except SnapshotError as exc:
        return Failed(str(exc))


def answer(args: Sequence[str]) -> Answer:
    match list(args):
        case ["fork", journal, seq, target] if seq.isdigit():
            return fork(Path(journal), int(seq), target)
        case ["changes", journal]:
            return changes(Path(journal))
        case ["diff", journal, seq] if seq.isdigit():
            return diff(Path(journal), int(seq))
    return Failed(f"not a question of the viewer's child: {' '.join(args)}")


def main(args: Sequence[str]) -> int:
    try:
        said = answer(args)
    except JournalError as exc:
        said = Failed(str(exc))
    sys.stdout.buffer.write(msgspec.json.encode(said))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
