"""The `wren` command: parse, dispatch, and the one place where what happened becomes an exit status.

The CLI is its own layer: it imports the journal, the agent, the viewer and the fleet, and
nothing imports it (tests/test_layers.py checks both). Each command is a module of this package
with `register(sub, common)`, which adds its parser (with `common`, the shared --dir, as a parent)
and sets its handler; COMMANDS names them. A handler returns an `Exit`, or raises: agent, viewer,
journal and command errors alike are said once, here, from the table in `exits.py`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .. import __version__
from .exits import SUMMARY, Exit, report
from .options import common_options

# The commands, in the order `wren --help` lists them: each a module of this package with
# `register(sub, common)`. A new command is one module and one line here.
COMMANDS: tuple[str, ...] = (
    "log",
    "ls",
    "search",
    "fork",
    "run",
    "resume",
    "chat",
    "watch",
    "export",
    "otel",
    "diff",
    "diff-files",
    "snapshots",
    "rewind",
    "blame",
    "demo",
    "mirror",
)

Handler = Callable[[argparse.Namespace], Exit]
Register = Callable[[Any, argparse.ArgumentParser], None]


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose error line shows what a terminal would obey (an argument's ESC, CR, newline)."""

    def error(self, message: str) -> NoReturn:
        from ..journal.visible import visible

        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {visible(message)}\n")


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The `wren` parser, and each command's own parser by name (only `only`'s, when it is given).

    A command's module is imported to register it: running one command loads that module alone, so
    `wren run` does not pay for the viewer's, search's or the other agents' code.
    """
    parser = _Parser(
        prog="wren",
        description="A coding agent that survives being killed, and a viewer that only watches it. "
        "Every step is appended to a journal (JSON Lines) before anything else changes.",
        epilog=SUMMARY,
    )
    parser.add_argument("--version", action="version", version=f"wren {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = common_options()
    for name in COMMANDS if only is None else (only,):
        register: Register = importlib.import_module(f"{__name__}.{name.replace('-', '_')}").register
        register(sub, common)
    return parser, dict(sub.choices)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Options before or after positionals, in every command (`wren resume ID --yes MESSAGE`).

    argparse cannot intermix around subcommands, so the command's own parser does it for the words
    after the command name; its errors print that command's usage line, not wren's.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    at = next((i for i, word in enumerate(words) if not word.startswith("-")), None)
    if at is None or words[at] not in COMMANDS:
        return build_parser()[0].parse_args(words)  # --help, --version, no command, or an unknown one
    if at:
        build_parser()[0].parse_args(words[:at])  # wren's own options before the command (--help, --version)
    # Only the command run is imported: a command starts without loading the others (the viewer, the agent).
    commands = build_parser(words[at])[1]
    args = commands[words[at]].parse_intermixed_args(words[at + 1 :])
    args.command = words[at]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run `wren ARGV`; the exit status. Errors are one sentence on stderr, never a traceback."""
    try:
        return _dispatch(argv)
    finally:
        _settle_output()


def _settle_output() -> None:
    """Flush stdout and stderr now; one that cannot be written any more is pointed at /dev/null.

    A closed terminal (SIGHUP: writes fail with EIO) or a reader that left (EPIPE) would otherwise
    make Python's own flush at exit fail, and it then exits 120 instead of the status chosen here.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stream.fileno())
                os.close(devnull)
                stream.flush()  # what was buffered goes nowhere, and Python's flush at exit succeeds
            except (OSError, ValueError):
                pass  # a stream without a descriptor (a test's StringIO): nothing to settle


def _dispatch(argv: Sequence[str] | None) -> int:
    args = parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        build_parser()[0].print_help()
        return Exit.USAGE
    try:
        return handler(args)
    except BaseException as exc:
        status = report(exc)
        if status is None:
            raise  # not in the table: a bug, whose traceback says where (or SystemExit, as it is)
        return status
