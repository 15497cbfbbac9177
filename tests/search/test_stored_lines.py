"""The lines of a warm search's hits in Wren journals, decoded without msgspec: the same items, or left to msgspec.

`search.stored` decodes the first few hundred lines a search reads back by the standard library's JSON, taking a line
only when it is plainly a message, an error or a delta exactly as msgspec's event types would decode it. Here: every
line the journal's writer writes is taken and gives the items msgspec's decoding gives; a line msgspec would refuse
or read otherwise (a key twice, an escaped surrogate, a bool for an int, a key the type does not have...) is never
taken; the tables of keys are the event types' own; and a search with more hits than `PLAIN_LINES` (msgspec for the
rest) prints what a search reading the files prints.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import get_args

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import run_wren
from tests.tui.journals import encode, user, write_journal
from wren_tui.journal.events import (
    ChatMessage,
    Delta,
    Error,
    KnownEvent,
    Message,
    Reasoning,
    Role,
    ToolCall,
)
from wren_tui.journal.writer import encode_line
from wren_tui.search import stored
from wren_tui.search.spoken import items_of
from wren_tui.search.stored import partial_of, plain_event, plain_items

DECODER = msgspec.json.Decoder(KnownEvent)
# Text as a journal holds it: any character but a lone surrogate (the writer's encoder refuses one).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def msgspec_items(line: bytes, offset: int = 7, project: str | None = "/p") -> list[object]:
    return list(items_of(DECODER.decode(line), offset, 0, project))


def test_the_keys_and_roles_taken_are_the_event_types_own() -> None:
    assert frozenset(get_args(Role)) == stored.ROLES
    assert frozenset(ChatMessage.__struct_encode_fields__) == stored.MESSAGE_KEYS
    assert frozenset(ToolCall.__struct_encode_fields__) == stored.CALL_KEYS
    assert frozenset(Reasoning.__struct_encode_fields__) == stored.REASONING_KEYS
    for kind, cls in (("message", Message), ("error", Error), ("delta", Delta)):
        assert stored.EVENT_KEYS[kind] == frozenset(("type", "crc", *cls.__struct_encode_fields__))
        assert cls.__struct_config__.tag == kind


calls = st.lists(st.builds(ToolCall, id=TEXT, name=TEXT, args=TEXT), max_size=3)
reasonings = st.lists(
    st.builds(Reasoning, text=TEXT, kind=TEXT, signature=st.none() | TEXT, data=st.none() | TEXT), max_size=3
)
messages = st.builds(
    ChatMessage,
    role=st.sampled_from(get_args(Role)),
    content=TEXT,
    tool_calls=st.none() | calls,
    tool_call_id=st.none() | TEXT,
    reasoning=st.none() | reasonings,
)
events = (
    st.builds(Message, message=messages)
    | st.builds(Error, message=TEXT, retryable=st.booleans(), attempt=st.integers(0, 10))
    | st.builds(Delta, text=TEXT, reasoning=st.booleans())
)


@settings(max_examples=400)
@given(event=events, seq=st.integers(1, 2**40), ts=st.text("0123456789-T:.Z", max_size=30))
def test_every_line_the_writer_writes_is_taken_and_gives_the_items_msgspec_gives(
    event: KnownEvent, seq: int, ts: str
) -> None:
    line = encode_line(event, seq, ts)
    plain = plain_event(line)
    assert plain is not None
    assert plain_items(plain, 7, "/p") == msgspec_items(line)
    assert plain_items(plain, 7, None) == msgspec_items(line, project=None)


@settings(max_examples=200)
@given(texts=st.lists(TEXT, min_size=1, max_size=5), reasoning=st.booleans())
def test_a_partial_reply_is_the_same_item_decoded_either_way(texts: list[str], reasoning: bool) -> None:
    data = encode([Delta(text=text, reasoning=reasoning) for text in texts], first_seq=3)
    left = stored._plain_left[0]
    try:
        stored._plain_left[0] = 1
        plain = partial_of(data, 40, "/p")
        assert stored._plain_left == [0]
        by_msgspec = partial_of(data, 40, "/p")  # the plain lines spent: msgspec
    finally:
        stored._plain_left[0] = left
    assert plain == by_msgspec == stored._plain_partial(data, 40, "/p")  # taken plainly, the same
    assert plain is not None and plain.text == "".join(texts) and (plain.seq, plain.kind) == (3, "partial")


# Lines msgspec refuses, or reads otherwise than the standard library's JSON would: never taken.
REFUSED = [
    b'{"type":"error","seq":1,"ts":"t","message":"a\\ud800b"}',  # a lone escaped surrogate: msgspec refuses it
    b'{"type":"error","seq":1,"ts":"t","message":"\\ud83d\\ude00"}',  # a pair: taken by msgspec, left to it
    b'{"type":"error","seq":1,"ts":"t","message":"a","message":"b"}',  # a key twice
    b'{"type":"error","type":"message","seq":1,"ts":"t","message":"a"}',
    b'{"type":"error","seq":true,"ts":"t","message":"a"}',  # a bool for an int (an int in Python)
    b'{"type":"error","seq":1.0,"ts":"t","message":"a"}',
    b'{"type":"error","seq":1,"ts":"t","message":"a","attempt":NaN}',
    b'{"type":"error","seq":1,"ts":"t","message":"a","retryable":null}',
    # NaN and Infinity, the standard library's extensions to JSON, where no type is checked: msgspec refuses the line
    b'{"type":"error","seq":1,"ts":"t","message":"a","crc":NaN}',
    b'{"type":"error","seq":1,"ts":"t","message":"a","crc":Infinity}',
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"user","content":"a"},"crc":[-Infinity]}',
    b'{"type":"delta","seq":1,"ts":"t","text":"a","crc":{"x":NaN}}',
    b'{"type":"error","seq":1,"ts":"t","message":"a","retryable":1}',
    b'{"type":"error","seq":1,"ts":"t","message":null}',
    b'{"type":"error","seq":1,"ts":"t"}',
    b'\xef\xbb\xbf{"type":"error","seq":1,"ts":"t","message":"a"}',  # a byte-order mark
    b'{"type":"error","seq":1,"ts":"t","message":"a\xed\xa0\x80"}',  # an encoded surrogate: not UTF-8
    b'{"type":"error","seq":1,"ts":"t","message":"a\xff"}',
    b'{"type":"error","seq":1,"ts":"t","message":"a\x01"}',  # a control character in a string
    b'{"type":"error","seq":1,"ts":"t","message":"a","extra":1}',  # a key the type does not have
    b'{"type":"usage","seq":1,"ts":"t","inputTokens":1,"outputTokens":2}',  # another type
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"system","content":"a"}}',
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"user","content":null}}',
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"user"}}',
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"user","content":"a","tool_calls":[]}}',
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"assistant","content":"a","toolCalls":[{"id":"1","name":"x"}]}}',
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"assistant","content":"a","toolCalls":{}}}',
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"assistant","content":"a","reasoning":[{"text":null}]}}',
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"assistant","content":"a","reasoning":[{"signature":1}]}}',
    b'{"type":"message","seq":1,"ts":"t","message":{"role":"user","content":"a","toolCallId":5}}',
    b'{"type":"delta","seq":1,"ts":"t","text":"a","reasoning":"yes"}',
    b'{"type":"delta","seq":1,"ts":"t"}',
    b'["type","error"]',
    b'{"type":["error"],"seq":1}',
    b"[" * 5000 + b"]" * 5000,
    b"",
]


@pytest.mark.parametrize("line", REFUSED, ids=range(len(REFUSED)))
def test_a_line_msgspec_would_refuse_or_read_otherwise_is_never_taken(line: bytes) -> None:
    assert plain_event(line) is None


# Lines taken: each gives the items msgspec gives (defaults filled in as its types fill them).
TAKEN = [
    b'{"type":"error","seq":99999999999999999999,"ts":"t","message":"big"}',
    b'{"seq":-1,"type":"error","message":"no time","crc":["anything"]}',
    b'{"type":"error","message":"no seq nor ts"}',
    b'{"type":"message","seq":2,"ts":"t","message":{"role":"assistant","content":"","reasoning":[{},{"text":"hm"}]}}',
    b'{"type":"message","seq":2,"ts":"t","message":{"role":"tool","content":"out","toolCallId":null,"reasoning":null}}',
    b' {"type":"message","seq":2,"ts":"t","message":{"role":"user","content":"a\\u00e9\\n\\"b\\"\\\\"}} \n',
]


@pytest.mark.parametrize("line", TAKEN, ids=range(len(TAKEN)))
def test_a_line_taken_gives_the_items_msgspec_gives(line: bytes) -> None:
    plain = plain_event(line)
    assert plain is not None
    assert plain_items(plain, 7, "/p") == msgspec_items(line)


def test_a_search_with_more_hits_than_the_plain_lines_prints_what_reading_the_files_prints(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    many = stored.PLAIN_LINES + 40
    write_journal(folder / "s-20250301-093000-aaaa.jsonl", [user(f"parrot number {n}") for n in range(many)])
    args = ["search", "parrot", "--dir", str(folder), "--json"]
    built = run_wren(args, cwd=tmp_path)  # builds the index
    warm = run_wren(args, cwd=tmp_path)
    files = run_wren([*args, "--no-index"], cwd=tmp_path)
    assert warm.returncode == files.returncode == built.returncode == 0, warm.stderr
    assert warm.stdout == files.stdout == built.stdout
    assert [json.loads(row)["seq"] for row in warm.stdout.splitlines()] == list(range(1, many + 1))


def test_a_hit_line_rewritten_under_the_index_with_nan_is_refused_as_reading_the_files_refuses_it(
    tmp_path: Path,
) -> None:
    """A line changed in place under the index (same place, length, end and time) to hold NaN, which the standard
    library's JSON takes and msgspec refuses: the warm search says what a search reading the files says."""
    folder = tmp_path / "journals"
    path = folder / "s-20250301-093000-aaaa.jsonl"
    write_journal(path, [user("parrot one"), user("parrot two")])
    args = ["search", "parrot", "--dir", str(folder), "--json"]
    assert run_wren(args, cwd=tmp_path).returncode == 0  # builds the index
    data = path.read_bytes()
    first = data[: data.index(b"\n")]
    head = b'{"seq":1,"crc":NaN,"type":"message","message":{"role":"user","content":"parrot one"},"ts":"'
    end = first[-10:]
    forged = head + b"2" * (len(first) - len(head) - len(end)) + end  # its own crc's 8 digits still before its `"}`
    assert len(forged) == len(first) and end.endswith(b'"}')
    before = path.stat()
    with path.open("r+b") as file:
        file.write(forged)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    warm = run_wren(args, cwd=tmp_path)
    files = run_wren([*args, "--no-index"], cwd=tmp_path)
    assert '"stoppedAtLine":1' in files.stdout and '"type":"hit"' not in files.stdout
    assert (warm.returncode, warm.stdout) == (files.returncode, files.stdout)
