"""`wren rewind`: a session's workspace and conversation back to a clean point, in place; `--undo` puts them back.

Append-only: a `rewind` event is journaled (durable) before any file changes, under the session's
journal lock (a live run holds it: the rewind is refused). See `snapshots/rewinding.py`.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any

from ..agent.errors import UsageError
from ..journal.commandline import wren_command
from ..journal.errors import JournalLocked
from ..journal.events import Compaction, Event
from ..journal.forking import fork_points
from ..journal.store import resolve, session_id_of
from ..journal.writer import JournalWriter
from ..snapshots.rewinding import (
    Plan,
    apply,
    comparisons,
    finish_plan,
    last_rewind,
    make_plan,
    remove_temps,
    rewound_paths,
    shown,
    unfinished,
    workspace_of,
)
from ..snapshots.store import SnapshotError, Store, Taken, files_at, store_of
from .console import out
from .exits import CommandFailed, Exit
from .options import folder_of

_LISTED = 20  # kept, not-covered and command lines shown before "and N more"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, session_argument

    p = command_parser(
        sub,
        "rewind",
        cmd_rewind,
        "Rewind a session in place: its workspace goes back to its files at the clean point SEQ (from "
        "the session's snapshots) and its next turn continues from SEQ's conversation. A rewind event is "
        "journaled first; nothing in the journal is removed. A file someone else changed since the session's "
        "last snapshot of it is kept and listed, unless --force. Commands that ran are not undone (they are "
        "listed), and files the snapshots do not cover are left as they are. --undo puts the files and the "
        "conversation back as they were just before the last rewind. A rewind a kill cut short is finished by the "
        "next one, or by --finish alone.",
        common,
    )
    session_argument(p)
    p.add_argument("seq", metavar="SEQ", type=int, nargs="?", help="the clean point to go back to (`wren fork ID`)")
    p.add_argument("--undo", action="store_true", help="undo the session's last rewind (files and conversation)")
    p.add_argument("--finish", action="store_true", help="only finish a rewind a kill cut short, if there is one")
    p.add_argument("--yes", action="store_true", help="do not ask after the preview")
    p.add_argument("--force", action="store_true", help="rewind files someone else changed since, too")
    p.add_argument("--seq-fd", type=int, metavar="FD", help=argparse.SUPPRESS)  # each step done, one line (tests)


def cmd_rewind(args: argparse.Namespace) -> Exit:
    if [args.seq is not None, args.undo, args.finish].count(True) != 1:
        raise UsageError("wren rewind needs one of SEQ (the point to go back to), --undo or --finish")
    path = resolve(folder_of(args), args.session)
    sid = session_id_of(path)
    events: list[Event] = []

    def collect(run: list[Event], lines: object) -> None:
        events.extend(run)

    report = _reporter(args.seq_fd)
    # The session's lock for the whole rewind: a live run holds it, so it is refused (JournalLocked).
    try:
        writer = JournalWriter.open(path, on_events=collect, watched=False)  # one event: no inotify
    except JournalLocked as exc:
        raise CommandFailed(
            f"{path}: {exc.who} is writing this session, and a rewind changes its files; wait for the run to end "
            "(or stop it), then rewind. Nothing was changed."
        ) from None
    with writer:
        store = Store(store_of(path.parent))
        workspace = _workspace(events, sid)
        leave_out = (path.parent,)
        try:
            cut = last_rewind(events)
            if cut is not None and store.exists() and remove_temps(workspace, rewound_paths(store, cut)):
                report("removed temporary files")  # a kill between writing beside a path and the rename
            taken, listed = _snapshot(store, workspace, sid, leave_out) if store.exists() else (None, [])
            if taken is not None:  # every pair of snapshots the rest compares, in one git process
                store.compare(comparisons(events, taken.id, _likely_target(events, path, args)))
            finished = taken is not None and _finish(store, events, workspace, taken.id, report)
            if finished:
                taken = store.take(workspace, sid, leave_out=leave_out)
            if args.finish:
                if not finished:
                    out(f"{sid} has no rewind cut short; nothing was changed")
                return Exit.OK
            if args.undo:
                last = last_rewind(events)
                if last is None:
                    raise CommandFailed(f"{sid} has no rewind to undo; nothing was changed")
                at_seq, target, undoes = last.seq - 1, last.before, last.seq
            else:
                at_seq, target, undoes = args.seq, _target(events, path, args.seq), None
            if taken is None:
                raise CommandFailed(f"{sid} has no snapshots in {store.path}; nothing was changed")
            if not _held(store, taken.id, target):
                raise CommandFailed(
                    f"{path}: the files at seq {at_seq} were thinned from the snapshot store to keep it within its "
                    f"budget; nothing was changed (`wren fork {sid}` says which points kept their files)"
                )
            plan = make_plan(
                store,
                events,
                workspace,
                taken,
                listed=listed,
                at_seq=at_seq,
                target=target,
                undoes=undoes,
                force=args.force,
                leave_out=leave_out,
            )
        except SnapshotError as exc:
            raise CommandFailed(f"{exc}; nothing was changed") from None
        what = f"undo the rewind at seq {undoes}" if undoes is not None else f"rewind {sid} to seq {at_seq}"
        out(f"{what} in {workspace}: {plan.preview()}")
        _said(plan)
        if not args.yes and not _asked_yes():
            out("nothing was changed")
            return Exit.OK
        writer.append(plan.event())  # durable before any file changes
        report("journaled")
        try:
            problems = apply(store, plan, workspace, report)
        except SnapshotError as exc:
            raise CommandFailed(f"{exc}; the rewind is journaled, run the same command again to finish it") from None
    for problem in problems:
        out(f"  not done: {problem}")
    done = "undone" if undoes is not None else f"rewound to seq {at_seq}"
    out(f"{done}: {len(plan.restore)} restored, {len(plan.delete)} deleted, {len(plan.kept)} kept")
    resume = wren_command("resume", sid, folder=path.parent, tail='"MESSAGE"')
    out(f"the next turn continues from there: {resume}")
    if undoes is None:
        out(f"to put it all back: {wren_command('rewind', sid, '--undo', folder=path.parent)}")
    return Exit.ERROR if problems else Exit.OK


def _snapshot(store: Store, workspace: Path, sid: str, leave_out: tuple[Path, ...]) -> tuple[Taken, list[str]]:
    """The workspace's snapshot, and what the snapshots do not cover in it (found beside it, as a turn's end does)."""
    listing: list[list[str]] = []
    failed: list[BaseException] = []

    def list_them() -> None:
        try:
            listing.append(store.not_covered(workspace, leave_out))
        except BaseException as exc:  # raised again below, in this thread
            failed.append(exc)

    beside = threading.Thread(target=list_them)  # a thread, not concurrent.futures: its import is 5 ms of a rewind
    beside.start()
    try:
        taken = store.take(workspace, sid, leave_out=leave_out)
    finally:
        beside.join()
    if failed:
        raise failed[0]
    return taken, listing[0]


def _likely_target(events: list[Event], path: Path, args: argparse.Namespace) -> str | None:
    """The snapshot the rewind goes back to, if the command names one (its errors are raised later, in order)."""
    if args.undo:
        last = last_rewind(events)
        return last.before if last is not None else None
    if args.seq is None:
        return None
    try:
        return _target(events, path, args.seq)
    except (UsageError, CommandFailed):
        return None


def _held(store: Store, now: str, target: str) -> bool:
    """Whether the store holds the target's files (compared with `now` already, or asked)."""
    try:
        store.compared(now, target)
        return True
    except SnapshotError:
        return bool(store.present([target]))


