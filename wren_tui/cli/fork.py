"""`wren fork`: the clean points of a session, or a new session forked at one of them (`sessions.forks` finds the
session, whatever wrote it, and lists or forks it; here is what is printed)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..agent.errors import UsageError
from ..journal.commandline import wren_command
from ..journal.forking import ForkPoint, NotAForkPoint, fork_listing
from ..journal.store import session_id_of
from ..journal.visible import visible
from ..snapshots.forking import FilesNotForked, WorkspaceRefused
from ..snapshots.store import THINNED, PointChange
from .console import err, out, print_json
from .exits import CommandFailed, Exit, ForeignUnreadable, Unreadable

if TYPE_CHECKING:
    from ..journal.verdict import Stop
    from ..sessions import Made, Points


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, json_option, session_argument

    p = command_parser(
        sub,
        "fork",
        cmd_fork,
        "Without SEQ, list the clean points of a session. With SEQ, copy the "
        "journal up to that event into a new session (the parent stays byte-identical).",
        common,
    )
    session_argument(p)
    p.add_argument(
        "seq",
        metavar="SEQ",
        type=int,
        nargs="?",
        help="the seq of a clean point: the new session ends with that event, then the fork event",
    )
    p.add_argument(
        "--workspace",
        metavar="DIR",
        help="also write the files as they were at SEQ into DIR (new or empty), from the session's snapshots; "
        "the fork then works in DIR when resumed",
    )
    json_option(p)


def cmd_fork(args: argparse.Namespace) -> Exit:
    from ..sessions import Points
    from ..sessions.forks import fork

    try:
        answer = fork(args.session, args.seq, args.dir, args.workspace, say=err)
    except WorkspaceRefused as exc:
        raise UsageError(str(exc)) from None
    except NotAForkPoint as exc:
        if exc.past_stop and exc.stop is not None:
            # No point lies past where the journal stops: say where and why, then the points before it.
            raise Unreadable(exc.path, exc.stop, _before(exc)) from None
        raise
    except FilesNotForked as exc:
        raise CommandFailed(str(exc)) from None
    if isinstance(answer, Points):
        return _list(answer, args.json)
    return _made(answer, args.json)


def _made(made: Made, as_json: bool) -> Exit:
    """What a fork made: the new session, where its files went (or why it has none), how to continue it."""
    forked = made.forked
    if as_json:
        row: dict[str, Any] = {"id": forked.id, "path": str(forked.path), "from": forked.parent, "atSeq": forked.at_seq}
        if made.label is not None:
            row["workspaceNote"] = made.workspace_note
        else:
            row["workspace"] = str(made.workspace) if made.workspace is not None else None
            row["snapshot"], row["filesRestored"] = made.snapshot, made.files_restored
        print_json(row)
        return Exit.OK
    if made.label is not None:
        out(f"forked {made.label} session {made.origin} at line {forked.at_seq} -> {forked.id}")
        if made.workspace_note is not None:
            from ..foreign.fork import NO_WORKSPACE

            out(f"{visible(made.workspace_note)}, so the fork records no workspace; {NO_WORKSPACE}")
    else:
        out(f"forked {forked.parent} at seq {forked.at_seq} -> {forked.id}")
        if made.workspace is not None:
            out(
                f"files as they were at seq {forked.at_seq} written to {made.workspace} ({made.files_restored} files): "
                "it works there"
            )
        else:
            out(
                "the files were not restored: the workspace is as the latest run left it "
                f"(`{made.again}` writes them as they were at that point, from the session's snapshots)"
            )
    out(f"continue it with: {made.resume}")
    return Exit.OK


def _list(listed: Points, as_json: bool) -> Exit:
    """The clean points; a corrupt session's are those before the damage, and the command says so (exit 4).

    A Wren journal's each with how many files differ from it to the session's last snapshot, and the calls after
    it that changed files (edit tools or shell commands), when the session has snapshots.
    """
    points, stop, foreign = listed.points, listed.stop, listed.label is not None
    if listed.unchanged is not None:
        err(f"{listed.unchanged}; the fork points are listed without what changed since each")
    if as_json:
        rows = [_point_json(p, listed.changes.get(p.seq), foreign) for p in points]
        print_json(rows)
    elif not points:
        out(f"{listed.id} has no clean fork point yet")
    else:
        if foreign:
            out(f"Clean fork points of this {listed.label} session, by line (fork into Wren with `{listed.again}`):")
        else:
            out(f"Clean fork points of {listed.id} (fork with `{listed.again}`, and its files with --workspace DIR):")
        for point, line in zip(points, listed.listing, strict=True):
            out(f"  {visible(line)}{'' if foreign else _since(listed.changes.get(point.seq))}")
    if stop is not None and not as_json and stop.torn:
        # A torn tail: never a committed line, so no point is missing.
        out(
            f"stopped at {stop} (a line its writer has not finished; nothing after it is read)"
            if foreign
            else _torn(stop)
        )
    if stop is not None and not stop.torn:
        # Lines after the damage are lost to reading: they may have held points.
        raise ForeignUnreadable(listed.path, stop) if foreign else Unreadable(listed.path, stop)
    return Exit.OK


def _torn(stop: Stop) -> str:
    from .log import stop_line

    return stop_line(stop)


def _point_json(point: ForkPoint, change: PointChange | None, foreign: bool = False) -> dict[str, Any]:
    row: dict[str, Any] = {"seq": point.seq, "role": point.role, "preview": point.preview}
    if foreign:
        return row  # a line of another agent's file: no compaction of Wren's, no snapshots
    if point.compaction:
        row["afterCompaction"] = point.compaction  # a fork from here rebuilds the summary
    row["filesChanged"] = change.files_changed if change else None
    row["filesThinned"] = bool(change and change.why == THINNED)
    row["changedBy"] = (
        [{"seq": c.seq, "id": c.id, "tool": c.tool, "kind": c.kind, "files": c.files} for c in change.calls]
        if change
        else []
    )
    return row


def _since(change: PointChange | None) -> str:
    if change is not None and change.why == THINNED:
        return f"  · {THINNED}"
    if change is None or change.files_changed is None:
        return ""
    if not change.files_changed:
        return "  · files as now"
    kinds = [c.kind for c in change.calls]
    by = ", ".join(f"{kinds.count(k)} {_KIND_WORDS[k]}" for k in ("edit", "shell", "other") if k in kinds)
    files = "file" if change.files_changed == 1 else "files"
    return f"  · {change.files_changed} {files} changed since" + (f" (by {by})" if by else "")


_KIND_WORDS = {"edit": "edit", "shell": "shell command", "other": "other call"}


def _before(exc: NotAForkPoint) -> str:
    """The lines after the sentence of a fork asked past the stop: the seq, and the clean points before the stop."""
    if not exc.points:
        return f"seq {exc.seq} is past that line, and there is no clean point before it."
    again = wren_command("fork", session_id_of(exc.path), folder=exc.path.parent, tail="SEQ")
    listing = "\n".join(f"  {line}" for line in fork_listing(exc.points))
    return f"seq {exc.seq} is past that line. The clean points before it (fork with `{again}`):\n{listing}"
