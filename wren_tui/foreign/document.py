"""What the formats whose sessions are not JSON lines share (Cline's, Continue's and Mistral Vibe's documents, aider's
Markdown, OpenCode's database): a document read whole and decoded, and the lines a format exports a session into
(`Format.export`), which its translator reads back one by one.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import msgspec

from ..journal.errors import JournalError
from ..journal.reader import open_for_reading
from ..portable import pread
from .base import TOO_DEEP, BadLine, not_json

_T = TypeVar("_T")


class ExportedLine(msgspec.Struct, omit_defaults=True):
    """What every line of a format's export (`Format.export`) has: its kind, its time, its text and the id it names
    (a session's, a call's); a format's own line adds its fields after these, and only those set are written."""

    type: str
    ts: str = ""
    text: str = ""
    id: str = ""


def decode_export(decoder: msgspec.json.Decoder[_T], data: bytes, what: str) -> _T:
    """A line of a session's export (`Format.export`) as `decoder` types it; BadLine for one that is not (`what`:
    the lines of whose export: "an exported aider history")."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError:
        raise BadLine(f"it is not a line of {what}") from None
    except msgspec.DecodeError as exc:
        raise not_json(exc) from None
    except RecursionError:  # msgspec's own bound on nesting (the interpreter's stack): one sentence
        raise BadLine(TOO_DEEP) from None


def decode_document(decoder: msgspec.json.Decoder[_T], data: bytes, path: Path, label: str) -> _T:
    """A session kept as one JSON document (`read_document`'s bytes of `path`) as `decoder` types it; JournalError
    naming the agent (`label`) for one that is not its, or one nested past what msgspec follows."""
    try:
        return decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise JournalError(f"{path}: not a {label} session ({exc})") from None
    except RecursionError:
        raise JournalError(f"{path}: {TOO_DEEP}") from None


def read_document(path: Path, limit: int, label: str) -> bytes:
    """The whole of a session kept as one document (Cline's, Mistral Vibe's files), at most `limit` bytes: past
    it, JournalError naming the agent (`label`)."""
    fd = open_for_reading(path)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise JournalError(f"{path}: {size:,} bytes, more than Wren reads of a {label} session")
        return pread(fd, size, 0)
    finally:
        os.close(fd)


def iso_of_ms(ms: int | None) -> str:
    """Milliseconds since the epoch as a journal's ISO time (UTC, "Z"); "" for none or one out of range."""
    if ms is None:
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return ""
