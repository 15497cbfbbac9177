"""One journal line's framing: {"seq":N,"ts":"TS", the event's fields, "crc":"xxxxxxxx"}, then a newline.

The CRC is the CRC-32 of the line's bytes before `,"crc":`. `python_line` is the definition in
code; the C builder (`_lines.make_line`) makes the same bytes faster, and tests compare the two.
"""

from __future__ import annotations

import zlib

CRC_MARK = b',"crc":"'
# ,"crc":"xxxxxxxx"}  -> 8 + 8 + 2 bytes at the end of a line we wrote (before its newline)
CRC_SUFFIX_LEN = 18


def python_line(seq: int, ts: bytes, body: bytes) -> bytes:
    """The line of an event encoded as `body` (a JSON object without seq and ts), stamped `seq` and `ts`."""
    line = b'{"seq":%d,"ts":"%b",%b' % (seq, ts, body[1:-1])
    return b'%b,"crc":"%08x"}\n' % (line, zlib.crc32(line))


def crc_matches(line: bytes) -> bool | None:
    """True or False for a line (without its newline) that carries our CRC suffix, None for one that does not."""
    if len(line) < CRC_SUFFIX_LEN + 2 or line[-CRC_SUFFIX_LEN:-10] != CRC_MARK:
        return None
    try:
        expected = int(line[-10:-2], 16)
    except ValueError:
        return False
    return zlib.crc32(line[:-CRC_SUFFIX_LEN]) == expected and line.endswith(b'"}')
