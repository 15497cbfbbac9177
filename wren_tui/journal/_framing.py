"""One journal line's framing: {"seq":N,"ts":"TS", the event's fields, "crc":"xxxxxxxx"}, then a newline.

The CRC is the CRC-32 of the line's bytes before `,"crc":`. `python_line` is the definition in
code; the C builder (`_lines.make_line`) makes the same bytes faster, and tests compare the two.
"""

from __future__ import annotations

import zlib

CRC_MARK = b',"crc":"'
# How every line the writer makes begins: a file that begins so is a Wren journal (maybe damaged past it).
LINE_START = b'{"seq":'
# ,"crc":"xxxxxxxx"}  -> 8 + 8 + 2 bytes at the end of a line we wrote (before its newline)
CRC_SUFFIX_LEN = 18


def python_line(seq: int, ts: bytes, body: bytes) -> bytes:
    """The line of an event encoded as `body` (a JSON object without seq and ts), stamped `seq` and `ts`."""
    line = b'{"seq":%d,"ts":"%b",%b' % (seq, ts, body[1:-1])
    return b'%b,"crc":"%08x"}\n' % (line, zlib.crc32(line))


def crc_problem(line: bytes) -> str | None:
    """Why a line (without its newline) is not one the writer made, by its CRC; None when its CRC is right.

    The writer ends every line with ,"crc":"xxxxxxxx"} (8 lowercase hex digits). A line without that
    exact ending is not ours, whatever else it holds: a crc member written with spaces, in capitals,
    anywhere but last, or none at all is damage, as a wrong CRC is. The C line checks (`_lines.c`,
    search's `_scan.c`) accept exactly the lines this returns None for.
    """
    if len(line) < CRC_SUFFIX_LEN + 2 or line[-CRC_SUFFIX_LEN:-10] != CRC_MARK or not line.endswith(b'"}'):
        if b'"crc"' in line:
            return 'its crc member is not written as Wren writes it (,"crc":"xxxxxxxx"} at the end of the line)'
        return "it has no crc member (Wren ends every line with one; this line was not written by Wren's writer)"
    digits = line[-10:-2]
    if digits.strip(_HEX):
        return "its crc is not 8 lowercase hex digits (Wren's writer never writes it another way)"
    if zlib.crc32(line[:-CRC_SUFFIX_LEN]) != int(digits, 16):
        return CRC_MISMATCH
    return None


CRC_MISMATCH = "its CRC does not match its bytes (the line was changed after it was written)"


_HEX = b"0123456789abcdef"
