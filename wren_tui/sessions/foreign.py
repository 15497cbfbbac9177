"""Another agent's session file (Claude Code, Codex, pi) as a session source: its lines translated into Wren events.

The file is opened, read, watched and followed exactly as a Wren journal is (`LocalJournal`: one
read-only descriptor, `pread` (`portable.pread`), its folder watched), and never written, locked or touched. Each
line is translated by its format (`wren_tui.foreign`); seq is the line's number. A line is decoded
again by its span and its place among the line's events, through the memory of the reading that
read it last (when a call was asked, what a reply's earlier lines already counted).

Live: a process holds the file open for writing, or it changed in the last few seconds. The branch
shown is the one to the newest entry; an entry that goes on from an earlier one than the newest
makes the screen read the file again (`look` says "replaced"), and so does a file rewritten in place
(the last line read is no longer where it was read).
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..foreign import Format
from ..foreign.base import BadLine, Skipped, Translated
from ..foreign.live import FileKey, alive, changed_recently, held_for_writing
from ..foreign.reader import Branch, ForeignLines, LineIndex, Reading, count_lines, scan, units
from ..foreign.redacted import redactor
from ..forwarding import Forward
from ..journal.commandline import wren_command
from ..journal.errors import JournalError
from ..journal.events import Event
from ..journal.reader import EventSink
from ..journal.store import journals_dir, write_problem
from ..journal.verdict import ReadVerdict
from ..keep.found import Kept
from . import Arrival, LineReader, Made, Points, Whereabouts
from .exported import ExportedFile
from .local import LocalJournal

if TYPE_CHECKING:
    from ..journal.forking import Forked, ForkPoint
    from .tailing import WatchMode

# How long the answer of a look at every process's open files is kept: the screen asks after every read.
_HELD_FOR_S = 0.5
# The most of a big session's end read before the first frame (its bookkeeping lines included).
_TAIL_BYTES = 256 << 10
# ...and the most lines of it (a screenful of items is a few dozen; bookkeeping lines give none).
_TAIL_LINES = 300
# Lines whose events are kept as read (about what a screen shows first, and what is appended live).
_RECENT_LINES = 4096
_REPLACED = Whereabouts("replaced")


class _Unread:
    """Not read yet."""


_UNREAD = _Unread()


class ForeignFile:
    """The session file of another agent at `path`, in format `fmt`."""

    def __init__(
        self, path: Path, fmt: Format, *, watch_mode: WatchMode = "auto", journals: Path | None = None
    ) -> None:
        # A file read as it is, or a session exported into lines in memory (OpenCode's, aider's).
        self._file: LocalJournal | ExportedFile = (
            LocalJournal(path, watch_mode=watch_mode)
            if fmt.export is None
            else ExportedFile(path, fmt, watch_mode=watch_mode)
        )
        self.format = fmt
        self._given = path  # as named: what a command says
        # Where a fork goes: Wren's journals folder (the one named, else the default), never beside the file.
        self._journals = journals if journals is not None else journals_dir()
        self._session = f"{fmt.name} {fmt.session_id(self._file.path)}"
        self._index = LineIndex()
        self._recent: dict[int, list[Event]] = {}
        # The reading whose memory decodes lines again: the last one made, or read on from.
        self._reading: Reading | None = None
        self._held: tuple[float, set[FileKey]] = (0.0, set())
        # What Wren's kept store says of the session (a kept copy of one its agent deleted): shown with the branch,
        # read when it is first shown (a command that reads the session through never shows it).
        self._kept: str | _Unread | None = _UNREAD
        # The lines the last `scan` left out, by kind.
        self.skipped = Skipped()

    session: Forward[str] = Forward("_session")

    @property
    def id(self) -> str:
        """The session's id as its agent names it."""
        return self.format.session_id(self._given)

    @property
    def where(self) -> str:
        """The file as it was named (made absolute only to be read)."""
        return str(self._given)

    @property
    def label(self) -> str:
        """The agent's name as people know it ("Claude Code")."""
        return self.format.label

    @property
    def path(self) -> Path | None:
        return None  # not a Wren journal: a fork goes to the journals folder, never beside it

    fork_folder: Forward[Path] = Forward("_journals")
    agent: Forward[str] = Forward("format.name")
    origin: Forward[Path] = Forward("_file.path")

    # --- the file, as a Wren journal's ------------------------------------------------------

    def open(self, *, whole: bool = False) -> bool:
        """Open the file, or export the session into lines (a big one's last lines alone, unless `whole`)."""
        self._index, self._reading, self._recent = LineIndex(), None, {}
        return self._file.open(whole=whole)

    def close(self) -> None:
        self._file.close()

    def share(self) -> ForeignFile:
        twin = ForeignFile.__new__(ForeignFile)
        twin._file = self._file.share()
        twin.format, twin._given, twin._session, twin._journals = (
            self.format,
            self._given,
            self._session,
            self._journals,
        )
        twin._kept, twin.skipped = self._kept, Skipped()
        twin._index, twin._reading, twin._held = self._index, self._reading, self._held
        twin._recent = {}  # filled by the twin's own reads, on its own thread
        return twin

    def size(self) -> int:
        return self._file.size()

    def tail_span(self, size: int, window: int) -> tuple[int, int]:
        if self.format.frames is not None:
            return 0, size  # one document (ATIF): read from its head, which says whose it is
        # Translated in Python before the first frame: a screenful and more, not the whole window; in bytes
        # (a big line of bookkeeping may come last) and in lines (small ones are as many items to lay out).
        start, stop = self._file.tail_span(size, min(window, _TAIL_BYTES))
        if stop - start > _TAIL_LINES * 64:
            data = self._file.read(start, stop - start)
            at = len(data) - 1  # the last line's newline
            for _ in range(_TAIL_LINES):
                at = data.rfind(b"\n", 0, at)
                if at < 0:
                    return start, stop
            start += at + 1
        return start, stop

    def read(self, start: int, length: int) -> bytes:
        return self._file.read(start, length)

    def look(self) -> Whereabouts:
        reading = self._reading
        if reading is not None and reading.branch is not None and reading.branch.moved:
            return _REPLACED  # a new branch: read it again, to show the newest one
        where = self._file.look()
        if where.change == "here" and reading is not None and not reading.still_there(self._file.fd()):
            # Rewritten in place (`cp` over it: the same file, truncated and written again): what was read
            # is gone, and reading on from its old end would start inside some other line.
            return _REPLACED
        return where

    async def follow(self, changed: Callable[[], Awaitable[None]]) -> None:
        await self._file.follow(changed)

    # --- lines, translated ------------------------------------------------------------------

    def lines(self, start: int = 0, *, worker: bool = False) -> ForeignLines:
        fd = self._file.fd()
        node_of = self.format.node_of
        branch: Branch | None = None
        if start == 0:
            first = 0
            if node_of is not None:
                branch = Branch.scan(fd, node_of, self._file.size())  # the whole tree, to show the newest branch
        else:
            first = count_lines(fd, start)
            branch = Branch() if node_of is not None else None  # the tail alone: what it holds
        if isinstance(self._file, ExportedFile) and self._file.partial:
            first = self._file.lines_before(start)  # the export's tail alone is held: numbered as in the whole
        reading = Reading(self.format.translator(), branch, self._index.run(first + 1), format=self.format)
        self._reading = reading
        return ForeignLines(fd, reading, start, first, self._remember)

    def scan(self, sink: EventSink, *, every_branch: bool = False, redact: bool = False) -> ReadVerdict:
        """Every event of the branch shown (to the newest entry; `every_branch`: of every branch, as the file holds
        them), in order, to `sink` with its line; the verdict after. The events a line hides are left out, and
        `skipped` counts the lines left out by kind. `redact`: each event with its secrets redacted, as Wren writes
        another agent's session anywhere (an export, spans); the file itself is the person's own, shown as it is.

        Reads what is open from its start (the whole export, for a session opened tail first).
        """
        if self.partial:
            self.read_whole()
        fd, size = self._file.fd(), self._file.size()
        node_of = self.format.node_of
        # The branch shown is the one to the newest entry when reading began: it is read to that size.
        branch = None if every_branch or node_of is None else Branch.scan(fd, node_of, size)
        clean = redactor().clean_fields if redact else None
        self.skipped = Skipped()

        def take(lineno: int, line: Translated, data: bytes) -> None:
            if branch is not None and not branch.follow(lineno, line.node):
                return
            hidden = line.hidden
            events = [e for i, e in enumerate(line.events) if i not in hidden]
            if events:
                sink(events if clean is None else [clean(e) for e in events], data)

        return scan(fd, self.format, take, None if every_branch else size, self.skipped)

    # --- a big exported session, opened tail first (`TailFirst`) -----------------------------

    @property
    def partial(self) -> bool:
        return isinstance(self._file, ExportedFile) and self._file.partial

    def read_whole(self, progress: Callable[[float], object] | None = None) -> None:
        """On the background index's handle: the whole export in place of its tail, read from line 1 on."""
        if isinstance(self._file, ExportedFile) and self._file.partial:
            self._index, self._reading, self._recent = LineIndex(), None, {}
            self._file.read_whole(self._index, progress)

    def adopt_whole(self) -> None:
        """On the screen's handle, as it installs the whole index: hold the export that index read, and its lines."""
        if isinstance(self._file, ExportedFile):
            index = self._file.adopt_whole()
            if index is not None:
                self._index, self._recent = index, {}

    def lines_after(self, done: LineReader, *, worker: bool = False, retry: bool = False) -> ForeignLines:
        assert isinstance(done, ForeignLines), "a foreign session reads on only from its own readers"
        if done.reading is not self._reading:
            self._recent = {}  # read by another reading (the whole index): its memory decodes them now
        reader = ForeignLines(self._file.fd(), done.reading, done.offset, done.lineno, self._remember)
        reader.stop = None if retry else done.stop
        reader.scanned = done.scanned
        self._reading = done.reading
        return reader

    def _remember(self, start: int, events: list[Event]) -> None:
        """The events of a line just read: the screen draws the newest lines first, and needs not decode them again."""
        recent = self._recent
        recent[start] = events
        if len(recent) > _RECENT_LINES:
            del recent[next(iter(recent))]

    def decode(self, start: int, end: int, part: int = 0) -> Event:
        known = self._recent.get(start)
        if known is not None and part < len(known):
            return known[part]
        lineno = self._index.lineno(start)
        if lineno is None:
            raise JournalError(f"{self.origin}: no line was read at byte {start}; it was replaced")
        data = self._file.read(start, end - start - 1)
        if len(data) != end - start - 1:
            raise JournalError(
                f"{self.origin}: the file is shorter than its index (line at byte {start}); it was replaced"
            )
        translator = self._reading.translator if self._reading is not None else self.format.translator()
        try:
            events = translator.translate(lineno, data, learn=False).events
        except BadLine as exc:
            raise JournalError(f"{self.origin}: line {lineno} changed: {exc}; it was replaced") from None
        if part >= len(events):
            raise JournalError(f"{self.origin}: line {lineno} changed under the viewer; it was replaced")
        return events[part]

    def decode_span(self, start: int, end: int) -> list[Event]:
        fd = self._file.fd()
        first = self._index.lineno(start)
        if first is None:
            raise JournalError(f"{self.origin}: no line was read at byte {start}; it was replaced")
        translator = self.format.translator()
        out: list[Event] = []
        for number, (_at, data) in enumerate(units(self.format, fd, start, end), first):
            out += translator.translate(number, data, learn=False).events
        return out

    # --- a writer, and what else the file holds ----------------------------------------------

    def arrival(self) -> Arrival | None:
        return None  # a file read where it is written

    def writer_alive(self) -> bool:
        if isinstance(self._file, ExportedFile):
            return changed_recently(self._file.changed_at())  # no process holds an export open
        try:
            st = os.fstat(self._file.fd())
        except (OSError, AssertionError):
            return False  # nothing open
        # A recent change is seen at once (an fstat); the look at every process's files is kept a moment.
        at, held = self._held
        now = time.monotonic()
        if now - at >= _HELD_FOR_S:
            held = held_for_writing([(st.st_dev, st.st_ino)])
            self._held = (now, held)
        return alive(st, held)

    def branch_note(self) -> str | None:
        reading = self._reading
        note = None if reading is None or reading.branch is None else reading.branch.note()
        # What the agent never records is said beside what the file holds.
        return " · ".join(n for n in (self._kept_mark(), note, self.format.unrecorded) if n) or None

    def _kept_mark(self) -> str | None:
        if isinstance(self._kept, _Unread):
            mark = Kept().mark(self._given)
            self._kept = None if mark is None else mark.sentence
        return self._kept

    def fork_points(self) -> list[ForkPoint]:  # of what was read (an exported session: the lines held)
        from ..foreign.conversation import fork_points, outline  # a fork's: loaded when asked

        if isinstance(self._file, ExportedFile) and self._file.partial:
            self._file.read_whole()  # a share's own: the screen's handle keeps its tail until the index is built
        return fork_points(outline(self._file.fd(), self.format)).points

    def fork(self, seq: int) -> Forked:
        from ..foreign.fork import fork_into_wren  # the viewer's second way to write, loaded when used

        return fork_into_wren(Path(os.path.abspath(self.origin)), self.format, seq, self._journals)

    # --- `wren fork`: the clean points, or a fork into Wren's journals folder ----------------------

    @property
    def no_workspace(self) -> str:
        """Why a fork of it takes no workspace to write files into."""
        return (
            f"{self._given}: another agent's session carries no snapshots of its files, so a fork of it restores the "
            "conversation only; fork it without --workspace"
        )

    def clean_points(self) -> Points:
        """The clean points of every branch, by line; a damaged file's are those before the damage."""
        from ..foreign.conversation import fork_points, outline
        from ..journal.forking import fork_listing

        if self.partial:
            self.read_whole()
        read = outline(self._file.fd(), self.format)
        points = fork_points(read).points
        again = wren_command("fork", str(self._given), folder=self._journals, tail="SEQ")
        return Points(str(self._given), Path(self._given), self.label, points, fork_listing(points), read.stop, again)

    def fork_at(self, seq: int, workspace: str | None) -> Made:
        """A new Wren journal in `fork_folder` (Wren's journals folder, never beside the file, which is only read)
        holding the conversation up to line `seq`, a clean point. NotAForkPoint, JournalError (the folder)."""
        from ..foreign.fork import fork_into_wren

        assert not workspace, "another agent's session carries no files to write (`no_workspace`)"
        try:
            forked = fork_into_wren(Path(self._given), self.format, seq, self._journals)
        except OSError as exc:
            raise JournalError(
                f"{write_problem(self._journals, exc)}, so the fork was not made; name a journals folder you can "
                "write with --dir (or WREN_DIR)"
            ) from None
        resume = wren_command("resume", forked.id, folder=forked.path.parent)
        return Made(forked, Path(self._given), resume, self.label, workspace_note=forked.workspace_note)
