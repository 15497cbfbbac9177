"""Search across sessions: each source's items confirmed on their text, filtered, and said where they matched.

`search` walks the sessions in the order given (newest first, from the caller) and yields, as it
goes, a `Hit` per matching item and a `Searched` per session once its reading ended (with where
it stopped, if it did), so a caller shows the first hits while later sessions are still read and
holds nothing of a session once it is done.

Its annotations are evaluated where they are written, as `sources`' are (its named tuples' fields are types, not text
`typing.NamedTuple` would compile).
"""

import os
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import datetime  # costs nothing more: sqlite3 (the index) imports it
from pathlib import Path
from typing import Literal, NamedTuple, overload

from ..journal.errors import JournalError
from ..journal.store import in_project, parse_ts
from ..journal.verdict import Stop
from .choices import Role
from .index import IndexRead
from .query import Query
from .sources import Item, Resumable, SearchSource

SNIPPET = 96  # characters of text shown around a match
_BEFORE = 32  # of them, before the match when there is that much

# Filters, Hit and Searched (as index.Known and Answer, pages.Cursor, sources.Item and Saved) are named tuples: frozen
# values, each class made at import in about a seventh of a frozen dataclass's time (0.07 against 0.5 ms), on the
# path of every search.


class Filters(NamedTuple):
    """What a hit must also be: one of `roles` (empty: any), in `project` or a folder in it, at or after `since`."""

    roles: Collection[Role] = ()
    project: Path | None = None
    since: datetime | None = None

    def keep(self, item: Item) -> bool:
        if self.roles and item.role not in self.roles:
            return False
        if self.project is not None and not in_project(item.project, self.project):
            return False
        if self.since is not None:
            moment = parse_ts(item.ts)
            return moment is not None and moment >= self.since
        return True


class Hit(NamedTuple):
    """One matching item, with a snippet of its text and where in the snippet the match is."""

    agent: str
    session: str
    where: str  # the session file's path, as text (its source's `path_text`: -l prints it, no Path made)
    item: Item
    snippet: str
    start: int  # the match, in the snippet
    end: int
    in_name: bool = False  # the match is in a tool call's name, not its arguments

    @property
    def path(self) -> Path:
        """The session file's path (made when asked: the viewer opens it)."""
        return Path(self.where)


class Searched(NamedTuple):
    """A session's search ended: how many hits, and where its reading stopped (or why it could not start)."""

    agent: str
    session: str
    where: str  # the session file's path, as text
    hits: int
    stop: Stop | None = None
    warnings: tuple[str, ...] = ()
    unreadable: str | None = None  # why it could not be opened

    @property
    def path(self) -> Path:
        """The session file's path (made when asked)."""
        return Path(self.where)


class FirstHit(NamedTuple):
    """A session `-l` lists from its first hit as the index read it (`IndexRead.first_hit`): what -l shows of it,
    its path's text, agent and id (the JSON row's), with no snippet cut nor `Hit` made for each of thousands."""

    where: str  # the session file's path, as text
    agent: str
    source: SearchSource
    found: tuple[Item, int, int, bool]  # `IndexRead.first_hit`'s answer: the item, the match in it, in its tool's name

    @property
    def session(self) -> str:
        """The session's id (made when asked: -l's JSON row, not its text)."""
        return self.source.session

    @property
    def hit(self) -> Hit:
        """The hit, as search gives one read from the file (made when asked: -l shows none of it)."""
        item, start, end, in_name = self.found
        text = item.name if in_name and item.name is not None else item.text
        return _hit_at(self.agent, self.session, self.where, item, text, start, end, in_name)


Found = Hit | Searched
ANY = Filters()  # no filter: every hit


def _never() -> bool:
    return False


@overload
def search(
    sources: Iterable[SearchSource],
    query: Query,
    filters: Filters = ANY,
    *,
    cancelled: Callable[[], bool] = _never,
    index: IndexRead | None = None,
    quiet: bool = False,
    first: Literal[False] = False,
) -> Iterator[Found]: ...


@overload
def search(
    sources: Iterable[SearchSource],
    query: Query,
    filters: Filters = ANY,
    *,
    cancelled: Callable[[], bool] = _never,
    index: IndexRead | None = None,
    quiet: bool = False,
    first: bool,
) -> Iterator[Found | FirstHit]: ...


def search(
    sources: Iterable[SearchSource],
    query: Query,
    filters: Filters = ANY,
    *,
    cancelled: Callable[[], bool] = _never,
    index: IndexRead | None = None,
    quiet: bool = False,
    first: bool = False,
) -> Iterator[Found | FirstHit]:
    """Every hit of `query` in `sources`, in their order and each one's order, and a `Searched` after each.

    A session modified before `filters.since` is skipped unread (none of its events can be later).
    `cancelled` is asked between items; once it says yes, nothing more is yielded. With `index` (loaded),
    a session the index knows as it is now is answered from it, one that grew from it and its tail.
    `quiet`: no `Searched` for a session with nothing to say (no hit, read to its end, no warning), as a
    command that shows no progress wants: most of 2,000 sessions, answered from the index in a few µs each.
    `first`: a session's reading ends at its first hit (`wren search -l`); its `Searched` then says no stop,
    as nothing after the hit was read. A session the index answers from its first candidate (`IndexRead.first_hit`:
    fresh, read to its end with no stop or warning) is a `FirstHit` (what -l shows of it) and, with `quiet`, gets no
    `Searched`: it has nothing more to say.
    """
    if first and index is not None:
        return _firsts(sources, query, filters, cancelled, index, quiet)
    return _hits(sources, query, filters, cancelled, index, quiet, first)


