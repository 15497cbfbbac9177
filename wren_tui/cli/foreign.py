"""Other agents' sessions in the commands: `--agent` for `wren ls` and `wren watch`, the refusal of another agent's
file by a command that reads Wren journals only, and the viewer on what `wren watch` shows. Which session a name
means, and whose it is, is `sessions.opening`'s to say.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..agent.errors import UsageError
from ..foreign import FORMATS, UNKNOWN, Format
from ..foreign.listing import AgentSession, list_agent_sessions, list_every_session
from ..journal.commandline import wren_command
from ..journal.store import journals_dir, project_label
from ..journal.visible import visible
from ..keep.found import Kept
from ..search import indexer
from ..search.folder_index import Index
from ..sessions.opening import ALL, agent_places, format_of
from ..sessions.refusal import nothing_readable
from .console import err, out, print_json
from .exits import Exit

if TYPE_CHECKING:
    from ..sessions.opening import Watched
    from ..sessions.tailing import WatchMode
    from ..tui.app import WrenApp
    from ..tui.filters import Only

_json = msgspec.json.Encoder()
_PROJECT_WIDTH = 28


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
    fmt = format_of(path)
    if fmt is not None:
        raise UsageError(
            f"{path}: is {_a(fmt.label)} {fmt.label} session, not a Wren journal, and wren {command} {what} Wren "
            "journals only"
            f"{besides}; "
            f"fork it into one first (`{wren_command('fork', str(path), folder=folder)}` lists its points)"
        )


def _a(word: str) -> str:
    """The article before `word` ("an OpenCode", "an aider", "a Claude Code")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


# --- wren ls --agent -------------------------------------------------------------------------------


def _listed(places: list[tuple[Format, Path]], journals: Path, skipped: list[str]) -> list[AgentSession]:
    """The sessions of `places` and the kept copies of those their agents lost (`keep.found`), each unchanged file's
    row from the store beside search's index (see docs/search-index.md); every file read when there is no store to
    keep (no journals folder yet)."""
    kept = Kept()
    index = Index(journals, writer=indexer)
    known = index.listing_cache()
    for sentence in index.said:
        err(f"warning: {sentence}")
    if known is None:
        return list_agent_sessions(places, skipped, kept=kept)
    try:
        sessions = list_agent_sessions(places, skipped, known, kept=kept)
        known.save([where for fmt, root in places for where in (root, *kept.folders(fmt))])
        return sessions
    finally:
        known.close()


def _row(s: AgentSession) -> dict[str, Any]:
    return {
        "agent": s.agent,
        "id": s.id,
        "path": str(s.path),
        "state": s.state,
        "lines": s.lines,
        "exact": s.exact,
        "started": s.started,
        "lastTs": s.last_ts,
        "durationS": s.duration_s,
        "tokens": s.tokens,
        "tokensExact": s.tokens_exact,
        "project": s.project,
        "reason": s.reason,
        "kept": s.kept,
    }


def ls_agents(args: argparse.Namespace) -> Exit:
    """`wren ls --agent NAME|all [--dir DIR] [--json]`: the agents' sessions, newest first."""
    places = agent_places(args.agent, getattr(args, "dir", None))
    skipped: list[str] = []
    if args.agent == ALL and getattr(args, "dir", None):
        sessions = list_every_session(places[0][1], skipped)  # one folder for all: each file by its content
    else:
        sessions = _listed(places, journals_dir(None), skipped)
    sessions = sessions[: getattr(args, "limit", None)]  # a page: the newest N
    for sentence in dict.fromkeys(skipped):  # a folder two agents share is said once
        err(f"{sentence}; they are not listed")
    for s in sessions:
        if s.state in ("unreadable", UNKNOWN):
            err(f"{s.reason}; it is listed as {s.state}")
    # --agent all --dir: every file was judged by its content, so a folder of files that lists nothing holds none
    # Wren reads (with one agent named, it may hold another's).
    named = Path(args.dir).expanduser() if args.agent == ALL and getattr(args, "dir", None) else None
    if not sessions and named is not None and (said := nothing_readable(named)) is not None:
        err(said)  # a folder of files Wren does not read is not an empty folder
        if args.json:
            print_json([])
        return Exit.UNREADABLE
    if args.json:
        print_json([_row(s) for s in sessions])
        return Exit.OK
    if not sessions:
        where = ", ".join(dict.fromkeys(str(root) for _fmt, root in places))  # --dir: every agent's is the same
        out(f"no sessions in {where}")
        return Exit.OK
    many = args.agent == ALL
    width = max((len(s.agent) for s in sessions), default=0) if many else 0
    head = f"{'AGENT':<{max(width, 7)}}  " if many else ""
    out(f"{head}{'ID':<36}  {'STARTED':<24}  {'LINES':>7}  {'DURATION':>8}  {'TOKENS':>8}  {'STATE':<16}  PROJECT")
    for s in sessions:
        agent = f"{s.agent:<{max(width, 7)}}  " if many else ""
        if s.state in ("unreadable", UNKNOWN):
            why = "not a session Wren reads" if s.state == UNKNOWN else s.reason
            out(visible(f"{agent}{s.id:<36}  {'-':<24}  {'-':>7}  {'-':>8}  {'-':>8}  {s.state:<16}  ({why})"))
            continue
        dur = f"{s.duration_s:.1f}s" if s.duration_s is not None else "-"
        lines = str(s.lines) if s.exact else f"~{s.lines}"
        tokens = str(s.tokens) if s.tokens_exact else f"~{s.tokens}"
        place = project_label(s.project, _PROJECT_WIDTH)
        line = f"{agent}{s.id:<36}  {s.started or '-':<24}  {lines:>7}  {dur:>8}  {tokens:>8}  {s.state:<16}  {place}"
        out(visible(line))
        if s.kept is not None:
            out(visible(f"{' ' * len(agent)}  {s.kept}: {s.path}"))
    return Exit.OK


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
