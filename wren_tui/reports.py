"""`wren export` and `wren diff`: a session written out for people without a terminal, two sessions compared.

Registered on the `wren` parser like the other command groups (see cli._registrars); the work is
done by wren_tui.export (the files) and journal.compare (the comparison the viewer draws too).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

import msgspec

from .journal.compare import Comparison, Row, compare, comparison_rows
from .journal.store import journals_dir, resolve
from .journal.visible import visible

EXIT_OK, EXIT_ERROR, EXIT_UNREADABLE = 0, 1, 4


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .export import FORMATS

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

    p = sub.add_parser(
        "diff",
        parents=[common],
        help="compare two sessions (a fork and its parent): what they share, then turn by turn",
        description="Compare two sessions: the events they share are folded into one line, then their turns "
        "are shown side by side, with differences in tool calls (name, arguments, outcome, elapsed) and in "
        "the answers marked. The viewer's side-by-side screen shows the same comparison.",
    )
    p.add_argument("left", metavar="A", help="a session id or a journal file (the left column)")
    p.add_argument("right", metavar="B", help="a session id or a journal file (the right column)")
    p.add_argument("--json", action="store_true", help="the comparison as one JSON document, for scripts")
    p.set_defaults(handler=cmd_diff)


def cmd_export(args: argparse.Namespace) -> int:
    from .export import ExportRefused, export_session

    path = resolve(journals_dir(args.dir), args.session)
    try:
        done = export_session(path, args.format, args.output)
    except ExportRefused as exc:
        sys.stderr.write(f"wren: {exc}\n")
        return EXIT_ERROR
    sys.stdout.write(f"wrote {done.path}\n")
    if done.stopped is not None:
        sys.stderr.write(f"wren: {path}: {done.stopped}\n")
        return EXIT_UNREADABLE
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    folder = journals_dir(args.dir)
    cmp = compare(resolve(folder, args.left), resolve(folder, args.right))
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(cmp) + b"\n")
    else:
        width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160
        sys.stdout.write("".join(f"{line}\n" for line in diff_text(cmp, width)))
    stopped = cmp.left.stopped is not None or cmp.right.stopped is not None
    return EXIT_UNREADABLE if stopped else EXIT_OK


def diff_text(cmp: Comparison, width: int) -> list[str]:
    """The comparison for a terminal: the two sessions, then each row as two columns and what differs."""
    column = max((width - 3) // 2, 20)
    lines = [
        f"A: {cmp.left.id} ({cmp.left.events} events) {cmp.left.path}",
        f"B: {cmp.right.id} ({cmp.right.events} events) {cmp.right.path}",
    ]
    if cmp.relation:
        lines.append(cmp.relation)
    for side, name in ((cmp.left, "A"), (cmp.right, "B")):
        if side.stopped:
            lines.append(f"{name}: {side.stopped}")
    lines.append("")
    for row in comparison_rows(cmp):
        lines.extend(_row_text(row, column))
    lines.append("")
    lines.append("the same" if cmp.same else "they differ (rows marked ! above)")
    return [visible(line) for line in lines]


def _row_text(row: Row, column: int) -> list[str]:
    if row.kind == "shared":
        return [f"── {row.left} ──"]
    if row.kind == "turn":
        return ["", f"{_cut(row.left, column):<{column}} │ {_cut(row.right, column)}"]
    mark = "!" if row.marks else "│"
    text = f"  {_cut(row.left, column - 2):<{column - 2}} {mark} {_cut(row.right, column)}"
    if row.marks:
        return [text, f"  {'':<{column - 2}} ! differs: {', '.join(row.marks)}"]
    return [text]


def _cut(text: str, width: int) -> str:
    text = visible(text)
    return text if len(text) <= width else text[: width - 1] + "…"
