"""A session as a person names it, found and opened: the one way the commands and the viewer get at one.

A person names a session by its id, a Wren journal's path, another agent's file (JSON lines, a database or
`DB#ID` for one of its sessions, a Markdown chat history, an ATIF document), or a session a fleet's mirror
ships (`nats://SERVER/HOST/ID`). `open_session` takes any of them and gives its source, opened: `scan` reads
the session through once, `writer_alive` says whether something writes it now. On the way, `find` says which
file a name means (the kept copy of one its agent deleted or truncated, `keep.found`), `format_of` whose it is,
and `source_of` makes the source its content says it is. `watched` is what `wren watch` shows for what it is
given: a session, a folder of journals, a database of sessions, the agents' own folders, or a fleet.

Nothing here prints: what a person is told on the way (a kept copy read in place of a file) goes to `say`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Literal, overload

from ..fleet.names import is_remote, parse_ref
from ..foreign import FORMATS, Format, detect, identify, kind_of, what_wren_opens
from ..foreign.folders import split_member
from ..journal.errors import JournalError, NotASession, SessionNotFound
from ..journal.store import (
    DOCUMENT_SUFFIX,
    SUFFIX,
    is_session_id,
    journal_paths,
    journals_dir,
    latest,
    starts_as_journal,
)
from ..journal.store import resolve as resolve_journal
from ..journal.visible import visible
from ..keep.found import Kept
from .refusal import ALL, NO_FOLDER, NOT_THEIRS, agent_places, of_no_kind

if TYPE_CHECKING:
    from ..fleet.names import RemoteRef
    from ..journal.reader import EventSink
    from ..journal.verdict import ReadVerdict
    from .foreign import ForeignFile
    from .local import LocalJournal
    from .tailing import WatchMode

Say = Callable[[str], object]
# `--agent all`: every agent's folder.


def quiet(_sentence: str) -> None:
    """Tell no one (`say` when the caller has no one to tell: a test, a script)."""


# --- which file a name means --------------------------------------------------------------------


def wren_journal(folder: Path, ref: str) -> Path | None:
    """The journal `ref` names when it begins as a Wren journal (`store.starts_as_journal`), else None.

    That is what `format_of` finds first too, without loading other agents' formats: a command on a Wren
    journal starts that much sooner. Anything else (no such journal, another agent's file, an empty one)
    is None, and the caller asks `find`.
    """
    try:
        path = resolve_journal(folder, ref)
    except SessionNotFound:
        return None
    # Named as Wren names its journals, too: a file of the design's lines (mca) starts so, and is not Wren's.
    return path if path.suffix == SUFFIX and is_session_id(path.stem) and starts_as_journal(path) else None


def find(folder: Path, ref: str, say: Say = quiet) -> Path:
    """The session a person means (`journal.store.resolve`), or another agent's file that is not JSON lines
    (a database, or `DB#ID` for one of its sessions; a Markdown chat history), by its content; for a session
    Wren kept that its agent deleted or truncated (`wren keep`), the kept copy, its mark told to `say`.

    SessionNotFound, or NotASession for a file of no kind Wren reads (a .json that is no ATIF trajectory among them):
    what it finds is a session Wren opens, and `foreign.identify` then says whose."""
    try:
        found = resolve_journal(folder, ref)
    except SessionNotFound:
        path = Path(os.path.expanduser(ref))
        base = split_member(path)[0]
        if "\x00" not in ref and base.is_symlink() and base.suffix not in (SUFFIX, DOCUMENT_SUFFIX):
            raise SessionNotFound(
                f"{base}: is a symbolic link; sessions are opened only directly (name the file it points to)"
            ) from None
        if "\x00" not in ref and base.is_file() and not base.is_symlink():
            kind = kind_of(path)
            if isinstance(kind, Format) and kind.export is not None:
                return _kept(path, say)
            if of_no_kind(path, kind):
                # A file a person named, of no kind Wren reads (a .db, .yaml, .md, .json of another program's):
                # the one refusal, naming what Wren reads, never "not a session id".
                raise NotASession(path, what_wren_opens(), NOT_THEIRS) from None
        kept = Kept()
        if "\x00" in ref or kept.copy_of(path) is None:
            raise
        return _kept(path, say, kept)
    if is_session_id(ref):
        return found  # a Wren session's id: never another agent's
    _refuse_no_trajectory(found)
    return _kept(found, say)


def _kept(path: Path, say: Say, kept: Kept | None = None) -> Path:
    """The file read for the session at `path`: its kept copy when its agent deleted or truncated it, else `path`;
    what the store says of it (`keep.found`) is told to `say` first."""
    kept = kept or Kept()
    read = kept.copy_of(path) or path
    mark = kept.mark(path) or (kept.mark(read) if read != path else None)
    if mark is not None:
        also = f"; Wren's kept copy is read: {read}" if read != path else ""
        say(visible(f"{path}: {mark.sentence}{also}"))
    return read


def format_of(path: Path) -> Format | None:
    """The format of another agent's session file (by its content), or None for a Wren journal; NotASession
    (naming what Wren opens) for a file that is neither.

    A .json file is opened only when its content is an ATIF trajectory (NotASession otherwise).
    """
    _refuse_no_trajectory(path)
    return identify(path)


def _refuse_no_trajectory(path: Path) -> None:
    """NotASession (naming what Wren opens) for a .json file that is no ATIF trajectory."""
    if path.suffix == DOCUMENT_SUFFIX and not isinstance(kind_of(path), Format):
        raise NotASession(path, what_wren_opens(), 'no "schema_version": "ATIF-v..." at its start')


# --- a session opened ------------------------------------------------------------------------------


def source_of(
    path: Path, fmt: Format | None = None, *, watch_mode: WatchMode = "auto", journals: Path | None = None
) -> LocalJournal | ForeignFile:
    """The source of the session file at `path`, not opened yet: another agent's in `fmt` (else in the format its
    content says), or a Wren journal. `journals`: where a fork of another agent's session goes (else the default)."""
    return _source(path, fmt or detect(path), journals, watch_mode)


