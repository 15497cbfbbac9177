"""`wren chat`: the REPL; what goes wrong in a turn is said here, on stderr, and the chat goes on."""

from __future__ import annotations

import argparse
from typing import Any

from .exits import Exit, report
from .options import agent_options, command_parser, settings_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(
        sub,
        "chat",
        cmd_chat,
        "Talk to the agent turn by turn. Commands: /log, /fork [SEQ], /sessions, /quit.",
        common,
    )
    p.add_argument(
        "--resume", metavar="ID", nargs="?", const="", help="continue this workspace's latest (or ID) session"
    )
    agent_options(p)


def cmd_chat(args: argparse.Namespace) -> Exit:
    settings = settings_of(args)
    from ..agent.chat import chat
    from .snapshots import keep_within_budget

    ended = chat(settings, args.resume, report)
    keep_within_budget(settings.folder)  # the snapshot store: held to its budget after each session
    return Exit.of(ended)
