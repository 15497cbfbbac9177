"""Other agents' session files (Claude Code, Codex, pi, Gemini CLI, Qwen Code, Copilot CLI, Kimi CLI, OpenCode,
Kilo Code CLI, aider, Continue, Cline, Mistral Vibe), read as Wren events: the foreign layer.

Each format is a module (`claude`, `codex`, `pi`, `qwen`, ...) with a `FORMAT` (a `contract.Format`), the one
contract the commands, search and the viewer ask: how to translate its lines into Wren's events
(`journal.events`), how to recognise its files by their content, where the agent keeps them and which
of its files are sessions, its line kinds, whether it records a call before its result, and its tools
that change the workspace. Nothing outside this package names an agent: a new format is one module and
one line in `FORMATS` (read when asked, never copied at import). Where each agent keeps its sessions, and
which of its files they are, is `folders` (no reader there): an agent whose every file is one session has
its `Home` there (`FORMATS.home`), and a listing of its sessions loads neither its module nor msgspec.
Nothing here writes, except `fork` (a new Wren journal from a point of a session), loaded only when asked
for. This layer imports only `wren_tui.journal`.

A file is never guessed at: it is a format's only when one of its first lines is of that format's
kinds (`Kinds.claims`, positive evidence), a Wren journal when a line is Wren's (seq and crc or type)
or its name is a Wren session's, and otherwise refused (`NotASession`) or listed as unknown: `kind_of`
is the one place that says which. Documents (`kinds.DOCUMENTS`: ATIF trajectories, the design's own
journals) have no folder of their own and are not in `FORMATS`: opened by path, found by `--dir`.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # each loaded on first use (`__getattr__`): `import wren_tui.foreign` alone loads no reader
    from ..journal.errors import NotASession
    from . import aider, claude, cline, codex, continuecli, copilot, gemini, kilo, kimi, opencode, pi, qwen, vibe  # noqa: F401
    from .base import BadLine, Skipped, Translated, Translator
    from .contract import Format
    from .folders import Listed, split_member  # noqa: F401
    from .kinds import (
        DOCUMENTS,
        Kind,
        detect,
        detect_head,
        format_named,
        identify,
        kind_of,
        what_wren_opens,
        write_tools,
    )


class Registry(MutableMapping[str, "Format"]):
    """The formats by name, each module imported when its format is first asked for.

    Its names, their order and whether a name is here need no import (`wren search --agent claude` and
    `--help` list them); `FORMATS[name]` imports that agent's module alone, and iterating the formats
    (`values()`, `items()`) imports each in this order. A format set here (a test's) is kept as given.
    """

    def __init__(
        self,
        homes: dict[str, tuple[str, str, str]],
        roots: dict[str, tuple[tuple[str, ...], str, str] | None],
        suffixes: dict[str, str] | None = None,
    ) -> None:
        self._homes = dict(homes)
        self._roots = dict(roots)
        self._suffixes = dict(suffixes or {})  # a name not here: its files are JSON lines (".jsonl")
        self._names = list(homes)
        self._loaded: dict[str, Format] = {}
        self._given: set[str] = set()  # set here (a test's): its own root, not the registry's rule

    def __getitem__(self, name: str) -> Format:
        fmt = self._loaded.get(name)
        if fmt is None:
            if name not in self._homes:
                raise KeyError(name)
            from .contract import Format

            fmt = getattr(sys.modules[__name__], self._homes[name][0]).FORMAT  # imported by __getattr__, below
            assert isinstance(fmt, Format) and fmt.name == name, (name, fmt)
            self._loaded[name] = fmt
        return fmt

    def __setitem__(self, name: str, fmt: Format) -> None:
        if name not in self._names:
            self._names.append(name)
        self._loaded[name] = fmt
        self._given.add(name)

    def __delitem__(self, name: str) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._homes.pop(name, None)
        self._roots.pop(name, None)
        self._suffixes.pop(name, None)
        self._loaded.pop(name, None)
        self._given.discard(name)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def home(self, name: str) -> Listed:
        """What listing `name`'s sessions asks (its name, folder and a session's id from its path), without importing
        its module where the agent's every file is one session read as it is (`folders.HOMES`); else its `Format`."""
        fmt = self._loaded.get(name)
        if fmt is not None:
            return fmt  # loaded already, or a test's
        if name in self._homes:
            from .folders import HOMES

            home = HOMES.get(name)
            if home is not None:
                return home
        return self[name]

    def suffix(self, name: str) -> str:
        """How `name`'s session files are named (`Folder.suffix`) without importing its module: from the registry's
        table of the formats whose files are not JSON lines (its third), or from a format set here or loaded."""
        fmt = self._loaded.get(name)
        if fmt is not None:
            return fmt.folder.suffix
        if name not in self._homes:
            raise KeyError(name)
        return self._suffixes.get(name, ".jsonl")

    def described(self, name: str) -> tuple[str, str]:
        """A format's label and variable (`Format.label`, `Folder.env`) without importing its module."""
        fmt = self._loaded.get(name)
        return (fmt.label, fmt.folder.env) if fmt is not None else self._homes[name][1:]

    def own_folders(self, env: Mapping[str, str] | None = None) -> list[tuple[str, Path]]:
        """Each agent's own sessions folder (`Folder.root`, for a format whose `own_folder` it is), by name, without
        importing any module: from the registry's rule for it (`ROOTS`), or from a format set here."""
        env = os.environ if env is None else env
        home = Path(env.get("HOME") or Path.home())
        found = []
        for name in self._names:
            if name in self._given:
                fmt = self._loaded[name]
                if fmt.folder.own_folder:
                    found.append((name, fmt.folder.root(env, home)))
                continue
            root = self.own_folder(name, env, home)
            if root is not None:  # else no folder of its own (aider writes beside each project)
                found.append((name, root))
        return found

    def own_folder(self, name: str, env: Mapping[str, str], home: Path) -> Path | None:
        """`name`'s own sessions folder by the registry's rule for it (`ROOTS`), its module not imported; None where no
        rule says (aider has no folder of its own; a format set here: ask the format)."""
        rule = None if name in self._given else self._roots.get(name)
        if rule is None:
            return None
        variables, default, below = rule
        base = next((env[v] for v in variables if env.get(v)), None)
        return (Path(os.path.expanduser(base)) if base else home / default) / below


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
        "vibe": ("vibe", "Mistral Vibe", "VIBE_HOME"),
    },
    # Where each agent keeps its sessions, as its module's `root` says (tests/test_command_imports.py checks
    # they agree): the first of its variables that is set, else that folder under the home folder, and the
    # folder below it; None: no folder of its own. Read to keep Wren from writing into another agent's folder
    # (`own_folder_of`) without importing every reader.
    {
        "claude": (("CLAUDE_CONFIG_DIR",), ".claude", "projects"),
        "codex": (("CODEX_HOME",), ".codex", "sessions"),
        "pi": (("PI_CODING_AGENT_DIR",), ".pi/agent", "sessions"),
        "gemini": (("GEMINI_CLI_HOME",), "", ".gemini/tmp"),
        "qwen": (("QWEN_RUNTIME_DIR", "QWEN_HOME"), ".qwen", "projects"),
        "copilot": (("COPILOT_HOME",), ".copilot", "session-state"),
        "kimi": (("KIMI_SHARE_DIR",), ".kimi", "sessions"),
        "opencode": (("XDG_DATA_HOME",), ".local/share", "opencode"),
        "kilo": (("XDG_DATA_HOME",), ".local/share", "kilo"),
        "aider": None,
        "continue": (("CONTINUE_GLOBAL_DIR",), ".continue", "sessions"),
        "cline": (("CLINE_DIR",), ".cline", "data/sessions"),
        "vibe": (("VIBE_HOME",), ".vibe", "logs/session/unified"),
    },
    # How the session files of the formats that are not JSON lines are named, as their modules' `Folder.suffix` says
    # (tests/test_command_imports.py checks they agree; every other format's end in .jsonl): a walk of a folder of
    # every agent's sessions (`folders.every_session`) imports a format's module only for a file named so.
    {
        "opencode": ".db",
        "kilo": ".db",
        "aider": ".md",
        "continue": ".json",
        "cline": ".messages.json",
        "vibe": "meta.json",
    },
)
# What a file is when no format claims it: a Wren journal (by a line or its name), or none Wren knows.
WREN: Literal["wren"] = "wren"
UNKNOWN: Literal["unknown"] = "unknown"


