"""A journal line as stream messages and back: one message per line, or parts of one when a line is big.

The payload is the line's exact bytes, newline included, so the messages of a subject laid end to
end are the journal's bytes. A line over the part size is cut into parts that travel in one atomic
batch; each part carries `Wren-Part: i/n` and the reader joins them before checking the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import FleetError

PART = "Wren-Part"
# Parts are cut at 256 KiB: well under the server's default 1 MB message limit, with room for headers.
PART_SIZE = 256 * 1024


class StreamDamaged(FleetError):
    """The stream holds messages for a session that are not a journal's lines in order."""


@dataclass
class Outgoing:
    """One message to publish: its payload, and the headers of its line (the batch adds its own)."""

    payload: bytes
    headers: dict[str, str] = field(default_factory=dict)


def messages_of(line: bytes, part_size: int = PART_SIZE) -> list[Outgoing]:
    """The messages that carry `line`: one, or n parts of at most `part_size` bytes each."""
    if len(line) <= part_size:
        return [Outgoing(line)]
    count = -(-len(line) // part_size)
    return [Outgoing(line[i * part_size : (i + 1) * part_size], {PART: f"{i + 1}/{count}"}) for i in range(count)]


def part_of(headers: Mapping[str, str] | None) -> tuple[int, int] | None:
    """(i, n) for a part of a line, None for a whole line; StreamDamaged for a header that is neither."""
    value = headers.get(PART) if headers else None
    if value is None:
        return None
    index, _, count = value.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise StreamDamaged(f"a message carries {PART}: {value!r}, which is not i/n")
    return int(index), int(count)


class Joiner:
    """Messages of one subject, in stream order, back into whole lines."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._count = 0

    @property
    def inside_a_line(self) -> bool:
        """True between the first and the last part of a line."""
        return bool(self._parts)

    def add(self, payload: bytes, headers: Mapping[str, str] | None, stream_seq: int) -> bytes | None:
        """The whole line this message completes, or None while parts are still missing."""
        part = part_of(headers)
        if part is None:
            if self._parts:
                raise StreamDamaged(
                    f"stream message {stream_seq} is a whole line, but part {len(self._parts) + 1} of "
                    f"{self._count} was expected"
                )
            return payload
        index, count = part
        expected = len(self._parts) + 1
        if index != expected or (self._parts and count != self._count):
            want = f"part {expected} of {self._count}" if self._parts else "a whole line or part 1"
            raise StreamDamaged(f"stream message {stream_seq} is part {index} of {count}, but {want} was expected")
        self._parts.append(payload)
        self._count = count
        if index < count:
            return None
        line = b"".join(self._parts)
        self._parts, self._count = [], 0
        return line
