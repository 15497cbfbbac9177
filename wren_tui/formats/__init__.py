"""Other agents' session files (Claude Code, Codex, pi), read as Wren events: the formats layer.

Each format is a module (`claude`, `codex`, `pi`) with a `FORMAT` (a `base.Format`): how to translate
its lines into Wren's events (`journal.events`), how to recognise its files by their content, and
where the agent keeps them. A new format is one module and one line in `FORMATS`. Nothing here
writes, except `fork` (a new Wren journal from a point of a session), loaded only when asked for.
This layer imports only `wren_tui.journal`.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from . import atif, claude, codex, pi
from .base import BadLine, Format, Skipped, Translated, Translator

FORMATS: dict[str, Format] = {f.name: f for f in (claude.FORMAT, codex.FORMAT, pi.FORMAT)}
AGENTS: tuple[str, ...] = tuple(FORMATS)
# Formats that are one document, opened by path only (no agent folder to list): ATIF trajectories.
DOCUMENTS: dict[str, Format] = {atif.FORMAT.name: atif.FORMAT}

# How much of a file's start is read to recognise it; a first line longer than this is read whole.
_HEAD = 1 << 16
_HEAD_MAX = 1 << 22
_HEAD_LINES = 8
_any = msgspec.json.Decoder()


def detect_head(head: bytes) -> Format | None:
    """The format of a file that starts with `head`, from its first few whole lines; None if none claims it.

    A Wren journal's lines (seq, ts, crc) are claimed by none. An ATIF trajectory is one document,
    recognised by its start (an object whose schema_version is an ATIF tag).
    """
    if atif.claims_head(head):
        return atif.FORMAT
    for line in head.split(b"\n")[:_HEAD_LINES]:
        if not line.strip():
            continue
        try:
            value = _any.decode(line)
        except msgspec.DecodeError:
            continue  # a line cut by the head's end, or damaged: the next ones decide
        if not isinstance(value, dict):
            continue
        if "seq" in value and "crc" in value:
            return None  # a Wren journal
        for fmt in FORMATS.values():
            if fmt.claims(value):
                return fmt
    return None


def detect(path: Path) -> Format | None:
    """The format of the file at `path` by its content (not its name); None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        head = os.pread(fd, _HEAD, 0)
        # A first line longer than the head (Codex's session_meta holds the whole system prompt).
        while b"\n" not in head and len(head) < _HEAD_MAX and len(head) % _HEAD == 0 and head:
            more = os.pread(fd, len(head), len(head))
            if not more:
                break
            head += more
    except OSError:
        return None
    finally:
        os.close(fd)
    return detect_head(head)


__all__ = [
    "AGENTS",
    "DOCUMENTS",
    "FORMATS",
    "BadLine",
    "Format",
    "Skipped",
    "Translated",
    "Translator",
    "detect",
    "detect_head",
]
