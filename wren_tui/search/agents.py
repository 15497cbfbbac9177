"""Which agents' sessions search can read, and where each keeps them.

One line per agent in `AGENTS`: its name, and the function that lists its sessions, newest first,
as search sources. Wren's are the journals of its journals folder; another agent's (Claude Code,
Codex, pi: `wren_tui.foreign`) are its session files in its own folder (its variable, else its
default). A folder named with --dir is every agent's: each file is the agent's whose lines it holds
(as `wren ls --agent all --dir` reads a folder): a file with a Wren session's name, or whose first
line starts as Wren's do, is a journal (a damaged journal is still searched up to its damage); a file
that is neither is not searched (`foreign.kind_of`: never guessed at). `wren search --agent` offers every line here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..foreign import FORMATS, WREN, Format, detect, kind_of
from ..foreign.listing import roots, session_files
from ..journal.errors import JournalError
from ..journal.store import SESSION_ID, journal_paths
from .foreign import ForeignSession
from .sources import SearchSource
from .wren import WrenSession

_WREN_HEAD = b'{"seq":'  # how every line of a Wren journal starts


@dataclass
class Places:
    """Where to look: Wren's journals folder, and the folder --dir names (None: each other agent's own)."""

    journals: Path
    named: Path | None = None
    # A sentence for each folder that could not be listed (its sessions are not searched): said by the command.
    skipped: list[str] = field(default_factory=list)
    _split: tuple[list[Path], list[tuple[Format, Path]]] | None = field(default=None, repr=False)

    def in_named(self) -> tuple[list[Path], list[tuple[Format, Path]]]:
        """The named folder's Wren journals (newest first) and other agents' files, each file looked at once."""
        if self._split is None:
            assert self.named is not None
            wren: list[Path] = []
            foreign: list[tuple[Format, Path]] = []
            for path in journal_paths(self.named):
                # A Wren session's name, or a Wren line's start, says it is a journal (no format read for it).
                kind = WREN if SESSION_ID.match(path.stem) or _head(path) == _WREN_HEAD else kind_of(path)
                if kind == WREN:
                    wren.append(path)  # a Wren journal, maybe damaged past its first lines
                elif isinstance(kind, Format):
                    foreign.append((kind, path))
                # else: a file no session Wren knows: never guessed at, not searched
            for folder in _subfolders(self.named):  # other agents keep theirs in nested folders
                for path in session_files(FORMATS["pi"], folder, self.skipped):  # pi's rule: every .jsonl
                    if (fmt := detect(path)) is not None:
                        foreign.append((fmt, path))
            for fmt in FORMATS.values():  # files that are not JSON lines (a database, Markdown), by content
                if fmt.export is not None:
                    found = session_files(fmt, self.named)
                    foreign += [(fmt, path) for path in _sessions(fmt, found) if detect(path) is fmt]
            self._split = (wren, foreign)
        return self._split


Lister = Callable[[Places], list[SearchSource]]


def wren_sessions(folder: Path) -> list[SearchSource]:
    """The journals of `folder`, newest first (none when it does not exist)."""
    return [WrenSession(path) for path in journal_paths(folder)]


def _wren(places: Places) -> list[SearchSource]:
    if places.named is None:
        return wren_sessions(places.journals)
    return [WrenSession(path) for path in places.in_named()[0]]


def _foreign(fmt: Format) -> Lister:
    def sessions(places: Places) -> list[SearchSource]:
        if places.named is not None:
            paths = [path for found, path in places.in_named()[1] if found is fmt]
        else:
            paths = [
                path
                for found, root in roots([fmt.name])
                for path in _sessions(found, session_files(found, root, places.skipped))
            ]
        return sorted((ForeignSession(path, fmt) for path in paths), key=_newest, reverse=True)

    return sessions


AGENTS: dict[str, Lister] = {"wren": _wren, **{name: _foreign(fmt) for name, fmt in FORMATS.items()}}


def sessions_of(
    agent: str, journals: Path, named: Path | None = None, skipped: list[str] | None = None
) -> list[SearchSource]:
    """The sessions of `agent` ("all": every agent's, newest first by when each file last changed).

    Wren's are read from `journals`, the others' from their own folders; `named` (the folder --dir
    names) is every agent's folder instead. `skipped` receives a sentence for each folder that
    could not be listed.
    """
    places = Places(journals, named, [] if skipped is None else skipped)
    if agent != "all":
        return AGENTS[agent](places)
    found = [source for lister in AGENTS.values() for source in lister(places)]
    return sorted(found, key=_newest, reverse=True)


def _sessions(fmt: Format, files: Iterable[Path]) -> list[Path]:
    """The sessions of these files: each file, or each session a database holds (`DB#ID`)."""
    if fmt.export_all is None:
        return list(files)
    found: list[Path] = []
    for path in files:
        try:
            found += fmt.export_all(path)
        except JournalError:
            found.append(path)  # searched, to say why it cannot be read
    return found


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _head(path: Path) -> bytes:
    """A file's first bytes, as many as a Wren line's start (b"" when it cannot be read: searched, to say why)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return _WREN_HEAD
    try:
        return os.pread(fd, len(_WREN_HEAD), 0)
    except OSError:
        return _WREN_HEAD
    finally:
        os.close(fd)


def _newest(source: SearchSource) -> float:
    if isinstance(source, ForeignSession):
        if source.looked is None:
            try:
                source.looked = os.stat(source.path, follow_symlinks=False)
            except OSError:
                return 0.0
        return source.looked.st_mtime
    try:
        return os.stat(source.path).st_mtime
    except OSError:
        return 0.0
