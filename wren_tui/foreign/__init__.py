"""Other agents' session files (Claude Code, Codex, pi, Gemini CLI, Qwen Code, Copilot CLI, Kimi CLI, OpenCode,
Kilo Code CLI, aider, Continue, Cline), read as Wren events: the foreign layer.

Each format is a module (`claude`, `codex`, `pi`, `qwen`, ...) with a `FORMAT` (a `base.Format`), the one
contract the commands, search and the viewer ask: how to translate its lines into Wren's events
(`journal.events`), how to recognise its files by their content, where the agent keeps them and which
of its files are sessions, its line kinds, whether it records a call before its result, and its tools
that change the workspace. Nothing outside this package names an agent: a new format is one module and
one line in `FORMATS` (read when asked, never copied at import). Nothing here writes, except `fork` (a
new Wren journal from a point of a session), loaded only when asked for. This layer imports only
`wren_tui.journal`.

A file is never guessed at: it is a format's only when one of its first lines is of that format's
kinds (`Format.claims`, positive evidence), a Wren journal when a line is Wren's (seq and crc or type)
or its name is a Wren session's, and otherwise refused (`NotASession`) or listed as unknown: `kind_of`
is the one place that says which.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from ..journal._framing import LINE_START
from ..journal.errors import NotASession
from ..journal.store import SESSION_ID
from ..portable import open_read_only, pread
from . import atif
from .base import BadLine, Format, Skipped, Translated, Translator, split_member

if TYPE_CHECKING:  # each format's module, imported on first use (`__getattr__`): FORMATS[name] asks for it
    from . import aider, claude, cline, codex, continuecli, copilot, gemini, kilo, kimi, opencode, pi, qwen  # noqa: F401


class Registry(MutableMapping[str, Format]):
    """The formats by name, each module imported when its format is first asked for.

    Its names, their order and whether a name is here need no import (`wren search --agent claude` and
    `--help` list them); `FORMATS[name]` imports that agent's module alone, and iterating the formats
    (`values()`, `items()`) imports each in this order. A format set here (a test's) is kept as given.
    """

    def __init__(self, homes: dict[str, tuple[str, str, str]]) -> None:
        self._homes = dict(homes)
        self._names = list(homes)
        self._loaded: dict[str, Format] = {}

    def __getitem__(self, name: str) -> Format:
        fmt = self._loaded.get(name)
        if fmt is None:
            if name not in self._homes:
                raise KeyError(name)
            fmt = getattr(sys.modules[__name__], self._homes[name][0]).FORMAT  # imported by __getattr__, below
            assert isinstance(fmt, Format) and fmt.name == name, (name, fmt)
            self._loaded[name] = fmt
        return fmt

    def __setitem__(self, name: str, fmt: Format) -> None:
        if name not in self._names:
            self._names.append(name)
        self._loaded[name] = fmt

    def __delitem__(self, name: str) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._homes.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def described(self, name: str) -> tuple[str, str]:
        """A format's label and variable (`Format.label`, `Format.env`) without importing its module."""
        fmt = self._loaded.get(name)
        return (fmt.label, fmt.env) if fmt is not None else self._homes[name][1:]


# Each format's name: its module, and its label and variable as the module's FORMAT has them
# (tests/test_command_imports.py checks they agree), so `wren search --help` names every agent without
# importing any. A new format is one module and one line here.
FORMATS: Registry = Registry(
    {
        "claude": ("claude", "Claude Code", "CLAUDE_CONFIG_DIR"),
        "codex": ("codex", "Codex", "CODEX_HOME"),
        "pi": ("pi", "pi", "PI_CODING_AGENT_DIR"),
        "gemini": ("gemini", "Gemini CLI", "GEMINI_CLI_HOME"),
        "qwen": ("qwen", "Qwen Code", "QWEN_HOME"),
        "copilot": ("copilot", "Copilot CLI", "COPILOT_HOME"),
        "kimi": ("kimi", "Kimi CLI", "KIMI_SHARE_DIR"),
        # Not JSON lines: recognised from the file itself (claims_file), exported into lines.
        "opencode": ("opencode", "OpenCode", "XDG_DATA_HOME"),
        "kilo": ("kilo", "Kilo Code CLI", "XDG_DATA_HOME"),
        "aider": ("aider", "aider", "AIDER_CHAT_HISTORY_FILE"),
        "continue": ("continuecli", "Continue", "CONTINUE_GLOBAL_DIR"),
        "cline": ("cline", "Cline", "CLINE_DIR"),
    }
)
# Formats that are one document, opened by path only (no agent folder to list): ATIF trajectories.
DOCUMENTS: dict[str, Format] = {atif.FORMAT.name: atif.FORMAT}

# What a file is when no format claims it: a Wren journal (by a line or its name), or none Wren knows.
WREN: Literal["wren"] = "wren"
UNKNOWN: Literal["unknown"] = "unknown"
Kind = Format | Literal["wren", "unknown"]


def write_tools(agent: str) -> frozenset[str]:
    """The tools of `agent` (a format's name) whose calls change the workspace; for a document of any agent's
    session (ATIF), every format's; none for a name no format has."""
    fmt = FORMATS.get(agent) or DOCUMENTS.get(agent)
    if fmt is None:
        return frozenset()
    if fmt.write_tools is not None:
        return fmt.write_tools
    return frozenset().union(*(f.write_tools or () for f in FORMATS.values()))


def what_wren_opens() -> str:
    """The kinds of file Wren opens, as a person reads them: "a Wren journal or a session of Claude Code, ..."."""
    labels = [f.label for f in FORMATS.values()]
    documents = "".join(f", an {f.label}" for f in DOCUMENTS.values())
    return f"a Wren journal{documents} or a session of {', '.join(labels[:-1])} or {labels[-1]}"


# How much of a file's start is read to recognise it; a first line longer than this is read whole.
_HEAD = 1 << 16
_HEAD_MAX = 1 << 22
_HEAD_LINES = 8
# How every line of a Wren journal starts (`journal._framing`).
_any = msgspec.json.Decoder()


def detect_head(head: bytes, name: str = "") -> Kind:
    """What a file that starts with `head` (and is called `name`) is, from its first few whole lines.

    A format only on a line of its kinds; Wren for a Wren line (seq with crc or type), a Wren
    session's name, or no whole line yet (an empty journal, or one whose first line is being
    written: read as today); otherwise unknown.
    An ATIF trajectory is one document, recognised by its start (an object whose schema_version is an
    ATIF tag).
    """
    if head.startswith(LINE_START):
        return WREN  # a Wren journal, maybe damaged past its first line
    if atif.claims_head(head):
        return atif.FORMAT
    lines = head.split(b"\n")
    whole = lines[:-1][:_HEAD_LINES]
    for line in whole:
        if not line.strip():
            continue
        try:
            value = _any.decode(line)
        except (msgspec.DecodeError, RecursionError):
            continue  # damaged, or nested past msgspec's depth: the next ones decide
        if not isinstance(value, dict):
            continue
        if "seq" in value and ("crc" in value or "type" in value):
            return WREN
        for fmt in FORMATS.values():
            if fmt.claims(value):
                return fmt
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
    if SESSION_ID.match(stem) or not any(line.strip() for line in whole):
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
        if pread(fd, len(LINE_START), 0) == LINE_START:
            return WREN  # a Wren line's start: no more of the file is read (a folder of journals is looked at fast)
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


# The format modules, each imported when first asked for (by FORMATS, or as `foreign.claude`).
_READERS = frozenset(("aider", "claude", "cline", "codex", "continuecli", "copilot", "gemini", "kilo", "kimi"))
_READERS |= {"opencode", "pi", "qwen"}


def __getattr__(name: str) -> object:
    if name not in _READERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")  # the import sets the attribute: found here once


__all__ = [
    "DOCUMENTS",
    "FORMATS",
    "UNKNOWN",
    "WREN",
    "BadLine",
    "Format",
    "Kind",
    "NotASession",
    "Registry",
    "Skipped",
    "Translated",
    "Translator",
    "detect",
    "detect_head",
    "identify",
    "kind_of",
    "what_wren_opens",
    "write_tools",
]
