"""What `wren search` does once its options are parsed: open the index, read the sessions, print the hits.

`cli/search.py` registers the command and imports this module only when a search runs, so `wren search
--help` (and every other command) does not load the search engine, the index or sqlite3.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..agent.errors import UsageError
from ..journal.store import project_label
from ..journal.verdict import Stop
from ..journal.visible import escaped_json, visible
from ..keep.found import Kept
from ..search.agents import WREN_AGENT, sessions_of
from ..search.choices import REGEX_SECONDS
from ..search.engine import Filters, FirstHit, Hit, Searched, search
from ..search.folder_index import Index
from ..search.pages import Cursor, PageError, Pager
from ..search.query import BadPattern, PatternTooSlow, Query, regex_budget
from ..search.writer import LazyWriter
from ..sessions.refusal import nothing_readable, refuse_unknown_file
from .console import JsonRows, Scalar, err, session_row, utf8_json
from .exits import Exit
from .options import named_folder_of

if TYPE_CHECKING:
    from datetime import datetime

# What marks the match in a snippet: reverse video on a terminal, guillemets in a file or a pipe.
_MARKS = {True: ("\x1b[7m", "\x1b[27m"), False: ("«", "»")}
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def cmd_search(args: argparse.Namespace, per_session: int) -> Exit:
    """The search `args` ask for; `per_session`: the hits of a session shown without --all (`search.PER_SESSION`).

    The options are turned into a `Query` and plain values first (a usage error is said before anything is
    read); the index's one object (`folder_index.Index`) then answers, and the page shows its hits.
    """
    try:
        query = Query.of(args.pattern, regex=args.regex)
    except BadPattern as exc:
        raise UsageError(str(exc)) from None
    filters = Filters(tuple(args.role or ()), _project(args.project), since_of(args.since))
    seconds = _regex_seconds() if query.regex else REGEX_SECONDS
    try:
        after = None if args.after is None else Cursor.of(args.after)
    except PageError as exc:
        raise UsageError(str(exc)) from None
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    show = _Json() if args.json else _Text(colour, files=args.files)
    cap = None if args.every or args.json or args.files else per_session
    folder = named_folder_of(args)
    named = Path(os.path.expanduser(args.dir)) if args.dir else None  # --dir: every agent's sessions are there
    if named is not None:
        refuse_unknown_file(named)  # a file of no kind Wren reads: the one refusal, exit 4
    skipped: list[str] = []
    # -l without a filter: the index reads each session's first candidate (with a filter, the first may be left out),
    # asked while the sessions are listed.
    first = args.files and not (args.role or args.project or args.since)
    opened = None if args.no_index else Index(folder, writer=LazyWriter())
    try:
        read = None if opened is None else opened.begin(query, first=first)
        _warn(opened)
        # The index, read first, says which journals of --dir it read as Wren's and holds as they are: not opened.
        recall = None if read is None else read.wren_as_read
        sources = sessions_of(args.agent, folder, named, skipped, recall)
        for sentence in dict.fromkeys(skipped):
            err(f"{sentence}; they were not searched")
        if not sources and named is not None and named.is_dir() and (said := nothing_readable(named)) is not None:
            err(said)  # a folder of files Wren does not read is not a folder without the word
            return Exit.UNREADABLE
        index = None if opened is None else opened.answers(sources, first=first)
        _warn(opened)
        if after is not None:
            try:
                sources = after.rest(sources)  # after the index saw every session, so none is taken for gone
            except PageError as exc:
                raise UsageError(str(exc)) from None
        found = 0
        pager = Pager(show, limit=args.limit, cap=cap, after=after, files=args.files)
        try:
            with regex_budget(seconds) if query.regex else contextlib.nullcontext():
                found = pager.run(search(sources, query, filters, index=index, quiet=True, first=args.files))
        except PatternTooSlow as exc:
            where = "on one text" if exc.texts <= 1 else f"over the {exc.texts:,} texts it was matched on"
            raise UsageError(
                f"the regular expression {args.pattern[:80]!r} took more than {seconds:g} s {where}, most likely "
                "catastrophic backtracking (as in (a+)+$): simplify it, leave out --regex, or give it more time "
                "with WREN_REGEX_SECONDS"
            ) from None
    finally:
        if opened is not None:
            opened.close()  # and any thread of its (-l's candidates asked ahead) ended: nothing left running
    return Exit.OK if found else Exit.ERROR  # grep's 1 for "no match", with nothing said


MOST_REGEX_SECONDS = 1e6  # about 11 days: more is a typing slip, and more than setitimer's clock takes


def _regex_seconds() -> float:
    """How long the search's regex matches may take in all (WREN_REGEX_SECONDS, else REGEX_SECONDS)."""
    raw = os.environ.get("WREN_REGEX_SECONDS", "").strip()
    if not raw:
        return REGEX_SECONDS
    shown = repr(raw[:40])
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if math.isnan(seconds):
        raise UsageError(f"WREN_REGEX_SECONDS={shown} is not a number of seconds: give one more than 0, such as 5")
    if seconds <= 0:
        raise UsageError(f"WREN_REGEX_SECONDS={shown} is not more than 0 seconds: give a number more than 0, such as 5")
    if seconds >= MOST_REGEX_SECONDS:
        raise UsageError(
            f"WREN_REGEX_SECONDS={shown} is too many seconds (the most is {MOST_REGEX_SECONDS:,.0f}, about 11 days): "
            "give fewer, such as 60"
        )
    return seconds


