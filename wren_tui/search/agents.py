"""Which agents' sessions search can read, and where each keeps them.

Wren's are the journals of its journals folder; another agent's (each format of `foreign.FORMATS`)
are its session files in its own folder (its variable, else its default), and the kept copies of those it
deleted or truncated after `wren keep` copied them (`keep.found`). A folder named with --dir
is every agent's: each file is the agent's whose lines it holds, as `wren ls --agent all --dir` reads
a folder (`foreign.every_agent.every_session`): a Wren journal is still searched up to its damage; a file
that is no session Wren knows is not searched (never guessed at). `wren search --agent` offers
`agents()`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from ..foreign import FORMATS, WREN
from ..foreign.folders import Home, split_member
from ..keep.found import Kept
from ..records import Record
from .foreign import ForeignSession
from .sources import SearchSource

if TYPE_CHECKING:
    from ..foreign import Format, Kind
    from ..foreign.folders import Listed

WREN_AGENT = "wren"


class Places(Record):
    """Where to look: Wren's journals folder, and the folder --dir names (None: each other agent's own)."""

    __slots__ = ("_split", "journals", "kept", "named", "recall", "skipped")
    journals: Path
    named: Path | None
    # A sentence for each folder that could not be listed (its sessions are not searched): said by the command.
    skipped: list[str]
    # Whether a file of the named folder is a Wren journal by what search's index read of it (not read again).
    recall: Callable[[Path], bool] | None
    # The sessions Wren kept (`wren keep`): those the agents lost are searched in their kept copies.
    kept: Kept

    def __init__(
        self,
        journals: Path,
        named: Path | None = None,
        skipped: list[str] | None = None,
        recall: Callable[[Path], bool] | None = None,
        kept: Kept | None = None,
    ) -> None:
        self.journals = journals
        self.named = named
        self.skipped = [] if skipped is None else skipped
        self.recall = recall
        self.kept = Kept() if kept is None else kept
        # A cache: the named folder's files, split by `in_named` when first asked.
        self._split: tuple[list[Path], list[tuple[Format, Path]]] | None = None

    def in_named(self) -> tuple[list[Path], list[tuple[Format, Path]]]:
        """The named folder's Wren journals (newest first) and other agents' files, each file looked at once."""
        if self._split is None:
            assert self.named is not None
            from ..foreign.every_agent import every_session  # a folder of every agent's: not by a search of their own

            wren: list[Path] = []
            foreign: list[tuple[Format, Path]] = []
            # A file is looked at (its format's reader imported) only when search's index does not recall it as Wren's.
            for kind, path in every_session(self.named, self.skipped, recall=self._recalled if self.recall else None):
                if kind == WREN:
                    wren.append(path)  # a Wren journal, maybe damaged past its first lines
                elif not isinstance(kind, str):
                    foreign += [(kind, session) for session in _sessions(kind, [path])]
                # else: a file no session Wren knows: never guessed at, not searched
            wren.sort(key=lambda path: path.name, reverse=True)  # newest first, as journal_paths lists them
            self._split = (wren, foreign)
        return self._split

    def _recalled(self, path: Path) -> Kind | None:
        return WREN if self.recall is not None and self.recall(path) else None


def wren_sessions(folder: Path) -> list[SearchSource]:
    """The journals of `folder`, newest first (none when it does not exist)."""
    from ..journal.store import journal_paths
    from .wren_session import WrenSession  # a journal as a source: not loaded by a search of another agent's only

    return [WrenSession(path) for path in journal_paths(folder)]


def _wren(places: Places) -> list[SearchSource]:
    if places.named is None:
        return wren_sessions(places.journals)
    from .wren_session import WrenSession

    return [WrenSession(path) for path in places.in_named()[0]]


def _foreign(agent: str, places: Places) -> list[SearchSource]:
    if places.named is not None:
        found_there = [(found, path) for found, path in places.in_named()[1] if found.name == agent]
        if not found_there:
            return []  # none of its files there: its reader is not loaded
        named = FORMATS[agent]
        paths = [path for found, path in found_there if found is named]
        return sorted((ForeignSession(path, named) for path in paths), key=_newest, reverse=True)
    if _nothing_of(agent, places.kept):
        return []  # `--agent all` on a machine without that agent: its reader is not loaded
    home = FORMATS.home(agent)  # its folder alone, its reader not loaded, where its every file is one session
    fmt = None if isinstance(home, Home) else FORMATS[agent]
    if fmt is None or fmt.export_all is None:
        # Each file stat'ed once, where it was found: the sort and the index's freshness check take that stat.
        texts, stats = places.kept.own_found(home, places.skipped)
        return _newest_first(texts, stats, home)
    paths = _sessions(fmt, places.kept.own_files(fmt, places.skipped), places.kept)
    return sorted((ForeignSession(path, fmt) for path in paths), key=_newest, reverse=True)


def _nothing_of(agent: str, kept: Kept) -> bool:
    """Whether `agent` has no session to list: its own folder (by the registry's rule) is not there, and Wren kept
    nothing of it. (A listing of a folder that is not there finds nothing, and says nothing of it.)"""
    root = FORMATS.own_folder(agent, kept.env, kept.home)
    if root is None:
        return False
    try:
        os.lstat(root)
    except FileNotFoundError:
        return not kept.holds(agent)
    except OSError:
        return False  # there but not to be looked at (a file on its way, no permission): the listing says why
    return False


def agents() -> tuple[str, ...]:
    """Whose sessions search reads: Wren's, and each format's of `foreign.FORMATS`, by name."""
    return (WREN_AGENT, *FORMATS)


def _listed(agent: str, places: Places) -> list[SearchSource]:
    return _wren(places) if agent == WREN_AGENT else _foreign(agent, places)


def sessions_of(
    agent: str,
    journals: Path,
    named: Path | None = None,
    skipped: list[str] | None = None,
    recall: Callable[[Path], bool] | None = None,
) -> list[SearchSource]:
    """The sessions of `agent` ("all": every agent's, newest first by when each file last changed).

    Wren's are read from `journals`, the others' from their own folders; `named` (the folder --dir
    names) is every agent's folder instead. `skipped` receives a sentence for each folder that
    could not be listed. `recall` says which files of `named` are Wren journals without their first bytes
    being read (`index.IndexRead.wren_as_read`: the index read them so and they have not changed since).
    """
    places = Places(journals, named, [] if skipped is None else skipped, recall)
    if agent != "all":
        return _listed(agent, places)
    found = [source for name in agents() for source in _listed(name, places)]
    if named is not None:  # a document of no agent's folder found there (an mca journal): its format is no agent's
        found += [ForeignSession(path, fmt) for fmt, path in places.in_named()[1] if fmt.name not in FORMATS]
    return sorted(found, key=_newest, reverse=True)


def _sessions(fmt: Format, files: Iterable[Path], kept: Kept | None = None) -> list[Path]:
    """The sessions of these files: each file, or each session a database holds (`DB#ID`) and, with `kept`, each
    one its agent deleted from it that a kept version holds (`keep.found.Kept.lost_members`)."""
    if fmt.export_all is None:
        return list(files)
    from ..journal.errors import JournalError  # a database's sessions, read now

    found: list[Path] = []
    for path in files:
        try:
            sessions = list(fmt.export_all(path))
        except JournalError:
            found.append(path)  # searched, to say why it cannot be read
            continue
        found += sessions
        if kept is not None:
            live = {session for member in sessions if (session := split_member(member)[1]) is not None}
            found += kept.lost_members(fmt, path, live)
    return found


_LOOKED_AT = attrgetter("looked.st_mtime")  # a listed session's time, as it was listed


def _newest_first(texts: list[str], stats: list[os.stat_result | None], listed: Listed) -> list[SearchSource]:
    """The sessions of the files at `texts`, each with its stat of `stats` (as listed), newest first, as `_newest`
    sorts them (equal times in the listing's order), with no key function of Python's called for each of thousands
    of files unless one was listed without its stat (a kept copy read in its place, a file gone): `_newest` then."""
    found: list[SearchSource] = [ForeignSession(text, listed, st) for text, st in zip(texts, stats, strict=True)]
    try:
        return sorted(found, key=_LOOKED_AT, reverse=True)
    except AttributeError:  # a session listed without its stat (None has no time): stat'ed now, or the oldest
        return sorted(found, key=_newest, reverse=True)


def _newest(source: SearchSource) -> float:
    if isinstance(source, ForeignSession):
        if source.looked is None:
            try:
                source.looked = os.stat(source.path_text, follow_symlinks=False)
            except OSError:
                return 0.0
        return source.looked.st_mtime
    try:
        return os.stat(source.path_text).st_mtime
    except OSError:
        return 0.0
