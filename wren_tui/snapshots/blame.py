"""`wren blame`: for each line of a file, the session's event that last changed it, from the snapshot store.

A session's snapshots are its file's history: the snapshot before a call and the next one bound
what that call changed (an edit tool or a command); between a turn's end snapshot and the next
turn's first, the file changed outside the session (a person's edit); a rewind's snapshot is the
rewind's change. Each version of the file is compared with the next by a minimal line diff
(`linediff`, as `git blame` pairs lines): a line outside a hunk keeps its origin, a line a hunk
puts in is the change's. Lines the first snapshot already held are older than it; lines the
workspace holds that the last snapshot does not (the same diff, once) are not snapshotted yet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..journal.events import Event, Fork, Message, Rewind, Snapshot, ToolStart
from .linediff import apply, count_lines, lines_of
from .linediff import changes as changes_between
from .store import EDIT_TOOLS, SHELL_TOOLS, ObjectReader, Store


@dataclass(frozen=True)
class Origin:
    """What last changed a line: `kind` is edit, command, tool, rewind, outside, before, unsnapshotted or thinned.

    thinned: changed between two snapshots the store kept, the ones in between dropped to keep it within its
    budget; `seq` is the later kept snapshot's event.
    """

    kind: str
    seq: int | None = None  # the call's tool_start (or the rewind, or the snapshot after an outside change)
    ts: str = ""
    turn: int | None = None
    call: str | None = None  # the call's id
    tool: str | None = None
    what: str = ""  # the command or the edited path, as the model asked


BEFORE = Origin("before")
UNSNAPSHOTTED = Origin("unsnapshotted")


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
                kind = "edit" if start.name in EDIT_TOOLS else "command" if start.name in SHELL_TOOLS else "tool"
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
    """Each line of the file at `path` (its bytes `now` in the workspace, or as the last snapshot has it).

    One `git cat-file --batch-command` says which snapshots the store holds and which version of the file
    each has, then reads each version once; each is compared with the one before while git reads the
    next (`linediff`: a minimal line diff, as `git blame` pairs lines).
    """
    changes = history(events)
    if not changes:
        return [] if now is None else [(line, UNSNAPSHOTTED) for line in lines_of(now)]
    with store.reader() as reader:
        origins, data = _origins(reader, changes, path)
    last = data or b""
    if now is not None and now != last:
        return _carry(origins, last, now, UNSNAPSHOTTED)
    return list(zip(lines_of(last), origins, strict=True))


def _origins(reader: ObjectReader, changes: list[Change], path: bytes) -> tuple[list[Origin], bytes | None]:
    """Each line's origin in the last kept snapshot of the file at `path`, and that version's bytes (None: no file).

    `reader` says what each snapshot holds at `path` (and, where it holds nothing, whether the snapshot is in
    the store at all: thinned ones are not), then reads the versions.
    """
    trees = list(dict.fromkeys(c.tree for c in changes))
    name = path.decode("utf-8", "surrogateescape")
    at_path = dict(zip(trees, reader.kinds([f"{tree}:{name}" for tree in trees]), strict=True))
    unknown = [tree for tree, kind in at_path.items() if kind is None]  # no such file there, or no such tree
    present = {tree for tree, kind in at_path.items() if kind is not None}
    present.update(t for t, kind in zip(unknown, reader.kinds(unknown), strict=True) if kind and kind[1] == "tree")
    blobs = {tree: kind[0] for tree, kind in at_path.items() if kind and kind[1] == "blob"}  # a folder there: no file
    changes, gap_first = _kept(present, changes)
    versions = [blobs.get(c.tree) for c in changes]
    # Each version read once, in order: a version the file did not change is not read again.
    wanted = [oid for oid, before in zip(versions, [None, *versions], strict=False) if oid and oid != before]
    read = iter(reader.contents(wanted))
    origins: list[Origin] = []
    data: bytes | None = None
    binary = False
    for at, (change, oid) in enumerate(zip(changes, versions, strict=True)):
        if at and oid == versions[at - 1]:
            continue
        if oid is None:  # no such file in this snapshot
            origins, data = [], None
            continue
        before, was_binary = data, binary
        data = next(read) or b""
        binary = data.find(b"\0", 0, _FIRST_FEW) != -1  # as git decides a file is binary
        if not at:
            origins = [change.origin if gap_first else BEFORE] * count_lines(data)
        elif before is None or binary or was_binary:  # made anew, or no lines to pair: every line is the change's
            origins = [change.origin] * count_lines(data)
        else:
            origins = apply(origins, changes_between(before, data), change.origin)
    next(read, None)  # the last round's end: git is waited for
    return origins, data


@dataclass(frozen=True)
class FileLines:
    """One file a call changed: the lines it added or changed, numbered as the file stood after the call."""

    path: bytes
    status: str  # added, changed or deleted
    lines: list[tuple[int, bytes]]  # (line number after the call, the line); none for a deletion or binary file
    removed: int  # lines the call took out or replaced
    binary: bool = False


class NotKnown(Exception):
    """The store cannot say what a call changed (its snapshots thinned, not taken yet, or none): one sentence."""


def call_lines(store: Store, events: Sequence[Event], call: str) -> list[FileLines]:
    """What one call (its id) changed in each file: the snapshot before it and the next one, compared by git.

    The pair is the one `history` names (the snapshot a call's tool_start follows, and the session's
    next); the lines are git's own `-U0` hunks, the new side's.

    Raises:
        NotKnown: no such pair in the store (one sentence, why).
        SnapshotError: the store could not be read.
    """
    changes = history(events)
    at = next((i for i, c in enumerate(changes) if c.origin.call == call), None)
    if at is None:
        before = any(isinstance(e, Snapshot) and e.id and e.before == call for e in events)
        if before:
            raise NotKnown("the snapshot after this call is not taken yet (the next call or the turn's end takes it)")
        if not any(isinstance(e, Snapshot) and e.id for e in events):
            raise NotKnown("this session has no snapshots, so what the call changed is not known")
        raise NotKnown("no snapshot was taken before this call (it changes no files, or snapshots were off)")
    a, b = changes[at - 1].tree, changes[at].tree
    if not store.exists() or {a, b} - store.present([a, b]):
        raise NotKnown("the snapshots around this call were thinned from the store to keep it within its budget")
    out = store.git(
        "diff-tree", "-r", "-p", "-U0", "--no-renames", "--no-color", "--no-ext-diff", a, b
    )  # fmt: skip
    return _file_lines(out)


_NEW_LINE = re.compile(rb"@@ -\d+(?:,(\d+))? \+(\d+)(?:,\d+)? @@")


def _file_lines(patch: bytes) -> list[FileLines]:
    """Each file of a `-U0` patch: the lines its hunks put in, numbered on the new side."""
    found: list[FileLines] = []
    lines: list[tuple[int, bytes]] = []
    path, header, status, removed, binary = b"", b"", "changed", 0, False
    number = 0
    in_hunks = False  # past the file's first @@: a line starting "+++ " is then a line put in

    def done() -> None:
        name = path or _same_path(header)
        if name:
            found.append(FileLines(name, status, lines, removed, binary))

    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            done()
            path, header, status, lines, removed, binary = b"", line, "changed", [], 0, False
            in_hunks = False
        elif line.startswith(b"@@ "):
            hunk = _NEW_LINE.match(line)
            number = int(hunk[2]) if hunk else 0
            in_hunks = True
        elif in_hunks and line.startswith(b"+"):
            lines.append((number, line[1:] + b"\n"))
            number += 1
        elif in_hunks and line.startswith(b"-"):
            removed += 1
        elif in_hunks:
            continue
        elif line.startswith(b"new file mode"):
            status = "added"
        elif line.startswith(b"deleted file mode"):
            status = "deleted"
        elif line.startswith(b"--- ") and line != b"--- /dev/null":
            path = _unquoted(_untabbed(line[4:])).removeprefix(b"a/")
        elif line.startswith(b"+++ ") and line != b"+++ /dev/null":
            path = _unquoted(_untabbed(line[4:])).removeprefix(b"b/")
        elif line.startswith(b"Binary files "):
            binary = True
    done()
    return found


def _untabbed(name: bytes) -> bytes:
    """A ---/+++ name without the tab git puts after a name with a space in it (for patch programs)."""
    return name[:-1] if name.endswith(b"\t") and b" " in name else name


def _same_path(header: bytes) -> bytes:
    """The path of "diff --git a/X b/X" (a file whose patch has no ---/+++ lines: binary, or its mode only)."""
    rest = _unquoted_pair(header.removeprefix(b"diff --git "))
    half = (len(rest) - 1) // 2
    if rest[:2] == b"a/" and rest[half : half + 3] == b" b/" and rest[2:half] == rest[half + 3 :]:
        return rest[2:half]
    return b""


def _unquoted_pair(text: bytes) -> bytes:
    if not text.startswith(b'"'):
        return text
    first, _, second = text[1:].partition(b'" ')
    return _unquoted(b'"' + first + b'"') + b" " + _unquoted(second)


def _unquoted(name: bytes) -> bytes:
    """A path as git's patch header writes it: quoted in C style when it holds unusual bytes."""
    if not name.startswith(b'"'):
        return name
    body = name[1:-1]
    return body.decode("unicode_escape").encode("latin-1")


