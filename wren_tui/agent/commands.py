"""The agent's commands (run, chat, resume): registered on the `wren` parser.

Heavy modules (the loop, httpx) are imported inside the handlers so `wren log` stays fast.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .models import MODELS

if TYPE_CHECKING:
    from .session import Settings

_EXIT_USAGE = 2


def _agent_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workspace", metavar="DIR", help="the folder the agent works in (default: the current folder)")
    p.add_argument("-y", "--yes", action="store_true", help="allow every tool call without asking")
    p.add_argument(
        "--model",
        choices=tuple(MODELS),
        help="scripted (offline), openai (WREN_BASE_URL, WREN_API_KEY, WREN_MODEL) or anthropic "
        "(ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, WREN_MODEL); default: WREN_PROVIDER, else openai when "
        "WREN_API_KEY is set, else scripted",
    )
    p.add_argument(
        "--pace", action="store_true", help="stream and space the steps like a real model, for a live viewer"
    )
    p.add_argument(
        "--pace-factor",
        type=float,
        metavar="F",
        help="--pace scaled by F (0.1 is ten times faster); implies --pace (default: 1 with --pace)",
    )
    p.add_argument(
        "--max-steps", type=int, default=30, metavar="N", help="model replies per turn before it stops (default: 30)"
    )
    p.add_argument(
        "--command-timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds a run_command may take (default: 120)",
    )
    p.add_argument("--seq-fd", type=int, metavar="FD", help="write each seq to this file descriptor once it is durable")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "run",
        parents=[common],
        help="one task to the end; prints the session id",
        description="Start a new session on TASK and work until the model stops asking for tools. "
        "The workspace is the current folder (or --workspace); the journal goes to the journals folder "
        "(--dir, else WREN_DIR, else $XDG_STATE_HOME/wren/journals, outside the workspace).",
    )
    p.add_argument("task", metavar="TASK", nargs="+", help='what to do, e.g. "run the tests and fix the failing case"')
    p.add_argument(
        "--session-id", metavar="ID", help="use this new session id (s-YYYYMMDD-HHMMSS-xxxx; default: a new one)"
    )
    _agent_options(p)
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser(
        "resume",
        parents=[common],
        help="continue this workspace's latest (or ID) session, optionally with a new MESSAGE",
        description="Replay a session and continue it. A call with side effects that started but has no "
        "recorded outcome is never guessed: resume prints it and exits 3, unless --assume-failed.",
    )
    p.add_argument("words", metavar="[ID] [MESSAGE]", nargs="*", help="a session id or journal path, then a message")
    p.add_argument(
        "--assume-failed",
        action="store_true",
        help="record calls of unknown outcome as failed (a recovery event) and tell the model to check",
    )
    _agent_options(p)
    p.set_defaults(handler=cmd_resume)

    p = sub.add_parser(
        "chat",
        parents=[common],
        help="a REPL (you >) with /log, /fork [SEQ], /sessions, /quit",
        description="Talk to the agent turn by turn. Commands: /log, /fork [SEQ], /sessions, /quit.",
    )
    p.add_argument(
        "--resume", metavar="ID", nargs="?", const="", help="continue this workspace's latest (or ID) session"
    )
    _agent_options(p)
    p.set_defaults(handler=cmd_chat)


def settings_of(args: argparse.Namespace) -> Settings:
    from ..journal.store import journals_dir
    from .session import Settings, UsageError

    workspace = Path(args.workspace).expanduser() if args.workspace else Path.cwd()
    if not workspace.is_dir():
        raise UsageError(f"--workspace {workspace}: no such folder")
    workspace = workspace.resolve()
    pace = args.pace_factor if args.pace_factor is not None else (1.0 if args.pace else 0.0)
    if pace < 0:
        raise UsageError(f"--pace-factor {pace:g}: must be 0 or more (0 is no pacing)")
    if args.max_steps < 1:
        raise UsageError(f"--max-steps {args.max_steps}: must be 1 or more (model replies per turn)")
    if args.command_timeout <= 0:
        raise UsageError(f"--command-timeout {args.command_timeout:g}: must be more than 0 seconds")
    if args.seq_fd is not None:
        _check_seq_fd(args.seq_fd)
    return Settings(
        workspace=workspace,
        workspace_given=bool(args.workspace),
        folder=journals_dir(args.dir),
        model=args.model,
        yes=args.yes,
        pace=pace,
        max_steps=args.max_steps,
        command_timeout=args.command_timeout,
        seq_fd=args.seq_fd,
    )


def _check_seq_fd(fd: int) -> None:
    """--seq-fd names a descriptor open for writing, or the run does not start: a supervisor would get nothing."""
    from .session import UsageError

    try:
        mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE if fd >= 0 else None
    except OSError:
        mode = None
    if mode is None:
        raise UsageError(f"--seq-fd {fd}: no such open file descriptor; open it for writing before starting wren")
    if mode not in (os.O_WRONLY, os.O_RDWR):
        raise UsageError(f"--seq-fd {fd}: the descriptor is open for reading only; open it for writing")


def _guard(args: argparse.Namespace, body: Any) -> int:
    from .session import UsageError

    try:
        result: int = body(settings_of(args))
    except UsageError as exc:
        sys.stderr.write(f"wren: {exc}\n")
        return _EXIT_USAGE
    return result


def cmd_run(args: argparse.Namespace) -> int:
    from .session import run_task, run_until_signal

    task = " ".join(args.task).strip()
    if not task:
        sys.stderr.write("wren: TASK is empty; say what to do\n")
        return _EXIT_USAGE
    return _guard(args, lambda s: run_until_signal(lambda: run_task(s, task, args.session_id)))


def cmd_resume(args: argparse.Namespace) -> int:
    from ..journal.store import SESSION_ID
    from .session import resume_session, run_until_signal

    words: list[str] = list(args.words)
    ref: str | None = None
    if words and (SESSION_ID.match(words[0]) or words[0].endswith(".jsonl")):
        ref = words.pop(0)
    message = " ".join(words).strip() or None
    return _guard(args, lambda s: run_until_signal(lambda: resume_session(s, ref, message, args.assume_failed)))


def cmd_chat(args: argparse.Namespace) -> int:
    from .chat import chat

    return _guard(args, lambda s: chat(s, args.resume))
