"""Reading another agent's session file: whole lines in order, each translated, the branch shown chosen.

A line is whole once its newline is there: a partial last line waits for its writer (and with no
writer left it is a torn tail). A line that is not a JSON object stops the reading there, with its
line number, as a damaged line of a Wren journal does; a line of an unknown kind, or whose fields
do not fit, never does (it is counted, or shown as a note). Seq is the line's number, from 1.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..forwarding import Forward
from ..journal import lines as scanner
from ..journal.events import Event
from ..journal.lines import Scan
from ..journal.offsets import CHUNK, Chunk
from ..journal.verdict import ReadVerdict, Stop
from ..portable import pread
from .base import BadLine, Format, Frames, Node, Skipped, Translated, Translator


def count_lines(fd: int, stop: int) -> int:
    """Newlines in the first `stop` bytes: how many lines come before a tail read from `stop`."""
    count, offset = 0, 0
    while offset < stop:
        data = pread(fd, min(CHUNK * 4, stop - offset), offset)
        if not data:
            break
        count += data.count(b"\n")
        offset += len(data)
    return count


class Lines:
    """(start, bytes without the newline) of each whole line from `start` up to `stop` (default: the end).

    The one scanner's lines (`journal.lines.Lines`), one by one. A partial last line is not given;
    `looked` is how far the bytes were read, so a long partial line is not looked through twice.
    Every line's bytes are read once, however long it is.
    """

    def __init__(self, fd: int, start: int, stop: int | None = None, size: int = CHUNK) -> None:
        self._lines = scanner.Lines(fd, start, stop, size)

    looked: Forward[int] = Forward("_lines.looked", settable=True)

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        lines = self._lines
        for run in lines:
            yield from scanner.split(lines.read(run), run.start)


def units(fmt: Format | None, fd: int, start: int, stop: int | None = None, size: int = CHUNK) -> Frames:
    """The units a file of `fmt` is read in from `start`: its lines, or a document format's own (`Format.frames`)."""
    if fmt is not None and fmt.frames is not None:
        return fmt.frames(fd, start, stop)
    return Lines(fd, start, stop, size)


class Translation(Scan):
    """A foreign file's units from a point on (`offset`, `lineno` lines before it), each translated, in order.

    The hook of other agents' files on the one scanner: its units are `units(fmt, ...)` (the scanner's
    lines, or a document format's own), its check the format's translator. Iterating gives
    (start, translated, bytes) of each unit up to the first the translator refuses (`stop` then
    says where and why); `offset` and `lineno` follow the reading.
    """

    def __init__(
        self,
        fd: int,
        fmt: Format | None,
        translator: Translator,
        offset: int = 0,
        lineno: int = 0,
        stop: int | None = None,
        size: int = CHUNK,
    ) -> None:
        super().__init__(offset, lineno)
        self.fd, self.end = fd, stop
        self.translator = translator
        self.units = units(fmt, fd, offset, stop, size)

    def __iter__(self) -> Iterator[tuple[int, Translated, bytes]]:
        translate = self.translator.translate
        for start, data in self.units:
            try:
                line = translate(self.lineno + 1, data)
            except BadLine as exc:
                self.fail(str(exc), data, at=start)
                return
            self.lineno += 1
            self.offset = start + len(data) + 1
            yield start, line, data

    def ending(self, fd: int | None = None, partial: bool | None = None, *, nul_tail: bool = False) -> Stop | None:
        """The stop of a reading to its end: a unit the translator refused, or bytes after the last whole unit (torn).

        NUL bytes are left to the format to judge (a foreign file is never called torn for them).
        """
        if partial is None:
            size = os.fstat(self.fd).st_size if self.end is None else self.end
            partial = size > self.offset
        return super().ending(self.fd if fd is None else fd, partial, nul_tail=nul_tail)


# --- which lines are on the branch shown ----------------------------------------------------------


