"""Other agents' sessions in the commands: `--agent` for `wren ls` and `wren watch`, and `wren log`,
`wren fork` on their files. ls.py, watch.py, log.py and fork.py call in here when given `--agent`, or a
file whose content is another agent's (`wren_tui/formats` reads them).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import msgspec

from ..formats import AGENTS, FORMATS, Format, detect
from ..formats.base import Translated
from ..formats.conversation import fork_points, outline
from ..formats.listing import AgentSession, describe_agent_session, list_agent_sessions, roots, session_files
from ..formats.reader import Verdict, scan
from ..journal.commandline import wren_command
from ..journal.errors import JournalError
from ..journal.events import Event, Message, describe, event_type, to_builtins
from ..journal.forking import fork_listing
from ..journal.reader import open_for_reading
from ..journal.store import journals_dir, project_label, write_problem
from ..journal.visible import visible
from ..search.index import index_path
from ..search.indexer import IndexUnavailable, connect_write
from ..search.listings import StoredSummaries
from .console import err, out, print_json
from .exits import CommandFailed, Exit, ForeignUnreadable

ALL = "all"
_json = msgspec.json.Encoder()
_PROJECT_WIDTH = 28


def add_agent_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--agent claude|codex|pi|all`, for `wren ls` and `wren watch`."""
    formats = [FORMATS[name] for name in AGENTS]
    names = ", ".join(f"{f.name}: {f.label}" for f in formats)
    env = ", ".join(f"${f.env}" for f in formats)
    defaults = ", ".join(str(f.root({}, Path("~"))) for f in formats)
    parser.add_argument(
        "--agent",
        choices=(*AGENTS, ALL),
        help=f"{what} of another agent ({names}), or all of them, from its own folder: --dir, else the folder "
        f"its variable names ({env}), else its default ({defaults})",
    )


def foreign_format(path: Path) -> Format | None:
    """The format of another agent's session file (by its content), or None for a Wren journal."""
    return detect(path)


def _names(agent: str) -> list[str]:
    return list(AGENTS) if agent == ALL else [agent]


def _places(args: argparse.Namespace) -> list[tuple[Format, Path]]:
    """The folders to list: --dir for each agent named (with all, each file's agent by its content), else theirs."""
    folder = Path(args.dir).expanduser() if getattr(args, "dir", None) else None
    if folder is not None and not folder.is_dir():
        raise JournalError(f"{folder}: no such folder; name the agent's sessions folder with --dir, or leave it out")
    return roots(_names(args.agent), folder=folder)


# --- wren ls --agent -------------------------------------------------------------------------------


def _listed(places: list[tuple[Format, Path]], journals: Path) -> list[AgentSession]:
    """The sessions of `places`, each unchanged file's row from the store beside search's index (see
    docs/search-index.md); every file read when there is no store to keep (no journals folder yet)."""
    if not journals.is_dir():
        return list_agent_sessions(places)
    try:
        db = connect_write(index_path(journals))
    except IndexUnavailable:
        return list_agent_sessions(places)
    try:
        known = StoredSummaries(db)
        sessions = list_agent_sessions(places, known)
        # A cache: if it cannot be written, the listing is still right, and the next one reads these files again.
        with contextlib.suppress(sqlite3.Error):
            known.save([root for _fmt, root in places])
        return sessions
    except sqlite3.Error:
        return list_agent_sessions(places)
    finally:
        db.close()


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
    }


def ls_agents(args: argparse.Namespace) -> Exit:
    """`wren ls --agent NAME|all [--dir DIR] [--json]`: the agents' sessions, newest first."""
    places = _places(args)
    if args.agent == ALL and getattr(args, "dir", None):
        # One folder for all three: each file is the agent's whose lines it holds.
        files = session_files(FORMATS["pi"], places[0][1])  # every .jsonl below it
        found = [(fmt, path) for path in files if (fmt := detect(path)) is not None]
        sessions = sorted(
            (describe_agent_session(path, fmt) for fmt, path in found), key=lambda s: s.started or "", reverse=True
        )
    else:
        sessions = _listed(places, journals_dir(None))
    for s in sessions:
        if s.state == "unreadable":
            err(f"{s.reason}; it is listed as unreadable")
    if args.json:
        print_json([_row(s) for s in sessions])
        return Exit.OK
    if not sessions:
        where = ", ".join(str(root) for _fmt, root in places)
        out(f"no sessions in {where}")
        return Exit.OK
    many = args.agent == ALL
    head = f"{'AGENT':<7}  " if many else ""
    out(f"{head}{'ID':<36}  {'STARTED':<24}  {'LINES':>7}  {'DURATION':>8}  {'TOKENS':>8}  {'STATE':<16}  PROJECT")
    for s in sessions:
        agent = f"{s.agent:<7}  " if many else ""
        if s.state == "unreadable":
            out(visible(f"{agent}{s.id:<36}  {'-':<24}  {'-':>7}  {'-':>8}  {'-':>8}  {s.state:<16}  ({s.reason})"))
            continue
        dur = f"{s.duration_s:.1f}s" if s.duration_s is not None else "-"
        lines = str(s.lines) if s.exact else f"~{s.lines}"
        tokens = str(s.tokens) if s.tokens_exact else f"~{s.tokens}"
        place = project_label(s.project, _PROJECT_WIDTH)
        line = f"{agent}{s.id:<36}  {s.started or '-':<24}  {lines:>7}  {dur:>8}  {tokens:>8}  {s.state:<16}  {place}"
        out(visible(line))
    return Exit.OK


