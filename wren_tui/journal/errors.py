"""Everything that can go wrong with a journal, as exceptions a caller can tell apart.

Each message is a sentence a person can act on: the path, what is wrong, what to do. Which exit
status or screen follows is the caller's decision, never the journal's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .verdict import Stop


class JournalError(Exception):
    """A journal could not be opened, read, listed or written (missing, not a file, no permission...)."""


class SessionNotFound(JournalError):
    """No journal answers to the id or path a person gave."""


class NotASession(JournalError):
    """A file that is neither a Wren journal nor a session of an agent Wren reads: refused, never guessed at.

    Attributes:
        path: The file.
        opens: What Wren opens, as a person reads it ("a Wren journal or a session of Claude Code, ...").
    """

    def __init__(self, path: Path | str, opens: str, why: str = "none of its first lines is of their kinds") -> None:
        self.path = path
        super().__init__(f"{path}: not {opens} ({why}), so Wren does not read it")


class JournalCorrupt(JournalError):
    """The journal has a bad line before its end; appending after it would bury the damage.

    Attributes:
        path: The journal.
        stop: Where reading stopped and why (never torn: a torn tail is set aside, not refused).
    """

    def __init__(self, path: Path, stop: Stop) -> None:
        super().__init__(
            f"{path}: {stop}. Nothing was written. Read it with `wren log`, then fork from a "
            f"point before line {stop.line} or move the file aside."
        )
        self.path, self.stop = path, stop


class JournalLocked(JournalError):
    """Another process holds the journal's write lock: there is never a second writer.

    Attributes:
        path: The journal.
        holder: The pid holding the lock, when the system says (None otherwise).
    """

    def __init__(self, path: Path, holder: int | None) -> None:
        self.path, self.holder = path, holder
        super().__init__(
            f"{path}: {self.who} is writing this journal; only one writer at a time. Wait for it to end, "
            "or fork the journal to continue on a new branch."
        )

    @property
    def who(self) -> str:
        """The writer as a sentence names it: "process 1234", or "another process"."""
        return f"process {self.holder}" if self.holder is not None else "another process"


class JournalUnusable(JournalError):
    """A write or fsync failed; the journal refuses further appends from this writer."""


class JournalChanged(JournalUnusable):
    """The journal was deleted, moved, replaced or written by another program under this writer."""
