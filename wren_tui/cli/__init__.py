"""The `wren` command: parse, dispatch, and the one place where what happened becomes an exit status.

The CLI is its own layer: it imports the journal, the agent, the viewer and the fleet, and
nothing imports it (tests/test_layers.py checks both). Each command is a module of this package
with `register(sub, common)`, which adds its parser (with `common`, the shared --dir, as a parent)
and sets its handler; COMMANDS names them. A handler returns an `Exit`, or raises: agent, viewer,
journal and command errors alike are said once, here, from the table in `exits.py`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys

# typing is not imported: `wren --help` and `--version` run without it (1.8 ms), and the type checker reads this as
# typing's own.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any, NoReturn

    from .exits import Exit

    Handler = Callable[[argparse.Namespace], Exit]
    Register = Callable[[Any, argparse.ArgumentParser], None]

# What `wren --help` says of the exit statuses (`exits.Exit`; tests/test_command_imports.py checks they agree). Here,
# not in exits.py: the exit table imports the agent's and the journal's errors, which --help and --version need not.
SUMMARY = (
    "exit status: 0 ok, 1 error, 2 bad usage, 3 resume refused (outcome unknown), 4 journal unreadable past a "
    "line, 5 the journal was changed under the run, 128+N stopped by signal N (130 Ctrl+C, 143 SIGTERM)"
)

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
    "keep",
    "verify",
)

# What `wren --help` says of each command: the `help=` its module registers (tests/test_command_imports.py
# checks they are the same), so the list is shown, and --version answered, without importing any command.
SUMMARIES: dict[str, str] = {
    "log": "the events of a session, and where and why reading stopped",
    "ls": "sessions, newest first, with their state",
    "search": "every match of a pattern across every session, newest first",
    "fork": "list clean fork points, or fork a new session at SEQ",
    "run": "one task to the end; prints the session id",
    "resume": "continue this workspace's latest (or ID) session, optionally with a new MESSAGE",
    "chat": "a REPL (you >) with /log, /fork [SEQ], /sessions, /quit",
    "watch": "the viewer: a session live, or the journals of a folder",
    "export": "write a session as Markdown, a self-contained HTML page, JSON, or an ATIF trajectory",
    "otel": "send sessions as OpenTelemetry traces (OTLP/HTTP) to Phoenix, Langfuse or any collector",
    "diff": "compare two sessions (a fork and its parent): what they share, then turn by turn",
    "diff-files": "a unified diff of the workspace's files between two points of a session (from its snapshots)",
    "snapshots": "the workspace snapshots' store: its space; prune drops what only deleted sessions refer to",
    "rewind": "put a session's workspace and conversation back as they were at SEQ (in place; --undo puts them back)",
    "blame": "for each line of a file, the session's turn and event (edit or command) that last changed it",
    "demo": "the offline scripted agent fixing a failing test, watched live",
    "mirror": "ship every journal of a folder to NATS JetStream, live (the fleet)",
    "keep": "copy every agent's sessions into Wren's kept store, so an agent deleting one loses nothing",
    "verify": "check every checksum of every copy `wren keep` kept; exit 4 when one is damaged",
}


def _columns() -> int:
    """The width argparse lays help out in: the terminal's columns (COLUMNS first, else the terminal's, else 80),
    less 2, as `shutil.get_terminal_size` says them; asked once, where argparse asks again for every option added
    (its formatter checks each) and imports shutil, and with it bz2 and lzma, to ask."""
    global _width
    if _width is None:
        try:
            columns = int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            columns = 0
        if columns <= 0:
            try:
                columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):
                columns = 0
        _width = (columns or 80) - 2
    return _width


_width: int | None = None


class Formatter(argparse.HelpFormatter):
    """argparse's help formatter, laid out in `_columns()`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() if width is None else width)


