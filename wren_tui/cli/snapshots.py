"""`wren snapshots`: the snapshot store's space, and `prune` to drop what only deleted sessions refer to."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agent.errors import UsageError
from ..journal.errors import JournalError
from ..journal.events import Fork, Rewind, Snapshot
from ..journal.reader import read_events
from ..journal.store import journal_paths, session_id_of
from ..snapshots.budget import ENV, BudgetError, Snap, Thinning, budget_of, choose, dropped_sentence
from ..snapshots.store import SnapshotError, Store, store_of
from .console import err, out, print_json
from .exits import CommandFailed, Exit
from .options import named_folder_of

# What a plain prune keeps besides what journals name: objects written this recently (for a writer that does not
# take the store's lock: see `Store.prune`).
GRACE = "2.hours.ago"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, json_option

    p = command_parser(
        sub,
        "snapshots",
        cmd_snapshots,
        "Show where the workspace snapshots are kept (.snapshots in the journals folder) and the "
        "space they take against their budget (2 GB, WREN_SNAPSHOT_BUDGET or --budget), and what a prune would "
        "free. `wren snapshots prune` removes what no journal in the folder names any more (the snapshots of "
        "deleted sessions), thins the rest to keep within the budget (never a snapshot a fork or rewind names, "
        "nor a session's last; a thinned point says 'files thinned' in `wren fork ID`) and packs it. It is safe "
        "while a run is writing: a snapshot being taken holds the store's lock, and a run's newest snapshot is "
        "kept until its journal names it. What "
        "was written in the last two hours is kept too, for a writer that does not take the lock (--now: not "
        "even that). A journal that cannot be read whole stops it, changing nothing.",
        common,
    )
    p.add_argument("action", nargs="?", choices=("prune",), help="prune: drop what only deleted sessions refer to")
    p.add_argument("--now", action="store_true", help="with prune: keep nothing just because it is recent")
    p.add_argument(
        "--budget",
        metavar="SIZE",
        help=f"the store's size budget (e.g. 2GB; default: {ENV}, else 2 GB): prune thins snapshots to keep within it",
    )
    json_option(p)


def human(size: int) -> str:
    from ..journal.sizes import size_words

    return size_words(size)


@dataclass
class Named:
    """What the folder's journals name: each snapshot, the ones never thinned, their sessions."""

    snaps: list[Snap] = field(default_factory=list)
    protected: set[str] = field(default_factory=set)
    live: set[str] = field(default_factory=set)

    @property
    def all(self) -> set[str]:
        return {s.tree for s in self.snaps} | self.protected


def cmd_snapshots(args: argparse.Namespace) -> Exit:
    folder = named_folder_of(args)
    store = Store(store_of(folder))
    try:
        budget = budget_of(args.budget)
    except BudgetError as exc:
        raise UsageError(str(exc)) from None
    if args.action != "prune":
        return _status(folder, store, budget, args.json)
    if not store.exists():
        out(f"nothing to prune: {store.path} does not exist")
        return Exit.OK
    chosen: list[Thinning] = []

    def named() -> tuple[set[str], set[str]]:
        seen = _named(folder)
        thin = _thin(store, seen, budget)
        chosen.append(thin)
        return thin.keep, seen.live

    try:
        before, after, kept = store.prune(named, grace="now" if args.now else GRACE)
    except SnapshotError as exc:
        raise CommandFailed(f"{exc}; nothing named by a journal was removed") from None
    thin = chosen[-1]
    said = dropped_sentence(thin, human(budget))
    if args.json:
        print_json(
            {
                "store": str(store.path),
                "before": before,
                "after": after,
                "kept": kept,
                "budget": budget,
                "thinned": [{"session": s.session, "snapshot": s.tree, "ts": s.ts} for s in thin.dropped],
            }
        )
    else:
        out(f"pruned {store.path}: {human(before)} -> {human(after)} (budget {human(budget)}); {kept} snapshots kept")
        out(said)
        if after > budget:
            recent = "" if args.now else ", and what was written in the last two hours (--now: not that)"
            out(
                f"still over the budget: it holds what forks, rewinds and each session's last snapshot need"
                f"{recent}; move the journals of sessions you no longer need out of the folder, or raise {ENV}"
            )
    return Exit.OK


