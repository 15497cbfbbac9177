"""The one refusal of a file or folder no format claims, light enough for any command to import.

`wren search --dir` and the commands that open a named file (`opening.find`) say it the same way:
one sentence naming what Wren reads, exit 4 (NotASession). And the journals folder a person named that is
not there (`named_journals`), which every command that lists sessions refuses before it reads anything; and the
folders of the agents `--agent` names (`agent_places`), a --dir that is no folder refused first.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..foreign import UNKNOWN, WREN
from ..foreign.folders import split_member
from ..journal.errors import JournalError, NotASession
from ..journal.store import SUFFIX, journals_dir

if TYPE_CHECKING:
    from ..foreign import Kind
    from ..foreign.folders import Listed

# `--agent all`: every agent's sessions.
ALL = "all"


def of_no_kind(path: Path, kind: Kind) -> bool:
    """Whether a file that is not named as a journal (no .jsonl) is of no kind Wren reads: unknown, or what would be
    taken for a Wren journal only for want of a whole line (a binary file, an empty one) though it can be read."""
    if kind == UNKNOWN:
        return True
    return kind == WREN and path.suffix != SUFFIX and split_member(path)[1] is None and os.access(path, os.R_OK)


# Why a file that is not JSON lines is refused (a .jsonl file's sentence says its first lines are of no kind).
NOT_THEIRS = "nothing at its start is of their kinds"
# How many entries of a folder that lists no session are looked at to say it holds files of no kind Wren reads.
_LOOKED_AT = 4096


def refuse_unknown_file(path: Path) -> None:
    """NotASession (exit 4, the one refusal) for a regular file `--dir` names whose kind Wren does not read."""
    if not path.is_file() or path.is_symlink():
        return  # a folder (what --dir names most often): nothing to recognise, the formats' kinds not loaded
    from ..foreign import kind_of, what_wren_opens  # what recognises a file's kind: only for a file named

    if of_no_kind(path, kind_of(path)):
        raise NotASession(path, what_wren_opens(), NOT_THEIRS)


def nothing_readable(folder: Path) -> str | None:
    """For a folder that lists no session: a sentence when it holds files (none of them a session Wren reads), so
    that it is not taken for an empty folder; None when it holds no file (or cannot be read: said elsewhere)."""
    files = looked = 0
    stack = [folder]
    while stack and looked < _LOOKED_AT:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    looked += 1
                    if entry.name.startswith("."):
                        continue  # hidden: Wren's own index (.index), a tool's folder, never a session it lists
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        files += 1
                    if looked >= _LOOKED_AT:
                        break
        except OSError:
            continue
    if not files:
        return None
    from ..foreign import what_wren_opens  # the formats' kinds: only for a folder of files none of them reads

    many = "+" if looked >= _LOOKED_AT else ""
    return (
        f"{folder}: {files}{many} file{'s' if files != 1 else ''}, none of them {what_wren_opens()}, so Wren lists "
        "no session in it"
    )


# A journals folder a person named (--dir or WREN_DIR) that is not there: a typo until it exists.
NO_FOLDER = "{}: no such folder; name the journals folder with --dir (or WREN_DIR), or leave both out"


def named_journals(option: str | None) -> Path:
    """The journals folder (--dir as given, else WREN_DIR, else the per-user default), refused when the person
    named it (--dir or WREN_DIR) and nothing is there: a folder named is a typo until it exists; the default
    folder is simply not made yet."""
    folder = journals_dir(option)
    if not os.path.lexists(folder) and (option or os.environ.get("WREN_DIR")):
        raise JournalError(NO_FOLDER.format(folder))
    return folder


def agent_places(agent: str, folder: str | None) -> list[tuple[Listed, Path]]:
    """Each agent named (`all`: every one) with the folder to list: `folder` (--dir) when given, else its own.

    Each agent is as a listing asks it (`FORMATS.home`): where every file is one session, its `Home`, with no
    reader loaded; its whole `Format` (`FORMATS[name]`) is loaded by what reads a file.
    """
    from ..foreign import FORMATS

    named = Path(os.path.expanduser(folder)) if folder else None
    if named is not None and not named.is_dir():
        raise JournalError(f"{named}: no such folder; name the agent's sessions folder with --dir, or leave it out")
    env = os.environ
    home = Path(env.get("HOME") or Path.home())
    places: list[tuple[Listed, Path]] = []
    for name in list(FORMATS) if agent == ALL else [agent]:
        listed = FORMATS.home(name)
        places.append((listed, named if named is not None else listed.folder.root(env, home)))
    return places
