"""`wren search`: every match of a pattern across every session, newest session first, like grep.

Exit 0 with a match, 1 without (grep's convention: no sentence), 2 for a pattern or an option that
cannot be used. A damaged journal is searched up to where reading stops, and the list says where after its
hits; a journal that cannot be opened is named on stderr and the others are still searched.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from ..agent.errors import UsageError
from ..journal.store import project_label
from ..journal.verdict import Stop
from ..journal.visible import visible
from ..search.agents import agents, sessions_of
from ..search.engine import Filters, Hit, Searched, search
from ..search.index import Snapshot, connect_read, index_path
from ..search.indexer import IndexUnavailable, connect_write, refresh
from ..search.query import REGEX_SECONDS, BadPattern, PatternTooSlow, Query, regex_budget
from ..search.sources import ROLES, SearchSource
from .console import err
from .exits import Exit
from .foreign import nothing_readable, refuse_unknown_file
from .options import named_folder_of

_json = msgspec.json.Encoder()
# What marks the match in a snippet: reverse video on a terminal, guillemets in a file or a pipe.
_MARKS = {True: ("\x1b[7m", "\x1b[27m"), False: ("«", "»")}
_DURATION = re.compile(r"(\d+)([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _others() -> str:
    from ..foreign import FORMATS

    return ", ".join(f"{f.name}: {f.label}, ${f.env}" for f in FORMATS.values())


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "search",
        parents=[common],
        help="every match of a pattern across every session, newest first",
        description="Search the text of every session (what the user, the model and the tools said, tool calls "
        "and their arguments, errors) read-only, newest session first. A pattern without a capital letter "
        "ignores case. Exit 0 with a match, 1 without, 2 for a bad pattern or option. A damaged journal is "
        "searched up to where reading stops, and the list says where.",
    )
    p.add_argument(
        "pattern", metavar="PATTERN", help="the text to find, as you would type it (or a regex with --regex)"
    )
    p.add_argument(
        "--agent",
        choices=(*agents(), "all"),
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
        "backtracks, so a pattern like (a+)+$ can take exponential time: each match gets "
        f"{REGEX_SECONDS:g} s of one text (WREN_REGEX_SECONDS), then the search stops with exit 2",
    )
    p.add_argument(
        "--no-index",
        action="store_true",
        help="read every session file instead of the index kept in the journals folder's .index (a cache: "
        "brought up to date with the files before each search, deleted at no loss; see docs/search-index.md)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='one JSON object a line: each match ({"type": "hit", ...}), and each session whose reading '
        'stopped early ({"type": "stopped", ...})',
    )
    p.set_defaults(handler=cmd_search)


def cmd_search(args: argparse.Namespace) -> Exit:
    try:
        query = Query.of(args.pattern, regex=args.regex)
    except BadPattern as exc:
        raise UsageError(str(exc)) from None
    filters = Filters(tuple(args.role or ()), _project(args.project), since_of(args.since))
    folder = named_folder_of(args)
    named = Path(args.dir).expanduser() if args.dir else None  # --dir: every agent's sessions are there
    if named is not None:
        refuse_unknown_file(named)  # a file of no kind Wren reads: the one refusal, exit 4
    skipped: list[str] = []
    opened = None if args.no_index else open_index(folder, query)
    # The index, read first, says which journals of --dir it read as Wren's and holds as they are: not opened.
    recall = None if opened is None else opened.snapshot.wren_as_read
    sources = sessions_of(args.agent, folder, named, skipped, recall)
    for sentence in dict.fromkeys(skipped):
        err(f"{sentence}; they were not searched")
    if not sources and named is not None and named.is_dir() and (said := nothing_readable(named)) is not None:
        err(said)  # a folder of files Wren does not read is not a folder without the word
        return Exit.UNREADABLE
    index = None if opened is None else indexed(opened, sources)
    show = _Json() if args.json else _Text(sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    found = 0
    seconds = _regex_seconds() if query.regex else REGEX_SECONDS
    try:
        with regex_budget(seconds) if query.regex else contextlib.nullcontext():
            found = _show(search(sources, query, filters, index=index, quiet=True), show)
    except PatternTooSlow:
        raise UsageError(
            f"the regular expression {args.pattern[:80]!r} took more than {seconds:g} s on one text, most likely "
            "catastrophic backtracking (as in (a+)+$): simplify it, or leave out --regex"
        ) from None
    return Exit.OK if found else Exit.ERROR  # grep's 1 for "no match", with nothing said


def _regex_seconds() -> float:
    """How long one regex match may take (WREN_REGEX_SECONDS, else REGEX_SECONDS)."""
    raw = os.environ.get("WREN_REGEX_SECONDS", "").strip()
    try:
        seconds = float(raw) if raw else REGEX_SECONDS
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 1e6:
        raise UsageError(f"WREN_REGEX_SECONDS={raw[:40]!r} is not a number of seconds more than 0")
    return seconds


def _show(results: Iterator[Hit | Searched], show: _Json | _Text) -> int:
    found = 0
    for each in results:
        if isinstance(each, Hit):
            found += 1
            show.hit(each)
            continue
        if each.unreadable is not None:
            err(f"{each.unreadable}; it was not searched")
        for warning in each.warnings:
            err(f"warning: {each.session}: {warning}")
        if each.stop is not None:
            show.stopped(each, each.stop)
        if each.hits or each.stop is not None:
            sys.stdout.flush()  # a session at a time, so the first hits show while later sessions are read
    return found


@dataclass
class Opened:
    """The index of a journals folder, opened and its files' rows read, before the sessions are listed."""

    path: Path
    db: sqlite3.Connection
    writable: bool
    snapshot: Snapshot


