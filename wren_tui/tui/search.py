"""Search over a journal of any size: its bytes scanned a chunk at a time, only candidate lines decoded.

A needle in plain ASCII is looked for in the lowered bytes first (JSON keeps such text as it is),
so a million events are searched at the speed of `bytes.find`; any other needle decodes each item.
"""

from __future__ import annotations

import json
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator

from ..journal.events import Delta, Event, Message, describe
from ..journal.offsets import CHUNK
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
    query: str,
    lo: int,
    hi: int,
    *,
    progress: Callable[[float], None],
    cancelled: Callable[[], bool],
) -> array[int] | None:
    """The items among `lo..hi` whose text holds `query`, ignoring case, in order; None if cancelled."""
    needle = query.casefold()
    found: array[int] = array("i")
    if not needle or lo >= hi:
        return found
    plain = needle.isascii() and json.dumps(needle) == f'"{needle}"'
    key = needle.encode() if plain else None
    done = 0
    for block_lo, block_hi in _blocks(timeline, lo, hi, reverse=False):
        for position in _candidates(timeline, source, key, block_lo, block_hi):
            if needle in _text_at(timeline, source, position).casefold():
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


def _candidates(timeline: Timeline, source: SessionSource, key: bytes | None, lo: int, hi: int) -> list[int]:
    if key is None:
        return list(range(lo, hi))
    starts, ends = timeline.starts, timeline.ends
    base = starts[lo]
    data = source.read(base, ends[hi - 1] - base).lower()
    found: list[int] = []
    partials = timeline.partial_items
    # A partial reply's text is cut across its delta lines: always look in it.
    extra = partials[bisect_left(partials, lo) : bisect_left(partials, hi)]
    at = data.find(key)
    while at >= 0:
        position = bisect_right(starts, base + at, lo, hi) - 1
        if ends[position] > base + at:
            # Items that share the line (a format whose lines give several events) are all candidates.
            first = bisect_left(starts, starts[position], lo, position) if timeline.parts else position
            found.extend(range(first, position + 1))
            at = data.find(key, ends[position] - base)
        else:
            at = data.find(key, at + 1)  # in a streamed delta between two items
    return sorted({*found, *extra}) if extra else found