def _source(
    path: Path, fmt: Format | None, journals: Path | None, watch_mode: WatchMode = "auto"
) -> LocalJournal | ForeignFile:
    """The source of the session file at `path` in `fmt` as known (None: a Wren journal, its format not asked again:
    that would load every other agent's reader), not opened yet."""
    if fmt is None:
        from .local import LocalJournal

        return LocalJournal(path, watch_mode=watch_mode, journals=journals)
    from .foreign import ForeignFile  # another agent's reader: loaded for its sessions alone

    return ForeignFile(path, fmt, watch_mode=watch_mode, journals=journals)


@overload
def open_session(
    ref: str, folder: str | None = None, *, fleet: Literal[False], say: Say = ...
) -> LocalJournal | ForeignFile: ...


@overload
def open_session(
    ref: str, folder: str | None = None, *, fleet: bool = True, say: Say = ...
) -> LocalJournal | ForeignFile | FleetSession: ...


def open_session(
    ref: str, folder: str | None = None, *, fleet: bool = True, say: Say = quiet
) -> LocalJournal | ForeignFile | FleetSession:
    """The session `ref` names (an id, a path, another agent's file, `DB#ID`; with `fleet`, nats://SERVER/HOST/ID too),
    opened whole: its `scan` reads it through, its `writer_alive` says whether it is written now; the caller closes it.

    `folder`: --dir as given (else WREN_DIR, else the default), where an id is looked up and another agent's
    session forks. SessionNotFound, NotASession (a file of no kind Wren reads), JournalError, FleetError say why not.
    """
    if fleet and is_remote(ref):
        return FleetSession.named(ref)
    journals = journals_dir(folder)
    path, fmt = wren_journal(journals, ref), None
    if path is None:  # not plainly a Wren journal: other agents' formats load (they take a while) to tell what it is
        path = find(journals, ref, say)  # a file of no kind Wren reads is refused here, not opened
        fmt = identify(path)
    return open_file(path, fmt, journals)


def open_file(path: Path, fmt: Format | None, journals: Path | None = None) -> LocalJournal | ForeignFile:
    """The session file at `path` (another agent's in `fmt`; None: a Wren journal) opened whole, as `open_session`."""
    source = _source(path, fmt, journals)
    if not source.open(whole=True):
        raise SessionNotFound(f"{path}: no such file")
    return source


# --- what `wren watch` shows -------------------------------------------------------------------------


@dataclass(frozen=True)
class Watched:
    """What `wren watch` shows for what it was given.

    - `fleet`: a fleet's server (every host's sessions, a host's, or one session), read over the network;
    - `agents`: the agents' own folders, browsed (each with its format; None: each file by its content);
    - else the journals of `folder`, browsed, or `session` opened (a Wren journal or another agent's file).

    `journals` is where a fork of another agent's (or a fleet's) session goes: the journals folder.
    """

    folder: Path
    session: Path | None
    journals: Path
    agents: list[tuple[Format | None, Path]] | None = None
    fleet: RemoteRef | None = None