# --- wren log PATH (another agent's file) -----------------------------------------------------------


def _summary(event: Event) -> str:
    if isinstance(event, Message):
        msg = event.message
        text = " ".join(msg.content.split())
        if len(text) > 100:
            text = text[:97] + "..."
        calls = "".join(f" -> {c.name}({c.args})" for c in msg.toolCalls or ())
        return f"{msg.role}: {text!r}{calls}"
    return describe(event)


def _shown(line: Translated) -> list[Event]:
    return [e for i, e in enumerate(line.events) if i not in line.hidden]


def log_foreign(path: Path, fmt: Format, as_json: bool) -> Exit:
    """`wren log PATH` for another agent's file: its lines as Wren events (seq: the line's number), every branch."""
    fd = open_for_reading(path)
    try:
        verdict = _log_json(fd, fmt, path) if as_json else _log_text(fd, fmt)
    finally:
        os.close(fd)
    left_out = verdict.skipped.sentence()
    if left_out and not as_json:
        err(f"{path}: {left_out}")
    if verdict.stop is not None:
        # What could be read is printed; the file did not end there.
        raise ForeignUnreadable(path, verdict.stop)
    return Exit.OK


def _log_text(fd: int, fmt: Format) -> Verdict:
    write = sys.stdout.write

    def show(_lineno: int, line: Translated, _data: bytes) -> None:
        for e in _shown(line):
            write(f"{e.seq:>6}  {e.ts}  {event_type(e):<10}  {visible(_summary(e))}\n")

    verdict = scan(fd, fmt, show)
    stop = verdict.stop
    if stop is not None:
        where = f"stopped at line {stop.line} (byte {stop.offset}): {stop.why}"
        if stop.torn:
            out(f"{where} [torn tail] (its writer may still be writing it; another agent's file is never changed)")
        else:
            out(f"{where} [corrupt] (nothing after it is read; fork from an earlier point)")
    return verdict


def _log_json(fd: int, fmt: Format, path: Path) -> Verdict:
    """One document, streamed: each event as Wren would journal it, its seq the line's number."""
    write = sys.stdout.buffer.write
    head = b'{"id":%s,"path":%s,"agent":%s,"events":[' % (
        _json.encode(fmt.session_id(path)),
        _json.encode(str(path)),
        _json.encode(fmt.name),
    )
    write(head)
    first = [True]

    def emit(_lineno: int, line: Translated, _data: bytes) -> None:
        for e in _shown(line):
            write((b"" if first[0] else b",") + _json.encode(to_builtins(e)))
            first[0] = False

    verdict = scan(fd, fmt, emit)
    stop = verdict.stop
    tail = {
        "stoppedAtLine": None if stop is None else stop.line,
        "stoppedAtOffset": None if stop is None else stop.offset,
        "reason": None if stop is None else str(stop),
        "torn": verdict.torn,
        "warnings": verdict.warnings,
        "skipped": verdict.skipped.as_json(),
    }
    write(b"]," + _json.encode(tail)[1:] + b"\n")
    sys.stdout.flush()
    return verdict


# --- wren fork PATH [SEQ] (another agent's file) ---------------------------------------------------


def fork_foreign(path: Path, fmt: Format, seq: int | None, folder: Path, as_json: bool) -> Exit:
    """List the clean points of every branch, or fork at line SEQ into a new Wren journal in `folder`."""
    if seq is None:
        return _list(path, fmt, folder, as_json)
    from ..formats.fork import fork_into_wren  # the one command here that writes

    try:
        forked = fork_into_wren(path, fmt, seq, folder)
    except OSError as exc:
        raise CommandFailed(
            f"{write_problem(folder, exc)}, so the fork was not made; name a journals folder you can write with "
            "--dir (or WREN_DIR)"
        ) from None
    if as_json:
        print_json({"id": forked.id, "path": str(forked.path), "from": forked.parent, "atSeq": forked.at_seq})
    else:
        out(f"forked {fmt.label} session {path} at line {forked.at_seq} -> {forked.id}")
        out(f"continue it with: {wren_command('resume', forked.id, folder=forked.path.parent)}")
    return Exit.OK


def _list(path: Path, fmt: Format, folder: Path, as_json: bool) -> Exit:
    """The clean points of every branch; a file damaged before its end gives those before the damage (exit 4)."""
    fd = open_for_reading(path)
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
    from ..tui.app import WrenApp
    from ..tui.screens.agents import AgentFolder
    from ..tui.tailing import WatchMode

    places = _places(args)
    if args.agent == ALL and getattr(args, "dir", None):
        folders = [AgentFolder(None, places[0][1])]  # one folder for all three: each file by its content
    else:
        folders = [AgentFolder(fmt, root) for fmt, root in places]
    watch_mode: WatchMode = "poll" if getattr(args, "poll", False) else "auto"
    app = WrenApp(folder=folders[0].root, agents=folders, journals=journals_dir(None), watch_mode=watch_mode)
    app.run()
    return Exit.ERROR if app.return_code else Exit.OK  # an error: the viewer crashed (Textual printed why)
