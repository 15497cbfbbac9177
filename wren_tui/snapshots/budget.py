"""The snapshot store's size budget: which snapshots a prune keeps, and which it thins.

The policy, in this order (`choose`):

1. Never dropped: every snapshot a `fork` or `rewind` event of any session names, each session's last
   snapshot (what a rewind compares with, what blame reads last), and what a live run has recorded
   (`pending/`, added by `Store.prune` itself).
2. Every snapshot of the last `keep_days` days is kept; older, only the end-of-turn ones (one a turn).
3. If what is left is still over the budget, the rest is thinned, oldest first: the snapshots taken
   before calls, then the end-of-turn ones, as few as the budget needs (a binary search over how many,
   each step measured by git's own count of the objects the kept trees reach).

A thinned snapshot's event stays in its journal; its point says "files thinned" (`wren fork ID`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

# Chosen from measurement (docs/snapshots.md, "Space"): a 2,000-file workspace's store grows by well under
# 1 MB a turn, the demo's by a few KB, so 2 GiB holds months of heavy use, and is small beside any disk
# that holds a checkout and its tools.
DEFAULT_BUDGET = 2 * 1024**3
KEEP_DAYS = 7
ENV = "WREN_SNAPSHOT_BUDGET"
# What a budget leaves for packs' indexes and git's own rounding: the estimate counts objects only.
HEADROOM = 0.9

_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?i?b?)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


class BudgetError(ValueError):
    pass


def parse_size(text: str, where: str) -> int:
    """`2GB`, `500M`, `1.5g`, `1048576` → bytes (binary units).

    Raises:
        BudgetError: not a size (one sentence naming `where`).
    """
    match = _SIZE.fullmatch(text)
    if not match:
        raise BudgetError(f"{where}: {text!r} is not a size; give bytes or a number with KB, MB, GB or TB (e.g. 2GB)")
    unit = (match.group(2) or "").lower().rstrip("b").rstrip("i")
    size = int(float(match.group(1)) * _UNITS[unit])
    if size <= 0:
        raise BudgetError(f"{where}: {text!r} is no space at all; give a size above 0 (e.g. 2GB)")
    return size


def budget_of(given: str | None) -> int:
    """The budget: `given` (an option), else WREN_SNAPSHOT_BUDGET, else the default."""
    if given:
        return parse_size(given, "--budget")
    env = os.environ.get(ENV, "").strip()
    return parse_size(env, ENV) if env else DEFAULT_BUDGET


@dataclass(frozen=True)
class Snap:
    """One snapshot a journal names."""

    tree: str
    session: str
    ts: str
    end_of_turn: bool


@dataclass
class Thinning:
    keep: set[str]
    dropped: list[Snap] = field(default_factory=list)
    # Bytes the kept objects take past the budget, when even the snapshots never dropped do not fit.
    over: int = 0


def _when(ts: str) -> datetime:
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return datetime.now(UTC)  # an unreadable time is taken as new: kept, never thinned by age
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def choose(
    snaps: Iterable[Snap],
    protected: set[str],
    budget: int,
    usage: Callable[[set[str]], int],
    *,
    now: datetime | None = None,
    keep_days: float = KEEP_DAYS,
) -> Thinning:
    """The trees to keep so that `usage(keep)` fits `budget` (see the module's policy)."""
    cutoff = (now or datetime.now(UTC)) - timedelta(days=keep_days)
    keep = set(protected)
    dropped: list[Snap] = []
    rest: list[Snap] = []
    for snap in snaps:
        if snap.tree in protected:
            continue
        if not snap.end_of_turn and _when(snap.ts) < cutoff:
            dropped.append(snap)
        else:
            rest.append(snap)
            keep.add(snap.tree)
    target = int(budget * HEADROOM)
    if usage(keep) <= target:
        return Thinning(keep, _unique(dropped, keep))
    # Oldest first: the snapshots before calls, then the end-of-turn ones.
    order = sorted(rest, key=lambda s: (s.end_of_turn, _when(s.ts)))

    def kept_after(k: int) -> set[str]:
        return set(protected) | {s.tree for s in order[k:]}

    low, high = 0, len(order)  # usage(kept_after(high)) is the least we can reach
    if usage(kept_after(high)) > target:
        low = high
    else:
        while low < high:
            mid = (low + high) // 2
            if usage(kept_after(mid)) <= target:
                high = mid
            else:
                low = mid + 1
    final = kept_after(low)
    over = max(0, usage(final) - target)
    return Thinning(final, _unique(dropped + order[:low], final), over)


def _unique(snaps: list[Snap], keep: set[str]) -> list[Snap]:
    """Each dropped tree once (one tree can be named by several snapshots), none that is kept after all."""
    seen: set[str] = set()
    found: list[Snap] = []
    for snap in snaps:
        if snap.tree not in keep and snap.tree not in seen:
            seen.add(snap.tree)
            found.append(snap)
    return found


def dropped_sentence(thin: Thinning, budget_text: str) -> str:
    """One sentence: what was thinned, and where its points show it."""
    if not thin.dropped:
        return "nothing thinned"
    sessions = len({s.session for s in thin.dropped})
    before = sum(1 for s in thin.dropped if not s.end_of_turn)
    turns = len(thin.dropped) - before
    parts = []
    if before:
        parts.append(f"{before} taken before calls")
    if turns:
        parts.append(f"{turns} end-of-turn")
    return (
        f"thinned {len(thin.dropped)} snapshots ({', '.join(parts)}) of {sessions} "
        f"session{'s' if sessions != 1 else ''} to keep within {budget_text}; their points say "
        '"files thinned" in `wren fork ID`, every fork and rewind point kept its files'
    )
