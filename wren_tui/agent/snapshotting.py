"""The agent's side of workspace snapshots: when one is taken and how it is journaled.

Before every call with side effects that is going to run, and at the end of each turn, the
workspace is snapshotted into the journals folder's store (`snapshots/store.py`) and a
`snapshot` event naming it is appended: after its objects are durable, before the call's
`tool_start`. A snapshot that cannot be taken stops the call before it runs (`SnapshotStopped`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..journal.events import Snapshot
from ..snapshots.store import SnapshotError, Store, git_problem, store_of

NO_SNAPSHOTS = "snapshots are off for this run (--no-snapshots): a fork of it restores the conversation only"


class Snapshotter:
    """Takes a session's snapshots; `off` (a sentence) when they are turned off or cannot be taken here."""

    def __init__(self, folder: Path, workspace: Path, session_id: str, *, enabled: bool = True) -> None:
        self.store = Store(store_of(folder))
        # The journals (and the store) are never part of a snapshot, even when they lie in the workspace.
        self.leave_out = (folder,)
        self.workspace = workspace
        self.session_id = session_id
        self.off: str | None = None if enabled else NO_SNAPSHOTS
        self._checked = False
        if self.off is None:
            problem = git_problem()
            if problem is not None:
                self.off = problem + "; a fork of this run restores the conversation only"

    def announce(self, append: Callable[[Snapshot], object]) -> None:
        """Journal that snapshots are off for this run (once, after its run_start), when they are."""
        if self.off is not None:
            append(Snapshot(off=self.off))

    def take(self, before: str | None) -> Snapshot | None:
        """A snapshot of the workspace, as the event that names it; None when snapshots are off.

        The first finds out whether git can keep them (`off` then, journaled by the event returned).

        Raises:
            SnapshotError: it could not be taken (one sentence naming the path).
        """
        if self.off is not None:
            return None
        if not self._checked:
            self.store.ensure()
            problem = self.store.git_too_old()
            self._checked = True
            if problem is not None:
                self.off = problem + "; a fork of this run restores the conversation only"
                return Snapshot(off=self.off)
        if before is None:
            # At the end of a turn also what the rules leave out and what is no file (FIFOs, sockets, devices):
            # found while the snapshot is taken (both read the workspace only; git runs as its own process).
            with ThreadPoolExecutor(1) as pool:
                listing = pool.submit(self.store.not_covered, self.workspace, self.leave_out)
                taken = self.store.take(self.workspace, self.session_id, leave_out=self.leave_out)
                extra = listing.result()
        else:
            taken, extra = self.store.take(self.workspace, self.session_id, leave_out=self.leave_out), []
        uncovered = (list(taken.not_covered) + extra)[:50]
        count = taken.not_covered_count + len(extra)
        return Snapshot(
            id=taken.id,
            files=taken.files,
            changed=taken.changed,
            before=before,
            not_covered=uncovered or None,
            not_covered_count=count,
        )


__all__ = ["NO_SNAPSHOTS", "SnapshotError", "Snapshotter"]
