"""Hypothesis strategies: every event type of `KnownEvent`, and journals as the writer makes them, as bytes.

The events come from the union itself (`typing.get_args(KnownEvent)`), each built from its fields'
types as msgspec sees them, so a new event type is generated, written, read back and redacted by
the property tests with no change here. Messages get a hand-made strategy too, so tool calls and
their answers share ids now and then (only the shape of a message says which role has which field).
"""

from __future__ import annotations

from typing import Any, get_args

import msgspec
import msgspec.inspect as mi
from hypothesis import strategies as st

from wren_tui.journal.events import ChatMessage, KnownEvent, Message, ToolCall
from wren_tui.journal.writer import encode_line

texts = st.text(st.characters(codec="utf-8"), max_size=40)
ids = st.text("abcdef0123456789", min_size=1, max_size=4)


def json_values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Any JSON value, for fields typed Any (a tool_end's inline result from the reference format)."""
    return st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
        max_leaves=6,
    )


EVENT_TYPES: tuple[type[msgspec.Struct], ...] = get_args(KnownEvent)


def of_type(kind: mi.Type, text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Values of one msgspec type; every string drawn from `text`."""
    match kind:
        case mi.StrType():
            return text
        case mi.BoolType():
            return st.booleans()
        case mi.IntType():
            return st.integers(0, 2**53)
        case mi.FloatType():
            return st.floats(allow_nan=False, allow_infinity=False)
        case mi.NoneType():
            return st.none()
        case mi.LiteralType(values=values):
            return st.sampled_from(values)
        case mi.UnionType(types=members):
            return st.one_of(*(of_type(member, text) for member in members))
        case mi.ListType(item_type=item):
            return st.lists(of_type(item, text), max_size=3)
        case mi.DictType(key_type=key, value_type=value):
            return st.dictionaries(of_type(key, text), of_type(value, text), max_size=3)
        case mi.StructType(cls=cls):
            return struct_of(cls, text)
        case mi.AnyType():
            return json_values(text)
    raise TypeError(f"no strategy for {kind!r}: add one to tests/journal/strategies.py")


def struct_of(cls: type[msgspec.Struct], text: st.SearchStrategy[str] = texts) -> st.SearchStrategy[Any]:
    """Instances of a Struct, every field drawn from its type; an event's seq and ts stay unset for the writer."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    fields = {f.name: of_type(f.type, text) for f in info.fields if f.name not in ("seq", "ts")}
    return st.builds(cls, **fields)


def any_event(text: st.SearchStrategy[str] = texts) -> st.SearchStrategy[KnownEvent]:
    """Any member of KnownEvent, each type as likely as the others."""
    return st.one_of(*(struct_of(cls, text) for cls in EVENT_TYPES))


# Messages as an agent writes them: a user's, an assistant's that may ask for calls, a tool's answer.
messages: st.SearchStrategy[KnownEvent] = st.one_of(
    st.builds(lambda c: Message(message=ChatMessage(role="user", content=c)), texts),
    st.builds(
        lambda c, calls: Message(message=ChatMessage(role="assistant", content=c, tool_calls=calls or None)),
        texts,
        st.lists(
            st.builds(ToolCall, id=ids, name=st.sampled_from(["read_file", "run_command"]), args=texts), max_size=2
        ),
    ),
    st.builds(lambda c, i: Message(message=ChatMessage(role="tool", content=c, tool_call_id=i)), texts, ids),
)

known_events: st.SearchStrategy[KnownEvent] = st.one_of(messages, any_event())


def encode(events: list[KnownEvent], first_seq: int = 1) -> bytes:
    return b"".join(encode_line(e, first_seq + i, f"2026-01-01T00:00:{i % 60:02d}.000Z") for i, e in enumerate(events))


journals = st.lists(known_events, min_size=1, max_size=12).map(encode)

# Lines a journal may also hold: ours, another writer's (no CRC: damage), unknown types, CRLF, gaps, junk.
foreign_lines = st.sampled_from(
    [
        b'{"seq":%d,"ts":"t","type":"message","message":{"role":"user","content":"no crc"}}',
        b'{"seq":%d,"ts":"t","type":"checkpoint","files":["a"]}',
        b'{"seq":%d,"ts":"t","type":"delta","text":"crlf"}\r',
        b'{"seq":%d,"ts":"t","type":"delta","text":"x","crc":"00000000"}',
        b"not json %d",
        b'{"seq":%d}',
        b"",
        b"\x00\x00%d",
    ]
)


@st.composite
def mixed_journals(draw: st.DrawFn) -> bytes:
    """Our lines with, now and then, a foreign one, a gap, or a repeated seq, in any order."""
    out: list[bytes] = []
    seq = 0
    for _ in range(draw(st.integers(1, 30))):
        seq += draw(st.sampled_from([1, 1, 1, 1, 2, 0, -1]))
        if draw(st.integers(0, 5)) == 0:
            line = draw(foreign_lines)
            out.append((line % seq if b"%d" in line else line) + b"\n")
        else:
            out.append(encode_line(draw(known_events), max(seq, 1), "2026-01-01T00:00:00.000Z"))
    return b"".join(out)
