"""Journals for search's tests: written with the journal's own encoder, or rewritten as another writer would."""

from __future__ import annotations

import zlib


def resealed(line: bytes, old: bytes, new: bytes) -> bytes:
    """`line` (with its newline) with `old` replaced by `new` in its body, and its CRC computed again.

    What a writer other than Wren's encoder may put in a valid journal: the same JSON value written
    with other escapes (a character as \\u0041, / as \\/).
    """
    body = line[: line.rindex(b',"crc":')]
    assert old in body
    body = body.replace(old, new)
    return body + b',"crc":"%08x"}\n' % zlib.crc32(body)
