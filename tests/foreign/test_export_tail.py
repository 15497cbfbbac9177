"""A big OpenCode or aider session's last lines, exported alone for the viewer's first frame: byte for byte how the
whole export ends, numbered as in it; aider's count of the lines before them is the same in C, in Python and from the
blocks themselves."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bench.bench_opencode_aider import big_history, big_session
from tests.foreign.test_opencode import database, edit, fingerprint
from wren_tui.foreign import aider, opencode
from wren_tui.foreign.base import Tail

HISTORIES = Path(__file__).parents[1] / "fixtures" / "agents" / "aider"


def _is_the_end_of(tail: Tail | None, whole: bytes) -> None:
    assert tail is not None
    assert whole.endswith(tail.lines)
    assert whole[: len(whole) - len(tail.lines)].count(b"\n") == tail.before


@pytest.mark.parametrize("scenario", ["multi-turn", "tool-error"])
def test_an_opencode_tail_is_how_the_whole_export_ends_from_a_prompts_first_row(tmp_path: Path, scenario: str) -> None:
    db = database(tmp_path, scenario)
    before = fingerprint(db)
    whole = opencode.export(db)
    tail = opencode.export_tail(db, 1)
    _is_the_end_of(tail, whole)
    assert tail is not None
    first = tail.lines.split(b"\n", 1)[0]
    assert b'"type":"message.updated.1"' in first and b'"role":"user"' in first
    assert opencode.export_tail(db, len(whole)) is None  # no prompt that far back: exported whole
    assert fingerprint(db) == before


def test_a_big_opencode_session_stopped_mid_call_ends_as_its_whole_export(tmp_path: Path) -> None:
    db = big_session(tmp_path / "opencode.db", 3 << 20)
    edit(db, "delete from event where seq > (select max(seq) - 16 from event)")  # its last call: running, no result
    whole = opencode.export(db)
    tail = opencode.export_tail(db, 1 << 20)
    _is_the_end_of(tail, whole)
    assert tail is not None and len(tail.lines) > 1 << 20 and tail.before > 1000
    assert b'"status":"running"' in tail.lines.rsplit(b"\n", 2)[-2]


def test_an_opencode_tail_is_not_cut_where_a_part_of_an_earlier_message_follows(tmp_path: Path) -> None:
    """A part of a message recorded before the prompt cut at: only the whole export knows that message."""
    db = database(tmp_path, "multi-turn")
    edit(
        db,
        "insert into event select id || '-late', aggregate_id, (select max(seq) + 1 from event), type, data"
        " from event where seq = (select min(seq) from event where type = 'message.part.updated.1')",
        # the first prompt's text part, again, at the end
    )
    assert opencode.export_tail(db, 1) is None


def _histories() -> list[Path]:
    return sorted(HISTORIES.glob("*.chat.history.md"))


@pytest.mark.parametrize("least", [50, 200, 400, 700])
@pytest.mark.parametrize("name", [path.name for path in _histories()])
def test_an_aider_tail_is_how_the_whole_export_ends(tmp_path: Path, name: str, least: int) -> None:
    path = tmp_path / name
    data = (HISTORIES / name).read_bytes() * 3 + b"#### a last prompt\n#### on two lines\n"
    path.write_bytes(data)
    before = path.read_bytes(), path.stat().st_mtime_ns
    _is_the_end_of(aider.export_tail(path, least), aider.export(path))
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_a_big_aider_tail_starts_at_a_block_and_takes_its_runs_time(tmp_path: Path) -> None:
    path = big_history(tmp_path / ".aider.chat.history.md", 3 << 20)
    with path.open("ab") as out:
        out.write(b"#### a prompt aider never answered\n")
    whole = aider.export(path)
    tail = aider.export_tail(path, 1 << 20)
    _is_the_end_of(tail, whole)
    assert tail is not None and len(tail.lines) > 1 << 20
    first = tail.lines.split(b"\n", 1)[0]
    assert first.startswith((b'{"type":"run"', b'{"type":"user"')) and b'"ts":"2026-12-01T' in first


def test_a_small_aider_history_or_another_file_is_exported_whole(tmp_path: Path) -> None:
    small = tmp_path / "small.md"
    small.write_bytes((HISTORIES / "multi-turn.chat.history.md").read_bytes())
    assert aider.export_tail(small, 1 << 20) is None
    other = tmp_path / "other.md"
    other.write_bytes(b"# notes\n" + b"#### not aider's\n" * 10_000)
    assert aider.export_tail(other, 1000) is None


# --- aider's count, in C and in Python ----------------------------------------------------------

_LINES = st.sampled_from(
    [
        b"# aider chat started at 2026-12-01 14:14:45",
        b"#### a prompt  ",
        b"####",
        b"####\tTabbed",
        b"####x not a prompt",
        b"####\r",
        b"> Aider v0.86.2  ",
        b">",
        b"> Tokens: 584 sent, 12 received.  ",
        b">\tTokens: 2.3k sent, 1,204 received. Cost",
        b"> Tokens: many sent, 12 received.",
        b"",
        b"   ",
        b"\t\r",
        b"a reply",
        b"  indented reply",
        b"\x0c",
        b"\xc2\xa0",
        b"\xff\xfe broken",
        b"# a heading in a reply",
    ]
)


def _counts(data: bytes) -> tuple[int, int, int]:
    in_c = aider.count_blocks(data, len(data))
    saved, aider._count_in_c = aider._count_in_c, None
    try:
        in_python = aider.count_blocks(data, len(data))
    finally:
        aider._count_in_c = saved
    return in_c, in_python, len(list(aider.blocks(data.decode("utf-8", "replace"))))


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, max_size=40), st.booleans())
def test_the_count_of_a_historys_lines_is_the_blocks_it_exports(lines: list[bytes], newline_at_end: bool) -> None:
    data = b"# aider chat started at 2026-12-01 14:14:45\n" + b"\n".join(lines) + (b"\n" if newline_at_end else b"")
    in_c, in_python, blocks = _counts(data)
    assert in_python == blocks
    if aider._count_in_c is not None:
        assert in_c == blocks


def test_the_count_in_c_is_built_here() -> None:
    """The install compiles it (a C compiler is there); without it the tail's numbers are counted in Python."""
    assert aider._count_in_c is not None, "wren_tui/foreign/_aider.c was not built: pip install -e ."
