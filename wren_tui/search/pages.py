"""`wren search`'s hits as pages: which hits a page shows, how many of a session, and where the next page starts.

The page is decided here, from the hits `engine.search` yields; what a page looks like (text or JSON lines,
and where a sentence goes) is the command's `Show`. A cursor the person copies back (`--after`) names the
session and the hit the next page starts at.

Its annotations are evaluated where they are written, as `sources`' are (`Cursor`'s fields are types, not text
`typing.NamedTuple` would compile).
"""

from collections.abc import Callable, Iterator
from functools import cache
from typing import NamedTuple, Protocol, Self

from ..journal.verdict import Stop
from .engine import FirstHit, Hit, Searched
from .sources import SearchSource


class PageError(ValueError):
    """A cursor that cannot be followed (not one a page printed, or its session is gone): one sentence to say."""


class Cursor(NamedTuple):
    """Where the next page starts: the hit numbered `skip` (from 0) of the session at `path`, `shown` of its
    hits already shown on earlier pages (for the count of the rest). Printed as URL-safe base64 of JSON."""

    path: str
    skip: int
    shown: int

    def text(self) -> str:
        import base64  # only for a page that ends before the last hit

        raw = _utf8(_encoder()([self.path, self.skip, self.shown]))
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @classmethod
    def of(cls, text: str) -> Self:
        """The cursor `text` is. Raises PageError: it is not one a page printed."""
        import base64

        try:
            raw = base64.urlsafe_b64decode(text.strip() + "=" * (-len(text.strip()) % 4))
            path, skip, shown = _fields(raw)
        except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
            raise PageError(
                f"--after {text[:80]!r} is not a cursor a page printed: copy it from the line 'next page: --after …'"
            ) from None
        if skip < 0 or shown < 0 or shown > skip:
            raise PageError(f"--after {text[:80]!r} is not a cursor a page printed: copy it from the line 'next page'")
        return cls(path, skip, shown)

    def rest(self, sources: list[SearchSource]) -> list[SearchSource]:
        """`sources` from the cursor's session on. Raises PageError: that session is no longer listed."""
        for at, source in enumerate(sources):
            if source.path_text == self.path:
                return sources[at:]
        raise PageError(
            f"the next page's session {self.path} is no longer among the sessions searched (moved or deleted): "
            "search again without --after"
        )


def _fields(raw: bytes) -> tuple[str, int, int]:
    """The path, skip and shown of a cursor's JSON: an array of a string and two integers, in UTF-8, and nothing
    else (no boolean or float for an integer, no lone surrogate in the path, nothing after the array).

    Raises:
        ValueError: it is not (a `json.JSONDecodeError` and a `UnicodeDecodeError` are ValueErrors).
        RecursionError: arrays nested too deep for the JSON decoder.
    """
    import json  # only for --after

    fields = json.loads(raw.decode("utf-8"))
    if type(fields) is not list or len(fields) != 3:
        raise ValueError("not an array of three")
    path, skip, shown = fields
    if type(path) is not str or type(skip) is not int or type(shown) is not int:
        raise ValueError("not a string and two integers")
    # A lone surrogate (a \ud800 escape alone) is no path a page printed (UnicodeEncodeError), but a name's byte that
    # is not UTF-8 (\udc80-\udcff, as Python decodes a file's name) is: the page of such a session printed it.
    path.encode("utf-8", "surrogateescape")
    return path, skip, shown


def _utf8(text: str) -> bytes:
    """The cursor's JSON in UTF-8, a lone surrogate in its path (a name's byte that is not UTF-8) as its escape."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", lambda lone: f"\\u{ord(lone[0]):04x}", text).encode()


@cache
def _encoder() -> Callable[[object], str]:
    """The cursor's JSON, compact, its path in UTF-8 as it is, as msgspec wrote it (tests/test_json_rows.py)."""
    import json

    return json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Show(Protocol):
    """What a page looks like: the command's (text on a terminal or in a pipe, or JSON lines)."""

    def hit(self, hit: Hit) -> None: ...

    def session(self, hit: Hit | FirstHit) -> None: ...  # with -l: the session of its first hit shown

    def more(self, hidden: int) -> None: ...  # the hits of the session just ended counted, not shown

    def stopped(self, searched: Searched, stop: Stop) -> None: ...  # its reading stopped before its end

    def page(self, cursor: Cursor) -> None: ...  # the next page starts there

    def said(self, sentence: str) -> None: ...  # a sentence for the person (why a session was not searched)

    def flush(self) -> None: ...  # a session ended: what was shown of it is out


