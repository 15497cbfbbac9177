"""The one line scanner: whole lines of a file in runs, and where and why a reading of them stops.

Every reader of JSON Lines takes its lines from here: a Wren journal's (`reader.read_events`,
`scan_events`, `Tail`), the viewer's line offsets (`offsets.LineScanner`), other agents' files
(`foreign.reader`), search's raw pass (`search.wren`) and the fleet's remote reader
(`fleet.remote`, fed whole lines from the stream). The scanner owns what they all must say alike:

- the lines: `Lines` reads a file in chunks and hands out runs of whole lines (each ending in
  its newline); a line longer than a chunk is found first and read once; bytes after the last
  newline are a partial last line, never handed out (`Lines.partial`).
- the stop: `Scan` is where a reading is (just past its last good line, how many good lines) and
  the first line that cannot be read (`Scan.fail`); `Scan.ending` turns that into the verdict's
  `Stop`: a line holding NUL bytes with nothing but NUL bytes after it to the end of the file is a
  torn tail (a crash's zero-filled end), so is a partial last line; any other bad line is corruption.

What a line must be is each reader's own hook: the journal's checks (with its C fast path over a
whole run), a foreign format's translator, search's raw pass (`_scan.c`). They call `Scan.fail`
with the reason a person reads, and the scanner says where.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..portable import pread
from ..records import Record
from .verdict import Stop

CHUNK = 1 << 20
CUT_SHORT = "the last line was cut short (no newline at its end)"


class Run(Record):
    """Whole lines between two file offsets: `lines` ends with a newline (None: one huge line, not read)."""

    __slots__ = ("end", "lines", "start")
    start: int
    end: int
    lines: memoryview | None

    def __init__(self, start: int, end: int, lines: memoryview | None) -> None:
        self.start = start
        self.end = end
        self.lines = lines


class Lines:
    """Runs of whole lines of `fd` from `start` up to `stop` (default: the end of the file), read in chunks of `size`.

    A line longer than a chunk has its newline found first, then it is read once: memory holds a
    chunk and one line. With `huge`, such a line over `huge` bytes is not read: its run has no
    `lines`, and the caller reads it (`read`) or decodes it elsewhere.

    After the iteration: `partial` says whether bytes without a newline are left after the last
    run (a partial last line); `looked` is how far the bytes were read, with no newline between
    the end of the last run handed out and it (a caller keeps it so as not to look through a long
    partial line twice, and hands it back as `looked` to the next scan).
    """

    def __init__(
        self,
        fd: int,
        start: int = 0,
        stop: int | None = None,
        size: int = CHUNK,
        *,
        looked: int = 0,
        huge: int | None = None,
    ) -> None:
        self.fd, self.start, self.stop, self.size, self.huge = fd, start, stop, size, huge
        self.looked = max(start, looked)
        self.partial = False

    def __iter__(self) -> Iterator[Run]:
        fd, stop, size = self.fd, self.stop, self.size
        offset = self.start
        while stop is None or offset < stop:
            limit = size if stop is None else min(size, stop - offset)
            data = pread(fd, limit, offset)
            if not data:
                return
            self.looked = max(self.looked, offset + len(data))
            cut = data.rfind(b"\n") + 1
            if not cut:
                read = len(data)
                del data  # one chunk in memory at a time, while a long line's end is looked for
                if read < limit:
                    self.partial = True  # nothing whole yet: a partial last line waits for its writer
                    return
                end = self._line_end(max(offset + read, self.looked))
                if end is None:
                    self.partial = True
                    return
                if self.huge is not None and end - offset > self.huge:
                    yield Run(offset, end, None)
                    offset = end
                    continue
                data = pread_exactly(fd, end - offset, offset)
                cut = data.rfind(b"\n") + 1
                if not cut:
                    self.partial = True  # the file shrank under the reading
                    return
            # A view, not a copy: the lines are checked where they were read.
            yield Run(offset, offset + cut, memoryview(data)[:cut])
            offset += cut
            del data  # a caller that lets go of its run holds no chunk while the next one is read

    def _line_end(self, offset: int) -> int | None:
        """Just past the first newline at or after `offset` (before `stop`); None if there is none yet."""
        stop, size = self.stop, self.size
        while stop is None or offset < stop:
            data = pread(self.fd, size if stop is None else min(size, stop - offset), offset)
            if not data:
                return None
            newline = data.find(b"\n")
            if newline >= 0:
                self.looked = max(self.looked, offset + newline + 1)
                return offset + newline + 1
            offset += len(data)
            self.looked = max(self.looked, offset)
            del data
        return None

    def read(self, run: Run) -> memoryview:
        """The lines of a run, read now if they were left unread (a huge line)."""
        if run.lines is not None:
            return run.lines
        return memoryview(pread_exactly(self.fd, run.end - run.start, run.start))


def split(lines: bytes | memoryview, start: int) -> Iterator[tuple[int, bytes]]:
    """Each line of a run of whole lines beginning at file offset `start`: (where it starts, its bytes, no newline)."""
    at = start
    for line in bytes(lines).split(b"\n")[:-1]:
        yield at, line
        at += len(line) + 1


class Scan:
    """Where one reading of lines is, counted from the file's start, and the first line it could not read.

    Attributes:
        offset: Just past the last good line.
        lineno: Good lines before `offset`.
        stop: The line that could not be read (never torn until `ending` says so); None while reading goes on.
        bad_line: That line's bytes, without its newline.
    """

    def __init__(self, offset: int = 0, lineno: int = 0) -> None:
        self.offset = offset
        self.lineno = lineno
        self.stop: Stop | None = None
        self.bad_line = b""

    def fail(self, why: str, line: bytes = b"", at: int | None = None) -> None:
        """The next line (`line`, at `at`, default `offset`) cannot be read, for `why`: the reading stops there."""
        self.stop = Stop(self.lineno + 1, self.offset if at is None else at, why)
        self.bad_line = line

    def ending(self, fd: int, partial: bool, *, nul_tail: bool = True) -> Stop | None:
        """The stop of a reading that has ended, for its verdict; None when every line was read.

        A line that could not be read is a torn tail when it holds NUL bytes and only NUL bytes (and
        newlines) follow it to the end of the file (with `nul_tail`); else corruption. With no such
        line, a `partial` last line (see `Lines.partial`) is a torn tail.
        """
        if self.stop is not None:
            after = self.offset + len(self.bad_line) + 1
            if nul_tail and b"\x00" in self.bad_line and only_nul_after(fd, after):
                return self.stop.replace(torn=True)
            return self.stop
        if partial:
            return Stop(self.lineno + 1, self.offset, CUT_SHORT, True)
        return None


def pread_exactly(fd: int, length: int, offset: int) -> bytes:
    """`length` bytes from `offset`, in as many reads as it takes (fewer only at the end of the file)."""
    parts = []
    while length > 0:
        part = pread(fd, length, offset)
        if not part:
            break
        parts.append(part)
        length -= len(part)
        offset += len(part)
    return b"".join(parts)


def only_nul_after(fd: int, offset: int) -> bool:
    """Whether the file holds nothing but NUL bytes and newlines from `offset` to its end."""
    while True:
        chunk = pread(fd, CHUNK, offset)
        if not chunk:
            return True
        if chunk.strip(b"\x00\n"):
            return False
        offset += len(chunk)
