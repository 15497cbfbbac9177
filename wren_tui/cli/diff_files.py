"""`wren diff-files`: the workspace's files between two points of a session, as a unified diff from its snapshots."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..agent.errors import UsageError
from ..journal.commandline import wren_command
from ..journal.events import Event
from ..journal.forking import fork_listing, fork_points
from ..journal.reader import read_events
from ..journal.store import resolve, session_id_of
from ..journal.visible import visible
from ..snapshots.store import SnapshotError, Store, files_at, last_snapshot, store_of
from .console import out
from .exits import CommandFailed, Exit
from .options import folder_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, session_argument

    p = command_parser(
        sub,
        "diff-files",
        cmd_diff_files,
        "Print a unified diff of the workspace between the files at SEQ and at SEQ2 (default: the "
        "session's last snapshot), read from the session's snapshots; nothing in the workspace is read. "
        "Piped, the diff is the bytes git gives (for patch or git apply); on a terminal, control characters "
        "are shown escaped.",
        common,
    )
    session_argument(p)
    p.add_argument("seq", metavar="SEQ", type=int, help="a point of the session (a clean fork point, usually)")
    p.add_argument("seq2", metavar="SEQ2", type=int, nargs="?", help="the later point (default: the last snapshot)")


def cmd_diff_files(args: argparse.Namespace) -> Exit:
    from ..sessions.opening import format_of

    path = resolve(folder_of(args), args.session)
    if format_of(path) is not None:
        raise CommandFailed(f"{path}: another agent's session carries no snapshots of its files, so it has no diff")
    events = read_events(path).events
    sid = session_id_of(path)
    again = wren_command("diff-files", sid, folder=path.parent, tail="SEQ [SEQ2]")
    _known(sid, events, args.seq, args.seq2, again=again)
    start = files_at(events, args.seq)
    if start.id is None:
        raise CommandFailed(f"{sid}: no snapshot holds the files at seq {args.seq}: {start.why}")
    if args.seq2 is None:
        end_id, end_label = last_snapshot(events), "the last snapshot"
    else:
        end = files_at(events, args.seq2)
        if end.id is None:
            raise CommandFailed(f"{sid}: no snapshot holds the files at seq {args.seq2}: {end.why}")
        end_id, end_label = end.id, f"seq {args.seq2}"
    assert end_id is not None  # the session has a snapshot: the one at SEQ
    try:
        diff = Store(store_of(path.parent)).diff(start.id, end_id)
    except SnapshotError as exc:
        raise CommandFailed(str(exc)) from None
    if sys.stdout.isatty():
        if not diff:
            out(f"no file differs between seq {args.seq} and {end_label}")
        for line in diff.decode("utf-8", "replace").splitlines():
            out(visible(line))
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(diff)
        sys.stdout.buffer.flush()
    return Exit.OK


def _known(sid: str, events: list[Event], *seqs: int | None, again: str) -> None:
    """UsageError, with the session's clean points, for a seq that is no event of the session."""
    seqs_there = {e.seq for e in events}
    missing = next((seq for seq in seqs if seq is not None and seq not in seqs_there), None)
    if missing is None:
        return
    listing = "\n".join(f"  {line}" for line in fork_listing(fork_points(events))) or "  (none yet)"
    last = events[-1].seq if events else 0
    raise UsageError(
        f"{sid}: there is no event {missing} (its last is {last}); the clean points, whose files differ "
        f"as `{again}` shows:\n{listing}"
    )
