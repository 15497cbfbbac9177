"""What Wren puts into the conversation from files: a project's instructions and `@` references.

Each file is read here once, bounded, and never past a refusal: a path outside its folder (a `..` or
a link leaving it), Wren's journals, anything that is not a regular file (a FIFO, a device), a binary
file. A file larger than the limit is clipped, and the clip is said. What was given is journaled as
an `injected` event before the message that carries its text, and the text is in that message, so a
resume or a fork sends exactly what the original run sent, whatever the file holds now.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..journal.events import INSTRUCTIONS_MARK
from ..portable import O_BINARY, O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK
from .tools import read_at_most

__all__ = ["INSTRUCTIONS_MARK"]
# What one instructions file gives at most (bytes read; the rest is clipped, and said).
INSTRUCTIONS_LIMIT = 32_768
# What one `@` reference gives at most, what one message's references give together, a listing's entries.
REFERENCE_LIMIT = 65_536
MESSAGE_LIMIT = 196_608
LISTING_LIMIT = 200
# Bytes looked at for a NUL: a file holding one there is binary, and is not given.
_BINARY_PROBE = 8192
NAMES = ("AGENTS.md", "CLAUDE.md")  # in one folder AGENTS.md wins; CLAUDE.md is read only where there is none

_REFERENCE = re.compile(r"(?<!\S)@([^\s@`\"']+)")
_RANGE = re.compile(r"(.+?):(\d+)(?:-(\d+))?")
_TRAILING = ".,;:!?)]}"
BLOCK_START = re.compile(r"^--- (@\S+)(?: \((.*)\))? ---$", re.M)
_ANY_BLOCK = re.compile(r"^--- @\S+.* ---$", re.M)


def estimate_tokens(text: str) -> int:
    """Tokens of a text, estimated: about four characters each (no tokenizer offline), at least one for any text."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class Given:
    """One file (or a part of it, or a folder's listing) given to the model, or refused with the sentence why."""

    kind: Literal["instructions", "reference"]
    label: str  # what the person wrote or the file's name: `@src/a.py:10-40`, `AGENTS.md`
    path: str  # the absolute path it names
    text: str | None  # None: refused
    sha256: str = ""
    size: int = 0
    note: str | None = None  # the clip or the refusal, one sentence

    @property
    def chars(self) -> int:
        return len(self.text) if self.text is not None else 0

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text) if self.text else 0

    def line(self) -> str:
        """What the terminal prints for it before the request."""
        if self.text is None:
            return f"  {self.label}: not given: {self.note}"
        clip = f" ({self.note})" if self.note else ""
        return f"  {self.label}  {self.chars:,} chars, ~{self.tokens:,} tokens{clip}"


