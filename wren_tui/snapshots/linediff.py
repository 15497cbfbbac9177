"""Which lines of one version of a file are the lines of the version before, as a minimal line diff pairs them.

`wren blame` compares each snapshot of a file with the next, and two versions of a file share almost
every line. Lines only one side holds can never pair (`set` differences, at C speed); once they are set aside,
the two sides are most often the same list, and the pairing is then known without a search. What
is left otherwise (a line moved, one of two equal lines removed) goes through Myers' O(ND) search,
which finds a longest common subsequence: the pairing is as small a change as git's own diff finds
(among pairings as small, the one chosen may differ from git's where equal lines could pair either way).

Lines split where git splits them, at b"\\n" only (a lone b"\\r" is part of a line). `changes` runs the
same steps in C (`_linediff.c`) where the install could build it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

_native: Callable[[bytes, bytes], list[tuple[int, int, int, int]] | None] | None
try:
    from ._linediff import hunks as _native
except ImportError:  # built only where the install had a C compiler: the same hunks in Python
    _native = None

# (old start, old end, new start, new end), ends excluded: old[i1:i2] became new[j1:j2].
Hunk = tuple[int, int, int, int]

_LINE = re.compile(rb"[^\n]*\n|[^\n]+")
# Myers' search keeps a row of each step (its time and memory grow as their square): past this many
# steps (lines changed, after those set aside), difflib's pairing takes over.
_MAX_STEPS = 500
# Some lines set aside: found by index; more: by one pass.
_FEW = 32


def lines_of(data: bytes) -> list[bytes]:
    """The lines of `data`, each with its b"\\n" (the last one without, where the file does not end in one)."""
    if b"\r" not in data:
        return data.splitlines(keepends=True)
    return _LINE.findall(data)


class Version:
    """One version's lines, with what comparing it to the next needs computed once: its set and where each line is."""

    __slots__ = ("_first", "last", "lines", "repeats")

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        self.last: dict[bytes, int] = dict(zip(lines, range(len(lines)), strict=True))  # the last place of each line
        self.repeats = len(self.last) != len(lines)
        self._first: dict[bytes, int] | None = None

    def places(self, values: set[bytes]) -> list[int]:
        """Where each line of `values` is in this version, in order (a line held twice: both places)."""
        if len(values) > _FEW:
            return [i for i, line in enumerate(self.lines) if line in values]
        last = self.last
        if not self.repeats:
            return sorted(last[v] for v in values)
        if self._first is None:
            n = len(self.lines)
            self._first = dict(zip(reversed(self.lines), range(n - 1, -1, -1), strict=True))
        found: list[int] = []
        index = self.lines.index
        for value in values:
            at, end = self._first[value], last[value]
            found.append(at)
            while at != end:
                at = index(value, at + 1, end + 1)
                found.append(at)
        found.sort()
        return found


def changes(old: bytes, new: bytes) -> list[Hunk]:
    """The hunks from one version of a file to the next (their bytes), in C where it was built, else `hunks`."""
    found = _native(old, new) if _native is not None else None
    if found is None:  # no C module, or past Myers' bound (difflib's pairing, which only Python has)
        found = hunks(Version(lines_of(old)), Version(lines_of(new)))
    return found


