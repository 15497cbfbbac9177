"""`wren diff`: two sessions compared (a fork and its parent), as the viewer's side-by-side screen shows them."""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import Any

from ..journal.compare import Comparison, Row, compare, comparison_rows
from ..journal.visible import visible
from . import foreign
from .console import err, print_json
from .exits import Exit, Unreadable, stop_said
from .options import folder_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, json_option

    p = command_parser(
        sub,
        "diff",
        cmd_diff,
        "Compare two sessions: the events they share are folded into one line, then their turns "
        "are shown side by side, with differences in tool calls (name, arguments, outcome, elapsed) and in "
        "the answers marked. The viewer's side-by-side screen shows the same comparison. If either session "
        "cannot be read to its end, what could be read is compared, and wren exits 4.",
        common,
    )
    p.add_argument("left", metavar="A", help="a session id or a journal file (the left column)")
    p.add_argument("right", metavar="B", help="a session id or a journal file (the right column)")
    json_option(p, "the comparison as one JSON document, for scripts")


def cmd_diff(args: argparse.Namespace) -> Exit:
    from ..sessions.opening import find

    folder = folder_of(args)
    # Another agent's file of any kind is found (a database, DB#ID, a chat history), to be named in the refusal.
    left, right = find(folder, args.left, say=err), find(folder, args.right, say=err)
    for path in (left, right):
        foreign.only_wren(path, folder, "diff", "compares")
    cmp = compare(left, right)
    if args.json:
        print_json(cmp)
    else:
        width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160
        sys.stdout.write("".join(f"{line}\n" for line in diff_text(cmp, width)))
    # Each damaged journal said once (A and B may be the same file): what could be read was compared.
    damaged = {side.path: side.stop for side in (cmp.left, cmp.right) if side.stop is not None}
    if damaged:
        (where, stop), *others = damaged.items()
        raise Unreadable(where, stop, "\n".join(stop_said(path, other) for path, other in others))
    return Exit.OK


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