class Refused(Exception):
    """A file that is not given, and the sentence why."""


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _read(path: Path, limit: int) -> tuple[bytes, int]:
    """The first `limit` bytes of a regular file, and its size; never blocks on a FIFO nor follows a swapped-in link."""
    try:
        fd = os.open(path, os.O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_BINARY | O_CLOEXEC)
    except OSError as exc:
        raise Refused(f"it cannot be read ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("it is not a regular file (a FIFO, a device or a socket), so it is not read")
        return read_at_most(fd, limit), info.st_size
    except OSError as exc:
        raise Refused(f"it cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


def _checked(target: Path, inside: Path, where: str, forbidden: Sequence[Path]) -> Path:
    """The real path of `target`, or Refused when it leaves `inside` (by `..` or a link) or is in a forbidden folder."""
    real = Path(os.path.realpath(target))
    if not _inside(real, inside):
        linked = os.path.abspath(target) != str(real)
        how = f"a link to {real}" if linked else str(real)
        raise Refused(f"it is {how}, outside {where} {inside}, so it is not read")
    for folder in forbidden:
        if _inside(real, folder):
            raise Refused(f"it is in Wren's journals folder {folder}, which is never sent to the model")
    return real


def _text(data: bytes) -> str:
    if b"\0" in data[:_BINARY_PROBE]:
        raise Refused("it is binary (it holds NUL bytes), so it is not given")
    return data.decode("utf-8", errors="replace")


def _clip_note(given: int, size: int) -> str:
    return f"clipped: the first {given:,} bytes of {size:,}"


# --- project instructions -----------------------------------------------------------------------


def repository_root(workspace: Path) -> Path | None:
    """The nearest folder at or above the workspace that holds `.git`, or None."""
    for folder in (workspace, *workspace.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def instruction_paths(workspace: Path) -> tuple[list[Path], Path]:
    """The instruction files that apply to the workspace, from the repository root down, and their bounding folder.

    Each folder from the repository root (the nearest holding `.git`) down to the workspace gives its
    AGENTS.md, or its CLAUDE.md where it has no AGENTS.md; outside a repository, the workspace's alone.
    """
    real = Path(os.path.realpath(workspace))
    root = repository_root(real) or real
    folders = [real, *(p for p in real.parents if _inside(p, root))]
    found: list[Path] = []
    for folder in reversed(folders):
        for name in NAMES:
            if os.path.lexists(folder / name):
                found.append(folder / name)
                break
    return found, root


def read_instructions(workspace: Path, journals: Path) -> list[Given]:
    """Every instruction file that applies, each read (to INSTRUCTIONS_LIMIT bytes) or refused with a sentence."""
    paths, root = instruction_paths(workspace)
    forbidden = [Path(os.path.realpath(journals))]
    given: list[Given] = []
    for path in paths:
        try:
            real = _checked(path, root, "the repository", forbidden)
            data, size = _read(real, INSTRUCTIONS_LIMIT)
            text = _text(data)
        except Refused as exc:
            given.append(Given("instructions", path.name, str(path), None, note=str(exc)))
            continue
        note = _clip_note(len(data), size) if size > len(data) else None
        given.append(Given("instructions", path.name, str(path), text, hashlib.sha256(data).hexdigest(), size, note))
    return given


def instructions_message(given: Sequence[Given]) -> str | None:
    """The user message that carries the instructions' text (None when no file gave any)."""
    blocks = [
        f"--- {g.path}{f' ({g.note})' if g.note else ''} ---\n{g.text}\n--- end of {g.path} ---"
        for g in given
        if g.text is not None
    ]
    if not blocks:
        return None
    return (
        f"{INSTRUCTIONS_MARK} The project's instructions (AGENTS.md or CLAUDE.md, from the repository root down "
        "to the workspace; a deeper file refines a shallower one). Follow them.\n\n" + "\n\n".join(blocks)
    )


def fingerprint(given: Sequence[Given]) -> frozenset[tuple[str, str, int]]:
    """What a run start compares with what was given before: each file's path, hash and size."""
    return frozenset((g.path, g.sha256, g.size) for g in given)


# --- @ references --------------------------------------------------------------------------------


def resolve_references(text: str, workspace: Path, journals: Path) -> tuple[str, list[Given]]:
    """The message with each `@path`, `@folder/` and `@path:10-40` it names appended as a block, and what each gave.

    The typed text stays as it was; each reference's text follows it in a block the model reads.
    One refused (outside the workspace, a link leaving it, the journals, not a regular file, a
    binary) or clipped (past REFERENCE_LIMIT, or past MESSAGE_LIMIT for the message) says so in its
    block and in the terminal, never silently.
    """
    root = Path(os.path.realpath(workspace))
    forbidden = [Path(os.path.realpath(journals))]
    given: list[Given] = []
    seen: set[str] = set()
    for match in _REFERENCE.finditer(text):
        raw = match.group(1)
        while raw and raw[-1] in _TRAILING and not os.path.lexists(root / raw):
            raw = raw[:-1]
        if not raw or raw in seen:
            continue
        seen.add(raw)
        left = MESSAGE_LIMIT - sum(g.chars for g in given)
        given.append(_reference(raw, root, forbidden, left))
    if not given:
        return text, []
    blocks = [_block(g) for g in given]
    return text + "\n\n" + "\n\n".join(blocks), given


def _reference(raw: str, root: Path, forbidden: Sequence[Path], left: int) -> Given:
    label = f"@{raw}"
    lines: tuple[int, int] | None = None
    ranged = _RANGE.fullmatch(raw)
    name = raw
    if ranged and not os.path.lexists(root / raw):
        name = ranged.group(1)
        first = int(ranged.group(2))
        lines = (first, int(ranged.group(3) or first))
    target = root / name
    try:
        if lines is not None and (lines[0] < 1 or lines[1] < lines[0]):
            raise Refused(f"lines {lines[0]}-{lines[1]} are not a range (the first line is 1, the last not before it)")
        if left <= 0:
            raise Refused(
                f"the message's references already give {MESSAGE_LIMIT:,} characters, the most one message takes"
            )
        real = _checked(target, root, "the workspace", forbidden)
        if not os.path.lexists(target):
            raise Refused(f"there is no {target}")
        if os.path.isdir(real):
            if lines is not None:
                raise Refused("it is a folder, which has no lines")
            return _listing(label, real, left)
        limit = min(REFERENCE_LIMIT, left)
        data, size = _read(real, REFERENCE_LIMIT if lines is None else 4 * REFERENCE_LIMIT)
        text = _text(data)
    except Refused as exc:
        return Given("reference", label, str(target), None, note=str(exc))
    sha = hashlib.sha256(data).hexdigest()
    note: str | None = None
    if lines is not None:
        every = text.splitlines(keepends=True)
        if lines[0] > len(every) and size == len(data):
            return Given("reference", label, str(target), None, note=f"it has {len(every)} lines, none from {lines[0]}")
        text = "".join(every[lines[0] - 1 : lines[1]])
        if size > len(data) and lines[1] > len(every):
            note = f"clipped: lines past {len(every)} were not read (the first {len(data):,} bytes of {size:,})"
    elif size > len(data):
        note = _clip_note(len(data), size)
    if len(text) > limit:
        text = text[:limit]
        note = f"clipped to {limit:,} characters, the most one message's references take"
    return Given("reference", label, str(target), text, sha, size, note)


def _listing(label: str, folder: Path, left: int) -> Given:
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in entries)
    except OSError as exc:
        return Given("reference", label, str(folder), None, note=f"it cannot be listed ({exc.strerror})")
    shown = names[:LISTING_LIMIT]
    text = "\n".join(shown)
    note = f"clipped: the first {LISTING_LIMIT} of {len(names):,} entries" if len(names) > LISTING_LIMIT else None
    if len(text) > left:
        text, note = text[:left], f"clipped to {left:,} characters, the most one message's references take"
    return Given("reference", label, str(folder), text, hashlib.sha256(text.encode()).hexdigest(), len(names), note)


def _block(given: Given) -> str:
    if given.text is None:
        return f"--- {given.label}: not given: {given.note} ---"
    note = f" ({given.note})" if given.note else ""
    return f"--- {given.label}{note} ---\n{given.text}\n--- end of {given.label} ---"


def typed_part(content: str) -> str:
    """A user message without the blocks its references added: what the person typed."""
    for match in _ANY_BLOCK.finditer(content):
        if content[match.start() - 2 : match.start()] == "\n\n":
            return content[: match.start() - 2]
    return content


def given_blocks(content: str) -> list[tuple[str, str]]:
    """The references a user message holds: each label and the text given (the model reads these)."""
    found: list[tuple[str, str]] = []
    for match in BLOCK_START.finditer(content):
        label = match.group(1)
        end = content.find(f"\n--- end of {label} ---", match.end())
        if end >= 0:
            found.append((label, content[match.end() + 1 : end]))
    return found


def total_line(given: Sequence[Given]) -> str:
    """The total the terminal prints after each reference's line."""
    shown = [g for g in given if g.text is not None]
    chars = sum(g.chars for g in shown)
    tokens = sum(g.tokens for g in shown)
    refused = len(given) - len(shown)
    more = f", {refused} not given" if refused else ""
    return f"  total: {len(shown)} given, {chars:,} chars, ~{tokens:,} tokens{more}"
