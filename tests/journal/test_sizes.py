"""How a size is said: `wren snapshots` and `wren ls` in B, `wren keep --status` and `wren verify` in bytes."""

from __future__ import annotations

import pytest

from wren_tui.cli.snapshots import human as in_b
from wren_tui.journal.sizes import size_words
from wren_tui.keep.status import human as in_bytes


@pytest.mark.parametrize(
    ("size", "said"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KB"),
        (1536, "1.5 KB"),
        (1024**2 - 1, "1024.0 KB"),
        (5 * 1024**2, "5.0 MB"),
        (2 * 1024**3, "2.0 GB"),
        (3 * 1024**4, "3072.0 GB"),
    ],
)
def test_a_size_is_said_in_the_largest_unit_it_holds_one_of_and_gb_at_most(size: int, said: str) -> None:
    assert size_words(size) == said == in_b(size)


def test_a_size_under_a_kilobyte_is_its_bytes_in_the_words_the_caller_gives() -> None:
    assert in_bytes(1023) == "1,023 bytes" and in_b(1023) == "1023 B"
    assert in_bytes(1536) == in_b(1536) == "1.5 KB"
