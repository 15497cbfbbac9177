"""What a format is (`Format`): the one contract the commands, search and the viewer ask of an agent's sessions.

Here, apart from the translators' helpers (`base`, which loads msgspec), so that naming a format, asking
`isinstance(x, Format)` or listing an agent's sessions (`folders`) loads no decoder. Its translator, node
reader and exporters are the format module's, loaded with it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..records import Frozen, Record
from .folders import Folder, file_stem

if TYPE_CHECKING:
    from ..journal.events import Event


Verdict = Literal["mapped", "skipped", "unknown", "malformed"]
"""What became of a line: translated into events; a known kind left out on purpose (the clients'
bookkeeping); a kind this version does not know (a newer client); a known kind whose fields do not
fit (shown as a note saying why)."""


class Node(Record):
    """A line's place in the file's tree of entries (pi's id/parentId, Claude Code's uuid/parentUuid)."""

    __slots__ = ("id", "logical_parent", "parent", "side")
    id: str
    parent: str | None
    # Claude Code: a compaction boundary starts a new root whose logical parent is the entry before it.
    logical_parent: str | None
    # Claude Code: a subagent's entry, never on the main branch.
    side: bool

    def __init__(
        self,
        id: str,
        parent: str | None,
        logical_parent: str | None = None,
        side: bool = False,
    ) -> None:
        self.id = id
        self.parent = parent
        self.logical_parent = logical_parent
        self.side = side


class Translated(Record):
    """One line, translated: every event it gives, in order, and what the line was."""

    __slots__ = ("cwd", "events", "hidden", "kind", "model", "node", "verdict")
    events: list[Event]
    kind: str
    verdict: Verdict
    node: Node | None
    # Places (in `events`) the reading leaves out: what the memory says earlier lines already gave.
    hidden: frozenset[int]
    # The workspace and the model the line names, if any: a listing's project, a fork's run_start.
    cwd: str | None
    model: str | None

    def __init__(
        self,
        events: list[Event],
        kind: str,
        verdict: Verdict = "mapped",
        node: Node | None = None,
        hidden: frozenset[int] = frozenset(),
        cwd: str | None = None,
        model: str | None = None,
    ) -> None:
        self.events = events
        self.kind = kind
        self.verdict = verdict
        self.node = node
        self.hidden = hidden
        self.cwd = cwd
        self.model = model


class Translator(ABC):
    """Translates one session's lines; remembers, line by line, what later lines need.

    `translate(..., learn=True)` is for a line read for the first time, in file order; `learn=False`
    decodes a line read before (the memory is only looked at). BadLine for a line that is not a
    JSON object.
    """

    @abstractmethod
    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated: ...


class Tail(Frozen):
    """The last whole lines of a session's export, made without exporting what comes before them.

    A big session's viewer shows these before its first frame and exports the whole session
    afterwards (`sessions/exported.py`). `lines` are byte for byte how the whole export ends.
    """

    __slots__ = ("before", "lines")
    lines: bytes
    before: int  # how many lines of the whole export come before them

    def __init__(
        self,
        lines: bytes,
        before: int,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "lines", lines)
        set_field(self, "before", before)


Progress = Callable[[float], object]


class Follower(Protocol):
    """One session's export, made again as the session changes (`Format.follower`)."""

    def __call__(self, progress: Progress | None = None) -> bytes:
        """The whole export as the session is now; `progress` is told how much of it is made (0 to 1) now and then."""
        ...

    def tail(self, least: int) -> Tail | None:
        """Its last lines, at least `least` bytes of the session's own, starting where the export's state starts
        afresh; None when the session is not much bigger than that (export it whole) or cannot be cut."""
        ...


class _Exports(Record):
    """A format's `export` of one path, made again each time, as a `Follower` (no tail alone)."""

    __slots__ = ("export", "path")
    path: Path
    export: Callable[[Path], bytes]

    def __init__(
        self,
        path: Path,
        export: Callable[[Path], bytes],
    ) -> None:
        self.path = path
        self.export = export

    def __call__(self, progress: Progress | None = None) -> bytes:
        return self.export(self.path)

    def tail(self, least: int) -> Tail | None:
        return None


def never_a_line(_line: dict[str, Any]) -> bool:
    """`claims` of a format whose files are not JSON lines: no line of a JSONL file is its."""
    return False


class ExportAll(Protocol):
    def __call__(self, path: Path, said: list[str] | None = None, /) -> dict[Path, bytes]: ...  # positional: any name


class Kinds(Frozen):
    """What an agent's lines are: the kinds Wren translates, those it leaves out on purpose, which line is the
    agent's at all, and which of its tools change the workspace."""

    # Its line kinds: those translated, and those left out on purpose (the client's bookkeeping).
    __slots__ = ("claims", "mapped", "skipped", "write_tools")
    mapped: tuple[str, ...]
    skipped: tuple[str, ...]
    # The tools whose calls change the workspace (its shell, its file writes and edits): the viewer's writes
    # filter counts their calls. None: a document of any agent's session (ATIF), so every format's.
    write_tools: frozenset[str] | None
    # Whether one decoded line (of the first few) is this agent's (by default none: its files are not JSON lines).
    claims: Callable[[dict[str, Any]], bool]

    def __init__(
        self,
        mapped: tuple[str, ...],
        skipped: tuple[str, ...],
        write_tools: frozenset[str] | None,
        claims: Callable[[dict[str, Any]], bool] = never_a_line,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "mapped", mapped)
        set_field(self, "skipped", skipped)
        set_field(self, "write_tools", write_tools)
        set_field(self, "claims", claims)


