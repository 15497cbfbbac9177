"""Wren's journal: an append-only JSON Lines log of an agent's steps, as a library.

Everything a program needs is importable from here; the submodules are the implementation, and a
name not in `__all__` may change without notice. The writer and the fork are loaded on first use,
so a program that only reads never loads the code that writes.

- Open and append: `JournalWriter.create(path)` for a new journal, `JournalWriter.open(path)` for an
  existing one (one writer at a time; a torn tail is set aside, corruption refused), then
  `append(event)`: durable on return, stamped with the next seq.
- Read: `read_events(path)` keeps every good event; `scan_events(path, sink)` streams them and keeps
  none. Both return a `ReadVerdict` whose `stop` (a `Stop`) says where and why reading ended.
- Tail: `Tail(path).read()` returns what was added since the last read.
- One line met elsewhere (a copy shipped away): `decode_line(line)` checks it as the reader checks
  a line of a file, and says why not with a `JournalError`.
- Fork: `fork_points(events)` lists the clean points, `fork(path, seq)` starts a new journal there;
  `fork_from_lines(lines, seq, parent=ID, folder=DIR)` does the same from a parent's lines held in memory.
- Replay: `replay(events)` (or a `Replayer` fed in runs) rebuilds the conversation and the calls
  left open; `CallTracker` is the rule behind it, and behind the clean points.
- List: `list_sessions(folder)` gives each journal's `SessionInfo`; `journals_dir()` is the default
  folder, `resolve(folder, ref)` turns an id or a path into a journal.

Every failure is a `JournalError` subclass whose message is a sentence a person can act on.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .calls import CallState, CallTracker, OpenCall, ResumeAction
from .errors import JournalChanged, JournalCorrupt, JournalError, JournalLocked, JournalUnusable, SessionNotFound
from .events import (
    KNOWN_TYPES,
    ChatMessage,
    Delta,
    Error,
    Event,
    Fork,
    KnownEvent,
    Message,
    Recovery,
    Rewind,
    RunEnd,
    RunStart,
    Snapshot,
    ToolCall,
    ToolEnd,
    ToolStart,
    UnknownEvent,
    Usage,
    describe,
    event_type,
    to_builtins,
)
from .locks import lock_holder
from .reader import EventSink, Tail, TailBatch, decode_line, read_events, scan_events
from .replay import Replayed, Replayer, replay
from .store import (
    SessionInfo,
    describe_session,
    journals_dir,
    latest,
    list_sessions,
    new_session_id,
    resolve,
    session_id_of,
)
from .verdict import ReadResult, ReadVerdict, Stop
from .visible import visible, visible_text

if TYPE_CHECKING:
    from .forking import Forked, ForkPoint, NotAForkPoint, fork, fork_from_lines, fork_points
    from .writer import FileOps, FsyncPolicy, JournalWriter

# The code that writes is loaded on first use, so a program that only reads (the viewer until it
# forks, `wren log`) never loads it. Each such name, and its module:
_WRITING: dict[str, str] = {
    **dict.fromkeys(["ForkPoint", "Forked", "NotAForkPoint", "fork", "fork_from_lines", "fork_points"], "forking"),
    **dict.fromkeys(["FileOps", "FsyncPolicy", "JournalWriter"], "writer"),
}

__all__ = [
    "KNOWN_TYPES",
    "CallState",
    "CallTracker",
    "ChatMessage",
    "Delta",
    "Error",
    "Event",
    "EventSink",
    "FileOps",
    "Fork",
    "ForkPoint",
    "Forked",
    "FsyncPolicy",
    "JournalChanged",
    "JournalCorrupt",
    "JournalError",
    "JournalLocked",
    "JournalUnusable",
    "JournalWriter",
    "KnownEvent",
    "Message",
    "NotAForkPoint",
    "OpenCall",
    "ReadResult",
    "ReadVerdict",
    "Recovery",
    "Replayed",
    "Replayer",
    "ResumeAction",
    "Rewind",
    "RunEnd",
    "RunStart",
    "SessionInfo",
    "SessionNotFound",
    "Snapshot",
    "Stop",
    "Tail",
    "TailBatch",
    "ToolCall",
    "ToolEnd",
    "ToolStart",
    "UnknownEvent",
    "Usage",
    "decode_line",
    "describe",
    "describe_session",
    "event_type",
    "fork",
    "fork_from_lines",
    "fork_points",
    "journals_dir",
    "latest",
    "list_sessions",
    "lock_holder",
    "new_session_id",
    "read_events",
    "replay",
    "resolve",
    "scan_events",
    "session_id_of",
    "to_builtins",
    "visible",
    "visible_text",
]


def __getattr__(name: str) -> object:
    home = _WRITING.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # found once; later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
