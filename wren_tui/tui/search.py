"""Search over a journal of any size: its bytes scanned a chunk at a time, only candidate lines decoded.

A needle in plain ASCII is looked for in the lowered bytes first (JSON keeps such text as it is),
so a million events are searched at the speed of `bytes.find`; any other needle decodes each item.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator

from ..journal.events import Event, Message, describe
from ..journal.index import CHUNK, decode_at
from .timeline import Timeline


def text_of(event: Event) -> str:
    """What search looks in: a message's text, or the one line the conversation shows for the rest."""
    return event.message.content if isinstance(event, Message) else describe(event)


def find(
    timeline: Timeline,
    fd: int,
    query: str,
    cursor: int,
    *,
    forward: bool,
    progress: Callable[[float], None],
    cancelled: Callable[[], bool],
) -> int | None:
    """The next item (after `cursor`, wrapping around) whose text holds `query`, ignoring case."""
    needle = query.casefold()
    count = len(timeline)
    if not needle or not count:
        return None
    plain = needle.isascii() and json.dumps(needle) == f'"{needle}"'
    key = needle.encode() if plain else None
    if forward:
        spans = [(cursor + 1, count), (0, min(cursor + 1, count))]
    else:
        spans = [(0, max(cursor, 0)), (max(cursor, 0), count)]
    done = 0
    for lo, hi in spans:
        for block_lo, block_hi in _blocks(timeline, lo, hi, reverse=not forward):
            candidates = _candidates(timeline, fd, key, block_lo, block_hi)
            for position in candidates if forward else reversed(candidates):
                if needle in text_of(decode_at(fd, timeline.starts[position], timeline.ends[position])).casefold():
                    return position
            done += block_hi - block_lo
            progress(done / count)
            if cancelled():
                return None
    return None


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


def _candidates(timeline: Timeline, fd: int, key: bytes | None, lo: int, hi: int) -> list[int]:
    if key is None:
        return list(range(lo, hi))
    starts, ends = timeline.starts, timeline.ends
    base = starts[lo]
    data = os.pread(fd, ends[hi - 1] - base, base).lower()
    found: list[int] = []
    at = data.find(key)
    while at >= 0:
        position = bisect_right(starts, base + at, lo, hi) - 1
        if ends[position] > base + at:
            found.append(position)
            at = data.find(key, ends[position] - base)
        else:
            at = data.find(key, at + 1)  # in a streamed delta between two items
    return found
