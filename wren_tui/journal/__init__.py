"""Wren's journal: an append-only JSON Lines log of an agent's steps, as a library.

Everything a program needs is importable from here; the submodules are the implementation, and a
name not in `__all__` may change without notice. Each name is loaded on first use, with its module
alone: a program that only reads never loads the code that writes, and one that only finds journals
(`journals_dir`, `resolve`) loads no reader and no event type.

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
import sys
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # each loaded on first use (`__getattr__`): `import wren_tui.journal` alone loads no submodule
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
    from .forking import Forked, ForkPoint, NotAForkPoint, fork, fork_from_lines, fork_points
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
    from .writer import FileOps, FsyncPolicy, JournalWriter

# Each name, and the module it is loaded from on first use (what the type checker sees above), so a program
# loads only the modules of the names it asks for: the event types (msgspec) with an event, the reader with
# `read_events`, the code that writes (the writer, the fork) only with `JournalWriter` or `fork`.
_HOMES: dict[str, str] = {
    **dict.fromkeys(["CallState", "CallTracker", "OpenCall", "ResumeAction"], "calls"),
    **dict.fromkeys(["JournalChanged", "JournalCorrupt", "JournalError", "JournalLocked"], "errors"),
    **dict.fromkeys(["JournalUnusable", "SessionNotFound"], "errors"),
    **dict.fromkeys(["KNOWN_TYPES", "ChatMessage", "Delta", "Error", "Event", "Fork", "KnownEvent"], "events"),
    **dict.fromkeys(["Message", "Recovery", "Rewind", "RunEnd", "RunStart", "Snapshot", "ToolCall"], "events"),
    **dict.fromkeys(["ToolEnd", "ToolStart", "UnknownEvent", "Usage", "describe", "event_type"], "events"),
    "to_builtins": "events",
    **dict.fromkeys(["ForkPoint", "Forked", "NotAForkPoint", "fork", "fork_from_lines", "fork_points"], "forking"),
    "lock_holder": "locks",
    **dict.fromkeys(["EventSink", "Tail", "TailBatch", "decode_line", "read_events", "scan_events"], "reader"),
    **dict.fromkeys(["Replayed", "Replayer", "replay"], "replay"),
    **dict.fromkeys(["SessionInfo", "describe_session", "journals_dir", "latest", "list_sessions"], "store"),
    **dict.fromkeys(["new_session_id", "resolve", "session_id_of"], "store"),
    **dict.fromkeys(["ReadResult", "ReadVerdict", "Stop"], "verdict"),
    **dict.fromkeys(["visible", "visible_text"], "visible"),
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
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # found once; later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Journal(ModuleType):
    """This package, whose `replay` and `visible` are the functions of the submodules of the same names.

    Importing a submodule sets the package's attribute of its name to it; this package keeps those two names
    for the functions (found by `__getattr__`), as they are when every name is imported at once.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, ModuleType) and _HOMES.get(name) == name:
            return  # the import system naming a submodule (`wren_tui.journal.replay`): the name stays the function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Journal
