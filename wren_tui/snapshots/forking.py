"""A fork with its files: the folder checked, the files at the point written into it from the snapshot store, then
the fork (`journal.forking.fork`), which records the folder and the snapshot; and what changed since each point.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..journal.errors import JournalError
from ..journal.events import Event
from ..journal.forking import Forked, ForkPoint, fork, fork_points
from ..journal.reader import read_events
from ..journal.store import SUFFIX, new_session_id, session_id_of
from .store import PointChange, SnapshotError, Store, files_at, last_snapshot, point_changes, store_of


class FilesNotForked(JournalError):
    """A fork with files not made: the point's files cannot be restored, or the snapshot store failed.

    Nothing was forked. The sentence names `wren fork`'s options, as the command and the viewer say it.
    """


class WorkspaceRefused(JournalError):
    """The folder named for a fork's files is a link, inside the journals or the store, or not new or empty."""


@dataclass(frozen=True)
class ForkedWithFiles:
    """A fork, and where its files went: `workspace` None for a fork of the conversation alone."""

    forked: Forked
    workspace: Path | None
    snapshot: str | None  # the snapshot written into `workspace`
    files_restored: int | None  # None without a workspace


def workspace_target(given: str | os.PathLike[str], journals: Iterable[Path]) -> Path:
    """The folder a fork's files go into, absolute; a new folder or an empty one, checked before anything is written.

    Refused (`WorkspaceRefused`): a symbolic link (dangling or not: the fork would write wherever it
    points), and anywhere in a journals folder or the snapshot store (the files would become
    journals, refs or objects).
    """
    named = Path(os.path.abspath(Path(os.path.expanduser(given))))
    if os.path.islink(named):
        raise WorkspaceRefused(
            f"--workspace {named}: a symbolic link, and a fork writes its files into a real folder; name a new "
            "folder (or the folder the link points to)"
        )
    target = named.resolve()
    for folder in journals:
        for inside in (folder, store_of(folder)):
            held = inside.resolve()
            if target == held or held in target.parents:
                raise WorkspaceRefused(
                    f"--workspace {named}: inside {inside}, where Wren keeps journals and snapshots; a fork's "
                    "files go into a folder of their own outside it"
                )
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise WorkspaceRefused(
            f"--workspace {target}: not a new or empty folder; a fork writes its files into a fresh one"
        )
    return target


def fork_with_files(
    parent: Path, seq: int, workspace: str | os.PathLike[str] | None, *, journals: Iterable[Path] = ()
) -> ForkedWithFiles:
    """`fork`, with the workspace's files as they were at `seq` written into the folder `workspace` first (when given).

    The order: the folder checked before anything is written (`workspace_target`: new or empty, no
    link, outside the parent's folder, `journals` and their snapshot stores); a new id free beside
    the parent; the journal read for the snapshot of the files at the point; the snapshot written
    into the folder; then the fork, which records the folder and the snapshot. A point that is no
    clean point is `fork`'s to refuse (listing the points), so its files are looked for only at a
    clean one.

    Raises:
        WorkspaceRefused: the folder is refused; nothing was read or written.
        FilesNotForked: the files at `seq` cannot be restored (no snapshot holds them, or they were
            thinned from the store), or the store failed; nothing was forked.
        NotAForkPoint, JournalError, OSError: as `fork`.
    """
    target = workspace_target(workspace, (parent.parent, *journals)) if workspace is not None else None
    new_id = new_session_id()
    while (parent.parent / f"{new_id}{SUFFIX}").exists():
        new_id = new_session_id()
    # Only a fork with its files reads the journal twice: the snapshot at the point, then the copy.
    snapshot, restored = None, 0
    if target is not None:
        snapshot, restored = _files_into(parent, seq, target, new_id)
    forked = fork(
        parent,
        seq,
        folder=parent.parent,
        new_id=new_id,
        workspace=str(target) if target is not None else None,
        snapshot=snapshot,
    )
    return ForkedWithFiles(forked, target, snapshot, restored if target is not None else None)


def changes_since_points(parent: Path, events: list[Event], points: list[ForkPoint]) -> dict[int, PointChange]:
    """What changed in the files since each point, by its seq; empty when the session has no snapshot to compare.

    Raises:
        SnapshotError: the snapshot store could not be read.
    """
    store = Store(store_of(parent.parent))
    if not points or last_snapshot(events) is None or not store.exists():
        return {}
    return {c.seq: c for c in point_changes(events, [p.seq for p in points], store)}


def changes_or_why(parent: Path, events: list[Event], points: list[ForkPoint]) -> tuple[dict[int, PointChange], str]:
    """`changes_since_points`, or none and why (one sentence) when the snapshot store cannot be read: a listing of
    the points goes on without them."""
    try:
        return changes_since_points(parent, events, points), ""
    except SnapshotError as exc:
        return {}, str(exc)


def _files_into(parent: Path, seq: int, target: Path, new_id: str) -> tuple[str | None, int]:
    """The snapshot of the files at `seq` written into `target`: its id and how many files (None, 0: not a point)."""
    events = read_events(parent).events
    if seq not in {p.seq for p in fork_points(events)}:
        return None, 0  # fork refuses it, listing the points
    files = files_at(events, seq)
    if files.id is None:
        raise FilesNotForked(
            f"{parent}: the files at seq {seq} cannot be restored: {files.why}. Fork without "
            "--workspace to restore the conversation only"
        )
    store = Store(store_of(parent.parent))
    try:
        if not store.present([files.id]):
            raise FilesNotForked(
                f"{parent}: the files at seq {seq} were thinned from the snapshot store to keep it within "
                f"its budget, so they cannot be restored; nothing was forked (fork without --workspace for "
                f"the conversation only; `wren fork {session_id_of(parent)}` says which points kept their files)"
            )
        return files.id, store.materialise(files.id, target, new_id)
    except SnapshotError as exc:
        raise FilesNotForked(f"{exc}; nothing was forked") from None


__all__ = [
    "FilesNotForked",
    "ForkedWithFiles",
    "WorkspaceRefused",
    "changes_or_why",
    "changes_since_points",
    "fork_with_files",
    "workspace_target",
]
