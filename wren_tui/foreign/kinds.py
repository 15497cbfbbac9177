"""What a file is: another agent's session (a format of `FORMATS`), a Wren journal, or none Wren knows.

Here, apart from the registry (`foreign/__init__.py`), so that naming the agents (`wren search --help`)
loads no decoder; `wren_tui.foreign` gives each of these names on first use. Importing this module loads no
decoder either (msgspec, the documents' readers): a file's first bytes are decoded only when one is looked at.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..journal._framing import LINE_START
from ..journal.errors import NotASession
from ..journal.store import is_session_id
from ..portable import open_read_only, pread
from . import FORMATS, UNKNOWN, WREN
from .contract import Format
from .folders import split_member

if TYPE_CHECKING:
    import msgspec

Kind = Format | Literal["wren", "unknown"]

_documents: dict[str, Format] = {}


def documents() -> dict[str, Format]:
    """Formats opened by path only, and listed in a folder given with --dir (no agent folder of their own): ATIF
    trajectories, and the design's own journals (mca). Their readers are imported when first asked for."""
    if not _documents:
        from . import atif, mca

        _documents.update({atif.FORMAT.name: atif.FORMAT, mca.FORMAT.name: mca.FORMAT})
    return _documents


def __getattr__(name: str) -> object:
    if name == "DOCUMENTS":  # as `documents()` gives them, their readers imported now
        return documents()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def format_named(agent: str) -> Format | None:
    """The format named `agent`: an agent's (`FORMATS`) or a document's (`DOCUMENTS`: ATIF, the design's journals);
    None for a name neither has."""
    return FORMATS.get(agent) or documents().get(agent)


def write_tools(agent: str) -> frozenset[str]:
    """The tools of `agent` (a format's name) whose calls change the workspace; for a document of any agent's
    session (ATIF), every format's; none for a name no format has."""
    fmt = format_named(agent)
    if fmt is None:
        return frozenset()
    if fmt.kinds.write_tools is not None:
        return fmt.kinds.write_tools
    return frozenset().union(*(f.kinds.write_tools or () for f in FORMATS.values()))


def what_wren_opens() -> str:
    """The kinds of file Wren opens, as a person reads them: "a Wren journal or a session of Claude Code, ..."."""
    labels = [f.label for f in FORMATS.values()]
    named = "".join(f", {'an' if f.label[:1].lower() in 'aeiou' else 'a'} {f.label}" for f in documents().values())
    return f"a Wren journal{named} or a session of {', '.join(labels[:-1])} or {labels[-1]}"


# How much of a file's start is read to recognise it; a first line longer than this is read whole.
_HEAD = 1 << 16
_HEAD_MAX = 1 << 22
_HEAD_LINES = 8
_decoder: list[msgspec.json.Decoder[Any]] = []  # any JSON value, made when a file is first looked at


def detect_head(head: bytes, name: str = "") -> Kind:
    """What a file that starts with `head` (and is called `name`) is, from its first few whole lines.

    A format only on a line of its kinds; Wren for a Wren line (seq with crc or type), a Wren
    session's name, or no whole line yet (an empty journal, or one whose first line is being
    written: read as today); otherwise unknown.
    An ATIF trajectory is one document, recognised by its start (an object whose schema_version is an
    ATIF tag); the design's own journal (mca) by every whole line of its start being an event line with
    no crc, under a name that is not a Wren session's (`mca.claims_head`): a Wren journal that lost a
    crc is still Wren's, and damaged.
    """
    import msgspec

    from . import atif, mca

    if mca.claims_head(head, name):
        return mca.FORMAT
    if head.startswith(LINE_START):
        return WREN  # a Wren journal, maybe damaged past its first line
    if atif.claims_head(head):
        return atif.FORMAT
    lines = head.split(b"\n")
    whole = lines[:-1][:_HEAD_LINES]
    if not _decoder:
        _decoder.append(msgspec.json.Decoder())
    any_value = _decoder[0]
    for line in whole:
        if not line.strip():
            continue
        try:
            value = any_value.decode(line)
        except (msgspec.DecodeError, RecursionError):
            continue  # damaged, or nested past msgspec's depth: the next ones decide
        if not isinstance(value, dict):
            continue
        if "seq" in value and ("crc" in value or "type" in value):
            return WREN
        for fmt in FORMATS.values():
            if fmt.kinds.claims(value):
                return fmt
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
    if is_session_id(stem) or not any(line.strip() for line in whole):
        return WREN
    return UNKNOWN


def kind_of(path: Path) -> Kind:
    """What the file at `path` is, by its content (and a Wren session's name): a format, Wren, or unknown.

    A file that cannot be opened is Wren's to report (the journal reader says why).
    """
    base, session = split_member(path)
    if session is not None:  # DB#ID: a session of a file that holds several (OpenCode's)
        kind = kind_of(base)
        return kind if isinstance(kind, Format) and kind.export_all is not None else UNKNOWN
    try:
        fd = open_read_only(path)
    except OSError:
        return WREN
    try:
        if pread(fd, len(LINE_START), 0) == LINE_START and is_session_id(path.name.removesuffix(".jsonl")):
            return WREN  # a Wren line's start, a Wren session's name: no more is read (a folder of journals, fast)
        head = pread(fd, _HEAD, 0)
        # A first line longer than the head (Codex's session_meta holds the whole system prompt).
        while b"\n" not in head and len(head) < _HEAD_MAX and len(head) % _HEAD == 0 and head:
            more = pread(fd, len(head), len(head))
            if not more:
                break
            head += more
    except OSError:
        return WREN
    finally:
        os.close(fd)
    for fmt in FORMATS.values():
        if fmt.claims_file is not None and fmt.claims_file(path, head):
            return fmt
    return detect_head(head, path.name)


def detect(path: Path) -> Format | None:
    """The format of the file at `path` by its content (not its name); None for anything else."""
    kind = kind_of(path)
    return kind if isinstance(kind, Format) else None


def identify(path: Path) -> Format | None:
    """The format of another agent's file at `path`, None for a Wren journal; NotASession for any other file."""
    kind = kind_of(path)
    if kind == UNKNOWN:
        raise NotASession(path, what_wren_opens())
    return kind if isinstance(kind, Format) else None
