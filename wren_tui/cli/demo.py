"""`wren demo`: a fresh demo workspace, the scripted agent in its own process, the viewer on it."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..journal.commandline import wren_command
from ..journal.errors import JournalError
from ..journal.store import SUFFIX, new_session_id, write_problem
from .console import out
from .exits import Exit
from .options import command_parser, folder_of, refuse_without_agent

DEMO_TASK = "run the tests, find the failing case and fix it"
_STOP_WAIT_S = 5.0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(
        sub,
        "demo",
        cmd_demo,
        "Write a fresh demo workspace (a small package with a failing test), start the "
        "scripted agent on it in its own process, and watch its journal live. The viewer stays when "
        "the agent ends; quitting the viewer stops an agent still running.",
        common,
    )
    p.add_argument("--prepare", metavar="DIR", help="only write the demo workspace into DIR (new or empty) and exit")
    p.add_argument(
        "--pace-factor",
        type=float,
        default=1.0,
        metavar="F",
        help="pace scaled by F (0.1: ten times faster; default: 1)",
    )


def cmd_demo(args: argparse.Namespace) -> Exit:
    refuse_without_agent()  # before the workspace or the journals folder is made
    from ..agent.workspace import prepare_workspace

    folder = folder_of(args)
    if args.prepare:
        workspace = prepare_workspace(Path(args.prepare))
        run = wren_command("run", DEMO_TASK, folder=folder, workspace=workspace)
        out(f"demo workspace written to {workspace}\nrun the agent on it with:\n  {run}")
        return Exit.OK

    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise JournalError(
            f"{write_problem(folder, exc)}; give --dir a folder you can write (or set WREN_DIR)"
        ) from None
    base = Path(tempfile.mkdtemp(prefix="wren-demo-"))
    workspace = prepare_workspace(base / "workspace")
    session = new_session_id()
    journal = folder / f"{session}{SUFFIX}"
    log_path = base / "agent.log"
    command = [
        sys.executable, "-m", "wren_tui", "run", "--pace", "--pace-factor", str(args.pace_factor), "--yes",
        "--workspace", str(workspace), "--dir", str(folder), "--session-id", session, DEMO_TASK,
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        # Its own session, so a Ctrl+C meant for the viewer does not reach the agent half-way.
        agent = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    try:
        from ..tui.app import WrenApp

        WrenApp(folder=folder, session=journal).run()
    finally:
        stopped = _stop(agent)
    out(f"session    {session}\njournal    {journal}\nworkspace  {workspace}\nagent log  {log_path}")
    if stopped:
        out("the agent was still running and has been stopped (its journal records where)")
    elif agent.returncode not in (0, None):
        out(f"the agent exited with status {agent.returncode}; see the agent log above")
    out(f"watch it again: {wren_command('watch', session, folder=folder)}")
    return Exit.OK


def _stop(agent: subprocess.Popen[bytes]) -> bool:
    """Stop the agent if it still runs: SIGTERM, then SIGKILL after a bounded wait."""
    if agent.poll() is not None:
        return False
    os.killpg(agent.pid, signal.SIGTERM)
    try:
        agent.wait(timeout=_STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(agent.pid, signal.SIGKILL)
        agent.wait()
    return True
