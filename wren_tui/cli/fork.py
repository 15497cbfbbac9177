"""`wren fork`: the clean points of a session, or a new session forked at one of them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..agent.errors import UsageError
from ..journal.commandline import wren_command
from ..journal.errors import JournalError, SessionNotFound
from ..journal.events import Event
from ..journal.forking import ForkPoint, NotAForkPoint, fork_listing, fork_points
from ..journal.reader import read_events
from ..journal.store import SESSION_ID, SUFFIX, session_id_of, starts_as_journal, write_problem
from ..journal.store import resolve as resolve_journal
from ..journal.visible import visible
from ..snapshots.forking import FilesNotForked, WorkspaceRefused, changes_since_points, fork_with_files
from ..snapshots.store import THINNED, PointChange, SnapshotError
from .console import err, out, print_json
from .exits import CommandFailed, Exit, Unreadable
from .options import folder_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "fork",
        parents=[common],
        help="list clean fork points, or fork a new session at SEQ",
        description="Without SEQ, list the clean points of a session. With SEQ, copy the "
        "journal up to that event into a new session (the parent stays byte-identical).",
    )
    p.add_argument("session", metavar="ID|PATH", help="a session id (s-YYYYMMDD-HHMMSS-xxxx) or a journal file")
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
    p.add_argument("--json", action="store_true", help="JSON for scripts")
    p.set_defaults(handler=cmd_fork)


def cmd_fork(args: argparse.Namespace) -> Exit:
    path = _wren_journal(folder_of(args), args.session)
    if path is None:
        # Not plainly a Wren journal: other agents' formats are loaded (they take a while) to tell what it is.
        from . import foreign

        path = foreign.resolve(folder_of(args), args.session)
        fmt = foreign.foreign_format(path)
    else:
        fmt = None
    if fmt is not None:
        if args.workspace:
            raise UsageError(
                f"{path}: another agent's session carries no snapshots of its files, so a fork of it restores the "
                "conversation only; fork it without --workspace"
            )
        # Into Wren's journals folder, never beside the other agent's file.
        return foreign.fork_foreign(path, fmt, args.seq, folder_of(args), args.json)
    if args.seq is None:
        if args.workspace:
            raise UsageError("--workspace needs SEQ: the point whose files to write")
        return _list(path, args.json)
    try:
        made = fork_with_files(path, args.seq, args.workspace or None, journals=(folder_of(args),))
    except WorkspaceRefused as exc:
        raise UsageError(str(exc)) from None
    except NotAForkPoint as exc:
        if exc.past_stop and exc.stop is not None:
            # No point lies past where the journal stops: say where and why, then the points before it.
            raise Unreadable(path, exc.stop, _before(exc, path)) from None
        raise
    except FilesNotForked as exc:
        raise CommandFailed(str(exc)) from None
    except OSError as exc:
        raise JournalError(
            f"{write_problem(path.parent, exc)}, so the fork (written beside {path.name}) was not made; copy "
            "the journal to a folder you can write and fork it there"
        ) from None
    forked, target, restored = made.forked, made.workspace, made.files_restored
    if args.json:
        print_json(
            {
                "id": forked.id,
                "path": str(forked.path),
                "from": forked.parent,
                "atSeq": forked.at_seq,
                "workspace": str(target) if target is not None else None,
                "snapshot": made.snapshot,
                "filesRestored": restored,
            }
        )
    else:
        out(f"forked {forked.parent} at seq {forked.at_seq} -> {forked.id}")
        if target is not None:
            out(f"files as they were at seq {forked.at_seq} written to {target} ({restored} files): it works there")
        else:
            again = wren_command("fork", forked.parent, str(forked.at_seq), folder=path.parent, tail="--workspace DIR")
            out(
                "the files were not restored: the workspace is as the latest run left it "
                f"(`{again}` writes them as they were at that point, from the session's snapshots)"
            )
        out(f"continue it with: {wren_command('resume', forked.id, folder=forked.path.parent)}")
    return Exit.OK


def _wren_journal(folder: Path, ref: str) -> Path | None:
    """The journal `ref` names when it begins as a Wren journal (`store.starts_as_journal`), else None.

    That is what `foreign.foreign_format` finds first too, without loading other agents' formats: `wren
    fork` starts that much sooner. Anything else (no such journal, another agent's file, an empty
    one) is None, and the caller asks `foreign`.
    """
    try:
        path = resolve_journal(folder, ref)
    except SessionNotFound:
        return None
    # Named as Wren names its journals, too: a file of the design's lines (mca) starts so, and is not Wren's.
    return path if path.suffix == SUFFIX and SESSION_ID.match(path.stem) and starts_as_journal(path) else None


def _list(path: Path, as_json: bool) -> Exit:
    """The clean points; a corrupt journal's are those before the damage, and the command says so (exit 4).

    Each with how many files differ from it to the session's last snapshot, and the calls after it
    that changed files (edit tools or shell commands), when the session has snapshots.
    """
    sid = session_id_of(path)
    result = read_events(path)
    points = fork_points(result.events)
    changes = _changes(path, result.events, points)
    if as_json:
        print_json([_point_json(p, changes.get(p.seq)) for p in points])
    elif not points:
        out(f"{sid} has no clean fork point yet")
    else:
        again = wren_command("fork", sid, folder=path.parent, tail="SEQ")
        out(f"Clean fork points of {sid} (fork with `{again}`, and its files with --workspace DIR):")
        _show(points, changes)
    if result.stop is not None and not result.stop.torn:
        # Lines after the damage are lost to reading: they may have held points.
        raise Unreadable(path, result.stop)
    if result.stop is not None and not as_json:
        from .log import stop_line

        out(stop_line(result))  # a torn tail: never a committed line, so no point is missing
    return Exit.OK


def _changes(path: Path, events: list[Event], points: list[ForkPoint]) -> dict[int, PointChange]:
    try:
        return changes_since_points(path, events, points)
    except SnapshotError as exc:
        err(f"{exc}; the fork points are listed without what changed since each")
        return {}


def _point_json(point: ForkPoint, change: PointChange | None) -> dict[str, Any]:
    row: dict[str, Any] = {"seq": point.seq, "role": point.role, "preview": point.preview}
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


def _show(points: list[ForkPoint], changes: dict[int, PointChange] | None = None) -> None:
    for point, line in zip(points, fork_listing(points), strict=True):
        out(f"  {visible(line)}{_since((changes or {}).get(point.seq))}")


def _before(exc: NotAForkPoint, path: Path) -> str:
    """The lines after the sentence of a fork asked past the stop: the seq, and the clean points before the stop."""
    if not exc.points:
        return f"seq {exc.seq} is past that line, and there is no clean point before it."
    again = wren_command("fork", session_id_of(path), folder=path.parent, tail="SEQ")
    listing = "\n".join(f"  {line}" for line in fork_listing(exc.points))
    return f"seq {exc.seq} is past that line. The clean points before it (fork with `{again}`):\n{listing}"
