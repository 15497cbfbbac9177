"""The journal's speed, apart from its failure model: whole runs of lines checked at once, lines built in C.

Nothing here decides anything the plain path does not. `check_run` accepts a run of lines only
when every line is one `reader.parse_line` would accept, and answers None ("go line by line") at
the least doubt; the line `line_builder` returns makes the bytes `_framing.python_line` makes.
tests/journal/test_native.py proves both, with the C module and without it.
"""

from __future__ import annotations

import sys
import threading
import zlib
from array import array
from collections.abc import Callable, Generator
from itertools import accumulate, repeat
from operator import attrgetter, getitem
from types import ModuleType
from typing import cast

import msgspec

from ._framing import CRC_MARK, CRC_SUFFIX_LEN, python_line
from .events import Event, KnownEvent

native_lines: ModuleType | None
try:
    # The line check and builder in C, built at install when a compiler is there (see _lines.c); None: Python.
    from . import _lines as native_lines
except ImportError:  # pragma: no cover - depends on the install
    native_lines = None
# getattr: a checkout updated without a reinstall may still hold a build from before make_line.
native_line: Callable[[int, bytes, bytes], bytes] | None = getattr(native_lines, "make_line", None)

# Below this a run of lines is checked in the calling thread: a thread costs more than it saves.
_OVERLAP_MIN = 1 << 20
# read_ahead starts with chunks of a sixteenth of its size where the size is above this.
_FIRST_AHEAD = 1 << 20
_decoder = msgspec.json.Decoder(KnownEvent)

# A run's decoded events, and where their lines end: bytes of native int64 file offsets from C, or
# the line lengths from Python (`extend_ends` turns either into offsets).
Checked = tuple[list[Event], "bytes | list[int]"]
# What the C check says of a run of lines read ahead: (count, ends, whole), as check_lines returns
# them, and the first seq when C saw every seq follow the one before (else -1; see read_start).
LinesChecked = tuple[int, bytes, bool, int]


def line_builder() -> Callable[[int, bytes, bytes], bytes]:
    """The function that builds a line from (seq, ts, body): the C one when it is built, else python_line."""
    return native_line if native_line is not None else python_line


def check_run(
    whole: bytes | memoryview, base: int, prev_seq: int, lines_checked: LinesChecked | None = None
) -> Checked | None:
    """Every line of a run (ending with a newline, starting at file offset `base`) decoded and checked at once.

    None unless each line is ours (our CRC suffix, right), clean (no CR, no NUL), decodes as a known
    event with a ts, and the seqs go on one by one from `prev_seq`: the caller then reads line by line.
    `lines_checked` is what the C check said of these lines (and base) already (`read_ahead`'s), if it did.
    """
    if lines_checked is not None:
        checked = _decoded_and_checked(whole, lines_checked)
        if checked is not None and lines_checked[3] == prev_seq + 1:
            return checked  # C read each line's seq and ts from its head, the only ones in it, in order
    elif native_lines is not None:
        checked = _check_native(whole, base)
    else:
        checked = _check_python(whole)
    if checked is None:
        return None
    decoded = checked[0]
    first = prev_seq + 1
    follows = getattr(native_lines, "follows", None)  # looked up here: tests take the C module away
    if follows is not None and follows(decoded, first):
        return checked  # C read each event's seq and ts in place; at any doubt it says no and Python looks
    if list(map(_SEQ, decoded)) != list(range(first, first + len(decoded))) or not all(map(_TS, decoded)):
        return None
    return checked


def extend_ends(line_ends: array[int], ends: bytes | list[int], base: int) -> None:
    """Append the end offsets `check_run` found (for a run starting at `base`) to `line_ends`."""
    if isinstance(ends, bytes):
        line_ends.frombytes(ends)
        return
    running = accumulate(ends, initial=base)
    next(running)  # the offset the run starts at is the previous run's end
    line_ends.extend(running)


def read_ahead(fd: int, offset: int, size: int) -> Generator[tuple[memoryview, LinesChecked]]:
    """Runs of whole lines of `fd` from `offset`, as `lines.Lines` hands them out, each read and checked in C.

    Each chunk of `size` bytes (the first ones smaller) is read and its lines checked by C in a thread
    of its own (which never takes the GIL) while the caller decodes the run before, so a reading costs
    the caller little more than its decoding. Each run comes with what check_lines says of it. The runs
    stop before a chunk of `size` that holds no newline (a line longer than a chunk, or a partial last line) and
    after a chunk that reached the end of the file: the caller reads on from there with `Lines`,
    which says what that end is. Memory holds two chunks: the caller's run and the one being read.
    Only where `read_ahead_works()`. Close it (`contextlib.closing`) when stopping early.
    """
    assert native_lines is not None
    start = native_lines.read_start
    # The first chunks are smaller (a quarter of the next each), so the caller waits only for a small one
    # before it decodes, and C, faster than the decoding, is still a chunk ahead when they grow.
    want = max(1, size >> 4) if size > _FIRST_AHEAD else size
    reading = start(fd, offset, want)
    try:
        while reading is not None:
            data, got, cut, count, ends, every_line, first_seq = reading.result()
            read, want = want, min(size, want * 4)
            if not cut:
                if got < read or read == size:
                    return
                del data
                reading = start(fd, offset, want)  # a line longer than a first chunk: a bigger one from there
                continue
            offset += cut
            # The next chunk is read while the caller decodes this one; past the end of the file, Lines reads on.
            reading = start(fd, offset, want) if got == read else None
            yield memoryview(data)[:cut], (count, ends, every_line, first_seq)
            del data
    finally:
        del reading  # closed early: a read still running is waited for here, before the caller closes fd


