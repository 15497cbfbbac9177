"""aider's chat history (`.aider.chat.history.md` beside the project), read as Wren events.

aider writes Markdown, not records: each run starts a block `# aider chat started at <local
time>`; aider's own notes are `> ` lines (its command line, version, model, `> Tokens: N sent, M
received.` after each reply); a prompt is a `#### ` line (one per line of it); the reply follows as
plain text. Nothing else says when anything happened: every turn of a run has its block's time.
aider offers the model no tools (it edits files from the text of its replies), so there are no
tool calls to show, and none is ever open.

The file is exported as lines (`export`), one per block of it, in order; a reply is whole once a
line that is not its own follows it (a reply at the end of the file is shown as it stands, and
read again if it grows). aider only appends, so the lines of a live history only grow.

A big history's last blocks are exported alone first (`export_tail`), from the last run's header
or prompt before its last megabyte on: a block never reaches back past either, and only the run's
time comes from before. Their line numbers come from counting the lines the blocks before would
export, from the Markdown lines' first bytes alone (`count_blocks`, in C when it was built).

There is no folder of aider's histories: each is in its own project. `wren watch --agent aider`
and `wren ls --agent aider` search the folder --dir names (else the current folder) and the
folders in it for files whose first line is aider's.
"""

from __future__ import annotations

import functools
import mmap
import os
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from ..journal.errors import JournalError
from ..journal.reader import open_for_reading
from ..portable import pread
from . import make
from .base import Format, Kinds, Progress, Tail, Translated, Translator
from .document import decode_export
from .folders import AIDER
from .folders import AIDER_DEFAULT_NAME as DEFAULT_NAME
from .folders import AIDER_HEADER as HEADER
from .folders import aider_claims as claims_file

_count_in_c: Callable[[bytes | bytearray | memoryview], int] | None
try:
    from ._aider import count_blocks as _count_in_c
except ImportError:  # built only where the install had a C compiler: counted in Python, the same
    _count_in_c = None

NAME = "aider"
LABEL = "aider"
ENV = AIDER.folder.env
SKIPPED: tuple[str, ...] = ()
UNRECORDED = "aider records no tool calls (it edits files from the text of its replies)"
MAPPED = ("run", "user", "assistant", "tokens", "note")

# After a note's `>` (as _aider.c reads it too).
_TOKENS = re.compile(r"[ \t]*Tokens: ([0-9.,]+[kKmM]?) sent, ([0-9.,]+[kKmM]?) received")


class _Line(msgspec.Struct, omit_defaults=True):
    type: str
    ts: str = ""
    text: str = ""
    sent: int = 0
    received: int = 0
    cwd: str = ""  # a run's project: the folder of a history under aider's default name


_encode = msgspec.json.Encoder()
_decode = msgspec.json.Decoder(_Line)


def _count(text: str) -> int:
    """aider's token count ("584", "2.3k", "1.1M") as a number."""
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    try:
        return round(float(text.rstrip("kKmM").replace(",", "")) * scale)
    except ValueError:
        return 0


@functools.lru_cache(maxsize=256)
def _time(stamp: str) -> str:
    """aider's local start time as ISO-8601 UTC, as Wren writes times (taken as this machine's local time:
    aider writes no zone)."""
    try:
        local = datetime.fromisoformat(stamp.strip()).astimezone()
    except ValueError:
        return ""
    return local.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


# One block of the history per match, found in C: a run's header; a prompt's `#### ` lines; aider's
# `> ` lines; blank lines between blocks; a reply (every line up to the next of those, blank ones included).
_BLOCK = re.compile(
    r"^# aider chat started at (?P<run>[^\n]*)(?:\n|\Z)"
    r"|(?P<user>(?:^####(?:[ \t][^\n]*)?(?:\n|\Z))+)"
    r"|(?P<note>(?:^>[^\n]*(?:\n|\Z))+)"
    r"|(?:^[ \t\r]*\n)+"
    r"|(?P<reply>(?:^(?!####(?:[ \t]|$)|>|# aider chat started at )[^\n]*(?:\n|\Z))+)",
    re.MULTILINE,
)


def blocks(text: str, cwd: str = "", ts: str = "", progress: Progress | None = None) -> Iterator[_Line]:
    """The history's blocks in order: a run's start, aider's notes, a prompt, a reply, a reply's tokens.

    `ts`: the time of the run the text starts in (a tail's; a whole history starts with its header).
    `progress` is told how far through the text they are, every few thousand blocks."""
    for number, found in enumerate(_BLOCK.finditer(text), 1):
        if progress is not None and number % 4096 == 0:
            progress(found.end() / len(text))
        if found.end() == found.start():
            break  # the end of the text
        kind = found.lastgroup
        if kind == "run":
            stamp = found["run"].rstrip("\r")
            ts = _time(stamp)
            yield _Line(type="run", ts=ts, text=stamp.strip(), cwd=cwd)
        elif kind == "user":
            prompt = "\n".join(line[5:].rstrip() for line in found["user"].rstrip("\n").split("\n"))
            yield _Line(type="user", ts=ts, text=prompt.strip("\n"))
        elif kind == "note":
            yield from _notes(found["note"], ts)
        elif kind == "reply":
            reply = "\n".join(line.rstrip("\r") for line in found["reply"].split("\n")).strip("\n")
            if reply.strip(" \t\r\n"):  # only the end of the file's, unfinished (as _aider.c counts)
                yield _Line(type="assistant", ts=ts, text=reply)