class Format(Frozen):
    """One agent's session files, everything Wren knows of them: how to recognise them and find them, how to
    translate them, and what the agent's calls are. The commands, search and the viewer ask this, never a name.

    A format module declares one explicitly, `FORMAT = Format(name=NAME, label=LABEL, ...)`, each field
    named (those of its `Kinds` and its `Folder` too), so that mypy checks every one and a search for a field's
    name finds where it is given. A field a module does not give is the common case, as its default says.
    """

    __slots__ = (
        "claims_file",
        "export",
        "export_all",
        "exporter",
        "folder",
        "frames",
        "kinds",
        "label",
        "name",
        "node_of",
        "open_calls_recorded",
        "session_id",
        "tokens_of",
        "totals",
        "translator",
        "unrecorded",
    )
    name: str  # as --agent takes it: claude, codex, pi
    label: str  # as a person knows the agent: Claude Code
    folder: Folder
    translator: Callable[[], Translator]
    kinds: Kinds
    # The session's id, from its path (by default the file's name without its suffix).
    session_id: Callable[[Path], str]
    # A line's place in the file's tree, read cheaply; None for a format whose lines are one sequence.
    node_of: Callable[[bytes], Node | None] | None
    # The session's tokens so far, from a line that carries the running total (None: no such line here).
    totals: Callable[[bytes], int | None]
    # The tokens one line records, read without translating it (None: the line is translated to know).
    tokens_of: Callable[[bytes], int] | None
    # Positive evidence from the file itself (its first bytes, and what they lead to), for a format
    # whose files are not JSON lines (OpenCode's database, aider's Markdown).
    claims_file: Callable[[Path, bytes], bool] | None
    # A session that is not JSON lines, as lines its translator reads (`foreign.exported`): built
    # from the file, which is only read. None: the file is read as it is.
    export: Callable[[Path], bytes] | None
    # Every session a file holds, by path, as `export` gives each (OpenCode: one database, many); what it
    # left out of them (a row of no session it can name) said in sentences added to the list it is given.
    export_all: ExportAll | None
    # For following: the export of one session, to call again as it changes (the last export is kept
    # while the files are unchanged; OpenCode keeps its copy of the database), and its tail alone
    # for a big session's first frame. None: `export` each time.
    exporter: Callable[[Path], Follower] | None
    # What the agent never records, said where its sessions are shown ("aider records no tool calls").
    unrecorded: str | None
    # Whether a call is written before its result; False (Gemini CLI: a call only with its result) means
    # a session never shows a call open, and one whose last record is a reply may have been stopped in a tool.
    open_calls_recorded: bool
    # For a format that is one document rather than a line per object (ATIF): the units it is read in,
    # as `reader.units` gives them, (fd, start, stop) -> (start, bytes) with `looked`. None: by newlines.
    frames: Callable[[int, int, int | None], Frames] | None

    def __init__(
        self,
        name: str,
        label: str,
        folder: Folder,
        translator: Callable[[], Translator],
        kinds: Kinds,
        session_id: Callable[[Path], str] = file_stem,
        node_of: Callable[[bytes], Node | None] | None = None,
        totals: Callable[[bytes], int | None] = lambda _line: None,
        tokens_of: Callable[[bytes], int] | None = None,
        claims_file: Callable[[Path, bytes], bool] | None = None,
        export: Callable[[Path], bytes] | None = None,
        export_all: ExportAll | None = None,
        exporter: Callable[[Path], Follower] | None = None,
        unrecorded: str | None = None,
        open_calls_recorded: bool = True,
        frames: Callable[[int, int, int | None], Frames] | None = None,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "name", name)
        set_field(self, "label", label)
        set_field(self, "folder", folder)
        set_field(self, "translator", translator)
        set_field(self, "kinds", kinds)
        set_field(self, "session_id", session_id)
        set_field(self, "node_of", node_of)
        set_field(self, "totals", totals)
        set_field(self, "tokens_of", tokens_of)
        set_field(self, "claims_file", claims_file)
        set_field(self, "export", export)
        set_field(self, "export_all", export_all)
        set_field(self, "exporter", exporter)
        set_field(self, "unrecorded", unrecorded)
        set_field(self, "open_calls_recorded", open_calls_recorded)
        set_field(self, "frames", frames)

    def follower(self, path: Path) -> Follower:
        """The export of the session at `path`, to call again as it changes (an exported format's)."""
        if self.exporter is not None:
            return self.exporter(path)
        assert self.export is not None, "a session read as it is, not exported"
        return _Exports(path, self.export)


class Frames(Protocol):
    """Units of a file from one offset on, (start, bytes) each; the byte after each unit is its delimiter."""

    looked: int

    def __iter__(self) -> Iterator[tuple[int, bytes]]: ...
