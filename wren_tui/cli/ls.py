"""`wren ls`: the sessions of the journals folder (or of a fleet's server), newest first, with their state."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from pathlib import Path
from typing import Any

from ..foreign import UNKNOWN, WREN, Format, kind_of, what_wren_opens
from ..journal.errors import NotASession
from ..journal.store import SESSION_ID, SessionInfo, in_project, list_sessions, project_label
from ..journal.visible import visible
from . import foreign
from .console import err, out, print_json
from .exits import Exit
from .options import named_folder_of

_PROJECT_WIDTH = 28


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "ls",
        parents=[common],
        help="sessions, newest first, with their state",
        description="List the journals in the journals folder, newest first, with their state (live; done, "
        "cancelled, error or limit: how the last run ended; interrupted; outcome unknown; torn tail; corrupt; "
        "empty; unreadable, with why; unknown: a file that is no journal, with what it is), events, duration, "
        "tokens, and the project (the folder the last run worked in). A journal that cannot be read is listed "
        "and named on stderr; the others are still listed.",
    )
    p.add_argument(
        "server",
        metavar="nats://SERVER[/HOST]",
        nargs="?",
        help="list the sessions mirrored to a fleet's server (every host's, or one host's) instead; with --agent, "
        "the other agents' sessions the hosts kept (wren keep)",
    )
    p.add_argument("--json", action="store_true", help="a JSON array for scripts")
    p.add_argument(
        "--project", metavar="PATH", help="only the sessions whose last run worked in PATH or a folder inside it"
    )
    p.add_argument(
        "--limit",
        type=_page,
        metavar="N",
        help="the first N sessions only (the newest), as a page: the listing is sorted first, so the N are the same",
    )
    foreign.add_agent_option(p, "list the sessions")
    p.set_defaults(handler=cmd_ls)


def _page(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of sessions: give 1 or more, such as 500")
    return n


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
    if info.state != "corrupt" or info.stop is None or info.stop.line > 1 or SESSION_ID.match(info.id):
        return info
    kind = kind_of(info.path)
    if kind == WREN:
        return info
    if kind == UNKNOWN:
        reason = str(NotASession(info.path, what_wren_opens()))
    else:
        assert isinstance(kind, Format)
        again = shlex.join(["wren", "ls", "--agent", "all", "--dir", str(info.path.parent)])
        reason = f"{info.path}: a {kind.label} session, not a Wren journal; `{again}` lists it"
    return dataclasses.replace(info, state="unknown", reason=reason, stop=None)


def cmd_ls(args: argparse.Namespace) -> Exit:
    if args.server is not None:
        from . import fleet  # asyncio and NATS: only for a fleet's server

        return fleet.ls_remote(args.server, args.json, agent=getattr(args, "agent", None))
    if getattr(args, "agent", None) is not None:
        return foreign.ls_agents(args)
    folder = named_folder_of(args)
    sessions = [_not_a_journal(s) for s in list_sessions(folder)]
    for s in sessions:
        if s.state in ("unreadable", "unknown"):
            err(f"{s.reason}; it is listed as {s.state}")
    if args.project is not None:
        project = Path(args.project).expanduser().resolve()
        sessions = [s for s in sessions if in_project(s.project, project)]
    sessions = sessions[: args.limit]
    if args.json:
        print_json([_row(s) for s in sessions])
        return Exit.OK
    if not sessions:
        out(f"no sessions in {folder}" + (f" of {project}" if args.project is not None else ""))
        return Exit.OK
    out(
        f"{'ID':<24}  {'STARTED':<24}  {'EVENTS':>6}  {'DURATION':>8}  {'TOKENS':>7}  {'STATE':<15}  "
        f"{'PROJECT':<{_PROJECT_WIDTH}}  FORKED FROM"
    )
    for s in sessions:
        if s.state in ("unreadable", "unknown"):
            why = "not a Wren journal" if s.state == "unknown" else s.reason
            out(f"{s.id:<24}  {'-':<24}  {'-':>6}  {'-':>8}  {'-':>7}  {s.state:<15}  ({why})")
            continue
        dur = f"{s.duration_s:.1f}s" if s.duration_s is not None else "-"
        origin = f"{s.forked_from}@{s.fork_at}" if s.forked_from else ""
        tokens = str(s.tokens) if s.exact else f"~{s.tokens}"  # a big journal is summed from its head and tail
        place = project_label(s.project, _PROJECT_WIDTH)
        out(
            visible(
                f"{s.id:<24}  {s.started or '-':<24}  {s.events:>6}  {dur:>8}  {tokens:>7}  {s.state:<15}  "
                f"{place:<{_PROJECT_WIDTH}}  {origin}"
            )
        )
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
