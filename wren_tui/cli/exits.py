"""Exit statuses, and the one table from what went wrong to the status `wren` exits with and what it says.

Commands, the agent, the viewer and the journal raise; `wren_tui.cli.main` looks the exception up
here once (the most specific class in the table wins), writes the sentence on stderr (on stdout
for the one thing that is not a failure, a session with nothing to continue), and exits with the
status. An exception that is not in the table is a bug: its traceback is shown as it is.
"""

from __future__ import annotations

import signal
import sys
from enum import IntEnum
from pathlib import Path

from ..agent.errors import AgentError, Ended, ResumeRefused, SessionFinished, UsageError
from ..journal.errors import (
    JournalChanged,
    JournalCorrupt,
    JournalError,
    JournalLocked,
    JournalUnusable,
    NotASession,
)
from ..journal.verdict import Stop
from ..journal.visible import visible_text
from ..portable import SIGHUP_NUMBER
from .console import err, out


class Exit(IntEnum):
    """The statuses `wren` exits with (the README's table)."""

    OK = 0
    ERROR = 1
    USAGE = 2
    REFUSED = 3  # resume will not guess a side-effecting call's outcome
    UNREADABLE = 4  # the journal cannot be read past a line
    JOURNAL_CHANGED = 5  # the journal was deleted, moved, replaced or written by another program under the run
    # Stopped by a signal, the cancel recorded: 128 + its number, as a shell reports it.
    HANGUP = 128 + SIGHUP_NUMBER  # 129: where there is no SIGHUP (Windows) nothing exits so
    INTERRUPTED = 128 + signal.SIGINT
    TERMINATED = 128 + signal.SIGTERM

    @classmethod
    def stopped_by(cls, sig: signal.Signals) -> Exit:
        """The status of a command a signal stopped (SIGHUP, SIGINT or SIGTERM: the ones `wren` handles)."""
        return cls(128 + sig.value)

    @classmethod
    def of(cls, ended: Ended) -> Exit:
        """The status of a run or a chat that ended without an error."""
        if not ended.cancelled:
            return cls.OK
        return cls.stopped_by(ended.signal) if ended.signal is not None else cls.INTERRUPTED


class Unreadable(Exception):
    """A journal a command needs whole stops before its end: it exits 4 with where and why.

    Attributes:
        where: The journal's path (or a nats:// reference: `local` is then False).
        stop: Where reading stops and why.
        more: Lines the command adds after the sentence (a fork's valid points), or "".
        done: What the command did all the same (an export written), instead of "Nothing was written."
    """

    def __init__(self, where: str | Path, stop: Stop, more: str = "", *, local: bool = True, done: str = "") -> None:
        self.where, self.stop, self.more, self.local = str(where), stop, more, local
        said = stop_said(self.where, stop, local=local, done=done or NOTHING_WRITTEN)
        super().__init__(said + (f"\n{more}" if more else ""))


class ForeignUnreadable(Unreadable):
    """Another agent's session file stops before its end (exit 4): it is only read, so nothing sets its tail aside."""

    def __init__(self, where: str | Path, stop: Stop) -> None:
        super().__init__(where, stop)
        if stop.torn:
            self.args = (
                f"{self.where}: {stop}; its writer may still be writing that line (another agent's file is only "
                "read, never changed): read it again once the line ends.",
            )
        else:
            import shlex  # only to say a command to run

            fork = shlex.join(["wren", "fork", self.where])
            self.args = (
                f"{self.where}: {stop}. Nothing after it is read (another agent's file is only read, never changed); "
                f"fork it into Wren from a point before that line (`{fork}` lists them).",
            )


class CommandFailed(Exception):
    """A command did not do what was asked, for the reason its message gives (exit 1)."""


# Exception class -> status; the most specific class of an exception's MRO that is here decides.
EXITS: dict[type[BaseException], Exit] = {
    SessionFinished: Exit.OK,  # its sentence says how to continue: on stdout
    BrokenPipeError: Exit.OK,  # the reader of the output left (`wren log ID | head`): nothing to say
    UsageError: Exit.USAGE,
    ResumeRefused: Exit.REFUSED,
    Unreadable: Exit.UNREADABLE,
    ForeignUnreadable: Exit.UNREADABLE,  # another agent's file: its torn tail is said otherwise
    JournalCorrupt: Exit.UNREADABLE,
    NotASession: Exit.UNREADABLE,  # neither a Wren journal nor another agent's session Wren reads
    JournalChanged: Exit.JOURNAL_CHANGED,
    KeyboardInterrupt: Exit.INTERRUPTED,
    JournalError: Exit.ERROR,  # JournalLocked, SessionNotFound, JournalUnusable, FleetError...
    AgentError: Exit.ERROR,  # GatewayError, WorkspaceGone, WorkspaceUnclear, WorkspaceError
    CommandFailed: Exit.ERROR,
    OSError: Exit.ERROR,
}


