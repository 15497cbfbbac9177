"""What search reads: a session source hands out the items that can match, then says where its reading stopped.

A source is one session of one agent. `items(query)` yields, in order, each searchable piece of text
of every event that can match (the source may skip what cannot, by the query's raw test), with its
place: seq (a Wren journal) or line number (another agent's file), time, role, and the line's start
and the event's place in it, so the viewer can open the session there. Search confirms each item on
its text. When `items` is done, `stop` and `warnings` say how far the reading went, as the reader
says it. A new agent is one class with this shape, and `spoken.items_of` turns Wren events into items.

Its annotations are evaluated where they are written (no `from __future__ import annotations`): `typing.NamedTuple`
makes each field's annotation written as text a `ForwardRef`, compiling it, and the process's first `compile()` makes
the classes of Python's AST (0.75 ms), on the path of every search. Here each field's type is the type itself.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Literal, NamedTuple, Protocol, runtime_checkable

from ..forwarding import Forward
from ..journal.verdict import Stop
from .choices import Role
from .query import Query

# What the text is: a message's text, a tool call's arguments, a tool's result, a model's reasoning,
# an error, a reply streamed and thrown away (a retry, a crash, a cancel).
Kind = Literal["message", "call", "result", "reasoning", "error", "partial"]


class Item(NamedTuple):
    """One searchable text of a session, and where it is (a named tuple: a large index makes a few hundred
    thousand of them, each made in a third of a frozen dataclass's time and marshalled as it is)."""

    seq: int  # a Wren journal's seq; another agent's line number
    ts: str
    role: Role
    kind: Kind
    text: str
    offset: int  # where its line starts in the file
    part: int = 0  # its event's place among its line's events (0 for a Wren journal)
    name: str | None = None  # a tool call's tool, searched as well as its arguments
    project: str | None = None  # the folder the run it belongs to worked in


class Saved(NamedTuple):
    """Where a reading that went to a file's end can go on from when the file grows, and how.

    `offset`: every byte before it was read, and no item past it was given but the last `provisional`
    ones; `state`: what the reader remembered there (pickled, only for `items(..., resume=...)`);
    `provisional`: how many of the last items given depend on what is not written yet (a reply still
    streaming when the file ended), so are read again, with the bytes after `offset`, when it grows.
    """

    offset: int
    state: bytes
    provisional: int = 0


class SearchSource(Protocol):
    """One session, as search reads it."""

    @property
    def agent(self) -> str:
        """wren, claude, codex or pi."""
        ...

    @property
    def session(self) -> str:
        """The session's id, as listings show it."""
        ...

    @property
    def path(self) -> Path: ...

    @property
    def path_text(self) -> str:
        """`str(path)`, without the `Path` made (what the index and a listing look a file up by)."""
        ...

    @property
    def stop(self) -> Stop | None:
        """Once `items` is done: the line reading stopped at and why (None: read to its end)."""
        ...

    @property
    def warnings(self) -> list[str]: ...

    def items(self, query: Query) -> Iterator[Item]:
        """The items of every event that can match `query`, in order.

        Raises:
            JournalError: the session cannot be opened (missing, a link, no permission).
        """
        ...


@runtime_checkable
class Resumable(SearchSource, Protocol):
    """A source whose reading can go on from where an earlier one ended (what the index keeps)."""

    @property
    def saved(self) -> Saved | None:
        """Once `items` is done: where to go on from (None: it could not be saved; read it again whole)."""
        ...

    def resume(self, query: Query, saved: Saved) -> Iterator[Item]:
        """The items past `saved.offset` (and the provisional ones again), as `items` would give them there."""
        ...


class FileSession:
    """What every session file searched read-only says of itself and of its last reading (a `Resumable`'s state).

    Its path is kept as it was given: a listing gives its text (`folders.listed`), and the `Path` is made when
    something asks for `path` (a hit, a stop: a warm search's thousands of sessions the index answers need none);
    `path_text` is its text either way, `str(path)`."""

    # Until set on the session: the class's (a listing makes thousands, each with what it sets alone).
    _path: Path | None = None
    _stop: Stop | None = None
    _saved: Saved | None = None

    def __init__(self, path: str | Path, session: str) -> None:
        if isinstance(path, str):
            self._text = path
        else:
            self._text = str(path)
            self._path = path
        self._session = session
        self._warnings: list[str] = []

    @property
    def session(self) -> str:
        return self._session  # a property: ForeignSession makes its id when asked

    @property
    def path(self) -> Path:
        made = self._path
        if made is None:
            made = self._path = Path(self._text)
        return made

    path_text: Forward[str] = Forward("_text")
    stop: Forward[Stop | None] = Forward("_stop")
    warnings: Forward[list[str]] = Forward("_warnings")
    saved: Forward[Saved | None] = Forward("_saved")
