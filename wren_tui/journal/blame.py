"""`wren blame`: for each line of a file, the session's event that last changed it, from the snapshot store.

A session's snapshots are its file's history: the snapshot before a call and the next one bound
what that call changed (an edit tool or a command); between a turn's end snapshot and the next
turn's first, the file changed outside the session (a person's edit); a rewind's snapshot is the
rewind's change. The versions of the file (one `git cat-file --batch-check` for all snapshots, one
`--batch` for their bytes) are compared in turn, line by line (difflib, as a unified diff sees
them): a line the same as one before keeps its origin, any other line is the change's. Lines the
first snapshot already held are older than it; lines the workspace holds that the last snapshot
does not are not snapshotted yet.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from .events import Event, Fork, Message, Rewind, Snapshot, ToolStart
from .snapshots import Store


@dataclass(frozen=True)
class Origin:
    """What last changed a line: `kind` is edit, command, tool, rewind, outside, before or unsnapshotted."""

    kind: str
    seq: int | None = None  # the call's tool_start (or the rewind, or the snapshot after an outside change)
    ts: str = ""
    turn: int | None = None
    call: str | None = None  # the call's id
    tool: str | None = None
    what: str = ""  # the command or the edited path, as the model asked


BEFORE = Origin("before")
UNSNAPSHOTTED = Origin("unsnapshotted")
_EDITS = frozenset({"write_file", "edit_file"})
_COMMANDS = frozenset({"run_command"})


@dataclass(frozen=True)
class Change:
    """One snapshot in the session's history, and what changed the files between the one before and it."""

    tree: str
    origin: Origin


def history(events: Sequence[Event]) -> list[Change]:
    """The session's snapshots in order, each with the origin of what changed since the one before it."""
    starts = {e.id: e for e in events if isinstance(e, ToolStart)}
    asked: dict[str, str] = {}
    turn = 0
    turns: dict[int, int] = {}
    for event in events:
        if isinstance(event, Message):
            if event.message.role == "user":
                turn += 1
            for call in event.message.tool_calls or ():
                asked[call.id] = call.args
        turns[event.seq] = turn
    found: list[Change] = []
    pending: Origin | None = None  # the call the last snapshot preceded
    for event in events:
        if isinstance(event, Snapshot) and event.id:
            origin = pending or Origin("outside", event.seq, event.ts, turns.get(event.seq))
            found.append(Change(event.id, origin if found else BEFORE))
            pending = None
            if event.before is not None and event.before in starts:
                start = starts[event.before]
                kind = "edit" if start.name in _EDITS else "command" if start.name in _COMMANDS else "tool"
                pending = Origin(
                    kind, start.seq, start.ts, turns.get(start.seq), start.id, start.name, asked.get(start.id, "")
                )
        elif isinstance(event, Rewind):
            found.append(Change(event.snapshot, Origin("rewind", event.seq, event.ts, turns.get(event.seq))))
            pending = None
        elif isinstance(event, Fork) and event.snapshot:
            found.append(Change(event.snapshot, BEFORE if not found else Origin("rewind", event.seq, event.ts)))
            pending = None
    return found


def blame(store: Store, events: Sequence[Event], path: bytes, now: bytes | None) -> list[tuple[bytes, Origin]]:
    """Each line of the file at `path` (its bytes `now` in the workspace, or as the last snapshot has it)."""
    changes = history(events)
    name = path.decode("utf-8", "surrogateescape")
    asked = "".join(f"{c.tree}:{name}\n" for c in changes).encode("utf-8", "surrogateescape")
    found = store.git("cat-file", "--batch-check", input=asked).splitlines() if changes else []
    oids = [_blob(line) for line in found]
    contents = _contents(store, [o for o in oids if o])
    lines: list[tuple[bytes, Origin]] = []
    previous: str | None = None
    for change, oid in zip(changes, oids, strict=True):
        if oid == previous:
            continue
        if oid is None:
            lines = []  # deleted: a file made again later is all new
        else:
            text = contents[oid].splitlines(keepends=True)
            lines = _carry(lines, text, change.origin)
        previous = oid
    if now is not None:
        lines = _carry(lines, now.splitlines(keepends=True), UNSNAPSHOTTED)
    return lines


def _blob(line: bytes) -> str | None:
    """The object id of a `cat-file --batch-check` answer, when it names a blob (a file or a link) at that path."""
    if line.endswith(b" missing"):
        return None
    parts = line.split()
    return parts[0].decode() if len(parts) == 3 and parts[1] == b"blob" else None


def _carry(old: list[tuple[bytes, Origin]], new: list[bytes], origin: Origin) -> list[tuple[bytes, Origin]]:
    """The lines of `new`: those equal to one of `old` (as a diff pairs them) keep its origin, the rest get `origin`."""
    matcher = difflib.SequenceMatcher(None, [text for text, _ in old], new, autojunk=False)
    result: list[tuple[bytes, Origin]] = []
    for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
        for k in range(j1, j2):
            result.append((new[k], old[i1 + k - j1][1] if tag == "equal" else origin))
    return result


def _contents(store: Store, oids: list[str]) -> dict[str, bytes]:
    if not oids:
        return {}
    out = store.git("cat-file", "--batch", input=("\n".join(dict.fromkeys(oids)) + "\n").encode())
    found: dict[str, bytes] = {}
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        oid, _kind, size = out[at:end].split()
        found[oid.decode()] = out[end + 1 : end + 1 + int(size)]
        at = end + 1 + int(size) + 1
    return found


__all__ = ["BEFORE", "UNSNAPSHOTTED", "Change", "Origin", "blame", "history"]
