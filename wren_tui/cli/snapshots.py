"""`wren snapshots`: the snapshot store's space, and `prune` to drop what only deleted sessions refer to."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..journal.errors import JournalError
from ..journal.events import Fork, Rewind, Snapshot
from ..journal.reader import read_events
from ..journal.snapshots import SnapshotError, Store, store_of
from ..journal.store import journal_paths, session_id_of
from .console import out, print_json
from .exits import CommandFailed, Exit
from .options import named_folder_of

# What a plain prune keeps besides what journals name: objects written this recently (for a writer that does not
# take the store's lock: see `Store.prune`).
GRACE = "2.hours.ago"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "snapshots",
        parents=[common],
        help="the workspace snapshots' store: its space; prune drops what only deleted sessions refer to",
        description="Show where the workspace snapshots are kept (.snapshots in the journals folder) and the "
        "space they take. `wren snapshots prune` removes what no journal in the folder names any more (the "
        "snapshots of deleted sessions) and packs the rest. It is safe while a run is writing: a snapshot being "
        "taken holds the store's lock, and a run's newest snapshot is kept until its journal names it. What "
        "was written in the last two hours is kept too, for a writer that does not take the lock (--now: not "
        "even that). A journal that cannot be read whole stops it, changing nothing.",
    )
    p.add_argument("action", nargs="?", choices=("prune",), help="prune: drop what only deleted sessions refer to")
    p.add_argument("--now", action="store_true", help="with prune: keep nothing just because it is recent")
    p.add_argument("--json", action="store_true", help="JSON for scripts")
    p.set_defaults(handler=cmd_snapshots)


def human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def cmd_snapshots(args: argparse.Namespace) -> Exit:
    folder = named_folder_of(args)
    store = Store(store_of(folder))
    if args.action != "prune":
        size = store.size() if store.exists() else 0
        if args.json:
            print_json({"store": str(store.path), "exists": store.exists(), "bytes": size})
        elif not store.exists():
            out(f"no snapshots yet in {folder} (a run makes {store.path} when it takes its first)")
        else:
            out(f"snapshots: {human(size)} in {store.path}")
        return Exit.OK
    if not store.exists():
        out(f"nothing to prune: {store.path} does not exist")
        return Exit.OK
    try:
        before, after, kept = store.prune(lambda: _named(folder), grace="now" if args.now else GRACE)
    except SnapshotError as exc:
        raise CommandFailed(f"{exc}; nothing named by a journal was removed") from None
    if args.json:
        print_json({"store": str(store.path), "before": before, "after": after, "kept": kept})
    else:
        out(f"pruned {store.path}: {human(before)} -> {human(after)}; {kept} snapshots named by journals kept")
    return Exit.OK


def _named(folder: Path) -> tuple[set[str], set[str]]:
    """Every snapshot id the folder's journals name, and their sessions' ids.

    Raises:
        CommandFailed: a journal cannot be read whole (a damaged line, a link, no permission): it may
            name snapshots past what can be read, so nothing is pruned.
    """
    keep: set[str] = set()
    live: set[str] = set()
    misnamed: list[Path] = []
    paths = journal_paths(folder, misnamed)
    if misnamed:
        raise CommandFailed(
            f"{misnamed[0]}: not a journal file (a link, a folder or a FIFO), and what it stands for may name "
            "snapshots; nothing was pruned (put the journal itself there, or move it out of the folder)"
        )
    for path in paths:
        try:
            result = read_events(path)
        except OSError as exc:
            why = exc.strerror or exc
            said = f"{path}: cannot be read ({why}), and it may name snapshots; nothing was pruned"
            raise CommandFailed(said) from None
        except JournalError as exc:
            raise CommandFailed(f"{exc}; it may name snapshots, so nothing was pruned") from None
        if result.stop is not None and not result.stop.torn:
            # Lines past the damage may name snapshots; a torn last line is one a crash cut short, never committed.
            raise CommandFailed(
                f"{path}: cannot be read past line {result.stop.line} ({result.stop.why}), and the lines after it "
                "may name snapshots; nothing was pruned (repair the journal, or move it out of the folder)"
            )
        live.add(session_id_of(path))
        for event in result.events:
            if isinstance(event, Snapshot) and event.id:
                keep.add(event.id)
            elif isinstance(event, Fork) and event.snapshot:
                keep.add(event.snapshot)
            elif isinstance(event, Rewind):
                keep.update((event.snapshot, event.before))  # the rewind's files, and what --undo puts back
    return keep, live
