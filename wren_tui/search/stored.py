"""The items the index points to in a Wren journal (`Ref`), read back from the journal's bytes and checked.

The index keeps where each item of a journal is (its line's start, length and own CRC-32) rather than its text:
`stored_items` reads those lines, checks they are the very lines indexed, and makes their items as the reader
does (`spoken.items_of` of the line's event). A few hundred lines, the hits of a warm search, are decoded by the
standard library's JSON (already loaded to print them), each taken only when it is plainly one of the events that
hold items, every field of the type msgspec's event types would require (`plain_event`): the same items, without
importing msgspec (about 14 ms, more than the search itself). Any other line, and every line past the first
`PLAIN_LINES`, is decoded by msgspec, as the journal's reader does.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from ..journal.errors import JournalError
from ..journal.lines import pread_exactly
from ..portable import pread
from .sources import Item

if TYPE_CHECKING:
    import msgspec

    from ..journal.events import Event, KnownEvent

# Where an item's text is in its journal: the start and end of its line (of its deltas' lines, for a partial reply)
# and the line's own CRC-32 (what its writer wrote at its end; for a partial reply, the CRC-32 of all its lines).
Located = tuple[int, int, int]
# What the index keeps of a Wren journal's item (index version 8): its line's start and length, its CRC-32 (as
# `Located`), which of the line's items it is (-1: the partial reply its deltas make), and the project it was in.
Ref = tuple[int, int, int, int, str | None]
PARTIAL = -1
# The bytes of a file's items read and checked at a time (`stored_items`); a file's candidates past this are
# checked first, in a pass of their own, so nothing is given before every one of them is known to be right.
CHUNK = 4 << 20
_GAP = 4 << 10  # lines at most this far apart are read in one pread (a copy of 4 kB costs about a call)
_READ = 1 << 20  # of at most about this many bytes
# How a line the reader takes ends: `,"crc":"` and its CRC-32 in 8 lowercase hex digits, `"}`, the newline.
_MARK = b',"crc":"'
TAIL = len(_MARK) + 8 + 3


def own_crc(tail: bytes | memoryview) -> int:
    """The CRC-32 a line ending in `tail` (its last TAIL bytes) says it has; -1 if it does not end as a line
    the reader takes (never so for a line an item was read from: `stored_spans` then finds it wrong)."""
    if len(tail) != TAIL or tail[: len(_MARK)] != _MARK or tail[-3:] != b'"}\n':
        return -1
    try:
        return int(bytes(tail[len(_MARK) : len(_MARK) + 8]), 16)
    except ValueError:
        return -1


def ref_of(item: Item, located: Located, which: int) -> Ref:
    start, end, crc = located
    signed = crc - (1 << 32) if crc >= 1 << 31 else crc  # marshal's 4-byte int
    return (start, end - start, signed, PARTIAL if item.kind == "partial" else which, item.project)


def stored_spans(fd: int, refs: Sequence[Ref]) -> list[memoryview] | None:
    """The bytes each of `refs` points to in the journal open at `fd`; None when any of them is not the line it
    was indexed from (the file changed under the index): the bytes there do not end with a newline and, before
    its `"}`, the line's own CRC-32 kept (its writer's, of its body: another line has another, and a line that
    moved ends elsewhere), or the file ends before them. A partial reply's lines are checked whole against the
    CRC-32 of them kept.

    The line's body is not checked against its CRC again: its own CRC and its end tell one line from another
    (a line damaged under an intact CRC is the reader's to find, as any damage the index did not read).
    """
    spans: list[memoryview] = []
    at = 0
    while at < len(refs):
        low, length = refs[at][0], refs[at][1]
        high, end = low + length, at + 1
        # The next ones in the same line or just after it: one read.
        while end < len(refs) and low <= refs[end][0] <= high + _GAP and high - low < _READ:
            high = max(high, refs[end][0] + refs[end][1])
            end += 1
        wanted = high - low
        read = pread(fd, wanted, low)
        data = memoryview(read if len(read) == wanted else pread_exactly(fd, wanted, low))
        if len(data) < wanted:
            return None
        for start, size, crc, which, _project in refs[at:end]:
            first = start - low
            last = first + size
            if which == PARTIAL:
                if zlib.crc32(data[first:last]) != crc & 0xFFFFFFFF:
                    return None
            # The line's own CRC, 8 hex digits before its `"}` and newline (`,"crc":"` before them: `own_crc`).
            elif data[last - 1] != _NEWLINE or data[last - 11 : last - 3] != b"%08x" % (crc & 0xFFFFFFFF):
                return None
            spans.append(data[first:last])
        at = end
    return spans


_NEWLINE = ord("\n")


def item_at(span: bytes | memoryview, ref: Ref) -> Item:
    """The item `ref` points to, from its bytes (`stored_spans`: the very bytes it was indexed from).

    Raises:
        JournalError: they do not give it (only bytes other than those indexed could).
    """
    start, _size, _crc, which, project = ref
    if which == PARTIAL:
        item = partial_of(span, start, project, lenient=True)
        if item is None:
            raise JournalError(f"offset {start}: no streamed reply there")
        return item
    items = _line_items(span, start, project)
    found = next(items if which == 0 else islice(items, which, None), None)
    if found is None:
        raise JournalError(f"offset {start}: the line holds no item {which}")
    return found


def event_of(span: bytes | memoryview) -> Event:
    """The event of one line, decoded by msgspec (else read as the journal's reader reads it)."""
    import msgspec

    try:
        event: Event = _decoder().decode(span)
    except (msgspec.DecodeError, RecursionError):
        from ..journal.reader import decode_line  # a line the raw pass did not vouch for, read as the reader reads it

        event = decode_line(bytes(span))
    return event


def stored_items(
    fd: int, refs: Sequence[Ref], may_hold: Callable[[memoryview], bool] | None = None
) -> list[Item] | Iterator[Item] | None:
    """The items `refs` point to, in order, read from the journal open at `fd`; None when the file's bytes are
    not those indexed (all of them checked before the first is given). A list when they are read at once (at
    most CHUNK bytes: `fd` is no longer needed); else an iterator reading a chunk at a time from `fd`.

    With `may_hold` (the raw pass's test of a line's bytes, `index._may_hold`), a line it says cannot match is
    not decoded and its item left out (a partial reply's always kept: its match may lie across its deltas).

    Raises (from the iterator): JournalError, when the file changed between the check and the reading.
    """
    chunks: list[Sequence[Ref]] = []
    begin, size = 0, 0
    for n, ref in enumerate(refs):
        size += ref[1]
        if size >= CHUNK:
            chunks.append(refs[begin : n + 1])
            begin, size = n + 1, 0
    if begin < len(refs):
        chunks.append(refs[begin:])
    first = stored_spans(fd, chunks[0]) if chunks else []
    if first is None or any(stored_spans(fd, chunk) is None for chunk in chunks[1:]):
        return None
    if len(chunks) <= 1:
        return _items_at(first, refs, may_hold)
    return _decoded(fd, chunks, first, may_hold)


def _items_at(
    spans: list[memoryview], refs: Sequence[Ref], may_hold: Callable[[memoryview], bool] | None = None
) -> list[Item]:
    """`item_at` of each (those `may_hold` lets through), a line holding several (a reply's reasoning, text and
    calls) decoded once."""
    found: list[Item] = []
    line: list[Item] = []  # the items of the line at `at` made so far, by `making`
    making: Iterator[Item] = iter(())
    at = -1
    for span, ref in zip(spans, refs, strict=True):
        start, which = ref[0], ref[3]
        if which == PARTIAL:
            found.append(item_at(span, ref))
            continue
        if may_hold is not None and start != at and not may_hold(span):
            continue
        if start != at:
            line, making, at = [], _line_items(span, start, ref[4]), start
        line.extend(islice(making, which + 1 - len(line)))
        if which >= len(line):
            raise JournalError(f"offset {start}: the line holds no item {which}")
        found.append(line[which])
    return found


def _decoded(
    fd: int, chunks: list[Sequence[Ref]], first: list[memoryview], may_hold: Callable[[memoryview], bool] | None
) -> Iterator[Item]:
    spans: list[memoryview] | None = first
    for n, chunk in enumerate(chunks):
        if n:
            spans = stored_spans(fd, chunk)
        if spans is None:
            raise JournalError("it changed while it was searched: search again")
        yield from _items_at(spans, chunk, may_hold)


# The lines decoded by the standard library's JSON in one process; past these, msgspec (imported then) decodes them:
# it decodes a line several times faster, and a search with thousands of hits has its import's time back.
PLAIN_LINES = 512
_plain_left = [PLAIN_LINES]
# What msgspec's event types (`journal.events`) take of the events that hold items: a line with a key not here, or of
# another type, is left to msgspec. (tests/search/test_stored_lines.py checks these are the types' own.)
ROLES = frozenset(("user", "assistant", "tool"))  # `events.Role`
EVENT_KEYS = {
    "message": frozenset(("type", "seq", "ts", "message", "crc")),
    "error": frozenset(("type", "seq", "ts", "message", "retryable", "attempt", "crc")),
    "delta": frozenset(("type", "seq", "ts", "text", "reasoning", "crc")),
}
MESSAGE_KEYS = frozenset(("role", "content", "toolCalls", "toolCallId", "reasoning"))  # `events.ChatMessage`, camel
CALL_KEYS = frozenset(("id", "name", "args"))  # `events.ToolCall`
REASONING_KEYS = frozenset(("text", "kind", "signature", "data"))  # `events.Reasoning`
_decoders: list[msgspec.json.Decoder[KnownEvent]] = []


def _decoder() -> msgspec.json.Decoder[KnownEvent]:
    if not _decoders:
        import msgspec

        from ..journal.events import KnownEvent

        _decoders.append(msgspec.json.Decoder(KnownEvent))
    return _decoders[0]


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("a key given twice")  # msgspec's reading of it is msgspec's to say
    return found


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is no JSON")  # the standard library's extension: msgspec refuses the line


def plain_event(line: bytes | memoryview) -> dict[str, Any] | None:
    """The line (one JSON object, its newline or not) as a dict when it is plainly a message, an error or a delta
    event exactly as msgspec would decode it: strict UTF-8, no NaN nor Infinity, no key twice, no escaped
    surrogate, no key the type does not have, each field of its type (an int no bool, a role of `ROLES`, a string
    or null where it may be null); else None (not decoded here: msgspec, or the reader, says what it is)."""
    data = bytes(line)
    if b"\\ud" in data or b"\\uD" in data:
        return None  # an escaped surrogate (or what looks like one): msgspec refuses a lone one
    try:
        value = json.loads(data.decode(), object_pairs_hook=_unique, parse_constant=_not_json)
    except (ValueError, RecursionError):  # not UTF-8, not JSON (NaN, Infinity), a key twice, nested too deep
        return None
    if type(value) is not dict:
        return None
    kind = value.get("type")
    keys = EVENT_KEYS.get(kind) if type(kind) is str else None
    if keys is None or not value.keys() <= keys:
        return None
    if type(value.get("seq", 0)) is not int or type(value.get("ts", "")) is not str:
        return None
    if kind == "delta":
        fits = type(value.get("text")) is str and type(value.get("reasoning", False)) is bool
    elif kind == "error":
        fits = type(value.get("message")) is str and type(value.get("retryable", False)) is bool
        fits = fits and type(value.get("attempt", 0)) is int
    else:
        fits = _plain_message(value.get("message"))
    return value if fits else None


def _plain_message(message: object) -> bool:
    if type(message) is not dict or not message.keys() <= MESSAGE_KEYS:
        return False
    role, content = message.get("role"), message.get("content")
    if type(role) is not str or role not in ROLES or type(content) is not str:
        return False
    if not _null_or_str(message.get("toolCallId")):
        return False
    calls = message.get("toolCalls")
    if calls is not None and (type(calls) is not list or not all(_plain_call(call) for call in calls)):
        return False
    reasoning = message.get("reasoning")
    return reasoning is None or (type(reasoning) is list and all(_plain_reasoning(r) for r in reasoning))


def _plain_call(call: object) -> bool:
    return type(call) is dict and call.keys() == CALL_KEYS and all(type(value) is str for value in call.values())


def _plain_reasoning(piece: object) -> bool:
    if type(piece) is not dict or not piece.keys() <= REASONING_KEYS:
        return False
    if type(piece.get("text", "")) is not str or type(piece.get("kind", "")) is not str:
        return False
    return _null_or_str(piece.get("signature")) and _null_or_str(piece.get("data"))


def _null_or_str(value: object) -> bool:
    return value is None or type(value) is str


def plain_items(event: dict[str, Any], offset: int, project: str | None) -> list[Item]:
    """`spoken.items_of` of the event `plain_event` gave (part 0): the same items, in the same order."""
    seq, ts, kind = event.get("seq", 0), event.get("ts", ""), event["type"]
    if kind == "error":
        return [Item(seq, ts, "error", "error", event["message"], offset, 0, project=project)]
    if kind != "message":
        return []  # a delta: its text is searched as a partial reply's (`partial_of`), never as its own item
    message = event["message"]
    role, content = message["role"], message["content"]
    if role == "user":
        return [Item(seq, ts, "user", "message", content, offset, 0, project=project)]
    if role == "tool":
        return [Item(seq, ts, "tool", "result", content, offset, 0, project=project)]
    found = []
    thought = "\n".join(text for piece in message.get("reasoning") or () if (text := piece.get("text", "")))
    if thought:
        found.append(Item(seq, ts, "thinking", "reasoning", thought, offset, 0, project=project))
    if content:
        found.append(Item(seq, ts, "assistant", "message", content, offset, 0, project=project))
    for call in message.get("toolCalls") or ():
        found.append(Item(seq, ts, "tool", "call", call["args"], offset, 0, call["name"], project))
    return found


def _take_plain() -> bool:
    """Whether the next line is decoded by the standard library's JSON (the first PLAIN_LINES of the process)."""
    if _plain_left[0] <= 0:
        return False
    _plain_left[0] -= 1
    return True


def _line_items(span: bytes | memoryview, start: int, project: str | None) -> Iterator[Item]:
    """The items of the journal's line `span` (at `start`), as the reader gives them."""
    if _take_plain():
        event = plain_event(span)
        if event is not None:
            return iter(plain_items(event, start, project))
    from .spoken import items_of  # the event types, msgspec: for a line not plainly decoded

    return items_of(event_of(span), start, 0, project)


def partial_of(data: bytes | memoryview, start: int, project: str | None, *, lenient: bool = False) -> Item | None:
    """The item of a reply streamed and thrown away, from its deltas' lines (`data`, at `start` in the file); None
    when they hold no delta. Lines that do not decode raise msgspec's error (None instead, if `lenient`)."""
    if _take_plain():
        item = _plain_partial(data, start, project)
        if item is not None:
            return item
    import msgspec

    from ..journal.events import Delta

    try:
        deltas = [e for e in _decoder().decode_lines(data) if isinstance(e, Delta)]
    except (msgspec.DecodeError, RecursionError):
        if not lenient:
            raise
        return None
    if not deltas:
        return None
    first = deltas[0]
    text = "".join(d.text for d in deltas)
    return Item(first.seq, first.ts, "assistant", "partial", text, start, 0, project=project)


def _plain_partial(data: bytes | memoryview, start: int, project: str | None) -> Item | None:
    """`partial_of` when each line of `data` is plainly a delta (`plain_event`) ended by its newline; else None."""
    lines = bytes(data).split(b"\n")
    if lines[-1] != b"" or len(lines) < 2:
        return None
    deltas = []
    for line in lines[:-1]:
        event = plain_event(line)
        if event is None or event["type"] != "delta":
            return None
        deltas.append(event)
    first = deltas[0]
    text = "".join(event["text"] for event in deltas)
    return Item(first.get("seq", 0), first.get("ts", ""), "assistant", "partial", text, start, 0, project=project)
