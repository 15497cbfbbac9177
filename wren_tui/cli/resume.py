"""`wren resume`: continue this workspace's latest (or a named) session, optionally with a new message."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..journal.store import is_session_id
from .exits import Exit
from .options import agent_options, command_parser, settings_of


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(
        sub,
        "resume",
        cmd_resume,
        "Replay a session and continue it. A call with side effects that started but has no "
        "recorded outcome is never guessed: resume prints it and exits 3, unless --assume-failed.",
        common,
    )
    p.add_argument("words", metavar="[ID] [MESSAGE]", nargs="*", help="a session id or journal path, then a message")
    p.add_argument(
        "--assume-failed",
        action="store_true",
        help="record calls of unknown outcome as failed (a recovery event) and tell the model to check",
    )
    agent_options(p)


def cmd_resume(args: argparse.Namespace) -> Exit:
    words: list[str] = list(args.words)
    ref: str | None = None
    if words and (is_session_id(words[0]) or words[0].endswith(".jsonl")):
        ref = words.pop(0)
    message = " ".join(words).strip() or None
    settings = settings_of(args)
    if ref is not None and not is_session_id(Path(ref).stem) and Path(ref).is_file():
        # A path not named as Wren names journals: another agent's session, or the design's own journal (mca),
        # is never continued in place (nothing proves its lines whole): one sentence, and the way there (a fork).
        from .foreign import only_wren

        only_wren(Path(ref), settings.folder, "resume", "continues")
    from ..agent.session import resume_session, run_until_signal
    from .snapshots import keep_within_budget

    ended = run_until_signal(lambda: resume_session(settings, ref, message, args.assume_failed))
    keep_within_budget(settings.folder)  # the snapshot store: held to its budget after each run
    return Exit.of(ended)
