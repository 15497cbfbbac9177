"""`wren snapshots`: the snapshot store's space, and `prune` to drop what only deleted sessions refer to."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..journal.events import Fork, Snapshot
from ..journal.reader import read_events
from ..journal.snapshots import SnapshotError, Store, store_of
from ..journal.store import journal_paths, session_id_of
from .console import out, print_json
from .exits import CommandFailed, Exit
from .options import folder_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "snapshots",
        parents=[common],
        help="the workspace snapshots' store: its space; prune drops what only deleted sessions refer to",
        description="Show where the workspace snapshots are kept (.snapshots in the journals folder) and the "
        "space they take. `wren snapshots prune` removes what no journal in the folder names any more (the "
        "snapshots of deleted sessions) and packs the rest; it is safe while a run is writing, because "
        "everything written in the last two hours is kept too (--now: not even that, for when no run is "
        "writing).",
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
    folder = folder_of(args)
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
    keep, live = _named(folder)
    try:
        before, after = store.prune(keep, live, grace="now" if args.now else "2.hours.ago")
    except SnapshotError as exc:
        raise CommandFailed(f"{exc}; nothing named by a journal was removed") from None
    if args.json:
        print_json({"store": str(store.path), "before": before, "after": after, "kept": len(keep)})
    else:
        out(f"pruned {store.path}: {human(before)} -> {human(after)}; {len(keep)} snapshots named by journals kept")
    return Exit.OK


def _named(folder: Path) -> tuple[set[str], set[str]]:
    """Every snapshot id the folder's journals name, and their sessions' ids; CommandFailed if one cannot be read."""
    keep: set[str] = set()
    live: set[str] = set()
    for path in journal_paths(folder):
        try:
            events = read_events(path).events
        except OSError as exc:
            raise CommandFailed(
                f"{path}: cannot be read ({exc.strerror or exc}), and it may name snapshots; nothing was pruned"
            ) from None
        live.add(session_id_of(path))
        for event in events:
            if isinstance(event, Snapshot) and event.id:
                keep.add(event.id)
            elif isinstance(event, Fork) and event.snapshot:
                keep.add(event.snapshot)
    return keep, live
