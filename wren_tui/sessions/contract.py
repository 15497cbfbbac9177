"""A session, whatever wrote it: the contract the viewer's session screen and the commands read through
(`wren_tui.sessions` gives each name of it, loaded on first use).

A command (`wren log`, `export`, `otel`, `fork`) gets any session a person names from `opening.open_session` (an
id, a path, another agent's file, `DB#ID`, nats://) and reads it as a `Session`: one synchronous reading through
(`scan`) and whether something writes it now (`writer_alive`); it never asks what kind of session it holds.

The session screen never touches a file. It asks a `SessionSource` for the lines of one session
and folds what they say into its timeline; the panes show the timeline. `LocalJournal`
(`sessions/local.py`) is the first source: a Wren journal file on this machine. Others (another
agent's session file translated into Wren events, `sessions/foreign.py`; a journal mirrored over
the network and held in memory) implement the same two protocols, and the same panes show them.
A session another agent writes is a `ForeignSource`: it also says what else its file holds and
forks into a new Wren journal.

Everything here is typed structurally: a source need not import this module to be one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from ..journal.verdict import Stop

if TYPE_CHECKING:  # the events and the offsets' chunks are named here, never made: `sessions.refusal` loads neither
    from ..journal.events import Event
    from ..journal.forking import Forked, ForkPoint
    from ..journal.offsets import Chunk
    from ..journal.reader import EventSink
    from ..journal.verdict import ReadVerdict

Change = Literal["here", "absent", "replaced", "moved", "deleted", "unknown"]


@dataclass(frozen=True)
class Whereabouts:
    """What became of the session being read, as `SessionSource.look` tells it.

    - `here`: what is open is still where it was opened (it may have grown: `size` says).
    - `absent`: nothing is open, and there is nothing there yet.
    - `replaced`: the place now holds something other than what is open (or something arrived
      where nothing was open): the screen opens it again.
    - `moved`: what is open left its place and lives on elsewhere (`moved_to`: its new name, if
      known); it is still read, and its writer may go on.
    - `deleted`: what is open was deleted; what was read stays readable through the open handle.
    - `unknown`: it cannot be told now; the screen asks again at the next change.
    """

    change: Change
    moved_to: str | None = None


@dataclass(frozen=True)
class Arrival:
    """How a source that receives its lines (over a network) is getting them, as `SessionSource.arrival` tells it.

    - `history`: the lines before those shown are still arriving: how much of them is in (0 to 1);
      None once every line the session held when it was opened is in.
    - `silent`: nothing is heard from where the session is written (its machine's mirror is silent,
      the server is out of reach): what and since when, in a few words; what is shown may be old.
    """

    history: float | None = None
    silent: str | None = None


class Session(Protocol):
    """One session as a command reads it: through once, in order, with whether something still writes it.

    `LocalJournal`, `ForeignFile` and `opening.FleetSession` are sessions; `opening.open_session` gives one, opened,
    and the caller closes it.
    """

    @property
    def id(self) -> str:
        """The session's id, as its writer names it (a Wren session id, another agent's own)."""
        ...

    @property
    def where(self) -> str:
        """The session as the person named it (a path as given, a nats:// reference): what a command says."""
        ...

    @property
    def agent(self) -> str | None:
        """The agent that writes it when it is not Wren (claude, codex, ...); None for a Wren journal."""
        ...

    def scan(self, sink: EventSink, *, every_branch: bool = False, redact: bool = False) -> ReadVerdict:
        """Every event, in order, to `sink` with the bytes of its line; then the verdict (where and why reading
        stopped, if it did). Another agent's session gives the branch the viewer shows (`every_branch`: all of
        them) and, with `redact`, its secrets redacted as Wren writes it anywhere; a Wren journal is as written."""
        ...

    def writer_alive(self) -> bool:
        """Whether something writes the session now (a Wren journal: a process holds its lock; another agent's
        file: `foreign.live.alive`; a fleet's: its mirror says so)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Points:
    """A session's clean fork points as `wren fork` lists them; those before where reading stops (`stop`), if it does.

    `id` is how `wren fork` names the session again (a Wren session's id, another agent's path); `label` the other
    agent's ("Claude Code"), None for a Wren journal; `listing` one line per point; `again` the command that forks
    it (SEQ in the point's place). A Wren journal with snapshots says what changed in the files since each point
    (`changes`), or why that is not said (`unchanged`: its snapshot store cannot be read).
    """

    id: str
    path: Path
    label: str | None
    points: list[ForkPoint]
    listing: list[str]
    stop: Stop | None
    again: str
    # Each a `snapshots.store.PointChange`: not named here, for the viewer never loads the snapshot store.
    changes: dict[int, Any] = field(default_factory=dict)
    unchanged: str | None = None


@dataclass(frozen=True)
class Made:
    """A fork `wren fork` made: the new journal (`forked`, continued with `resume`), what it was forked from
    (`origin`: a journal, or another agent's file, whose agent `label` names), and where its files went
    (`workspace`, `files_restored` files of `snapshot`; `again` writes them where none was named) or, for another
    agent's session, why it records no workspace (`workspace_note`)."""

    forked: Forked
    origin: Path
    resume: str
    label: str | None = None
    workspace: Path | None = None
    snapshot: str | None = None
    files_restored: int | None = None
    again: str | None = None
    workspace_note: str | None = None


class LineReader(Protocol):
    """Whole lines from one place on, handed out in chunks, each line checked and decoded once.

    `offset` is just past the last whole line handed out, `lineno` counts the lines before it from
    the session's start. `stop` is None while reading can go on; else a `journal.verdict.Stop` (its
    line, offset and why) saying where it stopped for good (nothing after a bad line is read). `scanned` is how
    far a partial last line (no newline yet) was looked through, so a long one is not searched twice.
    """

    offset: int
    lineno: int
    stop: Stop | None
    scanned: int

    def chunks(self, stop: int | None = None) -> Iterator[Chunk]:
        """The whole lines from `offset` up to `stop` (default: all there is now); a partial last line waits.

        Each chunk gives every event the byte span of its line (`starts`, `ends`: ends just past the
        newline). A line that gives several events gives each the same span and says which it is in
        `Chunk.parts`; a line whose event is big may come back cut short (`Chunk.cut_from`).
        """
        ...


class SessionSource(Protocol):
    """One session's lines, wherever they are kept. The contract a new source implements.

    Byte offsets. Every offset is a position in the source's byte stream: a file's offset, or, for
    a source holding lines in memory, the offset in the concatenation of the lines received, in
    order, each ending with its newline. A line is never moved or changed once it was handed out;
    a source whose bytes change under it (a file replaced or cut shorter) says so, through `look`
    or a `size` below what was read, and the screen opens it again and reads it from the start.

    Items. The timeline keeps, per item, its line's span and its place among that line's events
    (0 for a Wren journal, whose lines hold one event each); `decode(start, end, part)` gives that
    event back. Nothing else is kept per item, so a source must give the same event for the same
    span and part every time.

    Threads. Every method is called on the UI thread, except on a `share()`, which belongs to the
    one worker thread it was made for (the background index, a big backlog, a search). What runs
    on the UI thread must answer within milliseconds: a line too big to decode quickly is decoded
    only by a reader made with `worker=True`.

    Errors. `open` raises `JournalError` with one sentence a person reads; `decode`, `decode_span`
    and `read` raise `JournalError` when the bytes asked for are no longer there. Nothing else raises
    for what the session holds: a line that cannot be read ends the reading (`LineReader.stop`).
    """

    @property
    def session(self) -> str:
        """The session's id, as the title, the status line and the fork picker show it."""
        ...

    @property
    def path(self) -> Path | None:
        """The Wren journal file this session is, if it is one on this machine; else None."""
        ...

    @property
    def fork_folder(self) -> Path | None:
        """Where `fork` writes a new journal (a journal's own folder, or the local journals folder); None: no fork."""
        ...

    def fork(self, seq: int) -> Forked:
        """A new Wren journal in `fork_folder`: this session's lines through the clean point `seq`, then a fork event.

        Written through `journal.forking` only (the viewer's one write), durably. Raises what
        `journal.forking.fork` raises: `NotAForkPoint`, `JournalError`, `OSError` (the folder).
        """
        ...

    @property
    def agent(self) -> str | None:
        """The agent that writes this session when it is not Wren (claude, codex, pi); None for a Wren journal.

        Another agent journals no call's start: a call asked with no result yet is running while it
        writes, and has no result recorded once it stopped (never "outcome unknown" or "never started").
        """
        ...

    def open(self) -> bool:
        """Start reading the session as it is now, closing what was open; False if there is nothing there yet.

        Nothing there yet is not an error: it may still arrive, and `follow` says when to look.
        """
        ...

    def close(self) -> None:
        """Let go of what is open. Shares made from it stay usable until they are closed."""
        ...

    def share(self) -> SessionSource:
        """Another handle on what is open now (not on whatever its place holds later), for one worker thread.

        Reads through it do not disturb this one, and it outlives this one's `close`; the worker closes it.
        """
        ...

    def size(self) -> int:
        """How many bytes the open session holds now: whole lines end at or before this."""
        ...

    def tail_span(self, size: int, window: int) -> tuple[int, int]:
        """The last whole lines before `size` that fit in `window` bytes, shown before the first frame.

        `start` is where a line starts. A last line longer than the window is left to the background
        index, and (0, 0) means nothing is to be read before the first frame.
        """
        ...

    def lines(self, start: int = 0, *, worker: bool = False) -> LineReader:
        """A reader from `start` (0, or a `tail_span` start), knowing nothing of what came before.

        `worker`: the reader runs on a worker thread and may take its time with a huge line (the
        local journal decodes one in a child process); otherwise every chunk must come quickly.
        """
        ...

    def lines_after(self, done: LineReader, *, worker: bool = False, retry: bool = False) -> LineReader:
        """A reader on this handle that reads on exactly where `done` stopped, knowing what `done` knew.

        `done` was made by this source or a share of it, maybe on another thread that has finished
        with it. The new reader keeps `done`'s `stop`, unless `retry`: then the line that
        stopped it is read again (a writer reopening a journal moves a torn tail aside).
        """
        ...

    def read(self, start: int, length: int) -> bytes:
        """Up to `length` bytes from `start`, as the source holds them: the raw view shows them, search scans them.

        Search looks for a plain ASCII query in these bytes, lowered, before it decodes anything, so
        an item's text must be in its line's bytes as JSON writes it (another format's too).
        """
        ...

    def decode(self, start: int, end: int, part: int = 0) -> Event:
        """The event `part` of the line between `start` and `end` (just past its newline), read before."""
        ...

    def decode_span(self, start: int, end: int) -> list[Event]:
        """Every event of the whole lines between `start` and `end`, in order (a partial reply's deltas)."""
        ...

    def writer_alive(self) -> bool:
        """Whether something writes to this session now (a Wren journal: a process holds its lock).

        Without a writer, a reply still streaming was cut off and a call still running has an
        unknown outcome; the panes say so.
        """
        ...

    def arrival(self) -> Arrival | None:
        """How the lines are arriving, for a source that receives them; None for one reading what is there (a file)."""
        ...

    def look(self) -> Whereabouts:
        """What became of the session since it was opened (see `Whereabouts`); quick, called at every change."""
        ...

    async def follow(self, changed: Callable[[], Awaitable[None]]) -> None:
        """Await `changed()` whenever the session may have grown, moved or been replaced, until cancelled.

        Also now and then with nothing seen (a notice that was missed costs a delay, never a line):
        the screen then asks `look` and `size` and reads on.
        """
        ...


@runtime_checkable
class ForeignSource(SessionSource, Protocol):
    """A session another agent writes (`agent` is not None), read without ever writing to its file.

    Seq is a line's number in its file. What the screen adds for it: what else the file holds (its
    other branches), its clean points on every branch, and a fork into a new Wren journal.
    """

    @property
    def origin(self) -> Path:
        """The other agent's session file."""
        ...

    def branch_note(self) -> str | None:
        """What else the file holds besides the branch shown (other branches, subagents), for the status line."""
        ...

    def fork_points(self) -> list[ForkPoint]:
        """The clean points of every branch, the branch shown first; reads the whole file (call it on a share,
        from a worker)."""
        ...

    def fork(self, seq: int) -> Forked:
        """A new Wren journal in `fork_folder` (Wren's journals folder, never beside the file) holding the
        conversation up to line `seq` (a clean point); the file is only read. It reads the whole file (call it
        on a share, from a worker). JournalError (NotAForkPoint: not a clean point) or OSError (the folder)."""
        ...


@runtime_checkable
class TailFirst(Protocol):
    """A source that may open on its session's last lines alone (a session exported into lines: exporting a big
    one whole takes seconds), as the screen reads a big journal's end before its first frame.

    Those lines are numbered as in the whole session. The background index's handle (a `share`)
    reads the whole session (`read_whole`) before it reads from line 1; the screen's handle adopts it
    (`adopt_whole`) as it installs that index. Until then, the screen's handle holds the tail alone.
    """

    @property
    def partial(self) -> bool:
        """Holding the session's last lines alone."""
        ...

    def read_whole(self, progress: Callable[[float], object] | None = None) -> None:
        """Hold the whole session in place of the tail (on the background index's share, off the UI); `progress`
        is told how much of it is read (0 to 1) now and then."""
        ...

    def adopt_whole(self) -> None:
        """Hold the whole session the background index read (on the screen's handle, as it installs the index)."""
        ...
