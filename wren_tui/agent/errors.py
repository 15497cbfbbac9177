"""What the agent raises when it will not or cannot go on, and how a run ended: the command decides the rest.

Each exception's message is the sentence a person reads (the path, what is wrong, what to do).
Which exit status follows, and on which stream the sentence is written, is the command line's
decision (`wren_tui/cli/exits.py`), never the agent's. The journal's own errors
(`wren_tui.journal.errors`) pass through the agent unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..records import Frozen

if TYPE_CHECKING:
    from signal import Signals


class AgentError(Exception):
    """The agent cannot do what was asked: a model that failed, a workspace that is gone or cannot be made."""


class UsageError(AgentError):
    """An option or setting with a value that cannot work (an unknown model, a bad number, a taken id)."""


class ResumeRefused(AgentError):
    """Resume will not guess: a call with side effects started and its outcome is unknown. Nothing was written.

    The message names each such call and the choices (--assume-failed, or a fork).
    """


class WorkspaceGone(AgentError):
    """The folder a session last worked in no longer exists, and no other was named. Nothing was written."""


class WorkspaceUnclear(AgentError):
    """The journal's workspace names no one folder (a relative path) or the whole disk (`/`), and no other
    was named: resume will not guess. Nothing was written."""


class SnapshotStopped(AgentError):
    """The workspace could not be snapshotted, so the call it was for did not run; the run stops (recorded).

    The message is the one sentence of why (a full disk, a workspace that cannot be read).
    """


class SessionFinished(Exception):
    """Nothing to continue: the session is finished (or holds no conversation) and no message was given.

    Not a failure: the message says how to continue it with one.
    """


class Ended(Frozen):
    """How a run, a chat or one of its turns ended, when nothing went wrong: the command maps it to a status.

    Attributes:
        cancelled: It was stopped before its end, and the cancel was recorded.
        signal: The signal that stopped it (SIGINT for Ctrl+C, SIGTERM, SIGHUP), when one did.
    """

    __slots__ = ("cancelled", "signal")
    cancelled: bool
    signal: Signals | None

    def __init__(self, cancelled: bool = False, signal: Signals | None = None) -> None:
        object.__setattr__(self, "cancelled", cancelled)
        object.__setattr__(self, "signal", signal)
