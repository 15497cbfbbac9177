"""`wren search`: every match of a pattern across every session, newest session first, like grep.

Exit 0 with a match, 1 without (grep's convention: no sentence), 2 for a pattern or an option that
cannot be used. A damaged journal is searched up to where reading stops, and the list says where after its
hits; a journal that cannot be opened is named on stderr and the others are still searched.

The parser is built from this module alone; the search itself is `searching.py`, imported when a search
runs, so `wren search --help` loads neither the engine nor the index.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..foreign import FORMATS, WREN
from ..search.choices import REGEX_SECONDS, ROLES

if TYPE_CHECKING:
    from .exits import Exit


def _others() -> str:
    return ", ".join(f"{name}: {label}, ${env}" for name in FORMATS for label, env in [FORMATS.described(name)])


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser, json_option, positive

    p = command_parser(
        sub,
        "search",
        cmd_search,
        "Search the text of every session (what the user, the model and the tools said, tool calls "
        "and their arguments, errors) read-only, newest session first. A pattern without a capital letter "
        "ignores case. Exit 0 with a match, 1 without, 2 for a bad pattern or option. A damaged journal is "
        "searched up to where reading stops, and the list says where.",
        common,
    )
    p.add_argument(
        "pattern", metavar="PATTERN", help="the text to find, as you would type it (or a regex with --regex)"
    )
    p.add_argument(
        "--agent",
        choices=(WREN, *FORMATS, "all"),  # search.agents.agents(), and all
        default="all",
        help="whose sessions to search (default: all): wren's from its journals folder, the other agents' "
        f"({_others()}) from their own folders (their variables, else their defaults); with --dir, every agent's "
        "from that folder, each file by its content",
    )
    p.add_argument("--project", metavar="PATH", help="only events of runs that worked in PATH or a folder inside it")
    p.add_argument(
        "--since",
        metavar="DATE",
        help="only events at or after DATE: 2026-11-30, 2026-11-30T14:00 (UTC unless it says), or 3d, 12h, 30m ago",
    )
    p.add_argument(
        "--role",
        choices=ROLES,
        action="append",
        help="only what this role said (repeat for several): user, assistant, tool (calls and results), "
        "thinking, error",
    )
    p.add_argument(
        "--regex",
        action="store_true",
        help="PATTERN is a Python regular expression (look-around and backreferences too). Python's engine "
        "backtracks, so a pattern like (a+)+$ can take exponential time: the search's matches get "
        f"{REGEX_SECONDS:g} s in all (WREN_REGEX_SECONDS), then it stops with exit 2",
    )
    p.add_argument(
        "--no-index",
        action="store_true",
        help="read every session file instead of the index kept in the journals folder's .index (a cache: "
        "brought up to date with the files before each search, deleted at no loss; see docs/search-index.md)",
    )
    json_option(
        p,
        'one JSON object a line: each match ({"type": "hit", ...}, every one: --json is not cut per session), '
        'each session whose reading stopped early ({"type": "stopped", ...}), and after a page cut by --limit '
        '{"type": "page", "after": CURSOR}',
    )
    p.add_argument(
        "-l",
        "--files-with-matches",
        dest="files",
        action="store_true",
        help="only the sessions that match, one path a line (as rg -l; each one `wren log` opens), each read "
        'no further than its first match; with --json {"type": "session", ...}',
    )
    p.add_argument(
        "--all",
        dest="every",
        action="store_true",
        help=f"every hit of each session (by default, on a terminal and in a pipe alike, the first {PER_SESSION} "
        "of a session and a count of the rest)",
    )
    p.add_argument(
        "--limit",
        type=positive("hits", 20),
        metavar="N",
        help="at most N hits (with -l, N sessions), then the cursor of the next page on stderr "
        "(next page: --after CURSOR)",
    )
    p.add_argument(
        "--after",
        metavar="CURSOR",
        help="the next page: start where the page that printed CURSOR stopped (the same search, the same options)",
    )


def cmd_search(args: argparse.Namespace) -> Exit:
    from . import loading

    with loading():
        from .searching import cmd_search as run  # the engine, the index, the readers: only for a search

    return run(args, PER_SESSION)


PER_SESSION = 5  # hits of a session shown without --all: a screenful for a few sessions, then a count