def _kept(present: set[str], changes: list[Change]) -> tuple[list[Change], bool]:
    """The changes whose snapshots the store still holds; the first after a thinned one says `thinned`.

    A prune that keeps the store within its budget may drop snapshots (`snapshots.budget`): what changed
    between the kept ones is then known only to lie between them, and its lines say so. The flag: the
    session's first snapshots were thinned (the first kept one's lines are not older than the session).
    """
    kept: list[Change] = []
    gap = False
    gap_first = False
    for change in changes:
        if change.tree not in present:
            gap = True
            continue
        if gap:
            was = change.origin
            change = Change(change.tree, Origin("thinned", was.seq, was.ts, was.turn))
            gap_first = gap_first or not kept
        kept.append(change)
        gap = False
    return kept, gap_first


# git reads this many first bytes of a file for a NUL: one there, and the file is binary to its diff.
_FIRST_FEW = 8000


def _carry(origins: list[Origin], was: bytes, now: bytes, origin: Origin) -> list[tuple[bytes, Origin]]:
    """The lines of `now`: those a diff pairs with a line of `was` keep its origin (in `origins`), the rest `origin`."""
    return list(zip(lines_of(now), apply(origins, changes_between(was, now), origin), strict=True))


__all__ = ["BEFORE", "UNSNAPSHOTTED", "Change", "FileLines", "NotKnown", "Origin", "blame", "call_lines", "history"]