def _workspace(events: list[Event], sid: str) -> Path:
    recorded = workspace_of(events)
    if recorded is None or not os.path.isabs(recorded) or recorded == "/":
        raise CommandFailed(f"{sid} records no workspace folder Wren can rewind; nothing was changed")
    if not os.path.isdir(recorded):
        raise CommandFailed(f"{sid}: its workspace {recorded} no longer exists; nothing was changed")
    return Path(recorded)


def _target(events: list[Event], path: Path, seq: int) -> str:
    points = [p.seq for p in fork_points(events)]
    if seq not in points:
        listed = ", ".join(map(str, points[-10:])) or "none"
        raise UsageError(
            f"{session_id_of(path)}: seq {seq} is not a clean point (a user message or a final answer, no call "
            f"open); the last clean points: {listed}"
        )
    compacted = [e.seq for e in events if isinstance(e, Compaction) and e.seq > seq]
    if compacted:
        # The conversation before a compaction is gone from the rebuilt messages (the summary stands for it).
        again = wren_command("fork", session_id_of(path), str(seq), folder=path.parent)
        raise UsageError(
            f"{session_id_of(path)}: seq {seq} is before the compaction at seq {compacted[-1]}, and a rewind "
            f"cannot bring back the messages it summarized; fork there instead ({again}), which rebuilds them"
        )
    files = files_at(events, seq)
    if files.id is None:
        raise CommandFailed(f"{path}: the files at seq {seq} cannot be restored: {files.why}; nothing was changed")
    return files.id


def _finish(store: Store, events: list[Event], workspace: Path, now: str, report: Any) -> bool:
    """A rewind a kill cut short (some of its paths still hold their before bytes) is finished first, and said."""
    if last_rewind(events) is None:
        return False
    cut = unfinished(store, events, now)
    if cut is None:
        return False
    plan = finish_plan(store, cut, now)
    problems = apply(store, plan, workspace, report)
    out(
        f"the rewind at seq {cut.seq} was cut short: finished it ({len(plan.restore)} restored, "
        f"{len(plan.delete)} deleted)" + "".join(f"\n  not done: {p}" for p in problems)
    )
    return True


def _said(plan: Plan) -> None:
    for path in plan.kept[:_LISTED]:
        out(f"  keep    {shown(path)}  (changed since by someone else; --force rewinds it too)")
    if len(plan.kept) > _LISTED:
        out(f"  ... and {len(plan.kept) - _LISTED} more kept")
    if plan.commands:
        ran = f"{len(plan.commands)} command{'s' if len(plan.commands) != 1 else ''} ran"
        out(f"  not undone: {ran} after that point; their effects outside the files stay:")
        for command in plan.commands[:_LISTED]:
            out(f"    {command}")
    if plan.not_covered_count:
        paths = "path" if plan.not_covered_count == 1 else "paths"
        out(f"  left as they are: {plan.not_covered_count} {paths} the snapshots do not cover")
        for name in plan.not_covered[:_LISTED]:
            out(f"    {name}")


def _asked_yes() -> bool:
    sys.stdout.write("go ahead? [y/N] ")
    sys.stdout.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def _reporter(fd: int | None) -> Any:
    def report(step: str) -> None:
        if fd is not None:
            os.write(fd, step.encode("utf-8", "backslashreplace") + b"\n")

    return report


__all__ = ["cmd_rewind", "register"]