@dataclass
class Branch:
    """The branch shown of a file whose entries form a tree: the one that leads to its newest entry.

    Known whole (`scan`) for a reading from the file's start; a reading from elsewhere (the tail
    shown first) knows only what it reads. Followed as the file grows: an entry that goes on from
    an earlier one than the newest starts a new branch (`moved`), and the file is read again.
    """

    hidden: set[int] = field(default_factory=set)  # line numbers of entries on other branches
    leaf: str | None = None
    ids: set[str] = field(default_factory=set)
    others: int = 0  # other branches' leaves
    side: int = 0  # subagent threads (Claude Code's sidechains)
    # Lines whose entries are on no branch: their parent links go round in a loop, so no newest entry
    # leads to them (hidden like another branch's, and said so).
    stray: int = 0
    moved: bool = False

    @classmethod
    def scan(cls, fd: int, node_of: Callable[[bytes], Node | None], stop: int) -> Branch:
        """Every entry up to `stop`, read for its place only: the newest one's branch, and what else there is."""
        nodes: dict[str, Node] = {}
        where: list[tuple[int, str]] = []
        children: set[str] = set()
        leaf: str | None = None
        side = 0
        for lineno, (_start, data) in enumerate(Lines(fd, 0, stop), 1):
            try:
                node = node_of(data)
            except BadLine:
                break  # the reading stops here too: what comes after is never shown
            if node is None:
                continue
            parent = node.parent or node.logical_parent
            if node.side:
                side += parent is None or not nodes.get(parent, node).side
            else:
                leaf = node.id
            if parent is not None:
                children.add(parent)
            nodes[node.id] = node
            where.append((lineno, node.id))
        chain: set[str] = set()
        at = leaf
        while at is not None and at not in chain:
            chain.add(at)
            node = nodes.get(at)
            at = None if node is None else node.parent or node.logical_parent
        hidden = {lineno for lineno, id_ in where if id_ not in chain}
        others = sum(1 for id_, n in nodes.items() if id_ not in children and id_ not in chain and not n.side)
        # Every entry on some branch: the shown one's, and each other leaf's way back to where it meets one.
        reached = set(chain)
        for id_, n in nodes.items():
            if id_ in children or n.side:
                continue
            at = id_
            while at is not None and at not in reached:
                reached.add(at)
                node = nodes.get(at)
                at = None if node is None else node.parent or node.logical_parent
        stray = sum(1 for _lineno, id_ in where if id_ not in reached and not nodes[id_].side)
        return cls(hidden, leaf, set(nodes), others, side, stray)

    def follow(self, lineno: int, node: Node | None) -> bool:
        """Whether line `lineno` is shown; an entry read for the first time moves the newest one on."""
        if lineno in self.hidden:
            return False
        if node is None:
            return True
        if node.side:
            return False
        parent = node.parent or node.logical_parent
        if self.leaf is not None and parent is not None and parent != self.leaf and parent in self.ids:
            self.moved = True  # it goes on from an earlier entry: a new branch, the file is read again
        self.leaf = node.id
        self.ids.add(node.id)
        return True

    def note(self) -> str | None:
        """What else the file holds, for the status line; None when it is the branch shown alone."""
        parts = []
        if self.others:
            parts.append(
                f"{self.others} other branch{'es' if self.others > 1 else ''} in this file (p lists their points)"
            )
        if self.side:
            parts.append(f"{self.side} subagent thread{'s' if self.side > 1 else ''} not shown")
        if self.stray:
            lines = f"{self.stray} line{'s' if self.stray > 1 else ''}"
            parts.append(f"{lines} on no branch (their parent links form a loop) not shown")
        return " · ".join(parts) or None


# --- line numbers by offset, for decoding a line again -------------------------------------------


class LineIndex:
    """Each line start read, with its number: runs of starts, one per reading from a new place."""

    def __init__(self) -> None:
        self._runs: list[tuple[array[int], int]] = []

    def run(self, first: int) -> array[int]:
        """A new run whose first start will be line `first`."""
        starts: array[int] = array("q")
        self._runs.append((starts, first))
        return starts

    def lineno(self, start: int) -> int | None:
        for starts, first in reversed(self._runs):
            at = bisect_left(starts, start)
            if at < len(starts) and starts[at] == start:
                return first + at
        return None


# --- the reader -----------------------------------------------------------------------------------