def _notes(block: str, ts: str) -> Iterator[_Line]:
    """aider's `> ` lines: notes, and each reply's `Tokens:` line on its own."""
    said: list[str] = []
    for line in block.rstrip("\n").split("\n"):
        note = line[1:].strip()
        tokens = _TOKENS.match(line, 1)
        if tokens is None:
            said.append(note)
            continue
        if said:
            yield _Line(type="note", ts=ts, text="\n".join(said))
            said = []
        yield _Line(type="tokens", ts=ts, text=note, sent=_count(tokens[1]), received=_count(tokens[2]))
    if said:
        yield _Line(type="note", ts=ts, text="\n".join(said))


def export(path: Path, progress: Progress | None = None) -> bytes:
    """The history as lines, one per block (the file is only read)."""
    fd = open_for_reading(path)
    try:
        size = os.fstat(fd).st_size
        data = pread(fd, size, 0)
    finally:
        os.close(fd)
    if not data.startswith(HEADER) and not data.lstrip(b"\n").startswith(HEADER):
        raise JournalError(f"{path}: not an aider chat history (its first line is not `# aider chat started at`)")
    text = data.decode("utf-8", "replace")
    return b"".join(_encode.encode(block) + b"\n" for block in blocks(text, _project(path), progress=progress))


class Follower:
    """The history's export again and again, kept while the file is unchanged (inode, size, times)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._key: tuple[int, int, int, int] | None = None
        self._last = b""

    def __call__(self, progress: Progress | None = None) -> bytes:
        key = _key(self.path)
        if key is None or key != self._key:
            self._last = export(self.path, progress)
            self._key = key if key == _key(self.path) else None  # changed while read: read it next time too
        return self._last

    def tail(self, least: int) -> Tail | None:
        return export_tail(self.path, least)


def _key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


_PROMPT = re.compile(rb"####(?:[ \t][^\n]*)?(?:\n|\Z)")
_NOTE_KIND = re.compile(rb">" + _TOKENS.pattern.encode())


def count_blocks(data: bytes | mmap.mmap, end: int) -> int:
    """How many lines `export` gives for the history's first `end` bytes (ending where a block starts)."""
    if _count_in_c is not None:
        with memoryview(data) as view:
            return _count_in_c(view[:end])
    count, previous, in_reply, at = 0, "", False, 0
    while at < end:
        newline = data.find(b"\n", at, end)
        stop = end if newline < 0 else newline
        line = data[at:stop]
        if line.startswith(HEADER) or _NOTE_KIND.match(line):
            kind, count, in_reply = "count", count + 1, False
        elif line.startswith(b">") or _PROMPT.fullmatch(line):
            kind = "note" if line.startswith(b">") else "prompt"
            count, in_reply = count + (previous != kind), False
        elif line.strip(b" \t\r"):
            kind, count, in_reply = "reply", count + (not in_reply), True
        else:
            kind = "blank"
        previous, at = kind, stop + 1
    return count


# Where a block starts: a run's header, or a prompt's line (the first of its run: checked by the caller).
_STARTS = re.compile(rb"\n(?:# aider chat started at |####(?:[ \t]|\n))")


def export_tail(path: Path, least: int) -> Tail | None:
    """The history's last blocks as `export` gives them, from the last block start before its last `least` bytes.

    None when the history is not much bigger (export it whole), or holds no block start that far back.
    """
    fd = open_for_reading(path)
    try:
        size = os.fstat(fd).st_size
        if size <= 2 * least:
            return None
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as data:
            if not claims_file(path, data[:4096]):
                return None  # not aider's: the whole export says so
            at = size - least
            while True:
                found = _STARTS.search(data, at)
                if found is None:
                    return None
                start = found.start() + 1
                before = data[data.rfind(b"\n", 0, found.start()) + 1 : found.start()]
                if not (_PROMPT.fullmatch(before) and data[start : start + 4] == b"####"):
                    break  # a header, or a prompt's first line
                at = found.end() - 1
            header = data.rfind(b"\n" + HEADER, 0, start)
            header = header + 1 if header >= 0 else 0
            ts = ""
            if header < start:
                stamp = data[header + len(HEADER) : data.find(b"\n", header, start)]
                ts = _time(stamp.decode("utf-8", "replace").rstrip("\r"))
            text = data[start:].decode("utf-8", "replace")
            lines = b"".join(_encode.encode(block) + b"\n" for block in blocks(text, _project(path), ts))
            return Tail(lines, count_blocks(data, start))
    finally:
        os.close(fd)


def _project(path: Path) -> str:
    """aider writes its history in the repository's root by default: that is the project."""
    return str(Path(os.path.abspath(path)).parent) if path.name == DEFAULT_NAME else ""


class AiderTranslator(Translator):
    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        line = decode_export(_decode, data, "an exported aider history")
        seq, ts = lineno, line.ts
        if line.type == "run":
            shown = make.note(seq, ts, "aider run", started=line.text, tools=UNRECORDED)
            return Translated([shown], line.type, cwd=line.cwd or None)
        if line.type == "user":
            return Translated([make.user(seq, ts, line.text)], line.type)
        if line.type == "assistant":
            return Translated([make.assistant(seq, ts, line.text)], line.type)
        if line.type == "tokens":
            return Translated([make.usage(seq, ts, line.sent, line.received, None)], line.type)
        if line.type == "note":
            return Translated([make.note(seq, ts, "aider", text=line.text)], line.type)
        return Translated([], line.type, "unknown")


# aider records no tool calls.
WRITE_TOOLS: frozenset[str] = frozenset()


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=AIDER.folder,
    translator=AiderTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS),
    session_id=AIDER.session_id,
    claims_file=claims_file,
    export=export,
    exporter=Follower,
    unrecorded=UNRECORDED,
)
