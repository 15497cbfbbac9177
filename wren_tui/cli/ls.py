"""`wren ls`: the sessions of the journals folder (or of a fleet's server), newest first, with their state."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..journal.store import SessionInfo, in_project, list_sessions, project_label
from ..journal.visible import visible
from . import agents, fleet
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
        "empty; unreadable, with why), events, duration, tokens, and the project (the folder the last run "
        "worked in). A journal that cannot be read is listed and named on stderr; the others are still listed.",
    )
    p.add_argument(
        "server",
        metavar="nats://SERVER[/HOST]",
        nargs="?",
        help="list the sessions mirrored to a fleet's server (every host's, or one host's) instead",
    )
    p.add_argument("--json", action="store_true", help="a JSON array for scripts")
    p.add_argument(
        "--project", metavar="PATH", help="only the sessions whose last run worked in PATH or a folder inside it"
    )
    agents.add_agent_option(p, "list the sessions")
    p.set_defaults(handler=cmd_ls)


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


def cmd_ls(args: argparse.Namespace) -> Exit:
    if args.server is not None:
        return fleet.ls_remote(args.server, args.json)
    if getattr(args, "agent", None) is not None:
        return agents.ls_agents(args)
    folder = named_folder_of(args)
    sessions = list_sessions(folder)
    for s in sessions:
        if s.state == "unreadable":
            err(f"{s.reason}; it is listed as unreadable")
    if args.project is not None:
        project = Path(args.project).expanduser().resolve()
        sessions = [s for s in sessions if in_project(s.project, project)]
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
        if s.state == "unreadable":
            out(f"{s.id:<24}  {'-':<24}  {'-':>6}  {'-':>8}  {'-':>7}  {s.state:<15}  ({s.reason})")
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
    return Exit.OK
