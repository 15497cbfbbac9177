"""The kept store's layout, and what reads it (no hashing, nothing written): the read API.

    <root>/<agent>/files/<path>          the latest kept copy of the agent's file at <agent's folder>/<path>
    <root>/<agent>/versions/<n>/<path>   version n of it, when a later version replaced it (rewritten, truncated)
    <root>/<agent>/manifest.jsonl        what was kept, one JSON line per step, each ending in its CRC-32
    <root>/lock                          held by the one `wren keep` that writes the store

`<root>` is $WREN_KEEP_DIR, else $XDG_STATE_HOME/wren/kept, else ~/.local/state/wren/kept. `files/` has the
agent's own layout, so each format's reader reads it as it reads the agent's folder.

The manifest is the truth: a copy counts once its line is there, and a line counts once it ends in a newline
and its CRC matches (a line torn by a kill did not count). Its lines (`op`):

- `copy`: version `v` of `rel` written whole (`size`, `sha256` of its bytes; a database's `content` digest and its
  `sessions`, the ids of its `session` table), `why` it was: `new`, `rewritten`
  (the agent rewrote it: the previous version was linked at versions/<v-1>/<rel> first), `truncated`.
- `grow`: the bytes [`from`, `size`) the agent appended, added to version `v` (`sha256` of those bytes alone).
- `seen`: the agent's file changed on disk (`src`) but not its content (a database written back unchanged).
- `gone`: the agent deleted its file; the kept copy stays.

Each `copy`/`grow`/`seen` line carries `src`, the agent's file's (size, mtime_ns, inode) when it was read (a
database's, then its WAL's, since SQLite writes the WAL alone until a checkpoint), so the
next `wren keep` reads only what changed. A version's checksum (`KeptFile.sha256`) is the sha256 of its bytes when
it was copied whole and never grew; one that grew is checked range by range (`wren verify`), and its checksum is
the sha256 of its ranges' sha256s, in order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from ..records import Frozen, Record

ENV = "WREN_KEEP_DIR"
FILES = "files"
VERSIONS = "versions"
MANIFEST = "manifest.jsonl"
LOCK = "lock"
# How a copy being written is named beside its place (never a name any agent's reader takes for a session).
PART = ".wren-part"

State = Literal["kept", "deleted", "rewritten", "truncated"]


def kept_root(env: Mapping[str, str], home: Path) -> Path:
    """$WREN_KEEP_DIR, else $XDG_STATE_HOME/wren/kept (an absolute one), else <home>/.local/state/wren/kept."""
    chosen = env.get(ENV)
    if chosen:
        return Path(os.path.expanduser(chosen))
    state = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(state):  # the XDG spec says a relative value is to be ignored
        state = os.path.join(home, ".local", "state")
    return Path(state) / "wren" / "kept"


def agent_folder(agent: str, env: Mapping[str, str], home: Path) -> Path:
    """Everything kept of one agent: its `files/`, `versions/` and manifest."""
    return kept_root(env, home) / agent


def kept_folder(agent: str, env: Mapping[str, str], home: Path) -> Path:
    """The latest kept copies of an agent's files, in the agent's own layout."""
    return agent_folder(agent, env, home) / FILES


def version_path(folder: Path, rel: str, number: int) -> Path:
    """Where version `number` of `rel` is kept once a later version replaced it (`folder`: the agent's): under
    `versions/<number>/`, in the agent's own layout and with the file's own name, as in `files/`."""
    return folder / VERSIONS / str(number) / rel


# --- the manifest's lines -------------------------------------------------------------------------

_CRC_MARK = b',"crc":"'
_CRC_TAIL = len(b',"crc":"xxxxxxxx"}')


def frame(record: Mapping[str, Any]) -> bytes:
    """One manifest line: the record as compact JSON, its CRC-32 (of the bytes before `,"crc":`) last, a newline."""
    import zlib  # where a record is written or read, not by every command that finds the store empty

    import msgspec

    body = msgspec.json.encode(record)[:-1]
    return b'%b,"crc":"%08x"}\n' % (body, zlib.crc32(body))


def unframe(line: bytes) -> dict[str, Any] | None:
    """The record of a manifest line (without its newline); None when its CRC does not match or it is no record."""
    import zlib

    import msgspec

    if len(line) < _CRC_TAIL + 2 or line[-_CRC_TAIL:-10] != _CRC_MARK or not line.endswith(b'"}'):
        return None
    try:
        if zlib.crc32(line[:-_CRC_TAIL]) != int(line[-10:-2], 16):
            return None
        record = msgspec.json.decode(line[:-_CRC_TAIL] + b"}")
    except (ValueError, msgspec.DecodeError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("rel"), str) else None


class Range(Record):
    """Bytes [start, stop) of a kept version, and their sha256."""

    __slots__ = ("sha256", "start", "stop")
    start: int
    stop: int
    sha256: str

    def __init__(self, start: int, stop: int, sha256: str) -> None:
        self.start = start
        self.stop = stop
        self.sha256 = sha256


class Version(Record):
    """One version of a kept file, as the manifest says: its bytes' ranges, when it was first and last kept."""

    __slots__ = ("content", "kept_at", "number", "ranges", "sessions", "why")
    number: int
    ranges: list[Range]
    kept_at: str
    why: str
    content: str | None  # a database's digest of what it holds (its header's counters aside)
    sessions: list[str] | None  # a database's sessions (OpenCode's, Kilo's `session` table), when known

    def __init__(
        self,
        number: int,
        ranges: list[Range],
        kept_at: str,
        why: str = "new",
        content: str | None = None,
        sessions: list[str] | None = None,
    ) -> None:
        self.number = number
        self.ranges = ranges
        self.kept_at = kept_at
        self.why = why
        self.content = content
        self.sessions = sessions

    @property
    def size(self) -> int:
        return self.ranges[-1].stop if self.ranges else 0

    @property
    def sha256(self) -> str:
        """The version's sha256 when it is one range; else the sha256 of its ranges' sha256s, in order."""
        if len(self.ranges) == 1:
            return self.ranges[0].sha256
        import hashlib  # OpenSSL's: only for a version of several ranges, not by every command that lists the store

        return hashlib.sha256(b"".join(bytes.fromhex(r.sha256) for r in self.ranges)).hexdigest()


class Entry(Record):
    """One kept file of an agent, replayed from its manifest lines."""

    __slots__ = ("changed_at", "current", "earlier", "racy", "rel", "src", "state")
    rel: str
    current: Version
    earlier: list[Version]
    # The agent's file's size, mtime_ns and inode when last read (a database's, then its WAL's: 0, 0, 0 for none).
    src: tuple[int, ...] | None
    racy: bool  # it was read within its timestamp's reach of a change: read it again next time
    state: State
    changed_at: str | None

    def __init__(
        self,
        rel: str,
        current: Version,
        earlier: list[Version] | None = None,
        src: tuple[int, ...] | None = None,
        racy: bool = False,
        state: State = "kept",
        changed_at: str | None = None,
    ) -> None:
        self.rel = rel
        self.current = current
        self.earlier = [] if earlier is None else earlier
        self.src = src
        self.racy = racy
        self.state = state
        self.changed_at = changed_at


class Manifest(Record):
    """An agent's manifest, read: each kept file by its path, and what of the manifest did not count."""

    __slots__ = ("damaged", "entries", "lines", "size", "torn")
    entries: dict[str, Entry]
    size: int  # the bytes that counted: up to the end of the last whole line
    lines: int
    damaged: list[tuple[int, str]]  # (line number, why) of whole lines that do not count
    torn: bool  # the last line has no newline: written when a kill came; it did not count

    def __init__(
        self, entries: dict[str, Entry], size: int, lines: int, damaged: list[tuple[int, str]], torn: bool
    ) -> None:
        self.entries = entries
        self.size = size
        self.lines = lines
        self.damaged = damaged
        self.torn = torn


def read_manifest(folder: Path, rels: Iterable[str] | None = None) -> Manifest:
    """The manifest of the agent whose kept folder is `folder` (an empty one when there is none); `rels`: the
    entries of those files alone (their lines found by their `"rel"` field, the others not decoded)."""
    try:
        with open(folder / MANIFEST, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        data = b""
    return replay(data, rels)


def _lines_of(data: bytes, end: int, rels: Iterable[str]) -> list[tuple[int, bytes]]:
    """The whole lines of `data[:end]` that name one of `rels`, with their numbers, in order."""
    import msgspec

    found: dict[int, bytes] = {}
    for rel in rels:
        needle = b'"rel":' + msgspec.json.encode(rel) + b","
        at = data.find(needle, 0, end)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            stop = data.find(b"\n", at)
            found[start] = data[start:stop]
            at = data.find(needle, stop, end)
    return [(data.count(b"\n", 0, start) + 1, found[start]) for start in sorted(found)]


def replay(data: bytes, rels: Iterable[str] | None = None) -> Manifest:
    entries: dict[str, Entry] = {}
    damaged: list[tuple[int, str]] = []
    end = data.rfind(b"\n") + 1
    if rels is not None:
        numbered = _lines_of(data, end, rels)
        return _replayed(entries, damaged, numbered, end, data.count(b"\n", 0, end), end < len(data))
    lines = data[:end].split(b"\n")[:-1] if end else []
    return _replayed(entries, damaged, enumerate(lines, 1), end, len(lines), end < len(data))


def _replayed(
    entries: dict[str, Entry],
    damaged: list[tuple[int, str]],
    numbered: Iterable[tuple[int, bytes]],
    end: int,
    count: int,
    torn: bool,
) -> Manifest:
    for number, line in numbered:
        record = unframe(line)
        if record is None:
            damaged.append((number, "its CRC does not match its bytes, or it is not a manifest record"))
            continue
        problem = _apply(entries, record)
        if problem is not None:
            damaged.append((number, problem))
    return Manifest(entries, end, count, damaged, torn=torn)


def _src(entry: Entry, record: Mapping[str, Any]) -> None:
    src = record.get("src")
    entry.racy = bool(record.get("racy"))
    entry.src = tuple(int(n) for n in src) if isinstance(src, list) and len(src) in (3, 6) else None


def _apply(entries: dict[str, Entry], record: dict[str, Any]) -> str | None:
    """The record's step on the entries; why it cannot apply, if it cannot (it is then left out)."""
    rel, op, at = record["rel"], record.get("op"), str(record.get("at", ""))
    entry = entries.get(rel)
    try:
        if op == "copy":
            why = str(record.get("why", "new"))
            version = Version(int(record["v"]), [Range(0, int(record["size"]), str(record["sha256"]))], at, why)
            version.content = record.get("content")
            sessions = record.get("sessions")
            version.sessions = [str(x) for x in sessions] if isinstance(sessions, list) else None
            if entry is None:
                entries[rel] = entry = Entry(rel, version)
            else:
                if version.number != entry.current.number:
                    entry.earlier.append(entry.current)
                entry.current = version
            if why in ("rewritten", "truncated"):
                if entry.state not in ("rewritten", "truncated"):
                    entry.changed_at = at
                entry.state = "truncated" if why == "truncated" or entry.state == "truncated" else "rewritten"
            elif entry.state == "deleted":
                entry.state, entry.changed_at = "kept", None
            _src(entry, record)
        elif entry is None:
            return f"it names {rel}, which no earlier line kept"
        elif op == "grow":
            if int(record["v"]) != entry.current.number or int(record["from"]) != entry.current.size:
                return f"it grows {rel} from a size its earlier lines do not give it"
            entry.current.ranges.append(Range(int(record["from"]), int(record["size"]), str(record["sha256"])))
            entry.current.kept_at = at
            _src(entry, record)
            if entry.state == "deleted":
                entry.state, entry.changed_at = "kept", None
        elif op == "seen":
            _src(entry, record)
            if entry.state == "deleted":
                entry.state, entry.changed_at = "kept", None
        elif op == "gone":
            if entry.state != "deleted":
                entry.state, entry.changed_at = "deleted", at
            entry.src = None
        else:
            return f"its op {op!r} is none the manifest knows"
    except (KeyError, TypeError, ValueError, IndexError):
        return f"its fields for {op!r} are not all there"
    return None


# --- the read API ---------------------------------------------------------------------------------


class KeptFile(Frozen):
    """One kept file: where its latest copy is, what it holds, and what became of the agent's own."""

    __slots__ = (
        "agent",
        "changed_at",
        "copy",
        "kept_at",
        "original",
        "relative",
        "sha256",
        "size",
        "state",
        "versions",
    )
    agent: str
    relative: PurePosixPath  # its path in the agent's folder, and in `kept_folder`
    copy: Path  # the latest kept copy
    size: int  # its bytes that counted (the copy may hold more, appended when a kill came: they did not count)
    sha256: str  # Version.sha256
    kept_at: str  # ISO time its latest bytes were kept
    state: State
    # When `wren keep` first saw the agent delete, rewrite or truncate it; None for "kept", and for "deleted"
    # when the agent's file is gone and no `wren keep` ran since (then: "deleted by its agent after <kept_at>").
    changed_at: str | None
    versions: int  # how many versions are kept (1: never rewritten)
    original: Path | None  # the agent's own file (None: the agent's folder is unknown here)

    def __init__(
        self,
        agent: str,
        relative: PurePosixPath,
        copy: Path,
        size: int,
        sha256: str,
        kept_at: str,
        state: State,
        changed_at: str | None,
        versions: int,
        original: Path | None = None,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "agent", agent)
        set_field(self, "relative", relative)
        set_field(self, "copy", copy)
        set_field(self, "size", size)
        set_field(self, "sha256", sha256)
        set_field(self, "kept_at", kept_at)
        set_field(self, "state", state)
        set_field(self, "changed_at", changed_at)
        set_field(self, "versions", versions)
        set_field(self, "original", original)


class KeptVersion(Frozen):
    """One version of a kept file: version `versions` is the latest copy (in `files/`), earlier ones in `versions/`."""

    __slots__ = ("copy", "kept_at", "number", "sessions", "sha256", "size", "why")
    number: int
    copy: Path
    size: int
    sha256: str
    kept_at: str
    why: str  # new, rewritten, truncated
    # A database's: the ids of the sessions this version holds (OpenCode's and Kilo's `session` table); None for
    # any other file, or a database without that table.
    sessions: tuple[str, ...] | None

    def __init__(
        self,
        number: int,
        copy: Path,
        size: int,
        sha256: str,
        kept_at: str,
        why: str,
        sessions: tuple[str, ...] | None = None,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "number", number)
        set_field(self, "copy", copy)
        set_field(self, "size", size)
        set_field(self, "sha256", sha256)
        set_field(self, "kept_at", kept_at)
        set_field(self, "why", why)
        set_field(self, "sessions", sessions)


def agent_root(agent: str, env: Mapping[str, str], home: Path) -> Path | None:
    """The agent's own folder of sessions (its format's `root`), None for a name no format has. An agent with no
    folder of its own (aider) has its files kept by their whole path: its root is the filesystem's."""
    from ..foreign import FORMATS

    if agent not in FORMATS:
        return None
    fmt = FORMATS[agent]
    return fmt.folder.root(env, home) if fmt.folder.own_folder else Path(Path(os.path.abspath(os.curdir)).anchor)


def kept_files(agent: str, env: Mapping[str, str], home: Path) -> list[KeptFile]:
    """Every file kept of `agent`, from its manifest (no copy is read or hashed; each original is only stat'ed)."""
    folder = agent_folder(agent, env, home)
    manifest = read_manifest(folder)
    root = agent_root(agent, env, home) if manifest.entries else None
    out = []
    for rel, entry in sorted(manifest.entries.items()):
        state, changed_at = entry.state, entry.changed_at
        original = root / rel if root is not None else None
        if state != "deleted" and original is not None and not os.path.lexists(original):
            state, changed_at = "deleted", None  # gone since the last `wren keep`
        out.append(
            KeptFile(
                agent,
                PurePosixPath(rel),
                folder / FILES / rel,
                entry.current.size,
                entry.current.sha256,
                entry.current.kept_at,
                state,
                changed_at,
                len(entry.earlier) + 1,
                original,
            )
        )
    return out


def kept_versions(agent: str, relative: PurePosixPath | str, env: Mapping[str, str], home: Path) -> list[KeptVersion]:
    """Every kept version of one file, oldest first (the last is the copy in `files/`); [] when none is kept."""
    folder = agent_folder(agent, env, home)
    entry = read_manifest(folder).entries.get(str(PurePosixPath(relative)))
    if entry is None:
        return []
    return [
        KeptVersion(
            v.number,
            folder / FILES / entry.rel if v is entry.current else version_path(folder, entry.rel, v.number),
            v.size,
            v.sha256,
            v.kept_at,
            v.why,
            tuple(v.sessions) if v.sessions is not None else None,
        )
        for v in [*entry.earlier, entry.current]
    ]


def kept_agents(env: Mapping[str, str], home: Path) -> list[str]:
    """The agents something is kept of (a folder with a manifest), by name."""
    root = kept_root(env, home)
    try:
        names = sorted(entry.name for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False))
    except OSError:
        return []
    return [name for name in names if (root / name / MANIFEST).is_file()]


def iter_versions(folder: Path, entry: Entry) -> Iterator[tuple[Version, Path]]:
    """Each version of an entry and where its copy is (the latest in `files/`)."""
    for v in entry.earlier:
        yield v, version_path(folder, entry.rel, v.number)
    yield entry.current, folder / FILES / entry.rel
