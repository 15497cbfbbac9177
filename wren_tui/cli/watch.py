"""`wren watch`: the viewer on a session or a folder; with --pick, the chosen fork point printed for scripts.

On a damaged journal --pick opens the viewer as ever: the person sees where reading stops, and the
points offered are the clean ones before it (a fork from one of them is the remedy). After the
pick, `ID SEQ` is printed, then the same sentence and status as every other command reading that
journal (exit 4), from the stop the viewer found; a torn tail is a crash's normal end (exit 0).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..journal.errors import JournalError
from ..journal.store import journal_paths, latest, resolve
from .console import out
from .exits import CommandFailed, Exit, Unreadable
from .options import folder_of

# The viewer's filters (tui/filters.py:ONLY, which loads Textual: not imported for every command).
ONLY_CHOICES = ("thinking", "tools", "writes", "errors")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "watch",
        parents=[common],
        help="the viewer: a session live, or the journals of a folder",
        description="Watch a journal live in a full-screen viewer that never writes to it. With no "
        "session (or a folder), browse the journals newest first; Enter opens one.",
    )
    p.add_argument("target", metavar="ID|PATH|DIR", nargs="?", help="a session id, a journal file, or a folder")
    p.add_argument(
        "--pick",
        action="store_true",
        help='choose a fork point and print "ID SEQ" on exit, for scripts (the latest session if none is given)',
    )
    p.add_argument("--poll", action="store_true", help="poll for changes instead of using file notifications")
    p.add_argument(
        "--only",
        choices=ONLY_CHOICES,
        help="open with a filter on: the model's words (thinking), tool calls, writes (write_file, edit_file, "
        "commands) or errors; in the viewer, o cycles the filters, 1-4 pick one, 0 shows everything",
    )
    p.set_defaults(handler=cmd_watch)


def target_of(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """The folder to browse and the session to open (None: the browser)."""
    folder = folder_of(args)
    target: str | None = args.target
    if target is not None and Path(target).expanduser().is_dir():
        folder = _journals_in(Path(target).expanduser())
        target = None
    elif target is None and os.path.lexists(folder) and not folder.is_dir():
        raise JournalError(f"{folder} is not a folder; give --dir the journals folder (or set WREN_DIR)")
    if target is not None:
        session = resolve(folder, target)
        return session.parent, session
    return folder, latest(folder) if args.pick else None


def _journals_in(folder: Path) -> Path:
    """The folder named, or its journals/ when it holds no journal and that does (a workspace was named)."""
    inner = folder / "journals"
    if not journal_paths(folder) and inner.is_dir():
        return inner
    return folder


def cmd_watch(args: argparse.Namespace) -> Exit:
    folder, session = target_of(args)
    from ..tui.app import WrenApp

    app = WrenApp(
        folder=folder,
        session=session,
        pick=args.pick,
        watch_mode="poll" if args.poll else "auto",
        only=getattr(args, "only", None),
    )
    picked = app.run()
    if app.return_code:
        return Exit.ERROR  # the viewer crashed (Textual printed why)
    if not args.pick:
        return Exit.OK
    if picked is None:
        raise CommandFailed("no fork point picked")
    out(f"{picked.session} {picked.seq}")
    if picked.stop is not None and not picked.stop.torn and session is not None:
        raise Unreadable(session, picked.stop)
    return Exit.OK