_new_tuple = tuple.__new__


def _firsts(
    sources: Iterable[SearchSource],
    query: Query,
    filters: Filters,
    cancelled: Callable[[], bool],
    index: IndexRead,
    quiet: bool,
) -> Iterator[Found | FirstHit]:
    """`search`'s -l: a session's first hit as the index read it, matched once (`IndexRead.first_hit`), else its
    reading (`_hits`) ends at its first hit."""
    quick = index.first_hit
    since = filters.since
    keep = None if not filters.roles and filters.project is None and since is None else filters.keep
    before = None if since is None else since.timestamp()
    asked = cancelled is not _never  # never cancelled (a command's -l): not asked of each of thousands
    for source in sources:
        if asked and cancelled():
            return
        if before is not None and _older(source, before):
            continue
        where = source.path_text
        agent = source.agent
        got = quick(where, agent)
        if got is not None and (keep is None or keep(got[0])):
            yield _new_tuple(FirstHit, (where, agent, source, got))  # FirstHit(...) without its __new__'s call
            if not quiet:  # quiet: it has nothing more to say (no stop, no warning)
                yield Searched(agent, source.session, where, 1)
            continue
        # Its reading (its first hit alone): a cancel there ends it, and this loop at its next session.
        yield from _hits((source,), query, filters, cancelled, index, quiet, True, since_asked=True)


def _hits(
    sources: Iterable[SearchSource],
    query: Query,
    filters: Filters,
    cancelled: Callable[[], bool],
    index: IndexRead | None,
    quiet: bool,
    first: bool,
    *,
    since_asked: bool = False,
) -> Iterator[Found]:
    """`search` reading each session (`index.answer`, else its file); `since_asked`: the caller skipped those older
    than `filters.since` already (`_firsts`, before asking the index of its first candidate)."""
    before = None if since_asked or filters.since is None else filters.since.timestamp()
    for source in sources:
        if cancelled():
            return
        if before is not None and _older(source, before):
            continue
        hits = 0
        answer = index.answer(source.path_text, source.agent) if index is not None else None
        try:
            if answer is None:
                items: Iterable[Item] = source.items(query)
            elif answer.whole:
                items = answer.items
            elif isinstance(source, Resumable) and answer.saved is not None:
                items = _chained(answer.items, source.resume(query, answer.saved))
            else:
                items, answer = source.items(query), None
            for item in items:
                if cancelled():
                    return
                if not filters.keep(item):
                    continue
                hit = match(source, item, query)
                if hit is not None:
                    hits += 1
                    yield hit
                    if first:
                        break
        except JournalError as exc:
            yield Searched(source.agent, source.session, source.path_text, hits, unreadable=str(exc))
            continue
        except OSError as exc:
            why = (exc.strerror or str(exc)).lower()
            yield Searched(
                source.agent, source.session, source.path_text, hits, unreadable=f"{source.path_text}: {why}"
            )
            continue
        if first and hits:
            warned = answer.known.warnings if answer is not None and answer.whole else tuple(source.warnings)
            yield Searched(source.agent, source.session, source.path_text, hits, None, warned)
            continue
        if answer is not None and answer.whole:
            known = answer.known
            if hits or not quiet or known.stop is not None or known.warnings:
                yield Searched(source.agent, source.session, source.path_text, hits, known.stop, known.warnings)
        elif hits or not quiet or source.stop is not None or source.warnings:
            yield Searched(source.agent, source.session, source.path_text, hits, source.stop, tuple(source.warnings))


def _chained(first: Iterable[Item], then: Iterator[Item]) -> Iterator[Item]:
    yield from first
    yield from then


def match(source: SearchSource, item: Item, query: Query) -> Hit | None:
    """The hit `item` makes, if its text (or a call's tool name) matches."""
    span = query.find(item.text)
    text, in_name = item.text, False
    if span is None and item.name is not None:
        span, text, in_name = query.find(item.name), item.name, True
    if span is None:
        return None
    return _hit_at(source.agent, source.session, source.path_text, item, text, span[0], span[1], in_name)


def _hit_at(agent: str, session: str, where: str, item: Item, text: str, start: int, end: int, in_name: bool) -> Hit:
    """The hit of `item` whose match is `text[start:end]` (its text, or its tool call's name: `in_name`)."""
    snippet, start, end = cut_around(text, start, end)
    return Hit(agent, session, where, item, snippet, start, end, in_name)


def cut_around(text: str, start: int, end: int, width: int = SNIPPET) -> tuple[str, int, int]:
    """The part of `text` around `text[start:end]` that fits `width` (the match whole), and the match in it."""
    if len(text) <= width:
        return text, start, end
    lo = max(0, min(start - _BEFORE, len(text) - width))
    hi = max(lo + width, end)
    return text[lo:hi], start - lo, end - lo


def _older(source: SearchSource, before: float) -> bool:
    """Whether the session's file last changed before `before` (a POSIX time): none of its events can be later. By
    the stat its listing took (`looked`), else by its path's text: no Path made, nor a second stat, for each of
    thousands."""
    looked = getattr(source, "looked", None)
    if looked is None:
        try:
            looked = os.stat(source.path_text)
        except OSError:
            return False  # searched, so whatever is wrong with it is said
    return bool(looked.st_mtime < before)