# The same for the errors of modules a command may never load (`wren search` neither exports nor forks), by
# where they are defined: an exception of a module that was not imported cannot have been raised, and every
# command is spared importing them (`wren_tui.export` and `journal.forking`: about 6 ms of each start).
LAZY_EXITS: dict[tuple[str, str], Exit] = {
    ("wren_tui.journal.forking", "NotAForkPoint"): Exit.USAGE,  # (a point past where the journal stops: Unreadable)
    ("wren_tui.export.atomic", "ExportRefused"): Exit.ERROR,  # no such folder, a .jsonl name, the journal, a link
}


def exit_for(exc: BaseException) -> Exit | None:
    """The status for `exc`, or None when it is not in the table (a bug, or SystemExit)."""
    for cls in type(exc).__mro__:
        status = EXITS.get(cls)
        if status is None:
            status = LAZY_EXITS.get((cls.__module__, cls.__qualname__))
        if status is not None:
            return status
    return None


def report(exc: BaseException) -> Exit | None:
    """Say `exc` once (stderr; stdout when it is no failure) and give its status; None when it is not in the table."""
    status = exit_for(exc)
    if status is None:
        return None
    text = said(exc)
    if text is not None:
        if status is Exit.OK:
            out(visible_text(text))
        else:
            err(text)
    return status


def _fork_point_said(exc: JournalError) -> str | None:
    """What is said of a point that is no fork point before where the journal stops (None: the message alone)."""
    if "wren_tui.journal.forking" not in sys.modules:
        return None  # not imported, so not raised (LAZY_EXITS)
    from ..journal.forking import NotAForkPoint

    if isinstance(exc, NotAForkPoint) and exc.stop is not None and not exc.stop.torn:
        # The points listed end where reading does: say so, or the list reads as complete.
        return f"{exc}\nReading stops at {exc.stop}; points after it cannot be read."
    return None


def said(exc: BaseException) -> str | None:
    """The sentence `wren` writes for `exc` (None: nothing, for a reader that left)."""
    match exc:
        case BrokenPipeError():
            return None
        case JournalCorrupt():
            return stop_said(str(exc.path), exc.stop)
        case JournalLocked():
            # Only a command that appends takes the lock: resume and chat --resume.
            return (
                f"{exc.path}: {exc.who} is still writing this session; wait for it to finish (or stop it), "
                "then resume. Nothing was written."
            )
        case JournalChanged():
            return f"{exc}."
        case JournalUnusable():
            return f"{str(exc).rstrip('.')}. The run stopped; nothing more was recorded."
        case JournalError() if (text := _fork_point_said(exc)) is not None:
            return text
        case KeyboardInterrupt():
            return "interrupted"
        case OSError() if not isinstance(exc, JournalError):
            # The last resort: commands name their own folder problems; any other is still one sentence.
            where = f"{exc.filename}: " if exc.filename else ""
            return f"{where}{exc.strerror or exc}; check the path and its permissions, then try again"
    return str(exc)


NOTHING_WRITTEN = "Nothing was written."


def stop_said(where: str, stop: Stop, *, local: bool = True, done: str = NOTHING_WRITTEN) -> str:
    """The one sentence for a journal that stops before its end, whichever command read it.

    It names the line once and what to do: a corrupt journal is read with `wren log` and forked
    from a clean point before the damage (`wren fork` lists them); a torn tail is a crash's normal
    end, which resume sets aside.
    """
    if stop.torn:
        return f"{where}: {stop}; this torn tail is the normal end of a crash, and resuming the session sets it aside."
    if not local:
        return f"{where}: {stop}. Nothing after it is read; fork the journal on its own machine from a point before it."
    import shlex

    log, fork = shlex.join(["wren", "log", where]), shlex.join(["wren", "fork", where])
    return (
        f"{where}: {stop}. {done} Read it with `{log}`, then fork from a point before that line (`{fork}` lists them)."
    )
