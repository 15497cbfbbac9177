"""The raw pass over a run of a Wren journal's lines: which are good, what kind each is, which can match.

`raw_scan` is the C pass (`_scan.c`, whose header is the contract) when the install could build it,
else `python_scan`, which gives the same answers more slowly (tests compare the two on the same bytes).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from functools import cache
from types import ModuleType

ScanResult = tuple[int, int, bytes, bytes, bytes]
RawScan = Callable[[bytes | memoryview, int, int, bytes | None, bool, bool, tuple[bytes, ...]], ScanResult]

# The kinds the pass tells apart (one byte per line).
OTHER, DELTA, ASSISTANT, RUN_START = 0, 1, 2, 3

native: ModuleType | None
try:
    from . import _scan as native
except ImportError:  # pragma: no cover - depends on the install
    native = None

_ASSISTANT = b',"message":{"role":"assistant"'
_KINDS = {b"delta": DELTA, b"run_start": RUN_START}


# The patterns of the pass in Python (without the C helpers, or a line asked of `holds`), compiled when it first
# runs: a search the C pass or the index answers never compiles them.
@cache
def _framing() -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """A line's head (its seq and type) and its CRC suffix."""
    return (
        re.compile(rb'\{"seq":([1-9][0-9]{0,17}),"ts":"[^"\\]+","type":"([^"\\]+)"'),
        re.compile(rb',"crc":"([0-9a-f]{8})"\}\Z'),
    )


@cache
def escape_pattern() -> re.Pattern[bytes]:
    """An escape the raw pass lets through: \\u00 then 2-7 (a printable ASCII character, escaped) or \\/; an escaped
    backslash before it is its own escape."""
    return re.compile(rb"(?<!\\)(?:\\\\)*\\(?:u00[2-7]|/)")


def python_scan(
    buf: bytes | memoryview,
    base: int,
    prev_seq: int,
    needle: bytes | None,
    fold: bool,
    escapes: bool,
    extras: tuple[bytes, ...],
) -> ScanResult:
    """`_scan.scan` in Python: the same lines vouched for, kinds and candidates (see _scan.c)."""
    data = bytes(buf)
    ends, kinds, hits = array("q"), bytearray(), array("i")
    pos = 0
    while True:
        newline = data.find(b"\n", pos)
        if newline < 0:
            break
        line = data[pos:newline]
        kind = _kind(line, prev_seq + len(ends) + 1)
        if kind is None:
            break
        if needle is None or holds(line, needle, fold, escapes, extras):
            hits.append(len(ends))
        kinds.append(kind)
        pos = newline + 1
        ends.append(base + pos)
    return len(ends), pos, ends.tobytes(), bytes(kinds), hits.tobytes()


def _kind(line: bytes, seq: int) -> int | None:
    """The line's kind if the pass vouches for it as the line with `seq`, else None."""
    if b"\x00" in line or b"\r" in line:
        return None
    head_pattern, suffix_pattern = _framing()
    head = head_pattern.match(line)
    suffix = suffix_pattern.search(line)
    if head is None or int(head[1]) != seq or suffix is None or len(line) < 20:
        return None
    import zlib  # the pass without the C helpers only: not loaded by every search

    if zlib.crc32(line[: suffix.start()]) != int(suffix[1], 16):
        return None
    kind = head[2]
    if kind == b"message" and line.startswith(_ASSISTANT, head.end()):
        return ASSISTANT
    return _KINDS.get(kind, OTHER)


def holds(line: bytes, needle: bytes, fold: bool, escapes: bool, extras: tuple[bytes, ...]) -> bool:
    """Whether one line's bytes hold the needle, an escape or an extra, as the pass decides for a candidate."""
    lowered = line.lower()
    if (needle.lower() in lowered) if fold else (needle in line):
        return True
    if escapes and escape_pattern().search(line) is not None:
        return True
    return any(extra.lower() in lowered for extra in extras)


raw_scan: RawScan = native.scan if native is not None else python_scan
