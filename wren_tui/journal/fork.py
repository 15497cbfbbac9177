"""Forking: a new session from a clean point of a parent, by a byte-prefix copy; the parent untouched."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .events import Event, Fork, Message
from .reader import JournalError, Lines, open_for_reading, read_events, scan_events
from .store import SUFFIX, new_session_id, session_id_of
from .writer import FileOps, encode_line, now_ts, write_all

_PREVIEW = 60


@dataclass(frozen=True)
class ForkPoint:
    seq: int
    role: str
    preview: str

    def __str__(self) -> str:
        return f"{self.seq}  {self.role}: {self.preview}"


@dataclass(frozen=True)
class Forked:
    id: str
    path: Path
    parent: str
    at_seq: int


class NotAForkPoint(JournalError):
    def __init__(self, path: Path, seq: int, points: list[ForkPoint]) -> None:
        listing = "\n".join(f"  {p}" for p in points) or "  (none: the journal has no clean point yet)"
        super().__init__(
            f"{path}: seq {seq} is not a clean fork point (only after a user message, or an assistant "
            f"message with no tool calls, with no tool call open). Valid points:\n{listing}"
        )
        self.seq, self.points = seq, points


def preview(text: str, width: int = _PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def fork_points(events: Iterable[Event]) -> list[ForkPoint]:
    """Clean boundaries: after a user message or a tool-free assistant message, no call open."""
    points: list[ForkPoint] = []
    open_calls: set[str] = set()
    for event in events:
        if not isinstance(event, Message):
            continue
        msg = event.message
        if msg.role == "tool":
            if msg.toolCallId is not None:
                open_calls.discard(msg.toolCallId)
            continue
        if msg.toolCalls:
            open_calls.update(call.id for call in msg.toolCalls)
            continue
        if not open_calls:
            points.append(ForkPoint(event.seq, msg.role, preview(msg.content)))
    return points


def fork(parent: str | os.PathLike[str], seq: int, *, folder: Path | None = None, ops: FileOps | None = None) -> Forked:
    """Copy the parent's bytes through the line of `seq` into a new journal and record the fork.

    The copy goes to a temporary name, is fsynced, then renamed and the folder fsynced, so a crash
    leaves either no fork or a whole one. Seq numbers are kept; the parent is only read.
    """
    parent, ops = Path(parent), ops or FileOps()
    folder = folder or parent.parent
    prefix_len = _clean_line_end(parent, seq)
    if prefix_len is None:
        raise NotAForkPoint(parent, seq, fork_points(read_events(parent).events))
    parent_id = session_id_of(parent)
    new_id = new_session_id()
    while (folder / f"{new_id}{SUFFIX}").exists():
        new_id = new_session_id()
    final = folder / f"{new_id}{SUFFIX}"
    tmp = folder / f".{new_id}{SUFFIX}.tmp"
    out = ops.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        src = open_for_reading(parent)
        try:
            _copy_prefix(src, out, prefix_len, ops)
        finally:
            os.close(src)
        fork_event = Fork(from_=parent_id, atSeq=seq)
        write_all(ops, out, encode_line(fork_event, seq + 1, now_ts()))
        ops.fsync(out)
    except BaseException:
        ops.close(out)
        tmp.unlink(missing_ok=True)
        raise
    ops.close(out)
    ops.rename(tmp, final)
    ops.fsync_dir(folder)
    return Forked(new_id, final, parent_id, seq)


class _Reached(Exception):
    """The fork line has been read and checked: nothing after it can change the fork."""


def _clean_line_end(parent: Path, seq: int) -> int | None:
    """Where the line of `seq` ends, if it reads cleanly and is a clean point; None if not.

    The journal is streamed and no event is kept: only the calls still open and the bytes read.
    """
    open_calls: set[str] = set()
    offset = 0
    found: list[int] = []

    def take(events: list[Event], lines: Lines) -> None:
        nonlocal offset
        for i, event in enumerate(events):
            if event.seq >= seq:
                if event.seq == seq and _is_clean(event, open_calls):
                    found.append(_line_end(bytes(lines), i) + offset)
                raise _Reached
            if type(event) is Message:
                msg = event.message
                if msg.role == "tool":
                    if msg.toolCallId is not None:
                        open_calls.discard(msg.toolCallId)
                elif msg.toolCalls:
                    open_calls.update(call.id for call in msg.toolCalls)
        offset += len(lines)

    with contextlib.suppress(_Reached):
        scan_events(parent, take)
    return found[0] if found else None


def _is_clean(event: Event, open_calls: set[str]) -> bool:
    """The same rule as fork_points: a user message or a tool-free assistant message, no call open."""
    if type(event) is not Message or open_calls:
        return False
    return event.message.role != "tool" and not event.message.toolCalls


def _line_end(lines: bytes, index: int) -> int:
    """Just past the newline of line `index` (from 0) in a run of whole lines."""
    end = -1
    for _ in range(index + 1):
        end = lines.index(b"\n", end + 1)
    return end + 1


def _copy_prefix(src: int, dst: int, length: int, ops: FileOps) -> None:
    """Copy the first `length` bytes in the kernel where it can, else through a buffer."""
    copied = 0
    if type(ops) is FileOps and hasattr(os, "copy_file_range"):
        try:
            while copied < length:
                n = os.copy_file_range(src, dst, length - copied, copied)
                if n == 0:
                    break
                copied += n
        except OSError:
            pass  # not supported between these files; the buffered copy takes over where it stopped
    while copied < length:
        chunk = os.pread(src, min(1 << 20, length - copied), copied)
        if not chunk:
            raise JournalError("the parent journal shrank while it was being forked")
        write_all(ops, dst, chunk)
        copied += len(chunk)
