"""`wren ls`: the sessions of the journals folder (or of a fleet's server), newest first, with their state."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..foreign import UNKNOWN
from ..journal.store import SessionInfo, in_project, is_session_id, journals_dir, list_sessions, project_label
from ..journal.visible import visible
from ..sessions.refusal import ALL, agent_places
from . import foreign
from .console import err, out, print_json
from .exits import Exit
from .options import named_folder_of

if TYPE_CHECKING:
    from ..foreign.folders import Listed
    from ..foreign.listing import AgentSession

_PROJECT_WIDTH = 28


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, json_option, positive

    p = command_parser(
        sub,
        "ls",
        cmd_ls,
        "List the journals in the journals folder, newest first, with their state (live; done, "
        "cancelled, error or limit: how the last run ended; interrupted; outcome unknown; forked: a fork not "
        "resumed yet; torn tail; corrupt; empty; unreadable, with why; unknown: a file that is no journal, with what "
        "it is), events, duration, "
        "tokens, and the project (the folder the last run worked in). A journal that cannot be read is listed "
        "and named on stderr; the others are still listed.",
        common,
    )
    p.add_argument(
        "server",
        metavar="nats://SERVER[/HOST]",
        nargs="?",
        help="list the sessions mirrored to a fleet's server (every host's, or one host's) instead; with --agent, "
        "the other agents' sessions the hosts kept (wren keep)",
    )
    json_option(p, "a JSON array for scripts")
    p.add_argument(
        "--project", metavar="PATH", help="only the sessions whose last run worked in PATH or a folder inside it"
    )
    p.add_argument(
        "--limit",
        type=positive("sessions", 500),
        metavar="N",
        help="the first N sessions only (the newest), as a page: the listing is sorted first, so the N are the same",
    )
    foreign.add_agent_option(p, "list the sessions")


def _row(info: SessionInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "path": str(info.path),
        "state": info.state,
        "events": info.events,
        "started": info.started,
        "lastTs": info.last_ts,
        "durationS": info.duration_s,
        "tokens": info.tokens,
        "forkedFrom": info.forked_from,
        "forkAt": info.fork_at,
        "reason": info.reason,
        "exact": info.exact,
        "project": info.project,
    }


def _not_a_journal(info: SessionInfo) -> SessionInfo:
    """A file that stops at its first lines and is no Wren journal: another agent's session, or one Wren does not
    read, listed as unknown with what it is, not as a corrupt journal."""
    if info.state != "corrupt" or info.stop is None or info.stop.line > 1 or is_session_id(info.id):
        return info
    # Only for such a file: what it is, by its first lines (the formats' kinds, msgspec).
    from ..foreign import WREN, Format, kind_of, what_wren_opens
    from ..journal.errors import NotASession

    kind = kind_of(info.path)
    if kind == WREN:
        return info
    if kind == UNKNOWN:
        reason = str(NotASession(info.path, what_wren_opens()))
    else:
        import shlex  # only for a file that is another agent's session

        assert isinstance(kind, Format)
        again = shlex.join(["wren", "ls", "--agent", "all", "--dir", str(info.path.parent)])
        reason = f"{info.path}: a {kind.label} session, not a Wren journal; `{again}` lists it"
    return info.replace(state="unknown", reason=reason, stop=None)


# The table's columns: name, heading, width, right-aligned. A row's last cell is not padded; "why" is an unreadable
# or unknown row's alone, in place of the project and the origin.
_COLUMNS = (
    ("id", "ID", 24, False),
    ("started", "STARTED", 24, False),
    ("events", "EVENTS", 6, True),
    ("duration", "DURATION", 8, True),
    ("tokens", "TOKENS", 7, True),
    ("state", "STATE", 15, False),
    ("why", "", 0, False),
    ("project", "PROJECT", _PROJECT_WIDTH, False),
    ("origin", "FORKED FROM", 0, False),
)
# On a terminal narrower than the table, given up first, as the viewer's list gives them up (screens/browser.py).
_DROP_FIRST = ("tokens", "started", "duration", "project", "events")


def _cells(s: SessionInfo) -> dict[str, str]:
    if s.state in ("unreadable", "unknown"):
        why = "not a Wren journal" if s.state == "unknown" else s.reason
        return {
            "id": s.id,
            **dict.fromkeys(("started", "events", "duration", "tokens"), "-"),
            "state": s.state,
            "why": f"({why})",
        }
    return {
        "id": s.id,
        "started": s.started or "-",
        "events": str(s.events),
        "duration": f"{s.duration_s:.1f}s" if s.duration_s is not None else "-",
        "tokens": str(s.tokens) if s.exact else f"~{s.tokens}",  # a big journal is summed from its head and tail
        "state": s.state,
        "project": _project_cell(s.project),
        "origin": f"{s.forked_from}@{s.fork_at}" if s.forked_from else "",
    }


def _table(sessions: list[SessionInfo], width: int | None) -> list[str]:
    """The table's lines, each made visible; with a terminal's `width`, the lesser columns given up until it fits,
    then any line still too long cut with an ellipsis (None: piped, every column)."""
    rows = [{name: heading for name, heading, _, _ in _COLUMNS if name != "why"}, *map(_cells, sessions)]
    kept = list(_COLUMNS)
    lines = [_line(row, kept) for row in rows]
    if width is None:
        return lines
    for name in _DROP_FIRST:
        if max(map(_cells_of, lines)) <= width:
            break
        kept = [column for column in kept if column[0] != name]
        lines = [_line(row, kept) for row in rows]
    return [line if _cells_of(line) <= width else _cut(line, max(width - 1, 0)) + "…" for line in lines]


def _project_cell(project: str | None) -> str:
    """The project as its column shows it (`project_label`), cut from its head to the column's cells: a label of wide
    characters within the column's characters may take twice its cells."""
    text = project_label(project, _PROJECT_WIDTH)
    if _cells_of(text) <= _PROJECT_WIDTH:
        return text
    body = text.removeprefix("…")
    while body and _cells_of("…" + body) > _PROJECT_WIDTH:
        body = body[1:]
    return "…" + body


