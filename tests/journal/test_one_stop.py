"""The same damaged bytes, every reader: `wren log`, `wren log --json`, `wren search`, the viewer's index,
`Tail` and the fleet's remote reader stop at the same line for the same reason, and no command prints a
traceback, whatever the file holds.

They all take their lines and their stop from the one scanner (`journal/lines.py`); this is the proof
that what each does per line does not make them disagree. The readers that follow a file as it grows
(the viewer's index, `Tail`, the fleet's) wait at a partial last line instead of calling it torn, and
never call a stop torn (its writer may still set it aside); they are compared on the line and reason.

One difference is search's by design (see `search/wren.py`): a line whose CRC is right but whose
event does not decode (bad UTF-8 or JSON nested too deeply, written by a program that computes
Wren's CRC) stops a search only when the line can match. The forged lines here hold the word searched
for, so search decodes them and must stop where `wren log` does.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_wren
from tests.journal.strategies import encode, journals
from wren_tui.fleet.remote import _Lines as RemoteLines
from wren_tui.journal._framing import python_line
from wren_tui.journal.lines import CUT_SHORT
from wren_tui.journal.offsets import LineScanner
from wren_tui.journal.reader import Tail, scan_events
from wren_tui.journal.verdict import Stop
from wren_tui.search.engine import Searched, search
from wren_tui.search.query import Query
from wren_tui.search.wren_session import WrenSession

EXAMPLES = 1000 if os.environ.get("WREN_TORTURE") == "1" else 120
NAME = "s-20260101-000000-0001.jsonl"
WORD = "needle"  # in every forged line, so that search decodes it (see the module's docstring)
TS = b"2026-01-01T00:00:00.000Z"

Where = tuple[int, int, str] | None  # a stop's line, offset and reason


def forged(seq: int, inside: bytes) -> bytes:
    """A line whose CRC is right (as Wren's writer makes it) around `inside`, members of a message event."""
    return python_line(
        seq, TS, b'{"type":"message","message":{"role":"user","content":"%b"}%b}' % (WORD.encode(), inside)
    )


def bad_utf8(seq: int) -> bytes:
    return python_line(seq, TS, b'{"type":"message","message":{"role":"user","content":"%b \xff\xfe"}}' % WORD.encode())


def deep(seq: int, levels: int = 10_000) -> bytes:
    return forged(seq, b',"deep":' + b"[" * levels + b"]" * levels)


def deep_unknown(seq: int, levels: int = 10_000) -> bytes:
    """A type this version does not know (read by the slower road) nested as deep."""
    return python_line(
        seq, TS, b'{"type":"note","text":"%b","deep":%b%b}' % (WORD.encode(), b"[" * levels, b"]" * levels)
    )


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A good journal with one kind of damage a crash, a disk or another program leaves."""
    lines = draw(journals).splitlines(keepends=True)
    at = draw(st.integers(0, len(lines)))
    head, rest = b"".join(lines[:at]), b"".join(lines[at:])
    kind = draw(st.sampled_from(["cut", "byte", "nul tail", "nul inside", "nul middle", "utf-8", "deep", "none"]))
    if kind == "cut":  # a torn tail: the last write cut short anywhere
        whole = head + rest
        return whole[: draw(st.integers(0, len(whole)))]
    if kind == "byte":  # a changed byte: its line's CRC fails (or worse)
        whole = bytearray(head + rest)
        if whole:
            i = draw(st.integers(0, len(whole) - 1))
            whole[i] = draw(st.integers(0, 255).filter(lambda b: b != whole[i]))
        return bytes(whole)
    nuls = b"\x00" * draw(st.integers(1, 300))
    if kind == "nul tail":  # a crash's zero-filled end, maybe with newlines in it
        return head + nuls + draw(st.sampled_from([b"", b"\n", b"\n" + nuls, b"\n\n"]))
    if kind == "nul inside":  # NUL bytes over the end of a line, then more lines: corruption
        return head + nuls + b"\n" + rest
    if kind == "nul middle":
        return head + b'{"seq":1' + nuls + b"\n" + rest
    if kind == "utf-8":
        return head + bad_utf8(at + 1) + rest
    if kind == "deep":
        line = draw(st.sampled_from([deep, deep_unknown]))(at + 1)
        return head + line + rest
    return head + rest


# --- each reader's stop -------------------------------------------------------------------------------


def log_stop(path: Path) -> Stop | None:
    return scan_events(path, lambda _events, _lines: None).stop


def search_stop(path: Path) -> Stop | None:
    (searched,) = [f for f in search([WrenSession(path)], Query.of(WORD)) if isinstance(f, Searched)]
    return searched.stop


def viewer_stop(path: Path) -> Where:
    fd = os.open(path, os.O_RDONLY)
    try:
        scanner = LineScanner(path, fd)
        for _chunk in scanner.chunks():
            pass
        return where(scanner.stop)
    finally:
        os.close(fd)


def tail_stop(path: Path) -> Where:
    return where(Tail(path).read().stop)


def fleet_stop(data: bytes) -> Where:
    """The fleet's remote reader fed the file's whole lines as stream messages (a mirror ships only whole lines)."""
    # At newlines only: bytes.splitlines would also cut at a CR, which a mirror ships inside its line.
    lines = [line + b"\n" for line in data.split(b"\n")[:-1]]
    messages = [
        SimpleNamespace(data=line, headers=None, metadata=SimpleNamespace(sequence=SimpleNamespace(stream=n)))
        for n, line in enumerate(lines, 1)
    ]
    reader = RemoteLines("wren.box.s", live=False)
    return where(reader.take(cast(Any, messages), len(messages)).stop)


def where(stop: Stop | None) -> Where:
    return None if stop is None else (stop.line, stop.offset, stop.why)


def following(stop: Stop | None) -> Where:
    """What a reader that follows a growing file says of the same bytes: it waits at a partial last line."""
    return None if stop is None or stop.why == CUT_SHORT else where(stop)


@contextmanager
def journal_file(data: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / NAME
        path.write_bytes(data)
        yield path


def assert_same_stop(path: Path) -> Stop | None:
    logged = log_stop(path)
    assert search_stop(path) == logged
    assert viewer_stop(path) == following(logged)
    assert tail_stop(path) == following(logged)
    assert fleet_stop(path.read_bytes()) == following(logged)
    return logged


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_every_reader_stops_at_the_same_line_for_the_same_reason(data: bytes) -> None:
    with journal_file(data) as path:
        assert_same_stop(path)


# --- the commands, as a user runs them ----------------------------------------------------------------


def commands(path: Path) -> tuple[Where, bool, Where, bool, Where, bool]:
    """(where, torn) as `wren log`, `wren log --json` and `wren search --json` say them; none prints a traceback."""
    folder = path.parent
    text = run_wren(["log", str(path)], cwd=folder)
    as_json = run_wren(["log", "--json", str(path)], cwd=folder)
    found = run_wren(["search", WORD, "--json", "--dir", str(folder)], cwd=folder)
    for done in (text, as_json, found):
        assert "Traceback" not in done.stdout + done.stderr, done.stderr
    assert text.returncode in (0, 4) and as_json.returncode in (0, 4), text.stderr + as_json.stderr
    assert found.returncode in (0, 1), found.stderr

    last = text.stdout.splitlines()[-1] if text.stdout else ""
    text_where: Where = None
    if last.startswith("stopped at line "):
        line, rest = last.removeprefix("stopped at line ").split(" (byte ", 1)
        offset, why = rest.split("): ", 1)
        text_where = (int(line), int(offset), why.rsplit(" [", 1)[0])
    tail = json.loads(as_json.stdout)
    json_where: Where = None
    if tail["stoppedAtLine"] is not None:
        json_where = (tail["stoppedAtLine"], tail["stoppedAtOffset"], tail["reason"].split(": ", 1)[1])
    rows = [json.loads(row) for row in found.stdout.splitlines()]
    stopped = [row for row in rows if row["type"] == "stopped"]
    search_where: Where = None
    if stopped:
        (row,) = stopped
        search_where = (row["stoppedAtLine"], row["stoppedAtOffset"], row["reason"])
    return (
        text_where,
        "[torn tail]" in last,
        json_where,
        tail["torn"],
        search_where,
        bool(stopped and stopped[0]["torn"]),
    )


def good(count: int = 5) -> bytes:
    from wren_tui.journal.events import ChatMessage, Message

    return encode([Message(message=ChatMessage(role="user", content=f"line {n}")) for n in range(count)])


CASES = {
    "whole": good(),
    "torn tail": good()[:-20],
    "crc fails": good().replace(b"line 2", b"line X"),
    "nul run to the end": good() + b"\x00" * 4096,
    "nul run, newlines in it": good() + b"\x00" * 100 + b"\n" + b"\x00" * 100,
    "nul run, then a line": good(3) + b"\x00" * 100 + b"\n" + good()[-60:],
    "bad utf-8": good() + bad_utf8(6),
    "nested 10,000 deep": good() + deep(6),
    "unknown type nested 10,000 deep": good() + deep_unknown(6),
    "no newline at all": b"\x00\xff{" * 1000,
    "empty": b"",
}


@pytest.mark.parametrize("case", CASES)
def test_the_commands_say_the_same_stop_and_never_a_traceback(tmp_path: Path, case: str) -> None:
    path = tmp_path / NAME
    path.write_bytes(CASES[case])
    logged = assert_same_stop(path)
    said = where(logged)
    torn = logged is not None and logged.torn
    assert commands(path) == (said, torn, said, torn, said, torn)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_the_commands_on_drawn_damage(data: bytes) -> None:
    with journal_file(data) as path:
        logged = assert_same_stop(path)
        said, torn = where(logged), logged is not None and logged.torn
        assert commands(path) == (said, torn, said, torn, said, torn)


def test_a_line_of_fifty_megabytes_then_damage(tmp_path: Path) -> None:
    """A 50 MB line is read whole by every reader, which then stop at the changed line after it."""
    path = tmp_path / NAME
    big = forged(6, b',"big":"' + b"x" * 50_000_000 + b'"')
    changed = python_line(7, TS, b'{"type":"message","message":{"role":"user","content":"after"}}').replace(
        b"after", b"AFTER"
    )
    path.write_bytes(good() + big + changed)
    logged = assert_same_stop(path)
    assert logged is not None and logged.line == 7 and not logged.torn
    assert logged.why.startswith("its CRC does not match")
    said = where(logged)
    assert commands(path) == (said, False, said, False, said, False)