def _warn(index: Index | None) -> None:
    """Say what the index had to say (a database moved aside, an index left as it was), each sentence once."""
    if index is not None:
        for sentence in index.said:
            err(f"warning: {sentence}")
        index.said.clear()


def since_of(text: str | None, now: datetime | None = None) -> datetime | None:
    """The moment --since names: an ISO date or time (UTC unless it says), or a duration ago (3d, 12h, 30m, 2w).

    Raises:
        UsageError: it is neither.
    """
    if text is None:
        return None
    from datetime import UTC, datetime, timedelta  # only for --since

    ago = re.fullmatch(r"(\d+)([mhdw])", text.strip())  # compiled here: only --since asks
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
    return None if text is None else Path(os.path.expanduser(text)).resolve()


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

    def __init__(self, colour: bool, *, files: bool = False) -> None:
        self.marks = _MARKS[colour]
        self.files = files  # -l: a session whose reading stopped is a warning, not a line among the paths
        self.heading: tuple[str, str | None] | None = None
        self.kept = Kept()
        # -l: the paths not yet written, written together at `flush` (one write for a page the index answers, even
        # with PYTHONUNBUFFERED, where each `write` is a system call of its own)
        self.listed: list[str] = []

    def hit(self, hit: Hit) -> None:
        item = hit.item
        if self.heading != (hit.session, item.project):
            self.heading = (hit.session, item.project)
            where = project_label(item.project, 60) if item.project else "-"
            mark = kept_mark(self.kept, hit)
            said = "" if mark is None else f"  ({mark})"
            sys.stdout.write(f"{hit.session}  {hit.agent}  {visible(where)}{visible(said)}\n")
        place = f"seq {item.seq}" if hit.agent == "wren" else f"line {item.seq}"
        role = item.role if item.name is None else f"{item.role}:{item.name}"
        line = f"  {place:>10}  {item.ts}  {visible(role):<16}  {marked(hit, self.marks)}\n"
        sys.stdout.write(line)

    def more(self, hidden: int) -> None:
        sys.stdout.write(f"  … and {hidden:,} more in this session; --all prints every hit\n")

    def session(self, hit: Hit | FirstHit) -> None:
        self.listed.append(hit.where)  # made visible at `flush`, all at once

    def stopped(self, searched: Searched, stop: Stop) -> None:
        if self.files:
            err(f"warning: {searched.where}: {stop_words(stop)}")
            return
        if self.heading is None or self.heading[0] != searched.session:
            sys.stdout.write(f"{searched.session}  {searched.agent}\n")
            self.heading = (searched.session, None)
        sys.stdout.write(f"  {visible(stop_words(stop))}\n")

    def page(self, cursor: Cursor) -> None:
        self.flush()
        sys.stderr.write(f"next page: --after {cursor.text()}\n")  # not an error: no "wren:" before it

    def said(self, sentence: str) -> None:
        err(sentence)

    def flush(self) -> None:
        if self.listed:
            # Taken before the write: a Ctrl+C as it returns must not leave them to be written again (`Pager.run`).
            listed, self.listed = self.listed, []
            if "".join(listed).isprintable():  # `visible` leaves each as it is: one test of them all
                sys.stdout.write("\n".join(listed) + "\n")
            else:
                sys.stdout.write("".join([f"{visible(path)}\n" for path in listed]))
        sys.stdout.flush()


