"""`wren export`: a session written out for someone without a terminal (the work is wren_tui.export's)."""

from __future__ import annotations

import argparse
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..export import FORMATS, Exported, export_session
from ..journal.store import journals_dir
from ..journal.visible import visible_text
from . import foreign
from .console import err, out
from .exits import Exit, Unreadable

if TYPE_CHECKING:
    from ..sessions.foreign import ForeignFile


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, session_argument

    p = command_parser(
        sub,
        "export",
        cmd_export,
        "Write a session out for someone without a terminal: Markdown for a pull request's "
        "description, one HTML page (no script, no external asset: the conversation, the tool timings and "
        "a waterfall of the calls), JSON (every event as read, the reader's verdict first), or an ATIF "
        "trajectory (ATIF-v1.8, for Harbor, Phoenix and other trajectory tools; another agent's session file "
        "exports this way too; see docs/tracing.md). The file is written whole or not at all. "
        "An export of a damaged journal says where reading stopped, first; "
        "then wren exits 4.",
        common,
    )
    session_argument(p)
    p.add_argument("--format", choices=FORMATS, default="md", help="md, html, json or atif (default: md)")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        type=Path,
        help="where to write it (a folder: ID.FORMAT inside it; default: ID.FORMAT in the current folder)",
    )


def cmd_export(args: argparse.Namespace) -> Exit:
    from ..sessions.foreign import ForeignFile
    from ..sessions.opening import open_session

    # A database, DB#ID, a chat history too; a session on this machine.
    source = open_session(args.session, args.dir, fleet=False, say=err)
    with closing(source):
        if isinstance(source, ForeignFile):
            if args.format != "atif":
                # Nothing is written: one sentence naming the agent, what it can be exported as, and the fork.
                foreign.only_wren(Path(source.where), journals_dir(args.dir), "export", "writes out", foreign.ATIF_TOO)
            done = _foreign_atif(source, args.output)
        else:
            done = export_session(Path(source.where), args.format, args.output)  # ExportRefused: one sentence, exit 1
    out(visible_text(f"wrote {done.path}"))
    if done.stop is not None:
        # What could be read is exported, and says where it stops; the journal did not end there.
        raise Unreadable(source.where, done.stop, done="The export holds what comes before it.")
    return Exit.OK


def _foreign_atif(source: ForeignFile, output: Path | None) -> Exported:
    """Another agent's session (the branch shown, to its newest entry) as an ATIF trajectory, its secrets redacted."""
    from ..export import target
    from ..export.atif import AtifWriter
    from ..export.atomic import AtomicOutput

    fmt = source.format
    where = target(Path(source.where), "atif", output)
    output_file = AtomicOutput(where)
    try:
        writer = AtifWriter(output_file, writer_alive=source.writer_alive())
        verdict = source.scan(lambda events, _data: writer.take(events), redact=True)
        writer.finish(
            session_id=source.id,
            agent=fmt.label,
            agent_version="unknown",
            stop=verdict.stop,
            source={"agent": fmt.name, "path": source.where, "skipped": source.skipped.as_json()},
        )
    finally:
        output_file.close()
    return Exported(where, verdict.stop)
