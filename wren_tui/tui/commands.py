"""The viewer's command (`wren watch`): registered on the `wren` parser."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..journal.errors import JournalError
from ..journal.store import journal_paths, journals_dir, latest, resolve
from .filters import ONLY

EXIT_OK, EXIT_ERROR = 0, 1


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
        choices=ONLY,
        help="open with a filter on: the model's words (thinking), tool calls, writes (write_file, edit_file, "
        "commands) or errors; in the viewer, o cycles the filters, 1-4 pick one, 0 shows everything",
    )
    p.set_defaults(handler=cmd_watch)


def target_of(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """The folder to browse and the session to open (None: the browser)."""
    folder = journals_dir(getattr(args, "dir", None))
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


def cmd_watch(args: argparse.Namespace) -> int:
    folder, session = target_of(args)
    from .app import WrenApp

    app = WrenApp(
        folder=folder,
        session=session,
        pick=args.pick,
        watch_mode="poll" if args.poll else "auto",
        only=getattr(args, "only", None),
    )
    picked = app.run()
    if app.return_code:
        return EXIT_ERROR  # the viewer crashed (Textual printed why)
    if not args.pick:
        return EXIT_OK
    if picked is None:
        sys.stderr.write("wren: no fork point picked\n")
        return EXIT_ERROR
    sys.stdout.write(f"{picked.session} {picked.seq}\n")
    return EXIT_OK