@dataclass
class Reading:
    """What a reader knows, handed from one reader to the one that reads on after it."""

    translator: Translator
    branch: Branch | None
    starts: array[int]
    skipped: Skipped = field(default_factory=Skipped)
    format: Format | None = None
    # The end of the last line read and its last bytes: a file rewritten in place (same inode, truncated
    # and written again) no longer holds them there, and is read again from its start (`still_there`).
    last: tuple[int, bytes] | None = None

    def still_there(self, fd: int) -> bool:
        """Whether the file still holds the last line read where it was read (True before any is read)."""
        if self.last is None:
            return True
        end, tail = self.last
        # The unit's own bytes, not its delimiter: a newline for lines, another byte in a document (ATIF).
        return pread(fd, len(tail), end - len(tail) - 1) == tail


# How much of the last line read is kept to tell that it is still there.
_LAST_BYTES = 48


class ForeignLines:
    """Whole lines of a foreign session from an offset on, in chunks of Wren events (a `LineReader`).

    `lineno` counts the lines before `offset` from the file's start. Each event's part is its
    place among its line's events, so a line can be decoded again by its span and part.
    """

    def __init__(
        self,
        fd: int,
        reading: Reading,
        start: int,
        first_line: int,
        remember: Callable[[int, list[Event]], object] | None = None,
    ) -> None:
        self.fd = fd
        self.reading = reading
        # Told each line's events (by its start) as it is read, so they need not be decoded again.
        self.remember = remember
        self.offset = self.scanned = start
        self.lineno = first_line
        self.stop: Stop | None = None  # its line counted from the file's start

    def chunks(self, stop: int | None = None, size: int = CHUNK) -> Iterator[Chunk]:
        """Chunks of the whole lines between `offset` and `stop` (or the end of the file); a partial last line waits."""
        if self.stop is not None:
            return
        reading = Translation(
            self.fd, self.reading.format, self.reading.translator, self.offset, self.lineno, stop, size
        )
        batch = _Batch(self.offset)
        for start, line, data in reading:
            end = reading.offset
            self._take(line, reading.lineno, start, end, batch)
            self.lineno, self.offset = reading.lineno, end
            self.reading.last = (end, data[-_LAST_BYTES:])
            if end - batch.begin >= size:
                yield batch.chunk()
                batch = _Batch(end)
        self.stop = reading.stop
        self.scanned = max(self.scanned, self.offset if self.stop is not None else reading.units.looked)
        if batch.events or self.stop is not None:
            yield batch.chunk()

    def _take(self, line: Translated, lineno: int, start: int, end: int, batch: _Batch) -> None:
        reading = self.reading
        reading.starts.append(start)
        reading.skipped.count(line)
        if reading.branch is not None and not reading.branch.follow(lineno, line.node):
            return
        if self.remember is not None:
            self.remember(start, line.events)
        hidden = line.hidden
        for part, event in enumerate(line.events):
            if part not in hidden:
                batch.events.append(event)
                batch.starts.append(start)
                batch.ends.append(end)
                batch.parts.append(part)


class _Batch:
    """The events of the lines read since `begin`, with their spans and parts: the next chunk."""

    def __init__(self, begin: int) -> None:
        self.begin = begin
        self.events: list[Event] = []
        self.starts: array[int] = array("q")
        self.ends: array[int] = array("q")
        self.parts: array[int] = array("i")

    def chunk(self) -> Chunk:
        return Chunk(self.events, self.starts, self.ends, parts=self.parts)


# --- reading a whole file, for the command line -----------------------------------------------------


LineSink = Callable[[int, Translated, bytes], object]


def scan(fd: int, fmt: Format, sink: LineSink, stop: int | None = None, skipped: Skipped | None = None) -> ReadVerdict:
    """Every whole line from the start, translated, to `sink(lineno, translated, bytes)`; the verdict after.

    The verdict is a Wren journal's (`journal.verdict.ReadVerdict`; its last seq is the last line's
    number); `skipped`, when given, counts the lines left out by kind.
    """
    reading = Translation(fd, fmt, fmt.translator(), stop=stop)
    for _start, line, data in reading:
        if skipped is not None:
            skipped.count(line)
        sink(reading.lineno, line, data)
    verdict = ReadVerdict(lines=reading.lineno, last_seq=reading.lineno, good_bytes=reading.offset)
    verdict.stop = reading.ending()
    return verdict