def keep_within_budget(folder: Path) -> None:
    """After a run: a store over its budget is pruned as `wren snapshots prune` does (the two-hour grace kept).

    One line on stderr says what it did; nothing here fails the run (a journal that cannot be read
    whole stops it with its sentence, changing nothing).
    """
    store = Store(store_of(folder))
    if not store.exists():
        return
    try:
        budget = budget_of(None)
    except BudgetError as exc:
        err(f"{exc}; the snapshot store was not held to a budget")
        return
    size = store.size()
    if size <= budget:
        return
    chosen: list[Thinning] = []

    def named() -> tuple[set[str], set[str]]:
        seen = _named(folder)
        chosen.append(_thin(store, seen, budget))
        return chosen[-1].keep, seen.live

    try:
        before, after, _kept = store.prune(named, grace=GRACE)
    except (SnapshotError, CommandFailed) as exc:
        err(f"snapshots: {store.path} ({human(size)}) is over its {human(budget)} budget and was not pruned: {exc}")
        return
    said = dropped_sentence(chosen[-1], human(budget)) if chosen else "nothing thinned"
    err(
        f"snapshots: {store.path} was over its {human(budget)} budget: pruned {human(before)} -> {human(after)}; {said}"
    )


def _thin(store: Store, seen: Named, budget: int) -> Thinning:
    """The trees to keep within `budget` (snapshots.budget's policy), with what a live run recorded never dropped."""
    present = store.present(seen.all | set(store._pending().values()))
    pending = {tree for sid, tree in store._pending().items() if sid in seen.live}
    protected = (seen.protected | pending) & present
    snaps = [s for s in seen.snaps if s.tree in present]
    return choose(snaps, protected, budget, lambda keep: store.disk_usage(keep & present))


def _status(folder: Path, store: Store, budget: int, as_json: bool) -> Exit:
    if not store.exists():
        if as_json:
            print_json({"store": str(store.path), "exists": False, "bytes": 0, "budget": budget})
        else:
            out(f"no snapshots yet in {folder} (a run makes {store.path} when it takes its first)")
        return Exit.OK
    size = store.size()
    try:
        seen = _named(folder)
        thin = _thin(store, seen, budget)
        frees: int | None = max(0, size - store.disk_usage(thin.keep))
    except (SnapshotError, CommandFailed) as exc:
        err(f"{exc}; what a prune would free is not known")
        seen, thin, frees = Named(), Thinning(set()), None
    oldest = min((s.ts for s in seen.snaps if s.ts), default=None)
    sessions = len({s.session for s in seen.snaps})
    named = {s.tree for s in seen.snaps}
    try:
        thinned = len(named - store.present(named))
    except SnapshotError:
        thinned = 0
    if as_json:
        print_json(
            {
                "store": str(store.path),
                "exists": True,
                "bytes": size,
                "budget": budget,
                "sessions": sessions,
                "snapshots": len(named),
                "thinned": thinned,
                "oldest": oldest,
                "pruneWouldFree": frees,
                "pruneWouldThin": len(thin.dropped),
            }
        )
        return Exit.OK
    out(f"snapshots: {human(size)} of a {human(budget)} budget in {store.path}")
    gone = f" ({thinned} of them thinned)" if thinned else ""
    out(f"  {_n(sessions, 'session')}, {_n(len(named), 'snapshot')}{gone}, the oldest taken {oldest or '-'}")
    if frees is not None:
        out(
            f"  `wren snapshots prune` would free about {human(frees)}"
            + (f" and thin {len(thin.dropped)} snapshots" if thin.dropped else "")
        )
    return Exit.OK


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _named(folder: Path) -> Named:
    """Every snapshot the folder's journals name, those never thinned, and their sessions' ids.

    Never thinned: what a fork or rewind event names, and each session's last snapshot.

    Raises:
        CommandFailed: a journal cannot be read whole (a damaged line, a link, no permission): it may
            name snapshots past what can be read, so nothing is pruned.
    """
    seen = Named()
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
        sid = session_id_of(path)
        seen.live.add(sid)
        last: str | None = None
        for event in result.events:
            if isinstance(event, Snapshot) and event.id:
                seen.snaps.append(Snap(event.id, sid, event.ts, event.before is None))
                last = event.id
            elif isinstance(event, Fork) and event.snapshot:
                seen.protected.add(event.snapshot)
            elif isinstance(event, Rewind):
                seen.protected.update((event.snapshot, event.before))  # the rewind's files, and what --undo puts back
        if last:
            seen.protected.add(last)  # what a rewind compares with, what the next snapshot builds on
    return seen
