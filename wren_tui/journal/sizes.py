"""A size in bytes as people read it, as `wren snapshots`, `ls`, `keep --status` and `verify` say sizes."""

from __future__ import annotations


def size_words(size: int, small: str = "{:d} B") -> str:
    """`size` bytes in the largest unit (KB, MB, GB, 1024 each) it holds one of, to a tenth; under 1 KB, the
    bytes as `small` writes them ("{:d} B", or "{:,} bytes" where a sentence says it)."""
    value, unit = float(size), ""
    for larger in ("KB", "MB", "GB"):
        if value < 1024:
            break
        value, unit = value / 1024, larger
    return f"{value:.1f} {unit}" if unit else small.format(size)