def open_index(folder: Path, query: Query) -> Opened | None:
    """The index of `folder`, opened for `query` with what it knows of each file read; None: read the files.

    A folder that does not exist yet gets no index; one where the index cannot be written is searched
    from an index already there (as far as it is up to date, the rest read).
    """
    if not folder.is_dir():
        return None
    path = index_path(folder)
    try:
        db: sqlite3.Connection | None = connect_write(path)
    except IndexUnavailable:
        db, writable = connect_read(path), False
    else:
        writable = True
    if db is None:
        return None
    snapshot = Snapshot(db, query)
    if not snapshot.begin():
        return None
    return Opened(path, db, writable, snapshot)


def indexed(opened: Opened, sources: list[SearchSource]) -> Snapshot | None:
    """The index `opened` brought up to date with `sources` and read for its query; None: read the files.

    Only the sessions the index does not know as they are now are given to the indexer.
    """
    db, snapshot = opened.db, opened.snapshot
    stale = set(snapshot.stale((source.path, getattr(source, "looked", None)) for source in sources))
    gone = snapshot.gone(source.path for source in sources)
    if (stale or gone) and opened.writable:
        db.execute("COMMIT")  # the read transaction ends; the indexer writes; a new one begins
        try:
            refresh(db, [source for source in sources if source.path in stale], forget=gone)
        except sqlite3.Error as exc:
            err(f"warning: the search index {opened.path} could not be brought up to date ({exc}); the files were read")
            db.close()
            return None
        snapshot = Snapshot(db, snapshot.query)
        if not snapshot.begin():
            return None
    if snapshot.load():
        return snapshot
    snapshot.close()
    return None


def since_of(text: str | None, now: datetime | None = None) -> datetime | None:
    """The moment --since names: an ISO date or time (UTC unless it says), or a duration ago (3d, 12h, 30m, 2w).

    Raises:
        UsageError: it is neither.
    """
    if text is None:
        return None
    ago = _DURATION.fullmatch(text.strip())
    if ago is not None:
        return (now or datetime.now(UTC)) - timedelta(**{_UNITS[ago[2]]: int(ago[1])})
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"--since {text!r} is not a date: give 2026-11-30, 2026-11-30T14:00 or a time ago such as 3d or 12h"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _project(text: str | None) -> Path | None:
    return None if text is None else Path(text).expanduser().resolve()


def marked(hit: Hit, marks: tuple[str, str]) -> str:
    """The snippet on one line, the match between `marks`; what could drive a terminal shown, never obeyed."""
    parts = (hit.snippet[: hit.start], hit.snippet[hit.start : hit.end], hit.snippet[hit.end :])
    before, match, after = (visible(part) for part in parts)
    return f"{before}{marks[0]}{match}{marks[1]}{after}"


def stop_words(stop: Stop) -> str:
    if stop.torn:
        return f"reading stops at line {stop.line} (byte {stop.offset}), a crash's torn tail: {stop.why}"
    return f"reading stops at line {stop.line} (byte {stop.offset}): {stop.why}; nothing after it was searched"


class _Text:
    """Hits under a header per session (and per project, when a session's runs worked in several)."""

    def __init__(self, colour: bool) -> None:
        self.marks = _MARKS[colour]
        self.heading: tuple[str, str | None] | None = None

    def hit(self, hit: Hit) -> None:
        item = hit.item
        if self.heading != (hit.session, item.project):
            self.heading = (hit.session, item.project)
            where = project_label(item.project, 60) if item.project else "-"
            sys.stdout.write(f"{hit.session}  {hit.agent}  {visible(where)}\n")
        place = f"seq {item.seq}" if hit.agent == "wren" else f"line {item.seq}"
        role = item.role if item.name is None else f"{item.role}:{item.name}"
        line = f"  {place:>10}  {item.ts}  {visible(role):<16}  {marked(hit, self.marks)}\n"
        sys.stdout.write(line)

    def stopped(self, searched: Searched, stop: Stop) -> None:
        if self.heading is None or self.heading[0] != searched.session:
            sys.stdout.write(f"{searched.session}  {searched.agent}\n")
            self.heading = (searched.session, None)
        sys.stdout.write(f"  {visible(stop_words(stop))}\n")


class _Json:
    """One object a line: hits, and sessions whose reading stopped before their end."""

    def hit(self, hit: Hit) -> None:
        item = hit.item
        row = {
            "type": "hit",
            "agent": hit.agent,
            "session": hit.session,
            "path": str(hit.path),
            "project": item.project,
            "seq" if hit.agent == "wren" else "line": item.seq,
            "offset": item.offset,
            "part": item.part,
            "ts": item.ts,
            "role": item.role,
            "kind": item.kind,
            "tool": item.name,
            "inToolName": hit.in_name,
            "snippet": hit.snippet,
            "matchStart": hit.start,
            "matchEnd": hit.end,
        }
        sys.stdout.buffer.write(_json.encode(row) + b"\n")

    def stopped(self, searched: Searched, stop: Stop) -> None:
        row = {
            "type": "stopped",
            "agent": searched.agent,
            "session": searched.session,
            "path": str(searched.path),
            "hits": searched.hits,
            "stoppedAtLine": stop.line,
            "stoppedAtOffset": stop.offset,
            "reason": stop.why,
            "torn": stop.torn,
        }
        sys.stdout.buffer.write(_json.encode(row) + b"\n")
