"""Fork into Wren: a new Wren journal that starts where another agent's session was at a clean point.

The journal holds a `run_start` in the session's workspace (so `wren resume` works there), the
messages of the conversation up to the point (`conversation.context`), and a `fork` event naming
the session's file and the point's line. It is written through the journal kernel to a temporary
name, fsynced, then renamed, like any fork: a crash leaves either no journal or a whole one. The
session's file is only read.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .. import __version__
from ..journal.errors import JournalError
from ..journal.events import Fork, Message, RunStart
from ..journal.forking import Forked, NotAForkPoint, fresh_journal, put_in_place
from ..journal.reader import open_for_reading
from ..journal.writer import FileOps, JournalWriter
from . import AGENTS
from .base import Format
from .conversation import context as context_at
from .conversation import fork_points, outline
from .listing import roots


def refuse_beside_other_agents(source: Path, folder: Path) -> None:
    """A fork never goes beside another agent's files: not in the session's own folder, nor in any agent's folder.

    `folder` is where the fork would be written (--dir, WREN_DIR or the default journals folder);
    links are resolved, so a link to one of those folders is refused too.

    Raises:
        JournalError: one sentence naming the folder and whose it is.
    """
    where = Path(os.path.realpath(folder))
    whose = None
    if where == Path(os.path.realpath(source.parent)):
        whose = f"the folder of {source.name}"
    for fmt, root in roots(AGENTS):
        agent_root = Path(os.path.realpath(root))
        if whose is None and (where == agent_root or agent_root in where.parents):
            whose = f"in {fmt.label}'s sessions folder ({root})"
    if whose is not None:
        raise JournalError(
            f"{folder}: is {whose}; a fork into Wren goes to a Wren journals folder, never beside another agent's "
            "files: name one with --dir (or WREN_DIR), or leave both out"
        )


def fork_into_wren(path: Path, fmt: Format, lineno: int, folder: Path, *, ops: FileOps | None = None) -> Forked:
    """A new Wren journal in `folder` from the session at `path`, through line `lineno` (a clean point).

    NotAForkPoint (which lists the valid points) when the line is not one.
    """
    ops = ops or FileOps()
    source = Path(os.path.abspath(path))
    refuse_beside_other_agents(source, folder)
    fd = open_for_reading(source)
    try:
        out = outline(fd, fmt)
        points = fork_points(out).points
        if lineno not in {p.seq for p in points}:
            raise NotAForkPoint(source, lineno, points)
        context = context_at(fd, fmt, out, lineno)
    finally:
        os.close(fd)
    new_id, final, tmp = fresh_journal(folder)
    writer = JournalWriter.create(tmp, fsync="none", ops=ops)
    try:
        model = f"{fmt.name}:{context.model}" if context.model else fmt.name
        writer.append(RunStart(pid=os.getpid(), cwd=context.cwd or "", model=model, version=__version__))
        for message in context.messages:
            writer.append(Message(message=message))
        writer.append(Fork(from_=str(source), atSeq=lineno))
        writer.sync()
    except BaseException:
        writer.close()
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    writer.close()
    put_in_place(tmp, final, ops)
    return Forked(new_id, final, str(source), lineno)
