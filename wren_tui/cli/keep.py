"""`wren keep`: copy every agent's sessions into Wren's own kept store (incrementally, durably, read-only)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .exits import Exit
from .options import agents_option, command_parser, json_option

if TYPE_CHECKING:
    from ..keep.keeping import Asked


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from ..foreign import FORMATS

    p = command_parser(
        sub,
        "keep",
        cmd_keep,
        "Copy every other agent's session files (every agent Wren reads; Wren's own journals are "
        "their own store) into Wren's kept store: $WREN_KEEP_DIR, else $XDG_STATE_HOME/wren/kept, else "
        "~/.local/state/wren/kept. Nothing is ever written in an agent's folder. It is incremental: a file "
        "unchanged since the last keep is not read; a grown .jsonl adds only its new bytes; a rewritten "
        "document or database (Continue, Cline, OpenCode, Kilo) adds a version only when its content changed, "
        "the earlier one kept. Each copy is checksummed (sha256) and durable before it counts. aider keeps no "
        "folder of its own (its history is beside each project), so it is kept only when named with a folder: "
        "`wren keep --agent aider --from PROJECT`. `wren verify` checks every kept copy.",
    )
    agents_option(
        p,
        "keep this agent's sessions only (repeatable; default: every agent with a folder of its own: "
        + ", ".join(name for name, _root in FORMATS.own_folders({}))
        + ")",
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="FOLDER",
        help="keep the sessions found in FOLDER (and below) instead of the agent's own folder; needs one --agent",
    )
    p.add_argument(
        "--status",
        action="store_true",
        help="keep nothing; say per agent the files kept, their versions and bytes, and what changed in the agent's "
        "folder since the last keep (new, grown, rewritten, truncated, deleted by the agent), and the store's size",
    )
    json_option(p, "with --status: JSON for scripts")
    p.add_argument(
        "--follow",
        action="store_true",
        help="keep on: watch the agents' folders and keep each change within a second of the agent's write (a "
        "database at most every 10 s while it keeps changing) until Ctrl+C; a kill -9 at any moment damages nothing",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="say nothing but problems")


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


def cmd_keep(args: argparse.Namespace) -> Exit:
    from ..agent.errors import UsageError
    from ..keep.keeping import Asked, keep
    from ..keep.store import kept_root
    from .console import err, out

    env, home = os.environ, _home()
    folder = None
    if args.source is not None:
        if not args.agent or len(args.agent) != 1:
            raise UsageError("--from FOLDER keeps one agent's sessions: name it with --agent")
        folder = Path(os.path.expanduser(args.source)).absolute()
        if not folder.is_dir():
            raise UsageError(f"{folder}: no such folder; name the folder the agent's sessions are in")
    root = kept_root(env, home)
    asked = Asked(args.agent, folder, env, home, root)
    if args.status:
        return _status(asked, as_json=args.json)
    if args.json:
        raise UsageError("--json goes with --status")
    say = None if args.quiet else _flushed(out)
    if args.follow:
        from ..keep.following import follow

        follow(asked, say=say, skip=[_journals(env)])
        return Exit.OK
    tallies, skipped = keep(asked, say=say, skip=[_journals(env)])
    for sentence in skipped:
        if not args.quiet:
            out(sentence)
    problems = [p for t in tallies for p in t.problems]
    for problem in problems:
        err(problem)
    if not args.quiet:
        out(f"kept in {root}")
    return Exit.ERROR if problems else Exit.OK


def _journals(env: Any) -> Path:
    """Wren's own journals folder: never kept (it is its own store), wherever it is."""
    from ..journal.store import journals_dir

    return journals_dir(None, env)


def _status(asked: Asked, *, as_json: bool) -> Exit:
    from ..keep.status import human, status
    from .console import err, out, print_json

    root = asked.root
    agents, skipped, size = status(asked)
    problems = [p for a in agents for p in a.problems]
    if as_json:
        print_json({"store": str(root), "bytes": size, "agents": [a.as_json() for a in agents], "not_kept": skipped})
    else:
        quiet = []
        for agent in agents:
            if agent.files or any(agent.since.values()):
                out(agent.line())
            else:
                quiet.append(agent.label)
        if quiet:
            out(f"nothing kept or found of {', '.join(quiet)}")
        for sentence in skipped:
            out(sentence)
        out(f"the store: {root}, {human(size)}")
    for problem in problems:
        err(problem)
    return Exit.ERROR if problems else Exit.OK


def _flushed(out: Any) -> Any:
    import sys

    def say(text: str) -> None:
        out(text)
        sys.stdout.flush()

    return say
