"""`wren export`: a session written out for someone without a terminal (the work is wren_tui.export's)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..export import FORMATS, export_session
from ..journal.store import resolve
from ..journal.visible import visible_text
from . import agents
from .console import out
from .exits import Exit, Unreadable
from .options import folder_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "export",
        parents=[common],
        help="write a session as Markdown, a self-contained HTML page, or JSON",
        description="Write a session out for someone without a terminal: Markdown for a pull request's "
        "description, one HTML page (no script, no external asset: the conversation, the tool timings and "
        "a waterfall of the calls), or JSON (every event as read, the reader's verdict first). The file is "
        "written whole or not at all. An export of a damaged journal says where reading stopped, first; "
        "then wren exits 4.",
    )
    p.add_argument("session", metavar="ID|PATH", help="a session id (s-YYYYMMDD-HHMMSS-xxxx) or a journal file")
    p.add_argument("--format", choices=FORMATS, default="md", help="md, html or json (default: md)")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        type=Path,
        help="where to write it (a folder: ID.FORMAT inside it; default: ID.FORMAT in the current folder)",
    )
    p.set_defaults(handler=cmd_export)


def cmd_export(args: argparse.Namespace) -> Exit:
    path = resolve(folder_of(args), args.session)
    agents.only_wren(path, folder_of(args), "export", "writes out")
    done = export_session(path, args.format, args.output)  # ExportRefused: one sentence, exit 1 (exits.py)
    out(visible_text(f"wrote {done.path}"))
    if done.stop is not None:
        # What could be read is exported, and says where it stops; the journal did not end there.
        raise Unreadable(path, done.stop, done="The export holds what comes before it.")
    return Exit.OK
