"""Which screen row each item starts on, for a million items whose heights change as they are measured.

Heights live in one array; rows are summed per block of items, so finding the item on a row is a
bisect over the blocks and a short walk inside one, and changing a height costs a block, not a pass.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate

_BLOCK = 256


class RowMap:
    def __init__(self) -> None:
        self.heights: array[int] = array("i")
        self._totals: array[int] = array("q")  # rows per block
        self._block_starts: array[int] | None = array("q")  # first row of each block, rebuilt on demand
        self.rows = 0  # all items' rows together

    def __len__(self) -> int:
        return len(self.heights)

    def extend(self, heights: Iterable[int]) -> None:
        start = len(self.heights)
        self.heights.extend(heights)
        first_block = start // _BLOCK
        del self._totals[first_block:]
        for block in range(first_block, (len(self.heights) + _BLOCK - 1) // _BLOCK):
            self._totals.append(sum(self.heights[block * _BLOCK : (block + 1) * _BLOCK]))
        self._block_starts = None
        self.rows = sum(self._totals)

    def truncate(self, count: int) -> None:
        """Forget the items from `count` on."""
        del self.heights[count:]
        del self._totals[count // _BLOCK :]
        if count % _BLOCK:
            block = count // _BLOCK
            self._totals.append(sum(self.heights[block * _BLOCK :]))
        self._block_starts = None
        self.rows = sum(self._totals)

    def set(self, index: int, height: int) -> int:
        """Change one item's height; returns how many rows it grew by."""
        delta = height - self.heights[index]
        if delta:
            self.heights[index] = height
            self._totals[index // _BLOCK] += delta
            self._block_starts = None
            self.rows += delta
        return delta

    def _starts(self) -> array[int]:
        if self._block_starts is None:
            self._block_starts = array("q", accumulate(self._totals, initial=0))
        return self._block_starts

    def start(self, index: int) -> int:
        """The first row of item `index` (the row after the last item for `len(self)`)."""
        block = index // _BLOCK
        return self._starts()[block] + sum(self.heights[block * _BLOCK : index])

    def find(self, row: int) -> int:
        """The item that row `row` falls in, or -1 before the first; len(self) past the last."""
        if row < 0 or not self.heights:
            return -1
        starts = self._starts()
        block = bisect_right(starts, row) - 1
        if block >= len(self._totals):
            return len(self.heights)
        index, top = block * _BLOCK, starts[block]
        heights = self.heights
        while index < len(heights) and top + heights[index] <= row:
            top += heights[index]
            index += 1
        return index
