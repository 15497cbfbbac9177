"""Search over a journal of any size: its bytes scanned a chunk at a time, only candidate lines decoded.

The session screen's `/` searches with the `Query` of `wren search` (search/query.py): the text as
typed, smart case (a capital letter makes it case-sensitive). The piece of it every writer leaves as it
is in a JSON line (`Query.prefilter`: printable ASCII but the quote and the backslash) is looked for in
the bytes first (lowered, when ignoring case), with the few byte strings that can stand for one of its
characters (a character that matches one of its letters ignoring case, as it is or escaped), so a
million events are searched at the speed of `bytes.find`; a pattern with no such piece decodes each item.
"""

from __future__ import annotations

import functools
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator

from ..journal.events import Delta, Event, Message, describe
from ..journal.offsets import CHUNK
from ..search.query import Query
from ..search.rawpass import native
from ..sessions import SessionSource
from .timeline import Timeline


def text_of(event: Event) -> str:
    """What search looks in: a message's text and reasoning, or the one line the conversation shows for the rest."""
    if not isinstance(event, Message):
        return describe(event)
    thought = "\n".join(r.text for r in event.message.reasoning or ())
    return f"{thought}\n{event.message.content}" if thought else event.message.content


def find_all(
    timeline: Timeline,
    source: SessionSource,
    query: Query,
    lo: int,
    hi: int,
    *,
    progress: Callable[[float], None],
    cancelled: Callable[[], bool],
) -> array[int] | None:
    """The items among `lo..hi` whose text `query` matches, in order; None if cancelled."""
    found: array[int] = array("i")
    if lo >= hi:
        return found
    done = 0
    for block_lo, block_hi in _blocks(timeline, lo, hi, reverse=False):
        for position in _candidates(timeline, source, query, block_lo, block_hi):
            if query.find(_text_at(timeline, source, position)) is not None:
                found.append(position)
        done += block_hi - block_lo
        progress(done / (hi - lo))
        if cancelled():
            return None
    return found


def _text_at(timeline: Timeline, source: SessionSource, position: int) -> str:
    """The whole text of an item, read from the journal (a partial reply: its deltas joined)."""
    start, end = timeline.starts[position], timeline.ends[position]
    if timeline.kind(position) == "partial":
        return "".join(e.text for e in source.decode_span(start, end) if isinstance(e, Delta))
    return text_of(source.decode(start, end, timeline.parts.get(position, 0)))


def _blocks(timeline: Timeline, lo: int, hi: int, *, reverse: bool) -> Iterator[tuple[int, int]]:
    """Runs of items of about a chunk of bytes each, in reading order or backwards."""
    starts = timeline.starts
    spans: list[tuple[int, int]] = []
    position = lo
    while position < hi:
        stop = max(min(bisect_left(starts, starts[position] + CHUNK, position, hi), hi), position + 1)
        spans.append((position, stop))
        position = stop
    yield from reversed(spans) if reverse else spans


def _candidates(timeline: Timeline, source: SessionSource, query: Query, lo: int, hi: int) -> list[int]:
    """The items among `lo..hi` whose bytes can hold a match of `query` (all of them: it has no raw piece).

    The raw piece, or one of the byte strings that can stand for one of its characters (`Query.prefilter`'s
    extras: a character that matches one of its letters ignoring case, as it is or escaped; a non-ASCII
    character escaped); an ASCII character escaped by its writer (`\\u003c` for <) is not looked for, as
    JSON's own writers leave them as they are. Found by the raw pass's `find` in C where it is built (ASCII
    case ignored as it looks), else by `bytes.find` in the lowered bytes."""
    needle, fold, _escapes, extras = query.prefilter
    if needle is None:
        return list(range(lo, hi))
    base = timeline.starts[lo]
    data = source.read(base, timeline.ends[hi - 1] - base)
    if native is not None:
        view = memoryview(data)
        found = _holding(timeline, base, lo, hi, lambda at: native.find(view[at:], needle, fold, False, extras))
    else:
        lowered = data.lower() if fold or extras else data
        found = _holding(timeline, base, lo, hi, functools.partial(_find, data if not fold else lowered, needle))
        for other in extras:  # a non-ASCII character's UTF-8, or an escape
            found += _holding(timeline, base, lo, hi, functools.partial(_find, lowered, other.lower()))
    partials = timeline.partial_items
    # A partial reply's text is cut across its delta lines: always look in it.
    extra = partials[bisect_left(partials, lo) : bisect_left(partials, hi)]
    return sorted({*found, *extra}) if extra or (extras and native is None) else found


def _find(data: bytes, key: bytes, at: int) -> int:
    """Where `key` is in `data` from `at` on, from `at` (-1: nowhere)."""
    found = data.find(key, at)
    return found if found < 0 else found - at


def _holding(timeline: Timeline, base: int, lo: int, hi: int, find: Callable[[int], int]) -> list[int]:
    """The items among `lo..hi` whose bytes (read from `base`) hold what `find(at)` finds: where it is from
    offset `at` on, from `at`, or -1."""
    starts, ends = timeline.starts, timeline.ends
    found: list[int] = []
    at = find(0)
    while at >= 0:
        position = bisect_right(starts, base + at, lo, hi) - 1
        if ends[position] > base + at:
            # Items that share the line (a format whose lines give several events) are all candidates.
            first = bisect_left(starts, starts[position], lo, position) if timeline.parts else position
            found.extend(range(first, position + 1))
            on = ends[position] - base
        else:
            on = at + 1  # in a streamed delta between two items
        step = find(on)
        at = step if step < 0 else on + step
    return found
