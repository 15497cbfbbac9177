"""`wren run`: a new session on a task, worked to its end.

The agent's modules (the loop, the tools) are imported when the command runs, so `wren log` stays fast.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..agent.errors import UsageError
from .exits import Exit
from .options import agent_options, command_parser, settings_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(
        sub,
        "run",
        cmd_run,
        "Start a new session on TASK and work until the model stops asking for tools. "
        "The workspace is the current folder (or --workspace); the journal goes to the journals folder "
        "(--dir, else WREN_DIR, else $XDG_STATE_HOME/wren/journals, outside the workspace).",
        common,
    )
    p.add_argument("task", metavar="TASK", nargs="+", help='what to do, e.g. "run the tests and fix the failing case"')
    p.add_argument(
        "--session-id", metavar="ID", help="use this new session id (s-YYYYMMDD-HHMMSS-xxxx; default: a new one)"
    )
    agent_options(p)


def cmd_run(args: argparse.Namespace) -> Exit:
    task = " ".join(args.task).strip()
    if not task:
        raise UsageError("TASK is empty; say what to do")
    settings = settings_of(args)
    from ..agent.session import run_task, run_until_signal
    from .snapshots import keep_within_budget

    ended = run_until_signal(lambda: run_task(settings, task, args.session_id))
    keep_within_budget(settings.folder)  # the snapshot store: held to its budget after each run
    return Exit.of(ended)
