"""The sessions Wren kept, as every command finds them: an agent's sessions are its own files and, for each one
its agent deleted or truncated after `wren keep` copied it, the kept copy in its place.

The one answer to "which sessions does this agent have, and which file is session ID" with the store in it
(`Kept.files`, `Kept.copy_of`): `wren ls`, `search` (and its index), `log`, `export`, `fork`, `watch` and
`mirror` ask it, never the store. A session still in the agent's folder is read there, as it grows: the kept
copy is read only when the agent's file is gone, or shorter than the copy after the agent truncated it. Each
session that is the store's (read from a copy, or rewritten by its agent) has its mark (`Kept.mark`), a
sentence every command shows: "kept; deleted by its agent on 2026-12-07 09:10 UTC". Nothing here writes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..foreign import FORMATS
from ..foreign.folders import KeptMark, found_files, member_path, session_files, split_member
from ..records import Frozen
from .store import VERSIONS, KeptFile, KeptVersion, agent_folder, kept_agents, kept_files, kept_root, kept_versions

if TYPE_CHECKING:
    from ..foreign import Format
    from ..foreign.folders import Listed


def when(iso: str) -> str:
    """An ISO time as a sentence says it: `2026-12-07 09:10 UTC` (the time as written when it is not ISO)."""
    if len(iso) >= 16 and iso[10:11] == "T":
        return f"{iso[:10]} {iso[11:16]} UTC"
    return iso


def sentence(kept: KeptFile, gone: bool) -> str | None:
    """What a command says of a kept session (None: nothing, the agent's file is as Wren kept it or newer).

    `gone`: the agent's file is not there now (deleted, whether or not `wren keep` has run since).
    """
    if gone:
        if kept.state == "deleted" and kept.changed_at:
            return f"kept; deleted by its agent on {when(kept.changed_at)}"
        return f"kept; deleted by its agent after {when(kept.kept_at)}"  # `wren keep` has not looked since
    at = f"on {when(kept.changed_at)}" if kept.changed_at else f"after {when(kept.kept_at)}"
    if kept.state == "truncated":
        return f"kept; truncated by its agent {at}; the kept copy is longer"
    if kept.state == "rewritten":
        return f"kept; rewritten by its agent {at}"
    return None


class _Found(Frozen):
    __slots__ = ("kept", "mark", "original", "read", "size", "version")
    kept: KeptFile
    original: Path  # where the agent keeps (or kept) it
    mark: KeptMark | None
    read: Path  # the copy a command reads when `mark.copy`: the latest, or for a truncated one the longer one
    version: int  # the kept version `read` is
    size: int  # its bytes the store counted

    def __init__(
        self, kept: KeptFile, original: Path, mark: KeptMark | None, read: Path, version: int, size: int
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "kept", kept)
        set_field(self, "original", original)
        set_field(self, "mark", mark)
        set_field(self, "read", read)
        set_field(self, "version", version)
        set_field(self, "size", size)


class Shipped(Frozen):
    """A kept session as the fleet carries it (`wren mirror`): the copy a command reads, and what is said of it."""

    __slots__ = ("agent", "copy", "mark", "relative", "session", "size", "version")
    agent: str
    session: str
    relative: str
    version: int
    copy: Path
    size: int
    mark: str | None

    def __init__(
        self, agent: str, session: str, relative: str, version: int, copy: Path, size: int, mark: str | None
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "agent", agent)
        set_field(self, "session", session)
        set_field(self, "relative", relative)
        set_field(self, "version", version)
        set_field(self, "copy", copy)
        set_field(self, "size", size)
        set_field(self, "mark", mark)


class Kept:
    """The kept store as the commands read it, for one environment (its folders and manifests read once, when first
    asked: a command makes one for its pass)."""

    def __init__(self, env: Mapping[str, str] | None = None, home: Path | None = None) -> None:
        self.env = os.environ if env is None else env
        self.home = home if home is not None else Path(self.env.get("HOME") or Path.home())
        self.root = Path(os.path.abspath(kept_root(self.env, self.home)))
        self._inside = os.path.join(str(self.root), "")  # a path below the store starts with this
        self._stored: list[str] | None = None  # the agents the store has a folder for, listed when first asked
        self._agents: dict[str, list[_Found]] = {}
        self._by_path: dict[str, _Found] = {}
        # Sessions a database's kept versions hold that the agent's database no longer does (`VERSION#ID`): their marks.
        self._members: dict[str, KeptMark] = {}

    # --- which sessions an agent has ---------------------------------------------------------------

    def files(self, fmt: Listed, root: Path, skipped: list[str] | None = None) -> list[Path]:
        """The session files of `fmt` under `root` (`folders.session_files`) and, when `root` is the agent's own
        folder, the kept copy of each one its agent deleted, in its place for one it truncated."""
        if self._own_root(fmt, root):
            return [Path(text) for text in self._with_kept(fmt, root, skipped, stat_each=False)[0]]
        return list(session_files(fmt, root, skipped))  # --dir: the store keeps the agent's own folder's sessions only

    def own_files(self, fmt: Listed, skipped: list[str] | None = None) -> list[Path]:
        """`files` of the agent's own folder (its variable, else its default, in this store's environment): the
        whole listing of an agent's sessions where --dir names no folder, its root found here."""
        return [Path(text) for text in self.own_found(fmt, skipped, stat_each=False)[0]]

    def own_listed(
        self, fmt: Listed, skipped: list[str] | None = None, *, stat_each: bool = True
    ) -> list[tuple[str, os.stat_result | None]]:
        """`own_files`, each by its path's text (`folders.listed`: no `Path` made for each file), each agent's file
        with how it was when found (stat'ed once, its link not followed); None for a kept copy read in its place, and
        for one gone since."""
        return list(zip(*self.own_found(fmt, skipped, stat_each=stat_each), strict=True))

    def own_found(
        self, fmt: Listed, skipped: list[str] | None = None, *, stat_each: bool = True
    ) -> tuple[list[str], list[os.stat_result | None]]:
        """`own_listed` as two lists of the same length (`folders.found_files`): the texts, and each one's stat (None
        for a kept copy read in its place, and for one gone since): a search's listing of thousands of files."""
        return self._with_kept(fmt, fmt.folder.root(self.env, self.home), skipped, stat_each=stat_each)

    def _with_kept(
        self, fmt: Listed, root: Path, skipped: list[str] | None, *, stat_each: bool
    ) -> tuple[list[str], list[os.stat_result | None]]:
        instead, lost = self._in_place(fmt)  # the store first, then the agent's folder: one trip down
        texts, stats = found_files(fmt, root, skipped, stat_each=stat_each)
        if instead:  # else nothing read in an agent's file's place: no lookup of each of thousands of paths
            by_text = {str(original): str(copy) for original, copy in instead.items()}  # as `listed` gives each file
            for at, text in enumerate(texts):
                copy = by_text.get(text)
                if copy is not None:
                    texts[at], stats[at] = copy, None
        for path in lost:
            texts.append(str(path))
            stats.append(None)
        return texts, stats

    def _in_place(self, fmt: Listed) -> tuple[dict[Path, Path], list[Path]]:
        """The kept copy read in place of each of `fmt`'s files its agent truncated (by the file's path), and the
        kept copies of the files it deleted."""
        instead: dict[Path, Path] = {}
        lost: list[Path] = []
        for found in self._of(fmt):
            if found.mark is None or not found.mark.copy:
                continue
            if os.path.lexists(found.original):
                instead[found.original] = found.read
            elif fmt.folder.is_session_file(found.kept.copy):
                lost.append(found.read)
        return instead, lost

    def lost_members(self, fmt: Format, database: Path, live: set[str]) -> list[Path]:
        """The sessions of the agent's database at `database` that a kept version holds and the database, holding
        `live`, no longer does: each as `VERSION_COPY#ID` of the newest version that holds it, marked deleted."""
        found = self._original(database)
        if found is None or (found.mark is not None and found.mark.copy):
            return []  # nothing kept of it, or the whole database is gone: its copy is listed whole
        versions = kept_versions(found.kept.agent, found.kept.relative, self.env, self.home)
        holding: dict[str, int] = {}  # each session: the newest version (its place in `versions`) that holds it
        for i, version in enumerate(versions):
            for session in version.sessions or ():
                holding[session] = i
        lost = []
        for session, i in holding.items():
            if session in live:
                continue
            path = member_path(versions[i].copy, session)
            self._members[os.path.abspath(path)] = _member_mark(versions, i)
            lost.append(path)
        return lost

    def holds_any(self) -> bool:
        """Whether the store keeps anything at all (else `mark` says nothing of any session)."""
        return bool(self._stored_agents())

    def holds(self, agent: str) -> bool:
        """Whether the store keeps anything of `agent` (its folder there is listed once, for every agent)."""
        return agent in self._stored_agents()

    def folders(self, fmt: Listed) -> list[Path]:
        """Where `fmt`'s kept copies and versions are (for a listing's cache to forget the rows of copies no longer
        read)."""
        return [agent_folder(fmt.name, self.env, self.home)]

    def copy_of(self, path: Path) -> Path | None:
        """The kept copy a command reads for the session at `path` (an agent's file, or `DB#ID` in one), or None:
        the agent's own file is read (it is there as kept, or newer), or Wren kept nothing of it."""
        base, member = split_member(path)
        found = self._original(base)
        if found is None:
            return None
        if member is not None and (found.mark is None or not found.mark.copy):
            return self._lost_member(base, member)
        if found.mark is None or not found.mark.copy:
            return None
        return found.read if member is None else member_path(found.read, member)

    def mark(self, path: str | Path) -> KeptMark | None:
        """The mark of the session at `path` (a kept copy, the agent's file, or a session `lost_members` or `copy_of`
        gave; its text, as a search hit has it), or None: nothing to say."""
        if not self._stored_agents():
            return None  # nothing kept: nothing to say of any of a listing's thousands of files
        member = self._members.get(os.path.abspath(path))
        if member is not None:
            return member
        base, session = split_member(Path(path))
        found = self._copy(base) or self._original(base)
        if found is None and session is not None:
            return self._version_member(base, session)
        return None if found is None else found.mark

    def shipped(self) -> list[Shipped]:
        """Every session the store keeps, of every agent, as the fleet ships it (the copy a command would read)."""
        out = []
        for agent in kept_agents(self.env, self.home):
            if agent not in FORMATS:
                continue
            fmt = FORMATS[agent]
            for found in self._of(fmt):
                out.append(
                    Shipped(
                        agent,
                        fmt.session_id(found.original),  # the agent's name for it, whichever copy is read
                        str(found.kept.relative),
                        found.version,
                        found.read,
                        found.size,
                        None if found.mark is None else found.mark.sentence,
                    )
                )
        return out

    # --- the store, read once ----------------------------------------------------------------------

    def _own_root(self, fmt: Listed, root: Path) -> bool:
        return os.path.realpath(root) == os.path.realpath(fmt.folder.root(self.env, self.home))

    def _of(self, fmt: Listed) -> list[_Found]:
        found = self._agents.get(fmt.name)
        if found is None:
            found = []
            if os.path.isdir(self.root / fmt.name):
                agent_root = fmt.folder.root(self.env, self.home)
                for kept in _readable(fmt.name, self.env, self.home):
                    # The store's own answer (aider's histories are kept by their whole path, not below its root).
                    original = kept.original or agent_root.joinpath(*kept.relative.parts)
                    mark, (read, version, size) = self._marked(kept, original)
                    found.append(_Found(kept, original, mark, read, version, size))
            for one in found:
                self._by_path[os.path.abspath(one.read)] = one
                self._by_path[os.path.abspath(one.kept.copy)] = one
                self._by_path[os.path.abspath(one.original)] = one
            self._agents[fmt.name] = found
        return found

    def _marked(self, kept: KeptFile, original: Path) -> tuple[KeptMark | None, tuple[Path, int, int]]:
        """Whether a command reads a kept copy in place of `original`, which (its path, version and size), and what
        it says of the session."""
        latest = (kept.copy, kept.versions, kept.size)
        try:
            size: int | None = os.stat(original, follow_symlinks=False).st_size
        except FileNotFoundError:
            size = None
        except OSError:
            return None, latest  # there but unreadable: the agent's file is listed, and says why
        if size is None:
            said = sentence(kept, gone=True)
            return (None if said is None else KeptMark(said, copy=True)), latest
        if kept.state == "truncated":
            # The newest version longer than the agent's file now (before the truncation) is read in its place;
            # none when the agent's file has grown past every kept version since: the agent's own is read.
            longer = [v for v in kept_versions(kept.agent, kept.relative, self.env, self.home) if v.size > size]
            said = sentence(kept, gone=False)
            if longer and said is not None:
                return KeptMark(said, copy=True), (longer[-1].copy, longer[-1].number, longer[-1].size)
            return None, latest
        # A document or a database is rewritten whole at every step (how Continue, Cline and OpenCode write): only an
        # appended log rewritten is news.
        said = sentence(kept, gone=False) if kept.state == "rewritten" and _appended(kept.relative) else None
        return (None if said is None else KeptMark(said, copy=False)), latest

    def _version_member(self, copy: Path, session: str) -> KeptMark | None:
        """The mark of `VERSION_COPY#ID`, a session read from a kept version of a database its agent deleted it from
        (only `lost_members` and `copy_of` give such a path)."""
        try:
            parts = Path(os.path.abspath(copy)).relative_to(self.root).parts
        except ValueError:
            return None
        if len(parts) < 4 or parts[0] not in FORMATS or parts[1] != VERSIONS:
            return None
        relative = PurePosixPath(*parts[3:])
        versions = kept_versions(parts[0], relative, self.env, self.home)
        holding = [i for i, v in enumerate(versions) if session in (v.sessions or ())]
        return _member_mark(versions, holding[-1]) if holding else None

    def _lost_member(self, database: Path, session: str) -> Path | None:
        """`VERSION#ID` for a session a kept version of the agent's `database` holds and the database no longer does."""
        from ..journal.errors import JournalError  # a database's sessions: read only for such a path

        found = self._by_path[os.path.abspath(database)]
        fmt = FORMATS[found.kept.agent]
        assert fmt.export is not None and fmt.export_all is not None
        versions = kept_versions(found.kept.agent, found.kept.relative, self.env, self.home)
        if not any(session in (v.sessions or ()) for v in versions):
            return None  # never kept: the agent's database says whether it holds it
        try:
            fmt.export(member_path(database, session))
            return None  # the agent's database still holds it: read there (the command exports it again)
        except JournalError:
            pass
        try:
            live = {s for path in fmt.export_all(database) if (s := split_member(path)[1]) is not None}
        except JournalError:
            return None  # the agent's database cannot be read: it says why when it is read
        if session in live:
            return None
        return next((path for path in self.lost_members(fmt, database, live) if split_member(path)[1] == session), None)

    def _copy(self, path: Path) -> _Found | None:
        """The kept session whose copy is `path`, if it is one (only the agent the copy's folder names is read)."""
        where = os.path.abspath(path)
        if not where.startswith(self._inside):
            return None  # not below the store (a listing asks it of each of thousands of the agents' own files)
        try:
            relative = PurePosixPath(Path(where).relative_to(self.root).as_posix())
        except ValueError:
            return None
        if len(relative.parts) < 3 or relative.parts[0] not in FORMATS:
            return None
        self._of(FORMATS[relative.parts[0]])
        return self._by_path.get(os.path.abspath(path))

    def _stored_agents(self) -> list[str]:
        """The agents the store has a folder for, listed once (a listing asks of each of thousands of files)."""
        if self._stored is None:
            try:
                self._stored = [name for name in os.listdir(self.root) if name in FORMATS]
            except OSError:
                self._stored = []  # nothing kept yet
        return self._stored

    def _original(self, path: Path) -> _Found | None:
        """The kept session whose original is `path`: only the agents the store has a folder for are read."""
        agents = self._stored_agents()
        if not agents:
            return None
        wanted = os.path.abspath(path)
        for name in agents:
            self._of(FORMATS[name])
            found = self._by_path.get(wanted)
            if found is not None:
                return found
        return None


def _member_mark(versions: list[KeptVersion], newest: int) -> KeptMark:
    """The mark of a session its agent deleted from a database, `versions[newest]` the newest kept version holding it:
    deleted when the next version was kept without it, or after the newest was kept (no version since)."""
    after = versions[newest + 1].kept_at if newest + 1 < len(versions) else None
    said = f"on {when(after)}" if after else f"after {when(versions[newest].kept_at)}"
    return KeptMark(f"kept; deleted by its agent {said}", copy=True)


def _appended(relative: PurePosixPath) -> bool:
    """Whether the agent appends to the file (a log of JSON lines), as `wren keep` tells a log from a document."""
    return relative.name.endswith(".jsonl")


def _readable(agent: str, env: Mapping[str, str], home: Path) -> list[KeptFile]:
    """The agent's kept files; none when its manifest cannot be read (`wren verify` says why, never a listing)."""
    try:
        return kept_files(agent, env, home)
    except (OSError, ValueError):
        return []
