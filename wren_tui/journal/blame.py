"""`wren blame`: for each line of a file, the session's event that last changed it, from the snapshot store.

A session's snapshots are its file's history: the snapshot before a call and the next one bound
what that call changed (an edit tool or a command); between a turn's end snapshot and the next
turn's first, the file changed outside the session (a person's edit); a rewind's snapshot is the
rewind's change. One `git diff-tree --stdin -U0` compares each snapshot of the file with the next
(git's own diff, as `git blame` pairs lines): a line outside a hunk keeps its origin, a line a
hunk puts in is the change's. Lines the first snapshot already held are older than it; lines the
workspace holds that the last snapshot does not (difflib, once) are not snapshotted yet.
"""

from __future__ import annotations

import difflib
import itertools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from .events import Event, Fork, Message, Rewind, Snapshot, ToolStart
from .snapshots import Store


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
    """Each line of the file at `path` (its bytes `now` in the workspace, or as the last snapshot has it).

    One `git diff-tree --stdin -U0` process compares every snapshot with the next at that path (git's
    own diff, as `git blame` uses); its hunks say which lines each change put in.
    """
    changes, gap_first = _kept(store, history(events))
    if not changes:
        return [] if now is None else [(line, UNSNAPSHOTTED) for line in now.splitlines(keepends=True)]
    pairs = "".join(f"{a.tree} {b.tree}\n" for a, b in itertools.pairwise(changes)).encode()
    # One process compares every pair (split in parts a core each, it was slower here: each part reads the
    # trees and packs again); the first and last snapshots' lines are read meanwhile, by one cat-file.
    outs: list[bytes] = []
    errors: list[BaseException] = []

    def compare() -> None:
        try:
            outs.append(_diffs(store, pairs, path))
        except BaseException as exc:  # raised again below, in this thread
            errors.append(exc)

    beside = threading.Thread(target=compare)
    beside.start()  # a git process: the GIL is let go while it runs
    try:
        first, last = _lines_of(store, [changes[0].tree, changes[-1].tree], path)
    finally:
        beside.join()
    if errors:
        raise errors[0]
    out = outs[0]
    origins: list[Origin] = []
    if first is not None:
        origins = [changes[0].origin if gap_first else BEFORE] * len(first)
    index = 0
    hunks: list[tuple[int, int, int, int]] = []
    binary = False

    def settle() -> None:
        nonlocal origins
        if index and binary:  # no lines to pair: every line is the change's
            origins = [changes[index].origin] * len(_lines_at(store, changes[index].tree, path) or [])
        elif index:
            origins = _applied(origins, hunks, changes[index].origin)

    for line in out.split(b"\n"):
        if _PAIR.fullmatch(line):
            settle()
            index, hunks, binary = index + 1, [], False
        elif line.startswith(b"@@ "):
            found = _HUNK.match(line)
            if found:
                a, b, c, d = (int(g) if g is not None else 1 for g in found.groups())
                hunks.append((a, b, c, d))
        elif line.startswith(b"Binary files "):
            binary = True
    settle()
    lines = list(zip(last or [], origins, strict=False))
    if now is not None:
        lines = _carry(lines, now.splitlines(keepends=True), UNSNAPSHOTTED)
    return lines


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


def _kept(store: Store, changes: list[Change]) -> tuple[list[Change], bool]:
    """The changes whose snapshots the store still holds; the first after a thinned one says `thinned`.

    A prune that keeps the store within its budget may drop snapshots (`journal.budget`): what changed
    between the kept ones is then known only to lie between them, and its lines say so. The flag: the
    session's first snapshots were thinned (the first kept one's lines are not older than the session).
    """
    present = store.present(c.tree for c in changes)
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


_PAIR = re.compile(rb"[0-9a-f]{40,64} [0-9a-f]{40,64}")
_HUNK = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _applied(old: list[Origin], hunks: list[tuple[int, int, int, int]], origin: Origin) -> list[Origin]:
    """The origins after a change whose hunks (-U0: old start and count, new start and count) are `hunks`."""
    new: list[Origin] = []
    at = 0
    for a, b, _c, d in hunks:
        start = a - 1 if b else a  # an empty old range sits after line a
        new.extend(old[at:start])
        new.extend([origin] * d)
        at = start + b
    new.extend(old[at:])
    return new


def _diffs(store: Store, pairs: bytes, path: bytes) -> bytes:
    """`git diff-tree --stdin -p -U0` of each pair ("A B\\n" lines) at `path`: each pair's line, then its hunks."""
    if not pairs:
        return b""
    return store.git(
        "diff-tree", "--stdin", "-r", "-p", "-U0", "--no-renames", "--no-color", "--no-ext-diff", "--full-index",
        "--", path.decode("utf-8", "surrogateescape"), input=pairs,
    )  # fmt: skip


def _lines_of(store: Store, trees: list[str], path: bytes) -> list[list[bytes] | None]:
    """The lines of the file at `path` in each tree (None where it has no such file), by one `cat-file --batch`."""
    name = path.decode("utf-8", "surrogateescape")
    asked = "".join(f"{tree}:{name}\n" for tree in trees).encode("utf-8", "surrogateescape")
    out = store.git("cat-file", "--batch", input=asked)
    found: list[list[bytes] | None] = []
    at = 0
    for _ in trees:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) != 3 or not header[2].isdigit():  # "NAME missing" (or ambiguous): no object follows
            found.append(None)
            at = end + 1
            continue
        size = int(header[2])
        body = out[end + 1 : end + 1 + size]
        found.append(body.splitlines(keepends=True) if header[1] == b"blob" else None)  # a folder there: no file
        at = end + 1 + size + 1
    return found


def _lines_at(store: Store, tree: str, path: bytes) -> list[bytes] | None:
    name = path.decode("utf-8", "surrogateescape")
    found = store.git("cat-file", "--batch", input=f"{tree}:{name}\n".encode("utf-8", "surrogateescape"))
    header, _, rest = found.partition(b"\n")
    if header.endswith(b" missing") or b" blob " not in header:
        return None
    size = int(header.split()[2])
    return rest[:size].splitlines(keepends=True)


def _carry(old: list[tuple[bytes, Origin]], new: list[bytes], origin: Origin) -> list[tuple[bytes, Origin]]:
    """The lines of `new`: those equal to one of `old` (as a diff pairs them) keep its origin, the rest get `origin`."""
    matcher = difflib.SequenceMatcher(None, [text for text, _ in old], new, autojunk=False)
    result: list[tuple[bytes, Origin]] = []
    for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
        for k in range(j1, j2):
            result.append((new[k], old[i1 + k - j1][1] if tag == "equal" else origin))
    return result


__all__ = ["BEFORE", "UNSNAPSHOTTED", "Change", "FileLines", "NotKnown", "Origin", "blame", "call_lines", "history"]