class _Version(argparse.Action):
    """--version: the report (`about.report`), made only when asked: its module, and the C modules, load then."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> NoReturn:
        from .about import report

        sys.stdout.write(report() + "\n")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose error line shows what a terminal would obey (an argument's ESC, CR, newline), and
    whose help is laid out without a look at the terminal for each option (`Formatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        from ..journal.visible import visible

        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {visible(message)}\n")


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The `wren` parser, and each command's own parser by name (only `only`'s, when it is given).

    A command's module is imported to register it: running one command loads that module alone, so
    `wren run` does not pay for the viewer's, search's or the other agents' code.
    """
    from .options import common_options

    parser, sub = _top_parser()
    common = common_options()
    for name in COMMANDS if only is None else (only,):
        register: Register = importlib.import_module(f"{__name__}.{name.replace('-', '_')}").register
        register(sub, common)
    return parser, dict(sub.choices)


def listing_parser() -> argparse.ArgumentParser:
    """The `wren` parser for what needs no command's own: --help, --version, no command or an unknown one.

    Each command is listed by its summary (SUMMARIES) and imports nothing: `wren --help` and `wren
    --version` start as fast as Python and this package's first modules allow.
    """
    parser, sub = _top_parser()
    for name in COMMANDS:
        sub.add_parser(name, help=SUMMARIES[name])
    return parser


def _top_parser() -> tuple[argparse.ArgumentParser, Any]:
    parser = _Parser(
        prog="wren",
        description="A coding agent that survives being killed, and a viewer that only watches it. "
        "Every step is appended to a journal (JSON Lines) before anything else changes.",
        epilog=SUMMARY,
    )
    parser.add_argument(
        "--version", action=_Version, help="the version, the C modules in use and the journal's durable sync"
    )
    # The commands' prog named (`wren`: what argparse would find by laying out the usage line of this parser, which has
    # no positional yet), not found by laying it out on every start.
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND", prog=parser.prog)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Options before or after positionals, in every command (`wren resume ID --yes MESSAGE`).

    argparse cannot intermix around subcommands, so the command's own parser does it for the words
    after the command name; its errors print that command's usage line, not wren's.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    at = next((i for i, word in enumerate(words) if not word.startswith("-")), None)
    if at is None or words[at] not in COMMANDS:
        return listing_parser().parse_args(words)  # --help, --version, no command, or an unknown one
    if at:
        listing_parser().parse_args(words[:at])  # wren's own options before the command (--help, --version)
    # Only the command run is imported: a command starts without loading the others (the viewer, the agent).
    commands = build_parser(words[at])[1]
    args = commands[words[at]].parse_intermixed_args(words[at + 1 :])
    args.command = words[at]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run `wren ARGV`; the exit status. Errors are one sentence on stderr, never a traceback."""
    global _own_process
    _own_process = argv is None
    try:
        return _dispatch(argv)
    finally:
        _settle_output()


# `main` runs as the `wren` process (its words from sys.argv), not called by a program or a test that goes on after
# it: only then are the objects of the process's imports frozen (`loading`).
_own_process = False


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """Modules imported with the cyclic garbage collector off, what they made frozen after (`gc.freeze`).

    A module's classes, functions and tables live as long as the process: collecting while they are made
    (every 700 allocations) finds nothing, and each later full collection would go through them all again, the
    last one at the process's end too: about 10 ms of the 120 ms of CPU of a search answered from the index. The
    process still ends as before (its last collection closes what was left open, the index's connection first).
    """
    if not _own_process:
        yield  # a program that goes on after this command: its garbage collector is its own
        return
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


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
    with loading():  # the command's module and what it imports
        args = parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        listing_parser().print_help()
        return 2  # Exit.USAGE, without importing the exit table
    try:
        return handler(args)
    except BaseException as exc:
        from .exits import report  # the command imported it already; loaded here only to report

        status = report(exc)
        if status is None:
            raise  # not in the table: a bug, whose traceback says where (or SystemExit, as it is)
        return status
