"""`wren export`: a session written out for someone without a terminal (the work is wren_tui.export's)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..export import FORMATS, Exported, export_session
from ..foreign import Format
from ..foreign.base import split_member
from ..journal.visible import visible_text
from . import foreign
from .console import out
from .exits import Exit, Unreadable
from .options import folder_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "export",
        parents=[common],
        help="write a session as Markdown, a self-contained HTML page, JSON, or an ATIF trajectory",
        description="Write a session out for someone without a terminal: Markdown for a pull request's "
        "description, one HTML page (no script, no external asset: the conversation, the tool timings and "
        "a waterfall of the calls), JSON (every event as read, the reader's verdict first), or an ATIF "
        "trajectory (ATIF-v1.8, for Harbor, Phoenix and other trajectory tools; another agent's session file "
        "exports this way too; see docs/tracing.md). The file is written whole or not at all. "
        "An export of a damaged journal says where reading stopped, first; "
        "then wren exits 4.",
    )
    p.add_argument("session", metavar="ID|PATH", help="a session id (s-YYYYMMDD-HHMMSS-xxxx) or a journal file")
    p.add_argument("--format", choices=FORMATS, default="md", help="md, html, json or atif (default: md)")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        type=Path,
        help="where to write it (a folder: ID.FORMAT inside it; default: ID.FORMAT in the current folder)",
    )
    p.set_defaults(handler=cmd_export)


def cmd_export(args: argparse.Namespace) -> Exit:
    path = foreign.resolve(folder_of(args), args.session)  # a database, DB#ID, a chat history too
    fmt = foreign.foreign_format(path)
    if fmt is not None and args.format != "atif":
        # Nothing is written: one sentence naming the agent, what it can be exported as, and the fork.
        foreign.only_wren(path, folder_of(args), "export", "writes out", besides=foreign.ATIF_TOO)
    # ExportRefused: one sentence, exit 1 (exits.py)
    done = export_session(path, args.format, args.output) if fmt is None else _foreign_atif(path, fmt, args.output)
    out(visible_text(f"wrote {done.path}"))
    if done.stop is not None:
        # What could be read is exported, and says where it stops; the journal did not end there.
        raise Unreadable(path, done.stop, done="The export holds what comes before it.")
    return Exit.OK


def _foreign_atif(path: Path, fmt: Format, output: Path | None) -> Exported:
    """Another agent's session (the branch shown, to its newest entry) as an ATIF trajectory."""
    import os

    from ..export import target
    from ..export.atif import AtifWriter
    from ..export.atomic import AtomicOutput
    from ..foreign.base import Skipped, Translated
    from ..foreign.exported import open_lines
    from ..foreign.live import changed_recently, held_for_writing
    from ..foreign.reader import Branch, scan
    from ..foreign.redacted import shown
    from ..foreign.snapshot import file_key

    where = target(path, "atif", output)
    fd = open_lines(path, fmt)  # the file, or its export as lines (a database's session, a chat history)
    try:
        st = os.fstat(fd)
        if fmt.export is None:
            alive = changed_recently(st.st_mtime) or bool(held_for_writing([(st.st_dev, st.st_ino)]))
        else:  # an export held in memory: the agent's own file says whether it is being written
            key = file_key(split_member(path)[0])
            alive = key is not None and changed_recently(key[2] / 1e9)
        branch = None if fmt.node_of is None else Branch.scan(fd, fmt.node_of, st.st_size)
        output_file = AtomicOutput(where)
        try:
            writer = AtifWriter(output_file, writer_alive=alive)

            def take(lineno: int, line: Translated, _data: bytes) -> None:
                if branch is not None and not branch.follow(lineno, line.node):
                    return
                writer.take(shown(line))  # its secrets redacted

            skipped = Skipped()
            verdict = scan(fd, fmt, take, st.st_size, skipped)
            writer.finish(
                session_id=fmt.session_id(path),
                agent=fmt.label,
                agent_version="unknown",
                stop=verdict.stop,
                source={"agent": fmt.name, "path": str(path), "skipped": skipped.as_json()},
            )
        finally:
            output_file.close()
    finally:
        os.close(fd)
    return Exported(where, verdict.stop)
