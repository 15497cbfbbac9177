"""One huge line checked and decoded in a child process, so the caller's GIL is never held for it.

Decoding a 50 MB line holds the GIL for about 100 ms (msgspec does not let go of it), and a
viewer's keys wait that long. A child reads the line through the caller's descriptor, checks it
with `_parse_line` (the same verdicts as `read_events`), and answers with the event whose long
strings are cut to `clip` characters, and the length of the longest one; the caller decodes that
small answer. The child only reads: it refuses a descriptor open for writing, opens nothing, and
writes nothing but its answer on stdout.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

import msgspec

from ..portable import PASS_FDS, access_mode, pread
from .events import Delta, Error, Event, Message, to_builtins
from .reader import _decode_checked, _LineError, _parse_line

# A line longer than this is decoded by a child process (by a reader on a worker thread): decoding it holds the GIL
# about 2 ms a megabyte.
HUGE_LINE = 8 << 20
# The characters of a big line's text that are kept to show (more than a person reads in a pane; search reads the
# whole line): what the child cuts its long strings to, and what the viewer keeps of a line too big to decode at once.
CLIP_CHARS = 1 << 18


@dataclass(frozen=True)
class Decoded:
    """A huge line's event with its long strings cut short, and its text's whole length."""

    event: Event
    chars: int  # a message's content, an error's message, a delta's text; 0 for other events


class ChildFailed(Exception):
    """The child could not be run or gave no answer: the caller decodes the line itself."""


def decode_elsewhere(fd: int, start: int, length: int, prev_seq: int, clip: int) -> Decoded:
    """Check and decode the line of `length` bytes (without its newline) at `start` of `fd` in a child.

    _LineError if it cannot be read; ChildFailed if no child could say.
    """
    if not PASS_FDS:
        raise ChildFailed("this system passes no descriptor to a child")
    import subprocess  # only for a line too big to decode here: not for the readers that import the clip sizes

    args = [str(n) for n in (fd, start, length, prev_seq, clip)]

    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__, *args],
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ChildFailed(str(exc)) from None
    if done.returncode != 0:
        raise ChildFailed(done.stderr.decode(errors="replace")[-500:])
    try:
        answer = msgspec.json.decode(done.stdout)
    except msgspec.DecodeError as exc:
        raise ChildFailed(f"unreadable answer: {exc}") from None
    if "error" in answer:
        raise _LineError(answer["error"])
    # The answer is small: decoding it here is quick. The child checked the line's framing (its CRC,
    # its seq after prev_seq); the answer, re-encoded without its crc member, is decoded as an event.
    return Decoded(_decode_checked(msgspec.json.encode(answer["line"])), answer["chars"])


def _cut(value: Any, clip: int) -> Any:
    if isinstance(value, str):
        return value[:clip]
    if isinstance(value, list):
        return [_cut(v, clip) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v, clip) for k, v in value.items()}
    return value


def main() -> int:
    fd, start, length, prev_seq, clip = map(int, sys.argv[1:6])
    mode = access_mode(fd)
    if mode is None:  # the system cannot say: not taken as read-only
        sys.stderr.write("this system cannot tell how the journal's descriptor is open; this child only reads\n")
        return 1
    if mode != os.O_RDONLY:
        sys.stderr.write("the journal's descriptor is open for writing; this child only reads\n")
        return 1
    line = pread(fd, length, start)
    if len(line) != length:
        sys.stderr.write("the journal is shorter than the line\n")
        return 1
    try:
        event = _parse_line(line, prev_seq)
    except _LineError as exc:
        sys.stdout.buffer.write(msgspec.json.encode({"error": str(exc)}))
        return 0
    cut = _cut(to_builtins(event), clip)
    sys.stdout.buffer.write(msgspec.json.encode({"line": cut, "chars": len(text_of(event))}))
    return 0


def text_of(event: Event) -> str:
    """The text a person reads in an event: a message's content, an error's message, a delta's text."""
    if isinstance(event, Message):
        return event.message.content
    if isinstance(event, Error):
        return event.message
    return event.text if isinstance(event, Delta) else ""


if __name__ == "__main__":
    sys.exit(main())