def _padded(text: str, width: int, right: bool) -> str:
    """`text` padded with spaces to `width` cells (a wide character counts two), on its left when `right`."""
    pad = " " * max(width - _cells_of(text), 0)
    return pad + text if right else text + pad


def _cells_of(line: str) -> int:
    """The terminal cells `line` takes: a wide character (CJK, most emoji) takes two, a combining mark none."""
    if line.isascii():
        return len(line)
    from rich.cells import cell_len  # the viewer's measure (Textual's own dependency): only for such a line

    return cell_len(line)


def _cut(line: str, cells: int) -> str:
    """The most of `line` that fits in `cells` cells, never half of a wide character."""
    if line.isascii():
        return line[:cells]
    from rich.cells import cell_len

    used = 0
    for index, char in enumerate(line):
        used += cell_len(char)
        if used > cells:
            return line[:index]
    return line


def _line(cells: dict[str, str], columns: list[tuple[str, str, int, bool]]) -> str:
    present = [(cells[name], width, right) for name, _, width, right in columns if name in cells]
    parts = [_padded(text, width, right) for text, width, right in present[:-1]]
    return visible("  ".join([*parts, present[-1][0]]))


def cmd_ls(args: argparse.Namespace) -> Exit:
    if args.server is not None:
        from . import fleet  # asyncio and NATS: only for a fleet's server

        return fleet.ls_remote(args.server, args.json, agent=getattr(args, "agent", None))
    if getattr(args, "agent", None) is not None:
        return ls_agents(args)
    folder = named_folder_of(args)
    sessions = [_not_a_journal(s) for s in list_sessions(folder)]
    for s in sessions:
        if s.state in ("unreadable", "unknown"):
            err(f"{s.reason}; it is listed as {s.state}")
    if args.project is not None:
        project = Path(os.path.expanduser(args.project)).resolve()
        sessions = [s for s in sessions if in_project(s.project, project)]
    sessions = sessions[: args.limit]
    if args.json:
        print_json([_row(s) for s in sessions])
        return Exit.OK
    if not sessions:
        out(f"no sessions in {folder}" + (f" of {project}" if args.project is not None else ""))
        return Exit.OK
    width = None
    if sys.stdout.isatty():
        import shutil  # the terminal's width ($COLUMNS first): only for a terminal

        width = shutil.get_terminal_size().columns
    for line in _table(sessions, width):
        out(line)
    from ..snapshots.budget import BudgetError, budget_of
    from ..snapshots.store import Store, store_of
    from .snapshots import human

    store = Store(store_of(folder))
    if store.exists():
        try:
            budget = f" of a {human(budget_of(None))} budget"
        except BudgetError as exc:
            budget = f" ({exc})"
        out(visible(f"snapshots: {human(store.size())}{budget} in {store.path}"))
    return Exit.OK


# --- wren ls --agent -------------------------------------------------------------------------------