def watched(
    target: str | None,
    *,
    folder: str | None = None,
    agent: str | None = None,
    pick: bool = False,
    databases: bool = True,
    say: Say = quiet,
) -> Watched:
    """What `wren watch TARGET` shows: `target` a session (id, path, another agent's file), a folder, a fleet's
    nats:// reference, or None (the journals folder; with `pick`, its latest session). `folder`: --dir as given
    (with `agent`, the agent's sessions folder); `agent`: --agent NAME|all; `databases`: a database of several
    sessions is browsed (each a row) rather than opened.

    JournalError (a folder named that is not there), SessionNotFound, NotASession say why not.
    """
    if agent is not None:
        # Forks go to the journals folder of WREN_DIR or the default: --dir names the agent's folder here.
        folders = agent_folders(agent, folder)
        return Watched(folders[0][1], None, journals_dir(None), agents=folders)
    if target is not None and is_remote(target):
        ref = parse_ref(target)
        journals = journals_dir(folder)
        return Watched(journals, None, journals, fleet=ref)
    journals = journals_dir(folder)
    if target is not None and not Path(os.path.expanduser(target)).is_dir():
        session = find(journals, target, say)  # a file of no kind Wren reads is refused here, not opened
        fmt = identify(session)
        if databases and fmt is not None and fmt.export_all is not None and split_member(session)[1] is None:
            with suppress(JournalError):  # unreadable: the session screen says why
                if len(fmt.export_all(session)) > 1:
                    # A database of several sessions (OpenCode's) is browsed: each of its sessions is a row.
                    return Watched(session.parent, None, journals, agents=[(fmt, session.parent)])
        return Watched(session.parent, session, journals)
    if target is not None:
        # A folder: its journals, or its journals/ when it holds none and that does (a workspace was named).
        named = Path(os.path.expanduser(target))
        inner = named / "journals"
        where = inner if not journal_paths(named) and inner.is_dir() else named
        return Watched(where, latest(where) if pick else None, journals)
    if not os.path.lexists(journals) and (folder or os.environ.get("WREN_DIR")):
        raise JournalError(NO_FOLDER.format(journals))  # named with --dir or WREN_DIR, and not there: as ls says
    if os.path.lexists(journals) and not journals.is_dir():
        raise JournalError(f"{journals} is not a folder; give --dir the journals folder (or set WREN_DIR)")
    return Watched(journals, latest(journals) if pick else None, journals)


def agent_folders(agent: str, folder: str | None) -> list[tuple[Format | None, Path]]:
    """The folders of `agent`'s sessions (`all`: every agent's): `folder` (--dir) for each, else each agent's own
    (`foreign.listing.roots`); with `all` and a folder, that one folder with no format (each file by its content)."""
    places = agent_places(agent, folder)
    if agent == ALL and folder:
        return [(None, places[0][1])]  # one folder for all: each file by its content
    return [(FORMATS[listed.name], root) for listed, root in places]  # the viewer reads them: each whole Format


@dataclass(frozen=True)
class FleetSession:
    """A session a fleet's mirror ships (nats://SERVER/HOST/SESSION), read from the fleet's server as a file is."""

    ref: RemoteRef

    @classmethod
    def named(cls, text: str, what: str = "log reads one session") -> FleetSession:
        """The session `text` names; FleetError for a server or a host alone, saying what `wren {what}`."""
        from ..fleet import FleetError

        ref = parse_ref(text)
        if ref.host is None or ref.session is None:
            raise FleetError(f"{text!r}: wren {what}: nats://SERVER[:PORT]/HOST/SESSION")
        return cls(ref)

    @property
    def id(self) -> str:
        assert self.ref.session is not None
        return self.ref.session

    @property
    def where(self) -> str:
        return str(self.ref)

    @property
    def agent(self) -> None:
        return None  # a fleet mirrors Wren's journals

    def scan(self, sink: EventSink, *, every_branch: bool = False, redact: bool = False) -> ReadVerdict:
        """Every event the fleet's stream holds, in order, to `sink`; the verdict after (as `scan_events`)."""
        verdict: ReadVerdict = _remote_module().scan_remote(self.ref, sink)
        return verdict

    def writer_alive(self) -> bool:
        """Whether its host still writes it, as the session's row on the fleet's server says (its state is live)."""
        import asyncio

        remote = _remote_module()
        host, session = self.ref.host, self.ref.session

        async def live() -> bool:
            async with await remote.Fleet.connect(self.ref.server) as fleet:
                found = await fleet.session(host, session)
                return found is not None and found.state == "live"

        return asyncio.run(live())

    def close(self) -> None:
        return None


def _remote_module() -> ModuleType:
    """`fleet.remote`, which needs nats-py, or a FleetError that says how to install it."""
    from ..fleet import needing_nats

    with needing_nats():
        from ..fleet import remote
    return remote