def read_ahead_works() -> bool:
    """Whether `read_ahead` can run here (the C module built with its reading thread: POSIX systems)."""
    return hasattr(native_lines, "read_start")


def _decoded_and_checked(whole: bytes | memoryview, lines_checked: LinesChecked) -> Checked | None:
    """The run's events, given what C's check said of its lines."""
    try:
        decoded = cast("list[Event]", _decoder.decode_lines(whole))
    except (msgspec.DecodeError, RecursionError):
        return None
    count, ends, every_line, _first_seq = lines_checked
    if not every_line or count != len(decoded):
        return None
    return decoded, ends


def _check_native(whole: bytes | memoryview, base: int) -> Checked | None:
    """Decode the lines in this thread while C checks them in another (its own, or one that lets go of the GIL)."""
    assert native_lines is not None
    checked: list[tuple[int, bytes, bool]] = []
    pending = None
    worker = None
    start = getattr(native_lines, "check_start", None)  # a build from before it has only check_lines
    if len(whole) < _OVERLAP_MIN:
        checked.append(native_lines.check_lines(whole, base))
    elif start is not None:
        pending = start(whole, base)  # a C thread: it needs no GIL to begin or to end
    else:
        worker = threading.Thread(target=lambda: checked.append(native_lines.check_lines(whole, base)), daemon=True)
        worker.start()
    try:
        decoded = cast("list[Event]", _decoder.decode_lines(whole))
    except (msgspec.DecodeError, RecursionError):
        return None
    finally:
        if pending is not None:
            checked.append(pending.result())
        if worker is not None:
            worker.join()
    if not checked:
        return None  # the check itself failed (out of memory): the slow path says what it can
    count, ends, every_line = checked[0]
    # Every line is ours and clean, and decode_lines (which skips blank lines) saw each of them.
    if not every_line or count != len(decoded):
        return None
    return decoded, ends


def _check_python(whole: bytes | memoryview) -> Checked | None:
    whole = bytes(whole)
    if b"\x00" in whole or b"\r" in whole:
        return None
    lines = whole.splitlines(keepends=True)
    n = len(lines)
    # A line of 1 or 2 bytes more than the suffix checked below cannot decode as an object, so
    # decode_lines refuses every line parse_line would not check for a CRC.
    tails: list[bytes] = list(map(_cut, lines, repeat(_TAIL)))
    expected = _crc_values(b"".join(tails), n)
    if expected is None:
        return None
    try:
        decoded = cast("list[Event]", _decoder.decode_lines(whole))
    except (msgspec.DecodeError, RecursionError):
        return None
    if len(decoded) != n:
        return None  # decode_lines skips blank lines
    # crc32(A + T) == crc32(T, crc32(A)) and crc32(T, x) is one-to-one in x: so this is crc32(A) == expected
    if list(map(zlib.crc32, lines)) != list(map(zlib.crc32, tails, expected)):
        return None
    return decoded, list(map(len, lines))


# Each tail is ,"crc":"hhhhhhhh"}\n; columns of the joined tails are taken with one strided slice each.
_TAIL_COLUMNS = tuple((k, CRC_MARK[k : k + 1]) for k in range(8)) + tuple(
    (k, b'"}\n'[k - 16 : k - 15]) for k in range(16, 19)
)
# Lowercase hex digits to their value, anything else to 0xff (uppercase or other forms go line by line).
_NIBBLE = bytes(int(chr(b), 16) if chr(b) in "0123456789abcdef" else 0xFF for b in range(256))


def _crc_values(tails: bytes, n: int) -> list[int] | None:
    """The CRC each of `n` joined line tails carries, or None unless every tail is our exact suffix.

    Works column by column over all lines at once: a line's 8 hex digits become 4 bytes by big-integer
    arithmetic on whole columns (no carries: each byte is hi * 16 + lo <= 255), then one array.
    """
    width = CRC_SUFFIX_LEN + 1
    if len(tails) != width * n:
        return None  # some line is shorter than the suffix
    for k, byte in _TAIL_COLUMNS:
        if tails[k::width] != byte * n:
            return None
    nibbles = [tails[k::width].translate(_NIBBLE) for k in range(8, 16)]
    if any(b"\xff" in column for column in nibbles):
        return None
    packed = bytearray(4 * n)
    for j in range(4):
        hi, lo = int.from_bytes(nibbles[2 * j], "big"), int.from_bytes(nibbles[2 * j + 1], "big")
        packed[j::4] = ((hi << 4) | lo).to_bytes(n, "big")
    values = array("I", packed)  # 4 bytes on every platform CPython builds for; else the CRCs mismatch: slow path
    if sys.byteorder == "little":
        values.byteswap()
    return values.tolist()


_SEQ = attrgetter("seq")
_TS = attrgetter("ts")
# operator.getitem, typed for the byte slices it takes here (map() calls it from C)
_cut = cast(Callable[[bytes, slice], bytes], getitem)
# The last bytes of a line we wrote: ,"crc":"xxxxxxxx"}\n
_TAIL = slice(-CRC_SUFFIX_LEN - 1, None)