def kept_mark(kept: Kept, hit: Hit | FirstHit) -> str | None:
    """What Wren's kept store says of the session of `hit` (another agent's): "kept; deleted by its agent on DATE"."""
    mark = None if hit.agent == WREN_AGENT else kept.mark(hit.where)
    return None if mark is None else mark.sentence


class _Json:
    """One object a line: hits (or sessions, with -l), sessions whose reading stopped before their end, the page."""

    def __init__(self) -> None:
        self.kept = Kept()
        self.rows = JsonRows()
        self.listed: list[str] = []  # -l: the sessions' rows not yet written, written together at `flush`
        self._marks: bool | None = None  # -l: whether the kept store can mark a session (asked once, not a row)

    def more(self, hidden: int) -> None:
        raise AssertionError("--json shows every hit")  # never cut per session

    def said(self, sentence: str) -> None:
        err(sentence)

    def flush(self) -> None:
        if self.listed:
            listed, self.listed = self.listed, []  # taken before the write, as `_Text.flush` takes them
            # Each row's bytes as `JsonRows` and `escaped_json` make them, made all at once (both go a character at a
            # time: a lone surrogate escaped, a character a terminal obeys escaped).
            sys.stdout.buffer.write(escaped_json(utf8_json("".join(listed))))
        sys.stdout.flush()

    def session(self, hit: Hit | FirstHit) -> None:
        if self._marks is None:
            self._marks = self.kept.holds_any()
        mark = kept_mark(self.kept, hit) if self._marks else None
        self.listed.append(f"{session_row(hit.agent, hit.session, hit.where, mark)}\n")

    def page(self, cursor: Cursor) -> None:
        self.flush()
        # ASCII alone (the cursor is URL-safe base64): nothing for `escaped_json` to hide.
        sys.stdout.buffer.write(self.rows.encode({"type": "page", "after": cursor.text()}) + b"\n")

    def hit(self, hit: Hit) -> None:
        item = hit.item
        row: dict[str, Scalar] = {
            "type": "hit",
            "agent": hit.agent,
            "session": hit.session,
            "path": hit.where,
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
            "kept": kept_mark(self.kept, hit),
        }
        sys.stdout.buffer.write(escaped_json(self.rows.encode(row)) + b"\n")

    def stopped(self, searched: Searched, stop: Stop) -> None:
        self.flush()  # after the sessions listed before it
        row: dict[str, Scalar] = {
            "type": "stopped",
            "agent": searched.agent,
            "session": searched.session,
            "path": searched.where,
            "hits": searched.hits,
            "stoppedAtLine": stop.line,
            "stoppedAtOffset": stop.offset,
            "reason": stop.why,
            "torn": stop.torn,
        }
        sys.stdout.buffer.write(escaped_json(self.rows.encode(row)) + b"\n")
