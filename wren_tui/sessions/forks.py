"""`wren fork` for any session a person names: its clean points, or a new Wren journal forked at one of them.

The session is found and opened by `opening.open_session`; it lists its points and forks itself (`clean_points`,
`fork_at`): a Wren journal beside itself, with its files as they were from its snapshots when a workspace is named;
another agent's session into Wren's journals folder, never beside its file, which is only read.
"""

from __future__ import annotations

from contextlib import closing

from ..snapshots.forking import WorkspaceRefused
from . import Made, Points
from .opening import Say, open_session, quiet


def fork(
    ref: str, seq: int | None, folder: str | None = None, workspace: str | None = None, say: Say = quiet
) -> Points | Made:
    """`wren fork REF [SEQ] [--workspace DIR]` for the session `ref` names (`folder`: --dir as given): without `seq`
    its clean points, from every branch of another agent's; with it a new Wren journal forked at that clean point.

    NotAForkPoint (the points there are), WorkspaceRefused (a workspace without a point, the folder named, or
    another agent's session, which carries no snapshots), FilesNotForked, or JournalError (the fork cannot be
    written there) say why not; a damaged file's points are those before the damage (`Points.stop`).
    """
    source = open_session(ref, folder, fleet=False, say=say)
    with closing(source):
        if workspace and source.no_workspace is not None:
            raise WorkspaceRefused(source.no_workspace)
        if seq is None:
            if workspace:
                raise WorkspaceRefused("--workspace needs SEQ: the point whose files to write")
            return source.clean_points()
        return source.fork_at(seq, workspace)