def own_folder_of(folder: Path, env: Mapping[str, str] | None = None) -> tuple[str, Path] | None:
    """The agent whose own sessions folder `folder` is or is inside (links resolved), by name, and that folder;
    else None. No reader is imported: `listing.owner_of` gives the format.

    Wren writes nothing there: no fork, no search index, no listing store.
    """
    where = Path(os.path.realpath(folder))
    for name, root in FORMATS.own_folders(env):
        agent_root = Path(os.path.realpath(root))
        if where == agent_root or agent_root in where.parents:
            return name, root
    return None


# The format modules, each imported when first asked for (by FORMATS, or as `foreign.claude`).
_READERS = frozenset(("aider", "claude", "cline", "codex", "continuecli", "copilot", "gemini", "kilo", "kimi"))
_READERS |= {"opencode", "pi", "qwen", "vibe"}


# The names that are not here, and their modules: recognising a file (`kinds`), what a format is (`contract`), what
# its translators share (`base`).
_HOMES: dict[str, str] = {
    **dict.fromkeys(["BadLine", "Skipped", "Translated", "Translator"], ".base"),
    "Format": ".contract",
    "split_member": ".folders",
    **dict.fromkeys(["DOCUMENTS", "Kind", "detect", "detect_head", "identify", "kind_of"], ".kinds"),
    **dict.fromkeys(["format_named", "what_wren_opens", "write_tools"], ".kinds"),
    "NotASession": "..journal.errors",
}


def __getattr__(name: str) -> object:
    if name in _READERS:
        return importlib.import_module(f"{__name__}.{name}")  # the import sets the attribute: found here once
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value  # found once; later lookups do not come here
    return value


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
    "format_named",
    "identify",
    "kind_of",
    "own_folder_of",
    "what_wren_opens",
    "write_tools",
]
