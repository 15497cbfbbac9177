"""Other agents' sessions in the commands: `--agent` for `wren ls` and `wren watch`, and `wren log`,
`wren fork` on their files. ls.py, watch.py, log.py and fork.py call in here when given `--agent`, or a
file whose content is another agent's (`wren_tui/foreign` reads them).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..agent.errors import UsageError
from ..foreign import FORMATS, UNKNOWN, Format, detect, identify, kind_of, what_wren_opens
from ..foreign.base import split_member
from ..foreign.exported import open_lines
from ..foreign.listing import AgentSession, list_agent_sessions, list_every_session, roots
from ..journal.commandline import wren_command
from ..journal.errors import JournalError, NotASession, SessionNotFound
from ..journal.store import DOCUMENT_SUFFIX, SESSION_ID, SUFFIX, journals_dir, project_label, write_problem
from ..journal.store import resolve as resolve_journal
from ..journal.visible import visible
from ..keep.found import Kept
from ..search import indexer
from ..search.folder_index import Index
from .console import err, out, print_json
from .exits import CommandFailed, Exit, ForeignUnreadable
from .refusal import NOT_THEIRS, nothing_readable, of_no_kind

if TYPE_CHECKING:
    from ..tui.app import WrenApp
    from ..tui.tailing import WatchMode

ALL = "all"
_json = msgspec.json.Encoder()
_PROJECT_WIDTH = 28


def add_agent_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--agent NAME|all` (a name of `FORMATS`), for `wren ls` and `wren watch`; its help made when shown."""

    def helped() -> str:
        formats = list(FORMATS.values())  # every reader imported: their folders and where they keep sessions
        names = ", ".join(f"{f.name}: {f.label}" for f in formats)
        env = ", ".join(f"${f.env}" for f in formats)
        defaults = ", ".join(str(f.root({}, Path("~"))) for f in formats)
        where = "".join(f"; {f.where}" for f in formats if f.where)
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


def resolve(folder: Path, ref: str) -> Path:
    """The session a person means (`journal.store.resolve`), or another agent's file that is not JSON lines
    (a database, or `DB#ID` for one of its sessions; a Markdown chat history), by its content; for a session
    Wren kept that its agent deleted or truncated (`wren keep`), the kept copy, its mark said on stderr."""
    try:
        found = resolve_journal(folder, ref)
    except SessionNotFound:
        path = Path(ref).expanduser()
        base = split_member(path)[0]
        if "\x00" not in ref and base.is_symlink() and base.suffix not in (SUFFIX, DOCUMENT_SUFFIX):
            raise SessionNotFound(
                f"{base}: is a symbolic link; sessions are opened only directly (name the file it points to)"
            ) from None
        if "\x00" not in ref and base.is_file() and not base.is_symlink():
            kind = kind_of(path)
            if isinstance(kind, Format) and kind.export is not None:
                return _kept(path)
            if of_no_kind(path, kind):
                # A file a person named, of no kind Wren reads (a .db, .yaml, .md, .json of another program's):
                # the one refusal, naming what Wren reads, never "not a session id".
                raise NotASession(path, what_wren_opens(), NOT_THEIRS) from None
        kept = Kept()
        if "\x00" in ref or kept.copy_of(path) is None:
            raise
        return _kept(path, kept)
    return found if SESSION_ID.match(ref) else _kept(found)  # a Wren session's id: never another agent's


def _kept(path: Path, kept: Kept | None = None) -> Path:
    """The file a command reads for the session at `path`: its kept copy when its agent deleted or truncated it,
    else `path`; what the store says of it (`keep.found`) is said first, on stderr."""
    kept = kept or Kept()
    read = kept.copy_of(path) or path
    mark = kept.mark(path) or (kept.mark(read) if read != path else None)
    if mark is not None:
        also = f"; Wren's kept copy is read: {read}" if read != path else ""
        err(visible(f"{path}: {mark.sentence}{also}"))
    return read


def foreign_format(path: Path) -> Format | None:
    """The format of another agent's session file (by its content), or None for a Wren journal; NotASession
    (exit 4, naming what Wren opens) for a file that is neither.

    A .json file is opened only when its content is an ATIF trajectory (NotASession otherwise).
    """
    if path.suffix == DOCUMENT_SUFFIX and not isinstance(kind_of(path), Format):
        raise NotASession(path, what_wren_opens(), 'no "schema_version": "ATIF-v..." at its start')
    return identify(path)


# What `wren export` writes of another agent's session, said when it refuses another format.
ATIF_TOO = " (another agent's session goes out as an ATIF trajectory: --format atif)"


def only_wren(path: Path, folder: Path, command: str, what: str, besides: str = "") -> None:
    """Refuse another agent's session file for a command that reads Wren journals only (export, diff), before it writes.

    Raises:
        UsageError: one sentence naming the file's agent, what the command takes, and the way there (a fork
            into `folder`, the journals folder).
    """
    fmt = foreign_format(path)
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


def _names(agent: str) -> list[str]:
    return list(FORMATS) if agent == ALL else [agent]


