"""Other agents' sessions in the commands: `--agent` for `wren ls` and `wren watch`, the refusal of another agent's
file by a command that reads Wren journals only, and the viewer on what `wren watch` shows. Which session a name
means, and whose it is, is `sessions.opening`'s to say; `wren ls --agent`'s listing is cli/ls.py's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..foreign import FORMATS
from ..sessions.refusal import ALL

if TYPE_CHECKING:
    from ..sessions.opening import Watched
    from ..sessions.tailing import WatchMode
    from ..tui.app import WrenApp
    from ..tui.filters import Only


def add_agent_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--agent NAME|all` (a name of `FORMATS`), for `wren ls` and `wren watch`; its help made when shown."""

    def helped() -> str:
        formats = list(FORMATS.values())  # every reader imported: their folders and where they keep sessions
        names = ", ".join(f"{f.name}: {f.label}" for f in formats)
        env = ", ".join(f"${f.folder.env}" for f in formats)
        defaults = ", ".join(str(f.folder.root({}, Path("~"))) for f in formats)
        where = "".join(f"; {f.folder.where}" for f in formats if f.folder.where)
        return (
            f"{what} of another agent ({names}), or all of them, from its own folder: --dir, else the folder "
            f"its variable names ({env}), else its default ({defaults}){where}; an mca journal (the design's own: JSON "
            "lines of seq, ts and type with no crc) has no folder of its own: it is read by its path, and listed with "
            "--agent all --dir"
        )

    parser.add_argument("--agent", choices=(*FORMATS, ALL), help=ShownHelp(helped))


class ShownHelp(str):
    """A help text made only when help is shown: argparse fills a help in (`help % params`) as it prints it, so a
    command run without --help never makes it (the `--agent` help imports every agent's reader)."""

    def __new__(cls, make: Callable[[], str]) -> ShownHelp:
        shown = super().__new__(cls, "(made when shown)")
        shown._make = make
        return shown

    _make: Callable[[], str]

    def __mod__(self, params: object) -> str:
        return self._make() % params


# What `wren export` writes of another agent's session, said when it refuses another format.
ATIF_TOO = " (another agent's session goes out as an ATIF trajectory: --format atif)"


def only_wren(path: Path, folder: Path, command: str, what: str, besides: str = "") -> None:
    """Refuse another agent's session file for a command that reads Wren journals only (export, diff), before it writes.

    Raises:
        UsageError: one sentence naming the file's agent, what the command takes, and the way there (a fork
            into `folder`, the journals folder).
    """
    from ..sessions.opening import format_of  # what a file is: only for a command that may refuse another's

    fmt = format_of(path)
    if fmt is not None:
        from ..agent.errors import UsageError  # only for the refusal: `wren ls` and `wren watch` never load it
        from ..journal.commandline import wren_command

        raise UsageError(
            f"{path}: is {_a(fmt.label)} {fmt.label} session, not a Wren journal, and wren {command} {what} Wren "
            "journals only"
            f"{besides}; "
            f"fork it into one first (`{wren_command('fork', str(path), folder=folder)}` lists its points)"
        )


def _a(word: str) -> str:
    """The article before `word` ("an OpenCode", "an aider", "a Claude Code")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


# --- wren watch --agent --------------------------------------------------------------------------------


def agents_browser(args: argparse.Namespace) -> WrenApp:
    """The viewer `wren watch --agent NAME|all [--dir DIR]` runs: the browser over the agents' folders."""
    from ..sessions.opening import watched

    shown = watched(None, folder=getattr(args, "dir", None), agent=args.agent)
    return viewer(shown, watch_mode="poll" if getattr(args, "poll", False) else "auto")


def viewer(shown: Watched, *, pick: bool = False, watch_mode: WatchMode = "auto", only: Only | None = None) -> WrenApp:
    """The viewer on what `wren watch` shows (`sessions.opening.watched`): a session, a folder of journals, or the
    agents' folders (a database of sessions among them); another agent's session forks into `shown.journals`."""
    from ..tui.app import WrenApp
    from ..tui.screens.foreign import ForeignFolder

    agents = None if shown.agents is None else [ForeignFolder(fmt, root) for fmt, root in shown.agents]
    return WrenApp(
        folder=shown.folder,
        session=shown.session,
        pick=pick,
        watch_mode=watch_mode,
        journals=shown.journals,
        only=only,
        agents=agents,
    )
