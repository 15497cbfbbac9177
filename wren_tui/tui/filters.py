"""What the session screen's filters show: which items of the timeline each keeps, from its arrays alone.

- thinking: what the model says in its own words: its reasoning (a reply that carries some), its
  replies' text, and partial replies.
- tools: every tool call: the reply that asks for it, its start, its end, its result.
- writes: the same for the calls that change the workspace (write_file, edit_file, run_command,
  or any call whose start says it is not read-only).
- errors: error events and calls that failed or were stopped.

Nothing is decoded: a filter over a million items is a few passes over arrays, and items appended
while following are judged as they come. One thing looks back: a call is known to write only at its
start when its tool's name did not say so, and then the reply that asked for it is shown too
(`revealed`).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Literal

from .timeline import KINDS, Timeline

Only = Literal["thinking", "tools", "writes", "errors"]
ONLY: tuple[Only, ...] = ("thinking", "tools", "writes", "errors")
# What the status line calls each.
LABEL: dict[Only, str] = {"thinking": "thinking", "tools": "tool calls", "writes": "writes", "errors": "errors"}

_ASSISTANT, _PARTIAL, _TOOL, _ERROR = (KINDS.index(kind) for kind in ("assistant", "partial", "tool", "error"))


def _table(*codes: int) -> bytes:
    """A bytes.translate table: 1 for these kind codes, 0 for every other byte."""
    return bytes(1 if code in codes else 0 for code in range(256))


_KEEP = {
    "thinking": _table(_PARTIAL),
    "tools": _table(_TOOL),
    "writes": _table(),
    "errors": _table(_ERROR),
}


def shown(timeline: Timeline, only: Only, lo: int, hi: int) -> bytearray:
    """One byte per item of lo..hi: 1 where `only` shows it, else 0."""
    mask = bytearray(timeline.kinds[lo:hi].tobytes().translate(_KEEP[only]))
    if only == "thinking":
        kinds, chars = timeline.kinds, timeline.chars
        code = bytes([_ASSISTANT])
        raw = kinds.tobytes()
        at = raw.find(code, lo, hi)
        while at >= 0:
            mask[at - lo] = 1 if chars[at] else 0  # a reply that only calls tools says nothing
            at = raw.find(code, at + 1, hi)
        thoughts = timeline.reasoning_items
        for index in range(bisect_left(thoughts, lo), bisect_left(thoughts, hi)):
            mask[thoughts[index] - lo] = 1
    elif only in ("tools", "writes"):
        writes_only = only == "writes"
        if writes_only:
            mask = bytearray(hi - lo)  # a result shows only as part of a call that writes
        calls = timeline.item_call
        # The fewer of: the items in range (a few appended), or the calls' items (a whole timeline).
        pairs = ((i, calls.get(i)) for i in range(lo, hi)) if hi - lo < len(calls) else calls.items()
        for item, number in pairs:
            if number is not None and lo <= item < hi and (not writes_only or timeline.call_writes[number]):
                mask[item - lo] = 1
        asked, writes = timeline.call_asked, timeline.call_writes
        for number in range(_first_call_asked_from(timeline, lo), len(asked)):
            item = asked[number]
            if lo <= item < hi and (not writes_only or writes[number]):
                mask[item - lo] = 1
    return mask


def revealed(timeline: Timeline, only: Only, lo: int) -> list[int]:
    """Items before `lo` that items from `lo` on make shown: the ask of a call whose start said it writes."""
    if only != "writes":
        return []
    late = timeline.late_writes
    at = bisect_left(late, (lo, -1))
    return [asked for _start, asked in late[at:] if asked < lo]


def _first_call_asked_from(timeline: Timeline, lo: int) -> int:
    """The first call whose ask is at or after item `lo` (calls are numbered as they are asked or met)."""
    asked = timeline.call_asked
    number = len(asked)
    # Asks only grow with the call number (a call met only by its start has none: -1), so walk back.
    while number > 0 and (asked[number - 1] >= lo or asked[number - 1] < 0):
        number -= 1
    return number