def count_lines(data: bytes) -> int:
    """How many lines `lines_of(data)` would give."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def hunks(old: Version, new: Version) -> list[Hunk]:
    """The changed ranges from `old` to `new` (a minimal line diff's, in order); none when they are the same."""
    a, b = old.lines, new.lines
    if a == b:
        return []
    gone = old.places(old.last.keys() - new.last.keys())  # lines only the old side holds: never paired
    came = new.places(new.last.keys() - old.last.keys())
    kept_a = _without(a, gone)
    kept_b = _without(b, came)
    # What is left most often pairs in order (the changes are what was set aside); else (a line moved, one of
    # two equal lines went) a search pairs it.
    blocks = [(0, 0, len(kept_a))] if kept_a == kept_b else _blocks(kept_a, kept_b)
    return _gaps(_in_place(blocks, _runs(gone), _runs(came)), len(a), len(b))


def apply(old: list[T], found: Sequence[Hunk], value: T) -> list[T]:
    """`old` (one item per old line) after the change: each new line in a hunk gets `value`, the others keep theirs."""
    new: list[T] = []
    at = 0
    for i1, i2, j1, j2 in found:
        new += old[at:i1]
        new += [value] * (j2 - j1)
        at = i2
    new += old[at:]
    return new


def _without(items: list[bytes], places: list[int]) -> list[bytes]:
    if not places:
        return items
    if len(places) > _FEW:
        skip = set(places)
        return [item for i, item in enumerate(items) if i not in skip]
    kept: list[bytes] = []
    at = 0
    for place in places:
        kept += items[at:place]
        at = place + 1
    kept += items[at:]
    return kept


def _runs(places: list[int]) -> list[tuple[int, int, int]]:
    """Runs of consecutive places set aside: (lines kept before the run, run start, run end)."""
    runs: list[tuple[int, int, int]] = []
    removed = 0
    start = end = -1
    for place in places:
        if place == end:
            end += 1
            continue
        if start >= 0:
            runs.append((start - removed, start, end))
            removed += end - start
        start, end = place, place + 1
    if start >= 0:
        runs.append((start - removed, start, end))
    return runs


def _in_place(
    blocks: list[tuple[int, int, int]], gone: list[tuple[int, int, int]], came: list[tuple[int, int, int]]
) -> list[tuple[int, int, int]]:
    """Blocks of paired lines (start in a, start in b, length) counted without the lines set aside, counted with them.

    A block is cut where a run set aside sits inside it, on either side.
    """
    keys_a, shift_a = _shifts(gone)
    keys_b, shift_b = _shifts(came)
    found: list[tuple[int, int, int]] = []
    for i, j, size in blocks:
        if not size:
            continue
        cuts = {k for k in keys_a[bisect_right(keys_a, i) : bisect_left(keys_a, i + size)]}
        cuts.update(k - j + i for k in keys_b[bisect_right(keys_b, j) : bisect_left(keys_b, j + size)])
        start = i
        for cut in [*sorted(cuts), i + size]:
            k = start - i + j
            x = start + shift_a[bisect_right(keys_a, start)]
            y = k + shift_b[bisect_right(keys_b, k)]
            found.append((x, y, cut - start))
            start = cut
    return found


def _shifts(runs: list[tuple[int, int, int]]) -> tuple[list[int], list[int]]:
    """Each run's place among the lines kept, and how many lines were set aside up to each (from 0)."""
    keys = [k for k, _, _ in runs]
    shifts = [0]
    for _, start, end in runs:
        shifts.append(shifts[-1] + end - start)
    return keys, shifts


def _gaps(blocks: list[tuple[int, int, int]], n: int, m: int) -> list[Hunk]:
    """The hunks between blocks of paired lines."""
    found: list[Hunk] = []
    x = y = 0
    for i, j, size in [*blocks, (n, m, 0)]:
        if i > x or j > y:
            found.append((x, i, y, j))
        x, y = i + size, j + size
    return found


def _blocks(a: list[bytes], b: list[bytes]) -> list[tuple[int, int, int]]:
    """Blocks of a longest common subsequence of `a` and `b` (Myers), ends in common taken first."""
    n, m = len(a), len(b)
    start = _common_start(a, b, 0, 0, min(n, m))
    end = _common_end(a, b, n, m, start)
    found = [(0, 0, start)]
    found += [(start + i, start + j, size) for i, j, size in _myers(a, b, start, n - end, start, m - end)]
    found.append((n - end, m - end, end))
    return found


def _common_start(a: list[bytes], b: list[bytes], x: int, y: int, most: int) -> int:
    """How many lines (up to `most`) `a` from x and `b` from y share (doubling, then halving; compared at C speed)."""
    step = 1
    lo = 0
    while step <= most and a[x + lo : x + step] == b[y + lo : y + step]:
        lo, step = step, step * 2
    hi = min(step, most)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[x + lo : x + mid] == b[y + lo : y + mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_end(a: list[bytes], b: list[bytes], n: int, m: int, start: int) -> int:
    """How many last lines a[:n] and b[:m] share, not counting their first `start` (shared already)."""
    most = min(n, m) - start
    lo, hi = 0, most
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[n - mid : n - lo] == b[m - mid : m - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _myers(a: list[bytes], b: list[bytes], x0: int, n: int, y0: int, m: int) -> list[tuple[int, int, int]]:
    """Myers' greedy search for the shortest edit script of a[x0:n] and b[y0:m]; its blocks, from x0 and y0."""
    n, m = n - x0, m - y0
    if not n or not m:
        return []
    if abs(n - m) > _MAX_STEPS:  # at least that many steps
        return _matched(a[x0 : x0 + n], b[y0 : y0 + m])
    offset = n + m + 1
    v = [0] * (2 * offset + 1)
    rows: list[list[int]] = []  # v before each step d, from k = -d - 1 to d + 1
    for d in range(min(n + m, _MAX_STEPS) + 1):
        rows.append(v[offset - d - 1 : offset + d + 2])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]
            else:
                x = v[offset + k - 1] + 1
            y = x - k
            if x < n and y < m and a[x0 + x] == b[y0 + y]:
                x += _common_start(a, b, x0 + x, y0 + y, min(n - x, m - y))
            v[offset + k] = x
            if x >= n and x - k >= m:
                return _back(rows, n, m)
    return _matched(a[x0 : x0 + n], b[y0 : y0 + m])


def _back(rows: list[list[int]], x: int, y: int) -> list[tuple[int, int, int]]:
    """The blocks (diagonal runs) of the path Myers' search found, read back from its rows."""
    found: list[tuple[int, int, int]] = []
    for d in range(len(rows) - 1, 0, -1):
        row = rows[d]
        k = x - y
        down = k == -d or (k != d and row[k - 1 + d + 1] < row[k + 1 + d + 1])
        previous = k + 1 if down else k - 1
        px = row[previous + d + 1]
        py = px - previous
        run = min(x - px, y - py)
        if run > 0:
            found.append((x - run, y - run, run))
        x, y = px, py
    if x > 0 and y > 0:
        found.append((0, 0, min(x, y)))
    found.reverse()
    return found


def _matched(a: list[bytes], b: list[bytes]) -> list[tuple[int, int, int]]:
    """Past `_MAX_STEPS` changes: difflib's pairing (its longest blocks first; not always minimal, and quick)."""
    import difflib  # here: only a file changed past Myers' bound needs it

    return [(i, j, size) for i, j, size in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()]


__all__ = ["Hunk", "Version", "apply", "changes", "count_lines", "hunks", "lines_of"]
