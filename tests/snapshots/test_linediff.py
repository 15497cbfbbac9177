"""Blame's line diff: as few changed lines as a longest common subsequence allows, the same in C and in Python.

`wren blame` pairs each snapshot of a file with the next by `linediff.changes` (C where the install built
`_linediff.c`, else `linediff.hunks`). Here both are checked against a longest common subsequence found by
brute force, and against each other hunk for hunk.
"""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wren_tui.snapshots import linediff
from wren_tui.snapshots.linediff import Hunk, Version, apply, changes, count_lines, hunks, lines_of

native: Callable[[bytes, bytes], list[Hunk] | None] | None
try:
    from wren_tui.snapshots._linediff import hunks as native
except ImportError:  # not built here: the Python diff alone is checked
    native = None

needs_native = pytest.mark.skipif(native is None, reason="the C line diff was not built (no compiler at install)")
# Few kinds of line: most versions hold the same line twice or more, where pairings could differ.
LINES = st.lists(st.sampled_from([b"a\n", b"b\n", b"c\n", b"\n", b"a", b"b\r\n", b"}\n", b"x\ry\n"]), max_size=30)


def _longest_common(a: list[bytes], b: list[bytes]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    return table[0][0]


def _paired(a: list[bytes], b: list[bytes], found: list[Hunk]) -> list[tuple[int, int]]:
    """The (old, new) line pairs the hunks leave, checked to be equal lines in order."""
    olds = apply(list(range(len(a))), found, -1)
    assert len(olds) == len(b)
    pairs = [(i, j) for j, i in enumerate(olds) if i >= 0]
    assert all(a[i] == b[j] for i, j in pairs)
    assert all(p[0] < q[0] for p, q in itertools.pairwise(pairs))
    return pairs


@given(LINES, LINES)
@settings(max_examples=400, deadline=None)
def test_the_diff_pairs_as_many_lines_as_a_longest_common_subsequence(old: list[bytes], new: list[bytes]) -> None:
    a, b = lines_of(b"".join(old)), lines_of(b"".join(new))
    found = changes(b"".join(old), b"".join(new))
    assert len(_paired(a, b, found)) == _longest_common(a, b)
    assert found == hunks(Version(a), Version(b)) or native is None or native(b"".join(old), b"".join(new)) is None


@needs_native
@given(LINES, st.data())
@settings(max_examples=400, deadline=None)
def test_the_c_diff_gives_the_python_diffs_hunks(old: list[bytes], data: st.DataObject) -> None:
    new = list(old)
    for _ in range(data.draw(st.integers(0, 6))):
        at = data.draw(st.integers(0, len(new)))
        if data.draw(st.booleans()) and at < len(new):
            del new[at]
        else:
            new.insert(at, data.draw(st.sampled_from([b"a\n", b"new\n", b"\n", b"b"])))
    a, b = b"".join(old), b"".join(new)
    assert native is not None
    assert native(a, b) == hunks(Version(lines_of(a)), Version(lines_of(b)))


def test_lines_split_where_git_splits_them_at_newlines_only() -> None:
    data = b"one\rstill one\r\ntwo\n\nlast without newline"
    assert lines_of(data) == [b"one\rstill one\r\n", b"two\n", b"\n", b"last without newline"]
    assert count_lines(data) == 4 and count_lines(b"") == 0 and count_lines(b"a\n") == 1
    # A last line without its newline is not the same line as with one.
    assert changes(b"a\nb", b"a\nb\n") == [(1, 2, 1, 2)]


def test_a_file_rewritten_past_the_searchs_bound_still_pairs_its_equal_lines_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(38)
    old = [b"%d\n" % rng.randrange(40) for _ in range(1500)]
    new = list(old)
    rng.shuffle(new)
    a, b = b"".join(old), b"".join(new)
    if native is not None:
        assert native(a, b) is None  # past MAX_STEPS: the C diff leaves it to difflib's pairing
    found = changes(a, b)
    assert found == hunks(Version(old), Version(new))
    assert _paired(old, new, found)
    monkeypatch.setattr(linediff, "_MAX_STEPS", 10**6)  # the search to its end finds as long a pairing or longer
    assert len(_paired(old, new, hunks(Version(old), Version(new)))) >= len(_paired(old, new, found))


def test_versions_that_differ_by_scattered_edits_pair_every_line_they_share() -> None:
    rng = random.Random(35)
    lines = [b"line %d\n" % i for i in range(2000)]
    for event in range(20):
        before = list(lines)
        for _ in range(10):
            lines[rng.randrange(len(lines))] = b"rewritten by %d at %d\n" % (event, rng.randrange(10**6))
        lines.insert(rng.randrange(len(lines)), b"inserted by %d\n" % event)
        lines.insert(rng.randrange(len(lines)), b"inserted by %d\n" % event)
        del lines[rng.randrange(len(lines))]
        found = changes(b"".join(before), b"".join(lines))
        shared = len(before) - sum(i2 - i1 for i1, i2, _j1, _j2 in found)
        assert len(_paired(before, lines, found)) == shared
        assert sum(j2 - j1 for _i1, _i2, j1, j2 in found) == len(lines) - shared <= 13


@needs_native
@given(st.lists(LINES, min_size=2, max_size=6))
@settings(max_examples=200, deadline=None)
def test_a_history_asked_version_after_version_gives_the_python_diffs_hunks(versions: list[list[bytes]]) -> None:
    # Each version is asked as `new`, then as the next pair's `old` (the same object): the C module keeps its lines.
    datas = [b"".join(lines) for lines in versions]
    assert native is not None
    for old, new in itertools.pairwise(datas):
        assert native(old, new) == hunks(Version(lines_of(old)), Version(lines_of(new)))
    assert native(bytearray(datas[-1]), datas[0]) == hunks(Version(lines_of(datas[-1])), Version(lines_of(datas[0])))


_RACE = """
import sys, threading
from wren_tui.snapshots._linediff import hunks
big = b"".join(b"line %d\\n" % i for i in range(300_000))
changed = big.replace(b"line 5\\n", b"five\\n")
for _ in range(5):
    go = threading.Event()
    found = []
    def other():
        go.wait()
        found.append(hunks(big, b"line 0\\n"))
    thread = threading.Thread(target=other)
    thread.start()
    hunks(b"first\\n", big)  # big: the version held for the next call
    go.set()
    hunks(big, changed)  # takes it, and works without the GIL while `other` asks with the same `old`
    thread.join()
    assert found == [[(1, 300_000, 1, 1)]], found
print("ok")
"""


@needs_native
def test_two_threads_asking_with_the_same_old_version_both_get_its_hunks() -> None:
    done = subprocess.run([sys.executable, "-c", _RACE], capture_output=True, text=True, timeout=300, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-2000:]
