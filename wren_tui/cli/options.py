"""What the commands' parsers share: the parser itself (its summary, --dir, its handler), --json, the session
argument, a count's type, and the agent's options for run, resume and chat."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..portable import access_mode, agent_unsupported

TYPE_CHECKING = False  # typing's own to the type checker; typing is not imported (a command's help runs without it)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..agent.session import Settings
    from . import Handler

# What a command needs of the journal and the agent is imported where it is used: every command's parser is
# built with this module (`common_options`), and `wren search --help` loads neither (tests/test_command_imports.py).

# Where journals go when --dir is not given (journal/store.py:journals_dir decides it).
DEFAULT_DIR_HELP = "$WREN_DIR, else $XDG_STATE_HOME/wren/journals, else ~/.local/state/wren/journals"


def common_options() -> argparse.ArgumentParser:
    """The parent parser of every command: --dir."""
    from . import Formatter  # the package's: argparse's own asks the terminal's width (importing shutil) per option

    common = argparse.ArgumentParser(add_help=False, formatter_class=Formatter)
    common.add_argument("--dir", metavar="DIR", help=f"journals folder (default: {DEFAULT_DIR_HELP})")
    return common


def folder_of(args: argparse.Namespace) -> Path:
    """The journals folder: --dir, else WREN_DIR, else the per-user default."""
    from ..journal.store import journals_dir

    return journals_dir(getattr(args, "dir", None))


def named_folder_of(args: argparse.Namespace) -> Path:
    """The journals folder, refused when the person named it (--dir or WREN_DIR) and nothing is there
    (`sessions.refusal.named_journals`)."""
    from ..sessions.refusal import named_journals

    return named_journals(getattr(args, "dir", None))


def agent_options(p: argparse.ArgumentParser) -> None:
    """The options of the commands that run the agent (run, resume, chat)."""
    from ..agent.models import MODELS

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
    p.add_argument(
        "--no-snapshots",
        action="store_true",
        help="do not snapshot the workspace before calls with side effects (the journal says so; a fork then "
        "restores the conversation only)",
    )


def refuse_without_agent() -> None:
    """Before the agent's commands (run, chat, resume, demo) touch anything: UsageError where it cannot run.

    On a system without what the agent needs (Windows: no flock, no process groups, no /bin/sh; see
    `portable.agent_unsupported`) the command stops here, with the sentence that names WSL, before
    a folder, a journal or a workspace is made.
    """
    why = agent_unsupported()
    if why is not None:
        from ..agent.errors import UsageError

        raise UsageError(why)


def settings_of(args: argparse.Namespace) -> Settings:
    """The agent's settings from the options; UsageError names the first one that cannot work."""
    refuse_without_agent()
    from ..agent.errors import UsageError
    from ..agent.session import Settings  # the agent's modules load only for the commands that run it
    from ..journal.store import journals_dir

    workspace = Path(os.path.expanduser(args.workspace)) if args.workspace else Path.cwd()
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
        snapshots=not args.no_snapshots,
    )


def _check_seq_fd(fd: int) -> None:
    """--seq-fd names a descriptor open for writing, or the run does not start: a supervisor would get nothing."""
    from ..agent.errors import UsageError

    try:
        mode = access_mode(fd) if fd >= 0 else -1  # None: the system cannot say how it is open
    except OSError:
        mode = -1
    if mode == -1:
        raise UsageError(f"--seq-fd {fd}: no such open file descriptor; open it for writing before starting wren")
    if mode is not None and mode not in (os.O_WRONLY, os.O_RDWR):
        raise UsageError(f"--seq-fd {fd}: the descriptor is open for reading only; open it for writing")


# What every command's parser shares (each command's `register` builds its own with these).

SESSION_HELP = "a session id (s-YYYYMMDD-HHMMSS-xxxx) or a journal file"
JSON_HELP = "JSON for scripts"


def command_parser(
    sub: Any, name: str, handler: Handler, description: str, common: argparse.ArgumentParser | None = None
) -> argparse.ArgumentParser:
    """The parser of the command `name`, run by `handler`, with --dir where `common` is given.

    Its one-line help is its summary in SUMMARIES, the line `wren --help` lists without importing it.
    """
    from . import SUMMARIES

    p: argparse.ArgumentParser = sub.add_parser(
        name, parents=[] if common is None else [common], help=SUMMARIES[name], description=description
    )
    p.set_defaults(handler=handler)
    return p


def session_argument(p: argparse.ArgumentParser) -> None:
    """The session a command reads: its id or its journal file."""
    p.add_argument("session", metavar="ID|PATH", help=SESSION_HELP)


def json_option(p: argparse.ArgumentParser, help: str = JSON_HELP) -> None:
    """--json: the command's answer as JSON for scripts (`help` says what it holds)."""
    p.add_argument("--json", action="store_true", help=help)


def agents_option(p: argparse.ArgumentParser, help: str) -> None:
    """--agent AGENT, repeatable: the agents Wren reads (`foreign.FORMATS`), by name."""
    from ..foreign import FORMATS

    p.add_argument("--agent", action="append", choices=list(FORMATS), metavar="AGENT", help=help)


def positive(noun: str, example: int) -> Callable[[str], int]:
    """An option's type: a whole number of `noun` (1 or more); argparse's error gives `example`."""

    def whole(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {noun}: give 1 or more, such as {example}")
        return n

    return whole
