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

There is no folder of aider's histories: each is in its own project. `wren watch --agent aider`
and `wren ls --agent aider` search the folder --dir names (else the current folder) and the
folders in it for files whose first line is aider's.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from ..journal.errors import JournalError
from ..journal.reader import open_for_reading
from .base import BadLine, Format, Translated, Translator, assistant, not_json, note, usage, user

NAME = "aider"
LABEL = "aider"
ENV = "AIDER_CHAT_HISTORY_FILE"
HEADER = b"# aider chat started at "
DEFAULT_NAME = ".aider.chat.history.md"
UNRECORDED = "aider records no tool calls (it edits files from the text of its replies)"
MAPPED = ("run", "user", "assistant", "tokens", "note")

_TOKENS = re.compile(r"^Tokens: ([\d.,]+[kKmM]?) sent, ([\d.,]+[kKmM]?) received")


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


def blocks(text: str, cwd: str = "") -> Iterator[_Line]:
    """The history's blocks in order: a run's start, aider's notes, a prompt, a reply, a reply's tokens."""
    ts = ""
    for found in _BLOCK.finditer(text):
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
            if reply.strip():
                yield _Line(type="assistant", ts=ts, text=reply)


def _notes(block: str, ts: str) -> Iterator[_Line]:
    """aider's `> ` lines: notes, and each reply's `Tokens:` line on its own."""
    said: list[str] = []
    for line in block.rstrip("\n").split("\n"):
        note = line[1:].strip()
        tokens = _TOKENS.match(note)
        if tokens is None:
            said.append(note)
            continue
        if said:
            yield _Line(type="note", ts=ts, text="\n".join(said))
            said = []
        yield _Line(type="tokens", ts=ts, text=note, sent=_count(tokens[1]), received=_count(tokens[2]))
    if said:
        yield _Line(type="note", ts=ts, text="\n".join(said))


def export(path: Path) -> bytes:
    """The history as lines, one per block (the file is only read)."""
    fd = open_for_reading(path)
    try:
        size = os.fstat(fd).st_size
        data = os.pread(fd, size, 0)
    finally:
        os.close(fd)
    if not data.startswith(HEADER) and not data.lstrip(b"\n").startswith(HEADER):
        raise JournalError(f"{path}: not an aider chat history (its first line is not `# aider chat started at`)")
    text = data.decode("utf-8", "replace")
    # aider writes its history in the repository's root by default: that is the project.
    cwd = str(Path(os.path.abspath(path)).parent) if path.name == DEFAULT_NAME else ""
    return b"".join(_encode.encode(block) + b"\n" for block in blocks(text, cwd))


class AiderTranslator(Translator):
    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        try:
            line = _decode.decode(data)
        except msgspec.ValidationError:
            raise BadLine("it is not a line of an exported aider history") from None
        except msgspec.DecodeError as exc:
            raise not_json(exc) from None
        seq, ts = lineno, line.ts
        if line.type == "run":
            shown = note(seq, ts, "aider run", started=line.text, tools=UNRECORDED)
            return Translated([shown], line.type, cwd=line.cwd or None)
        if line.type == "user":
            return Translated([user(seq, ts, line.text)], line.type)
        if line.type == "assistant":
            return Translated([assistant(seq, ts, line.text)], line.type)
        if line.type == "tokens":
            return Translated([usage(seq, ts, line.sent, line.received, None)], line.type)
        if line.type == "note":
            return Translated([note(seq, ts, "aider", text=line.text)], line.type)
        return Translated([], line.type, "unknown")


def claims_file(path: Path, head: bytes) -> bool:
    """aider's first line: `# aider chat started at ` (after blank lines)."""
    return head.lstrip(b"\r\n").startswith(HEADER)


def root(env: Mapping[str, str], home: Path) -> Path:
    """The folder of $AIDER_CHAT_HISTORY_FILE when set, else the current folder (aider has no folder of its own)."""
    named = env.get(ENV)
    return Path(named).expanduser().parent if named else Path(os.curdir)


def session_id(path: Path) -> str:
    """The project's folder name for aider's default name, else the file's name."""
    return path.parent.name if path.name == DEFAULT_NAME else path.name


def is_session_file(path: Path) -> bool:
    """A Markdown file whose first line is aider's."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return claims_file(path, os.pread(fd, 256, 0))
    except OSError:
        return False
    finally:
        os.close(fd)


def _claims(_line: dict[str, Any]) -> bool:
    return False  # never a line of a JSONL file


FORMAT = Format(
    name=NAME,
    label=LABEL,
    env=ENV,
    translator=AiderTranslator,
    claims=_claims,
    root=root,
    session_id=session_id,
    node_of=None,
    is_session_file=is_session_file,
    mapped=MAPPED,
    skipped=(),
    suffix=".md",
    claims_file=claims_file,
    export=export,
    unrecorded=UNRECORDED,
    hidden_folders=False,
    own_folder=False,
)