def _listed(
    places: list[tuple[Listed, Path]], journals: Path, skipped: list[str], limit: int | None
) -> list[AgentSession]:
    """The newest `limit` sessions of `places` and the kept copies of those their agents lost (`keep.found`), each
    unchanged file's row from the store beside search's index (see docs/search-index.md), only the page's rows
    made (`listing_cache.newest`); every file read when there is no store to keep (no journals folder yet)."""
    # The agents' listing and its store: not loaded to list Wren's journals.
    from ..foreign.listing import list_agent_sessions
    from ..keep.found import Kept
    from ..search import indexer
    from ..search.folder_index import Index
    from ..search.listing_cache import newest

    kept = Kept()
    index = Index(journals, writer=indexer)
    known = index.listing_cache()
    for sentence in index.said:
        err(f"warning: {sentence}")
    if known is None:
        from ..foreign import FORMATS  # every file read: each agent's whole Format

        return list_agent_sessions([(FORMATS[listed.name], root) for listed, root in places], skipped, kept=kept)[
            :limit
        ]
    try:
        sessions = newest(places, skipped, known, kept, limit)
        known.save([where for fmt, root in places for where in (root, *kept.folders(fmt))])
        return sessions
    finally:
        known.close()


def _agent_row(s: AgentSession) -> dict[str, Any]:
    return {
        "agent": s.agent,
        "id": s.id,
        "path": str(s.path),
        "state": s.state,
        "lines": s.lines,
        "exact": s.exact,
        "started": s.started,
        "lastTs": s.last_ts,
        "durationS": s.duration_s,
        "tokens": s.tokens,
        "tokensExact": s.tokens_exact,
        "project": s.project,
        "reason": s.reason,
        "kept": s.kept,
    }


def ls_agents(args: argparse.Namespace) -> Exit:
    """`wren ls --agent NAME|all [--dir DIR] [--json] [--limit N]`: the agents' sessions, newest first."""
    places = agent_places(args.agent, getattr(args, "dir", None))
    skipped: list[str] = []
    limit = getattr(args, "limit", None)  # a page: the newest N
    if args.agent == ALL and getattr(args, "dir", None):
        from ..foreign.listing import list_every_session

        sessions = list_every_session(places[0][1], skipped)[:limit]  # one folder for all: each file by its content
    else:
        sessions = _listed(places, journals_dir(None), skipped, limit)
    for sentence in dict.fromkeys(skipped):  # a folder two agents share is said once
        err(f"{sentence}; they are not listed")
    for s in sessions:
        if s.state in ("unreadable", UNKNOWN):
            err(f"{s.reason}; it is listed as {s.state}")
    # --agent all --dir: every file was judged by its content, so a folder of files that lists nothing holds none
    # Wren reads (with one agent named, it may hold another's).
    named = Path(os.path.expanduser(args.dir)) if args.agent == ALL and getattr(args, "dir", None) else None
    if not sessions and named is not None:
        from ..sessions.refusal import nothing_readable

        if (said := nothing_readable(named)) is not None:
            err(said)  # a folder of files Wren does not read is not an empty folder
            if args.json:
                print_json([])
            return Exit.UNREADABLE
    if args.json:
        print_json([_agent_row(s) for s in sessions])
        return Exit.OK
    if not sessions:
        where = ", ".join(dict.fromkeys(str(root) for _fmt, root in places))  # --dir: every agent's is the same
        out(f"no sessions in {where}")
        return Exit.OK
    many = args.agent == ALL
    width = max((len(s.agent) for s in sessions), default=0) if many else 0
    head = f"{'AGENT':<{max(width, 7)}}  " if many else ""
    out(f"{head}{'ID':<36}  {'STARTED':<24}  {'LINES':>7}  {'DURATION':>8}  {'TOKENS':>8}  {'STATE':<16}  PROJECT")
    for s in sessions:
        agent = f"{s.agent:<{max(width, 7)}}  " if many else ""
        if s.state in ("unreadable", UNKNOWN):
            why = "not a session Wren reads" if s.state == UNKNOWN else s.reason
            out(visible(f"{agent}{s.id:<36}  {'-':<24}  {'-':>7}  {'-':>8}  {'-':>8}  {s.state:<16}  ({why})"))
            continue
        dur = f"{s.duration_s:.1f}s" if s.duration_s is not None else "-"
        lines = str(s.lines) if s.exact else f"~{s.lines}"
        tokens = str(s.tokens) if s.tokens_exact else f"~{s.tokens}"
        place = project_label(s.project, _PROJECT_WIDTH)
        line = f"{agent}{s.id:<36}  {s.started or '-':<24}  {lines:>7}  {dur:>8}  {tokens:>8}  {s.state:<16}  {place}"
        out(visible(line))
        if s.kept is not None:
            out(visible(f"{' ' * len(agent)}  {s.kept}: {s.path}"))
    return Exit.OK
