"""Hypothesis strategies: journals as the writer makes them, as bytes."""

from __future__ import annotations

from hypothesis import strategies as st

from wren_tui.journal.events import ChatMessage, Delta, KnownEvent, Message, ToolCall, ToolEnd, ToolStart, Usage
from wren_tui.journal.writer import encode_line

texts = st.text(st.characters(codec="utf-8"), max_size=40)
ids = st.text("abcdef0123456789", min_size=1, max_size=4)

known_events: st.SearchStrategy[KnownEvent] = st.one_of(
    st.builds(lambda c: Message(message=ChatMessage(role="user", content=c)), texts),
    st.builds(
        lambda c, calls: Message(message=ChatMessage(role="assistant", content=c, toolCalls=calls or None)),
        texts,
        st.lists(
            st.builds(ToolCall, id=ids, name=st.sampled_from(["read_file", "run_command"]), args=texts), max_size=2
        ),
    ),
    st.builds(lambda c, i: Message(message=ChatMessage(role="tool", content=c, toolCallId=i)), texts, ids),
    st.builds(Delta, text=texts),
    st.builds(ToolStart, id=ids, name=st.just("run_command"), readOnly=st.booleans()),
    st.builds(ToolEnd, id=ids, ok=st.booleans(), elapsedMs=st.integers(0, 10**6), chars=st.integers(0, 10**6)),
    st.builds(Usage, inputTokens=st.integers(0, 10**9), outputTokens=st.integers(0, 10**9)),
)


def encode(events: list[KnownEvent], first_seq: int = 1) -> bytes:
    return b"".join(encode_line(e, first_seq + i, f"2026-01-01T00:00:{i % 60:02d}.000Z") for i, e in enumerate(events))


journals = st.lists(known_events, min_size=1, max_size=12).map(encode)

# Lines a journal may also hold: ours, another writer's (no CRC), unknown types, CRLF, gaps, junk.
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