def _places(args: argparse.Namespace) -> list[tuple[Format, Path]]:
    """The folders to list: --dir for each agent named (with all, each file's agent by its content), else theirs."""
    folder = Path(args.dir).expanduser() if getattr(args, "dir", None) else None
    if folder is not None and not folder.is_dir():
        raise JournalError(f"{folder}: no such folder; name the agent's sessions folder with --dir, or leave it out")
    return roots(_names(args.agent), folder=folder)


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
    places = _places(args)
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


# --- wren fork PATH [SEQ] (another agent's file) ---------------------------------------------------


def fork_foreign(path: Path, fmt: Format, seq: int | None, folder: Path, as_json: bool) -> Exit:
    """List the clean points of every branch, or fork at line SEQ into a new Wren journal in `folder`."""
    if seq is None:
        return _list(path, fmt, folder, as_json)
    from ..foreign.fork import NO_WORKSPACE, fork_into_wren  # the one command here that writes

    try:
        forked = fork_into_wren(path, fmt, seq, folder)
    except OSError as exc:
        raise CommandFailed(
            f"{write_problem(folder, exc)}, so the fork was not made; name a journals folder you can write with "
            "--dir (or WREN_DIR)"
        ) from None
    if as_json:
        print_json(
            {
                "id": forked.id,
                "path": str(forked.path),
                "from": forked.parent,
                "atSeq": forked.at_seq,
                "workspaceNote": forked.workspace_note,
            }
        )
    else:
        out(f"forked {fmt.label} session {path} at line {forked.at_seq} -> {forked.id}")
        if forked.workspace_note is not None:
            out(f"{visible(forked.workspace_note)}, so the fork records no workspace; {NO_WORKSPACE}")
        out(f"continue it with: {wren_command('resume', forked.id, folder=forked.path.parent)}")
    return Exit.OK


def _list(path: Path, fmt: Format, folder: Path, as_json: bool) -> Exit:
    """The clean points of every branch; a file damaged before its end gives those before the damage (exit 4)."""
    # Here: `wren search` and `wren ls` use this module's other parts and never fork (tests/test_command_imports.py).
    from ..foreign.conversation import fork_points, outline
    from ..journal.forking import fork_listing

    fd = open_lines(path, fmt)
    try:
        read = outline(fd, fmt)
    finally:
        os.close(fd)
    points = fork_points(read).points
    if as_json:
        print_json([{"seq": p.seq, "role": p.role, "preview": p.preview} for p in points])
    elif not points:
        out(f"{path} has no clean fork point yet")
    else:
        again = wren_command("fork", str(path), folder=folder, tail="SEQ")
        out(f"Clean fork points of this {fmt.label} session, by line (fork into Wren with `{again}`):")
        for line in fork_listing(points):
            out(f"  {visible(line)}")
    if read.stop is not None and not read.stop.torn:
        # Lines after the damage are lost to reading: they may have held points.
        raise ForeignUnreadable(path, read.stop)
    if read.stop is not None and not as_json:
        out(f"stopped at {read.stop} (a line its writer has not finished; nothing after it is read)")
    return Exit.OK


# --- wren watch --agent --------------------------------------------------------------------------------


def watch_agents(args: argparse.Namespace) -> Exit:
    """`wren watch --agent NAME|all`: the browser over the agents' folders; forks go to the Wren journals folder."""
    app = agents_browser(args)
    app.run()
    return Exit.ERROR if app.return_code else Exit.OK  # an error: the viewer crashed (Textual printed why)


def agents_browser(args: argparse.Namespace) -> WrenApp:
    """The viewer `wren watch --agent NAME|all [--dir DIR]` runs: the browser over the agents' folders."""
    from ..tui.app import WrenApp
    from ..tui.screens.foreign import ForeignFolder

    places = _places(args)
    if args.agent == ALL and getattr(args, "dir", None):
        folders = [ForeignFolder(None, places[0][1])]  # one folder for all: each file by its content
    else:
        folders = [ForeignFolder(fmt, root) for fmt, root in places]
    watch_mode: WatchMode = "poll" if getattr(args, "poll", False) else "auto"
    return WrenApp(folder=folders[0].root, agents=folders, journals=journals_dir(None), watch_mode=watch_mode)


def watch_database(path: Path, args: argparse.Namespace, journals: Path) -> Exit | None:
    """`wren watch DB` on a file of several sessions (OpenCode's database): the browser over its folder; None
    otherwise."""
    fmt = detect(path)
    if fmt is None or fmt.export_all is None or split_member(path)[1] is not None:
        return None
    try:
        if len(fmt.export_all(path)) <= 1:
            return None  # its only session is opened as any session file is
    except JournalError:
        return None  # the session screen says why it cannot be read
    from ..tui.app import WrenApp
    from ..tui.screens.foreign import ForeignFolder

    watch_mode: WatchMode = "poll" if getattr(args, "poll", False) else "auto"
    app = WrenApp(
        folder=path.parent, agents=[ForeignFolder(fmt, path.parent)], journals=journals, watch_mode=watch_mode
    )
    app.run()
    return Exit.ERROR if app.return_code else Exit.OK