class Pager:
    """Hits shown as a page: at most `limit` (hits, or sessions with `files`), from `after`, `cap` of each session.

    The sessions come in the listing's order, newest first; a session's hits in its order. Past `cap`, a
    session's hits are counted, not shown, and the count said when its reading ends. Once `limit` are shown,
    the next hit that would be shown ends the page, its place printed as the next page's cursor (nothing is
    printed when there is no next hit).
    """

    def __init__(self, show: Show, *, limit: int | None, cap: int | None, after: Cursor | None, files: bool) -> None:
        self.show, self.limit, self.cap, self.files = show, limit, cap, files
        self.after = after
        self.where: str | None = None  # the session being shown (its path's text)
        self.seen = self.shown = self.hidden = 0  # its hits passed (shown or counted), shown, counted

    def run(self, results: Iterator[Hit | FirstHit | Searched]) -> int:
        """Show `results` as a page; how many hits (or sessions) it showed.

        What is shown goes out when a session's `Searched` comes (search yields none for a session `-l` lists from
        the index alone: they go out together), before anything is said on stderr, and at the page's end.
        """
        try:
            return self._run(results)
        finally:
            self.show.flush()

    def _run(self, results: Iterator[Hit | FirstHit | Searched]) -> int:
        if self.after is None and self.cap is None:
            return self._run_whole(results)
        printed = 0
        after, cap, limit = self.after, self.cap, self.limit
        show = self.show
        put = self._put()
        for each in results:
            if isinstance(each, Searched):
                self._ended(each)
                continue
            where = each.where
            if where != self.where:
                self.where, self.seen, self.shown, self.hidden = where, 0, 0, 0
                if after is not None and where == after.path:
                    self.shown = after.shown  # the session goes on from the last page
            if after is not None and where == after.path and self.seen < after.skip:
                self.seen += 1  # on an earlier page
                continue
            if cap is not None and self.shown >= cap:
                self.seen += 1
                self.hidden += 1
                continue
            if limit is not None and printed >= limit:
                show.page(Cursor(where, self.seen, self.shown))
                break
            put(each)
            printed += 1
            self.seen += 1
            self.shown += 1
        return printed

    def _run_whole(self, results: Iterator[Hit | FirstHit | Searched]) -> int:
        """`_run` of a page from the first hit with no cap (-l, --all, --json): each hit shown until the limit; a
        session's hits passed are those shown, the cursor's skip and shown both (none counted, none skipped)."""
        printed = 0
        limit, show = self.limit, self.show
        put = self._put()
        where = self.where
        passed = 0  # the hits of the session at `where` shown
        for each in results:
            if isinstance(each, Searched):
                self.where = where  # `_ended` asks which session is being shown
                self._ended(each)
                continue
            if each.where != where:
                where, passed = each.where, 0
            if limit is not None and printed >= limit:
                show.page(Cursor(where, passed, passed))
                break
            put(each)
            printed += 1
            passed += 1
        self.where, self.seen, self.shown = where, passed, passed
        return printed

    def _put(self) -> Callable[[Hit | FirstHit], None]:
        """How a hit is shown: with -l, its session (a `FirstHit`, or a `Hit` read from its file); else the hit."""
        if self.files:
            return self.show.session
        hit = self.show.hit

        def put(each: Hit | FirstHit) -> None:
            assert isinstance(each, Hit), "a FirstHit is -l's"
            hit(each)

        return put

    def _ended(self, searched: Searched) -> None:
        if self.files and (searched.unreadable is not None or searched.warnings or searched.stop is not None):
            self.show.flush()  # -l: the sessions listed before it out before what is said of it
        if searched.unreadable is not None:
            self.show.said(f"{searched.unreadable}; it was not searched")
        for warning in searched.warnings:
            self.show.said(f"warning: {searched.session}: {warning}")
        if searched.where == self.where and self.hidden:
            self.show.more(self.hidden)
            self.hidden = 0
        if searched.stop is not None:
            self.show.stopped(searched, searched.stop)
        if searched.hits or searched.stop is not None:
            self.show.flush()  # a session at a time, so the first hits show while later sessions are read
