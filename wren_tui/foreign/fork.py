"""Fork into Wren: a new Wren journal that starts where another agent's session was at a clean point.

The journal holds a `run_start` in the session's workspace (so `wren resume` works there) when the
session names one folder by an absolute path other than `/`; else none, and the fork says so (resume
then works where it is typed and says that first: a relative path would name a different folder
from each place it is typed in, and `/` would make the whole disk the workspace). Then come the
messages of the conversation up to the point (`conversation.context`), and a `fork` event naming
the session's file and the point's line. Secrets in the conversation are redacted (`redacted`), as
Wren's own agent redacts what it journals: the fork carries none to a fleet or to the next model.
It is written through the journal kernel to a temporary name, fsynced, then renamed, like any fork:
a crash leaves either no journal or a whole one. The session's file is only read.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..journal.errors import JournalError
from ..journal.events import Fork, Message, RunStart
from ..journal.forking import Forked, NotAForkPoint, fresh_journal, put_in_place
from ..journal.writer import FileOps, JournalWriter
from .contract import Format
from .conversation import context as context_at
from .conversation import fork_points, outline
from .exported import open_lines
from .listing import owner_of
from .redacted import redacted

# What a person reads after "the fork records no workspace".
NO_WORKSPACE = (
    "`wren resume` will work in the folder it is typed in (it says so first), or in the one --workspace DIR names"
)


def refuse_beside_other_agents(source: Path, folder: Path) -> None:
    """A fork never goes beside another agent's files: not in the session's own folder, nor in any agent's folder.

    `folder` is where the fork would be written (--dir, WREN_DIR or the default journals folder);
    links are resolved, so a link to one of those folders is refused too.

    Raises:
        JournalError: one sentence naming the folder and whose it is.
    """
    whose = None
    if Path(os.path.realpath(folder)) == Path(os.path.realpath(source.parent)):
        whose = f"the folder of {source.name}"
    elif (owner := owner_of(folder)) is not None:
        whose = f"in {owner[0].label}'s sessions folder ({owner[1]})"
    if whose is not None:
        raise JournalError(
            f"{folder}: is {whose}; a fork into Wren goes to a Wren journals folder, never beside another agent's "
            "files: name one with --dir (or WREN_DIR), or leave both out"
        )


@dataclass(frozen=True)
class ForeignForked(Forked):
    """A fork of another agent's session, and why it records no workspace when it does not."""

    workspace_note: str | None = None


def carried_workspace(cwd: str | None) -> tuple[str, str | None]:
    """The workspace a fork records for a session that says it worked in `cwd`, and why none when none.

    Only an absolute path other than `/` is carried (written with `.` and `..` taken out, as a shell's
    `cd` reads them); `""` means none, which `wren resume` reads as "the folder it is typed in".
    """
    if not cwd:
        return "", None
    if not os.path.isabs(cwd):
        return "", f"the session's folder {cwd!r} is not an absolute path"
    normal = os.path.normpath(cwd)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    if normal == "/":
        return "", "the session's folder is / (the whole disk)"
    return normal, None


def fork_into_wren(path: Path, fmt: Format, lineno: int, folder: Path, *, ops: FileOps | None = None) -> ForeignForked:
    """A new Wren journal in `folder` from the session at `path`, through line `lineno` (a clean point).

    NotAForkPoint (which lists the valid points) when the line is not one. The answer's
    `workspace_note` says why the fork records no workspace when the session named one it cannot carry.
    """
    ops = ops or FileOps()
    source = Path(os.path.abspath(path))
    refuse_beside_other_agents(source, folder)
    fd = open_lines(source, fmt)
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
        cwd, note = carried_workspace(context.cwd)
        writer.append(redacted(RunStart(pid=os.getpid(), cwd=cwd, model=model, version=__version__)))
        for message in context.messages:
            writer.append(Message(message=redacted(message)))
        writer.append(redacted(Fork(from_=str(source), at_seq=lineno)))
        writer.sync()
    except BaseException:
        writer.close()
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    writer.close()
    put_in_place(tmp, final, ops)
    return ForeignForked(new_id, final, str(source), lineno, note)
