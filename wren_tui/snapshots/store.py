"""Workspace snapshots: the files of a workspace as content-addressed trees in Wren's own store.

The store is a bare git repository, `.snapshots` inside the journals folder (0700), driven through
the `git` program's plumbing with GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE pointing at it and no
other GIT_* variable of the caller's environment let in. The workspace's own `.git` (its refs,
index, stash, hooks, config) is never opened: git skips every path component named `.git`, and
the store reads neither the workspace's `info/exclude` nor the person's git config. Nor is the store's
own config trusted: before every git command the store is checked (`Store._check`: Wren's mark, its
config byte for byte Wren's, its attributes rewritten), so no config or attribute there can make git
run a program. A snapshot's
id is the tree's object id; a per-session index in the store is the stat cache that makes a
snapshot of a large, mostly unchanged workspace hash only what changed.

Durable before named: git writes each object with fsync (core.fsync), and the folders of
`objects/` that gained an entry are fsynced before `take` returns, so the journal event that names
a snapshot is written only after everything it names is on disk.

What is not covered is listed, never skipped silently: files the workspace's .gitignore rules
ignore, files over `max_file_size`, FIFOs, sockets and devices, folders that are git repositories
of their own (a nested `.git`), and names git refuses to hold (`git_refuses`).

Prune beside a run: `take` holds the store's lock shared and records its tree (`pending/`) before
letting go; `prune` holds it exclusively and keeps what the records and the journals name.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import shutil
import stat
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, Unpack

from ..journal.events import Event, Fork, Rewind, RunStart, Snapshot, ToolStart
from ..journal.targets import fsync_dir, kind_of
from ..portable import O_BINARY, O_CLOEXEC, O_NOFOLLOW, fcntl

STORE = ".snapshots"
# A file over this size is listed as not covered rather than stored (see docs/snapshots.md).
MAX_FILE_SIZE = 50 * 1024 * 1024
# At most this many not-covered paths go into a snapshot event; the count is always whole.
LISTED = 50
# From this many changed files on, a snapshot writes its objects as one pack (one fsync, not one per file).
BULK = 64
# Up to this many files, a snapshot is taken in this process (`gitfiles`) rather than by `git add` and
# `git write-tree`: two processes' start-up was most of what a snapshot of a small workspace cost. Python
# spends about 20 us a file on what git does in C (stat, compare, the trees), as much as those two start-ups
# at about 300 files (measured: 6.4 ms here against 8.5 ms through git at 200 files, 18 ms against 10.5 at 1,000).
# Against a realistic run the speed is within noise (issue #38): the demo fix task, the scripted model taking
# exactly 1 s a request, 6 runs each way interleaved: 6.755 s median (6.590-7.023) in process against 6.748 s
# (6.643-6.935) through git alone; its 4 snapshots took 86 ms against 143 ms of the run. It is kept for what
# only it does (tests/journal/test_snapshot_reading.py, which fail through git alone): a damaged loose object
# written again, a same-size rewrite with its mtime put back seen by its ctime, files opened without
# following a link swapped in and streamed in bounded memory.
IN_PROCESS = 300
MIN_GIT = (2, 36)  # core.fsync
# git's parallel checkout: a worker a core (0), from 100 files on (its own default threshold).
_PARALLEL = {"checkout.workers": "0", "checkout.thresholdForParallelism": "100"}
_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# Every invocation gets exactly this configuration: nothing from the system's or the person's.
_CONFIG = {
    "core.fsync": "loose-object,reference,pack",
    "core.fsyncMethod": "fsync",
    # Loose objects (a snapshot's few changed files and its trees) compressed; packs (a first snapshot's
    # files, prune's packs) stored: inflating them was most of the time of a fork with files.
    "core.looseCompression": "1",
    "core.compression": "0",
    "pack.compression": "0",
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "core.symlinks": "true",
    "core.fileMode": "true",
    "core.ignoreCase": "false",
    "core.precomposeUnicode": "false",
    "core.excludesFile": os.devnull,
    "core.hooksPath": os.devnull,
    "core.untrackedCache": "false",
    "core.fsmonitor": "false",
    "core.quotePath": "false",
    "checkout.workers": "0",
    "gc.auto": "0",
    "diff.external": "",
    "diff.noprefix": "false",
    # Nothing outside the store's own attributes (rewritten by Wren, see `_ATTRIBUTES`) is read.
    "core.attributesFile": os.devnull,
    # git refuses these names (`.GIT`, `git~1`, `.git.`...) on every platform: `git_refuses` keeps them out.
    "core.protectNTFS": "true",
    "core.protectHFS": "true",
    # The store has no remote: no transport of any protocol (and so no ssh, proxy or credential program).
    "protocol.allow": "never",
    "credential.helper": "",
}
# The store's own attributes win over a workspace's .gitattributes: bytes in, the same bytes out, no filter
# program. Rewritten whenever they differ (`Store._check`). `diff` is left alone: unset, it would make every
# file binary to `wren diff-files`; no diff driver can be defined anyway (the store's config is Wren's own).
_ATTRIBUTES = b"* -text -ident -filter -working-tree-encoding -crlf -merge\n"
# The store's whole config, as Wren writes it; a store whose config is anything else is not used. git reads a
# repository's own config whatever the environment says, and a config can name programs (filters, fsmonitor,
# hooks, textconv, an include of another file): checking its bytes closes all of them at once.
_STORE_CONFIG = b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n"
# The lines `git init --bare` writes (any version, any platform): an unmarked store with only these is adopted.
_INIT_LINES = frozenset(
    {
        b"[core]",
        b"repositoryformatversion = 0",
        b"filemode = true",
        b"filemode = false",
        b"bare = true",
        b"ignorecase = true",
        b"precomposeunicode = true",
        b"symlinks = false",
    }
)
# The mark of a store Wren made: without it (and not an earlier Wren's store), the folder is refused.
MARK = "wren-store"
# The store's lock (`Store._locked`) and the trees runs are about to name (`Store._register`).
LOCK = "wren.lock"
PENDING = "pending"
_NOFOLLOW = O_NOFOLLOW
_MARK = b"a workspace snapshot store made by Wren (docs/snapshots.md); its config is Wren's own\n"
# The mark while a store is being made (written first, before `git init`): a run that finds it under the store's
# lock knows the run making the store was killed part way, clears what that run made and makes the store again.
_MAKING = b"a workspace snapshot store Wren began to make; a run finding this under the store's lock makes it anew\n"
# What making a store writes in its folder (`git init --bare --template=` and Wren's own): all a cleared one holds.
_MADE_NAMES = frozenset(
    {"HEAD", "config", "description", "objects", "refs", "info", "hooks", "branches", "indexes", PENDING, LOCK, MARK}
)
# A temporary file `_write_atomic` makes beside one of those names, left by a kill before its rename.
_TEMPORARY = re.compile(r"\.(?P<name>[^/]+)\.\d+\.\d+\.tmp")


def _left_by_making(name: str) -> bool:
    """Whether `name`, in a store's folder, is one a run making the store leaves when killed: its lock, or the
    temporary file of one of the names making writes (the making mark's first)."""
    temporary = _TEMPORARY.fullmatch(name)
    return name == LOCK or (temporary is not None and temporary["name"] in _MADE_NAMES)


# Files that point git at other folders (objects, config): a store with any of them is not used.
_REDIRECTS = ("commondir", "gitdir", "objects/info/alternates", "objects/info/http-alternates", "config.worktree")


Entry = tuple[str, str]  # (mode, object id), as `Store.files_of`


@dataclass(frozen=True)
class Compared:
    """What differs between two snapshots (`Store.compared`)."""

    entries: dict[bytes, tuple[Entry | None, Entry | None]]  # path -> its entry in a, in b (None: not there)
    lines: dict[bytes, tuple[int, int]]  # path -> lines added, removed (none for a binary file)


_PAIR_LINE = re.compile(rb"([0-9a-f]{40}(?:[0-9a-f]{24})?) ([0-9a-f]{40}(?:[0-9a-f]{24})?)\n")


def _compared(out: bytes) -> dict[tuple[str, str], Compared]:
    """Parse `git diff-tree --stdin -z --raw --numstat`: each pair's line ("A B\\n"), then its records."""
    found: dict[tuple[str, str], Compared] = {}
    current: Compared | None = None
    items = iter(out.split(b"\0"))
    for item in items:
        # A pair's line starts the item that follows the last record (never a path: those follow a ":" record).
        while (head := _PAIR_LINE.match(item)) is not None:
            current = found[head[1].decode(), head[2].decode()] = Compared({}, {})
            item = item[head.end() :]
        if current is None or not item:
            continue
        if item.startswith(b":"):
            path = next(items, b"")
            mode_a, mode_b, oid_a, oid_b, _status = item[1:].decode().split()
            current.entries[path] = (
                None if mode_a == "000000" else (mode_a, oid_a),
                None if mode_b == "000000" else (mode_b, oid_b),
            )
        elif item.count(b"\t") >= 2:
            added, removed, path = item.split(b"\t", 2)
            if added != b"-":  # a binary file has no lines
                current.lines[path] = (int(added), int(removed))
    return found


# What a point whose snapshot a prune dropped to keep the store within its budget says (`wren fork ID`).
THINNED = "files thinned"


class SnapshotError(Exception):
    """A snapshot could not be taken or read; the message is one sentence."""


class SnapshotsOff(SnapshotError):
    """Snapshots cannot be taken on this machine (no git, or one too old)."""


@dataclass(frozen=True)
class Taken:
    """One snapshot: the tree's id, how many files it holds, how many changed since the last one."""

    id: str
    files: int
    changed: int
    not_covered: list[str] = field(default_factory=list)
    not_covered_count: int = 0


@dataclass(frozen=True)
class FilesAt:
    """The snapshot of the files at a point (`id`), or why there is none (`why`, a sentence's end)."""

    id: str | None
    why: str = ""


def files_at(events: Sequence[Event], seq: int) -> FilesAt:
    """The snapshot that holds the workspace's files as they were at event `seq` (a clean point).

    That is the first snapshot after it, as long as no call with side effects started in between
    (a snapshot comes before its call's tool_start): the files the conversation went on with, in
    this run or, after an interruption, in the run that resumed it. Failing that, the last one
    before it, with no such call and no new run between; a fork event carries its parent's.
    """
    at = next((i for i, e in enumerate(events) if e.seq == seq), None)
    if at is None:
        return FilesAt(None, f"there is no event {seq}")
    for event in events[at + 1 :]:
        if isinstance(event, Snapshot):
            if event.id:
                return FilesAt(event.id)
            if event.off:
                break
        elif isinstance(event, Fork) and event.snapshot:
            return FilesAt(event.snapshot)
        elif isinstance(event, Rewind) or (isinstance(event, ToolStart) and not event.read_only):
            break  # a rewind changed the files
    for event in reversed(events[: at + 1]):
        if isinstance(event, Snapshot):
            if event.id:
                return FilesAt(event.id)
            return FilesAt(None, event.off or "snapshots were off")
        if isinstance(event, Fork) and event.snapshot:
            return FilesAt(event.snapshot)
        if isinstance(event, Rewind):
            return FilesAt(event.snapshot)  # the files a rewind put back (a file it kept is not the session's)
        if isinstance(event, RunStart) or (isinstance(event, ToolStart) and not event.read_only):
            break
    offs = [e for e in events if isinstance(e, Snapshot) and e.off]
    if offs:
        said = next((e for e in reversed(offs) if e.seq < seq), offs[0]).off or "snapshots were off"
        # The sentence goes on to what that means for a fork: the caller says that in its own words.
        return FilesAt(None, re.split(r"[:;] a fork of", said)[0])
    if not any(isinstance(e, Snapshot) for e in events):
        return FilesAt(None, "the session has no snapshots (it was written without them)")
    return FilesAt(None, f"no snapshot was recorded at seq {seq} (the run stopped before it took one)")


EDIT_TOOLS = frozenset({"write_file", "edit_file"})
"""The tools that edit files (a change after one of them is an edit)."""
SHELL_TOOLS = frozenset({"run_command"})
"""The tools that run commands (a change after one of them came from a command)."""


@dataclass(frozen=True)
class CallChange:
    """A call with side effects and how many files differ between the snapshots before and after it."""

    seq: int
    id: str
    tool: str
    kind: str  # edit, shell or other
    files: int


@dataclass(frozen=True)
class PointChange:
    """What changed in the files from a clean point to the session's last snapshot."""

    seq: int
    files_changed: int | None  # None: no snapshot at the point (why says why)
    calls: list[CallChange]
    why: str = ""


def last_snapshot(events: Sequence[Event]) -> str | None:
    for event in reversed(events):
        if isinstance(event, Snapshot) and event.id:
            return event.id
    return None


def call_changes(events: Sequence[Event], store: Store) -> list[CallChange]:
    """Each call with side effects that ran, with the files that differ between its snapshot and the next."""
    names = {e.id: e.name for e in events if isinstance(e, ToolStart)}
    snaps = [e for e in events if isinstance(e, Snapshot) and e.id]
    present = store.present(s.id for s in snaps)
    found: list[CallChange] = []
    for here, after in itertools.pairwise(snaps):
        if here.before is None or here.before not in names or not {here.id, after.id} <= present:
            continue  # a thinned snapshot: what that call changed is not known any more
        tool = names[here.before]
        kind = "edit" if tool in EDIT_TOOLS else "shell" if tool in SHELL_TOOLS else "other"
        found.append(CallChange(here.seq, here.before, tool, kind, len(store.changed_between(here.id, after.id))))
    return found


def point_changes(events: Sequence[Event], seqs: Iterable[int], store: Store) -> list[PointChange]:
    """Each clean point: how many files differ from it to the last snapshot, and the calls after it that changed any."""
    last = last_snapshot(events)
    calls = call_changes(events, store) if last else []
    result: list[PointChange] = []
    wanted = list(seqs)
    at_each = {seq: files_at(events, seq) for seq in wanted}
    present = store.present([a.id for a in at_each.values() if a.id] + ([last] if last else []))
    for seq in wanted:
        at = at_each[seq]
        if at.id is None or last is None:
            result.append(PointChange(seq, None, [], at.why or "the session has no snapshots"))
            continue
        if at.id not in present or last not in present:
            result.append(PointChange(seq, None, [], THINNED))
            continue
        after = [c for c in calls if c.seq > seq and c.files]
        result.append(PointChange(seq, len(store.changed_between(at.id, last)), after))
    return result


def store_of(folder: Path) -> Path:
    """The snapshot store of a journals folder."""
    return folder / STORE


def git_problem() -> str | None:
    """Why snapshots cannot be taken here (one sentence), or None when a git program is on PATH."""
    if shutil.which("git") is None:
        return "snapshots are off: the git program was not found on PATH (Wren keeps workspace snapshots with git)"
    return None


def _old_git(git: str) -> str | None:
    """Why this git cannot keep snapshots durable (one sentence), or None when it is new enough."""
    try:
        out = subprocess.run(
            [git, "--version"], capture_output=True, text=True, timeout=30, env=_clean_env(), check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return f"snapshots are off: {git} --version failed"
    found = re.search(r"(\d+)\.(\d+)", out)
    if found is None or (int(found[1]), int(found[2])) < MIN_GIT:
        need = ".".join(map(str, MIN_GIT))
        return f"snapshots are off: {out.strip() or 'git'} is older than {need}, which snapshots need (core.fsync)"
    return None


def _clean_env() -> dict[str, str]:
    """The caller's environment without any GIT_* variable (a GIT_DIR from the person's shell must not leak in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(LC_ALL="C", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    env["GIT_CONFIG_COUNT"] = str(len(_CONFIG))
    for index, (key, value) in enumerate(_CONFIG.items()):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


class GitOptions(TypedDict, total=False):
    """What a git call on the store may be given besides its arguments (`Store.git`)."""

    work_tree: Path | None
    index: Path | None
    input: bytes | None
    cwd: Path | None
    config: dict[str, str] | None


class Store:
    """A snapshot store (made on first use, 0700) and the git commands that read and write it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._git = shutil.which("git") or "git"
        # Each index's last tree, written by this process: only this process writes a session's index.
        self._trees: dict[Path, str] = {}
        # Each session's last tree recorded in `pending/` by this process.
        self._registered: dict[str, str] = {}
        # What `compare` found between two trees (content-addressed: a pair's difference never changes).
        self._compared: dict[tuple[str, str], Compared] = {}

    # --- running git --------------------------------------------------------------------------

    def env(self, work_tree: Path | None = None, index: Path | None = None) -> dict[str, str]:
        env = _clean_env()
        env["GIT_DIR"] = str(self.path)
        if work_tree is not None:
            env["GIT_WORK_TREE"] = str(work_tree)
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return env

    def git(self, *args: str, **options: Unpack[GitOptions]) -> bytes:
        """Run git on the store; its output, or SnapshotError with git's own last line.

        The store is checked first (`_check`): one Wren did not make, or whose config is not Wren's,
        is refused before git reads it.
        """
        self._check()
        return self._run(*args, **options)

    def _run(
        self,
        *args: str,
        work_tree: Path | None = None,
        index: Path | None = None,
        input: bytes | None = None,
        cwd: Path | None = None,
        config: dict[str, str] | None = None,
    ) -> bytes:
        """`git` without the store's check: for making the store, before it is whole."""
        options = [word for key, value in (config or {}).items() for word in ("-c", f"{key}={value}")]
        try:
            done = subprocess.run(
                [self._git, *options, *args],
                input=input,
                capture_output=True,
                env=self.env(work_tree, index),
                cwd=cwd or work_tree or self.path,
                check=False,
            )
        except OSError as exc:
            raise SnapshotError(f"git could not be started ({exc.strerror or exc})") from None
        if done.returncode != 0:
            lines = [ln for ln in done.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
            raise SnapshotError(f"git {args[0]} failed: {_last(lines) or f'exit {done.returncode}'}")
        return done.stdout

    def exists(self) -> bool:
        return (self.path / "objects").is_dir()

    def ensure(self) -> None:
        """Make the store if it is not there yet (0700), else check it (`_check`); safe when two runs make it at once.

        It is made in a new or empty folder only (`.snapshots` may be a link to one on another disk),
        under the store's lock, its mark written last.
        """
        try:
            made = _small(self.path / MARK) == _MARK
        except OSError:
            made = True  # a mark that cannot be read: `_check` says why
        if made:
            self._check()
            return
        # No mark: a new store, one being made by another run right now (its lock is waited for), or one an
        # earlier Wren made (`_check` adopts it).
        try:
            if not self.exists() and not os.path.lexists(self.path / LOCK):  # a run making it creates the lock first
                self._refuse_other_files()
            self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.path, 0o700)
        except OSError as exc:
            raise SnapshotError(f"{self.path}: the snapshot store cannot be made ({_why(exc)})") from None
        with self._locked(exclusive=True):
            if _small(self.path / MARK) == _MAKING:  # its maker was killed part way (it held this lock)
                self._clear_unfinished()
            if not self.exists() and not os.path.lexists(self.path / MARK):
                self._make()
        self._check()

    def _clear_unfinished(self) -> None:
        """Remove what a killed run's `_make` left (only the names making writes; anything else is refused)."""
        try:
            names = os.listdir(self.path)
            other = sorted(name for name in names if name not in _MADE_NAMES and not _left_by_making(name))
            if other:
                raise SnapshotError(
                    f"{self.path}: a snapshot store whose making stopped part way, holding {other[0]!r}, which "
                    "making never writes, so it is left as it is; move it aside and the next run makes a new one"
                )
            for name in names:
                if name in (LOCK, MARK):
                    continue
                where = self.path / name
                if where.is_dir() and not where.is_symlink():
                    shutil.rmtree(where)
                else:
                    os.unlink(where)
            os.unlink(self.path / MARK)
            fsync_dir(self.path)
        except OSError as exc:
            raise SnapshotError(f"{self.path}: the unfinished snapshot store cannot be cleared ({_why(exc)})") from None

    def _refuse_other_files(self) -> None:
        """SnapshotError when the store's folder holds anything (but the store's lock): it is someone else's."""
        with contextlib.suppress(FileNotFoundError):
            names = os.listdir(self.path)
            if not all(_left_by_making(name) for name in names):
                raise SnapshotError(
                    f"{self.path}: not empty and not a snapshot store, so no store is made there; move it aside"
                )

    def _make(self) -> None:
        """A new store in the (empty) folder: git's, then Wren's config, attributes and folders, the mark last."""
        try:
            self._refuse_other_files()
            for name in os.listdir(self.path):  # a killed maker's temporary file: its making mark never put in place
                if name != LOCK:
                    os.unlink(self.path / name)
            _write_atomic(self.path / MARK, _MAKING)
            fsync_dir(self.path)
            self._run("init", "--bare", "--quiet", "--template=", str(self.path), cwd=self.path)
            (self.path / "indexes").mkdir(mode=0o700, exist_ok=True)
            _write_atomic(self.path / "config", _STORE_CONFIG)
            (self.path / "info").mkdir(exist_ok=True)
            _write_atomic(self.path / "info" / "attributes", _ATTRIBUTES)
            (self.path / PENDING).mkdir(mode=0o700, exist_ok=True)
            _write_atomic(self.path / MARK, _MARK)
            fsync_dir(self.path)
        except OSError as exc:
            raise SnapshotError(f"{self.path}: the snapshot store cannot be made ({_why(exc)})") from None

    def _check(self) -> None:
        """The store's trust rule, read before every git command: SnapshotError (one sentence) unless it holds.

        The store is a folder (or a link to one) with Wren's mark, its config byte for byte the one Wren
        writes, and no file that points git at other folders. Its attributes are rewritten when they
        differ. A store an earlier Wren made (no mark, an `indexes` folder, only what `git init` writes
        in its config) is adopted: given the mark and Wren's config.
        """
        try:
            if not self.path.is_dir():
                raise SnapshotError(f"{self.path}: not a folder, so it is not used for snapshots")
            mark = _small(self.path / MARK)
            config = _small(self.path / "config")
            attributes = _small(self.path / "info" / "attributes")
            redirect = next((name for name in _REDIRECTS if os.path.lexists(self.path / name)), None)
        except FileNotFoundError:
            raise SnapshotError(f"{self.path}: the snapshot store is not there") from None
        except OSError as exc:
            raise SnapshotError(f"{self.path}: the snapshot store cannot be read ({_why(exc)})") from None
        if redirect is not None:
            raise SnapshotError(
                f"{self.path / redirect}: points git at another folder, which Wren's snapshot store never does, so "
                "the store is not used (move it aside: the next run makes a new one)"
            )
        if mark != _MARK:
            if not self._earlier_wren(config):
                raise SnapshotError(
                    f"{self.path}: not a snapshot store Wren made (no {MARK} mark), so git is not run on it (its "
                    "config could run programs); move it aside and the next run makes a new one"
                )
            config = _STORE_CONFIG
            try:
                _write_atomic(self.path / "config", _STORE_CONFIG)
                (self.path / PENDING).mkdir(mode=0o700, exist_ok=True)
                _write_atomic(self.path / MARK, _MARK)
            except OSError as exc:
                raise SnapshotError(f"{self.path}: the snapshot store cannot be written ({_why(exc)})") from None
        if config != _STORE_CONFIG:
            raise SnapshotError(
                f"{self.path / 'config'}: not the config Wren writes (a store's config can make git run programs), "
                "so the snapshot store is not used; move the store aside and the next run makes a new one"
            )
        try:
            if attributes != _ATTRIBUTES:
                (self.path / "info").mkdir(exist_ok=True)
                _write_atomic(self.path / "info" / "attributes", _ATTRIBUTES)
            # The store's own exclude rules would leave workspace files out of every snapshot: Wren writes none.
            if os.path.lexists(self.path / "info" / "exclude"):
                os.unlink(self.path / "info" / "exclude")
        except OSError as exc:
            raise SnapshotError(f"{self.path}: the snapshot store cannot be written ({_why(exc)})") from None

    def _earlier_wren(self, config: bytes | None) -> bool:
        """A store an earlier Wren made (or one whose making stopped before its mark): an indexes folder, and a
        config `git init` alone wrote (nothing in it can run a program; the attributes are rewritten anyway)."""
        if config is None or not (self.path / "indexes").is_dir():
            return False
        return all(line.strip() in _INIT_LINES for line in config.splitlines() if line.strip())

    # --- prune beside a run ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        """The store's lock: shared by every `take` (and fork), exclusive for `prune`; waits for it.

        Where there is no flock (Windows), nothing is locked, and prune's grace alone keeps what a run
        is writing (docs/snapshots.md).
        """
        if fcntl is None:
            yield
            return
        try:
            fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT | O_CLOEXEC | _NOFOLLOW, 0o600)
        except OSError as exc:
            if not exclusive and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                # A store this process may only read (a fork from a read-only folder): no prune can run there.
                yield
                return
            raise SnapshotError(f"{self.path / LOCK}: the store's lock cannot be opened ({_why(exc)})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    def _register(self, session_id: str, tree: str) -> None:
        """Record the tree a session is about to name in its journal (`pending/ID`), before its lock is let go.

        Prune, holding the lock exclusively, keeps what these records name for every session whose
        journal is there, so a snapshot is never dropped between `take` and the event that names it.
        """
        if self._registered.get(session_id) == tree:
            return
        folder = self.path / PENDING
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            tmp = folder / f".{session_id}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | O_BINARY | O_CLOEXEC | _NOFOLLOW, 0o600)
            try:
                os.write(fd, tree.encode() + b"\n")
            finally:
                os.close(fd)
            os.replace(tmp, folder / session_id)
        except OSError as exc:
            raise SnapshotError(f"{folder}: the snapshot could not be recorded ({_why(exc)})") from None
        self._registered[session_id] = tree

    def _pending(self) -> dict[str, str]:
        """Each session's recorded tree (`_register`)."""
        found: dict[str, str] = {}
        with contextlib.suppress(FileNotFoundError):
            for entry in os.scandir(self.path / PENDING):
                if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                    continue
                with contextlib.suppress(OSError):
                    text = (_small(Path(entry.path)) or b"").decode("ascii", "replace").strip()
                    if _OID.fullmatch(text):
                        found[entry.name] = text
        return found

    def git_too_old(self) -> str | None:
        """Why the git on PATH cannot keep snapshots (one sentence), or None; checked once per git binary.

        The answer for a binary (its path, size and mtime) is kept in the store, so a run does not
        pay for `git --version` again.
        """
        try:
            st = os.stat(self._git)
        except OSError:
            return _old_git(self._git)
        key = f"{self._git}\0{st.st_size}\0{st.st_mtime_ns}\n".encode()
        mark = self.path / "git-checked"
        with contextlib.suppress(OSError):
            if mark.read_bytes() == key:
                return None
        problem = _old_git(self._git)
        if problem is None:
            with contextlib.suppress(OSError):
                _write_atomic(mark, key)
        return problem

    def has_tree(self, oid: str) -> bool:
        try:
            return self.git("cat-file", "-t", oid).strip() == b"tree"
        except SnapshotError:
            return False

    def size(self, *, outside_objects: bool = False) -> int:
        """Bytes the store takes on disk (blocks, not lengths); `outside_objects`: all but `objects/`."""
        total = 0
        for root, dirs, files in os.walk(self.path):
            if outside_objects and root == str(self.path):
                dirs[:] = [d for d in dirs if d != "objects"]
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(root, name)).st_blocks * 512
        return total

    def disk_usage(self, trees: Iterable[str]) -> int:
        """Bytes the objects these trees reach take in the store now (git's own count), plus all but `objects/`."""
        roots = sorted(trees)
        used = 0
        if roots:
            # Not `rev-list --disk-usage` (git 2.38): snapshots work from git 2.36 (MIN_GIT).
            ids = self.git(
                "rev-list", "--objects", "--no-object-names", "--stdin", input=("\n".join(roots) + "\n").encode()
            )
            sizes = self.git("cat-file", "--batch-check=%(objectsize:disk)", input=ids)
            used = sum(int(row) for row in sizes.split() if row.isdigit())
        return used + self.size(outside_objects=True)

    def present(self, trees: Iterable[str]) -> set[str]:
        """Those of `trees` the store holds (one `cat-file` for all)."""
        asked = sorted(set(trees))
        if not asked:
            return set()
        text = self.git(
            "cat-file", "--batch-check=%(objectname) %(objecttype)", input=("\n".join(asked) + "\n").encode()
        )
        return {row.split()[0] for row in text.decode("ascii", "replace").splitlines() if row.endswith(" tree")}

    # --- taking -------------------------------------------------------------------------------

    def index_for(self, session_id: str, workspace: Path) -> Path:
        import hashlib  # here, not at the top: only taking needs it, and `wren blame` starts without OpenSSL

        key = hashlib.sha1(os.fsencode(str(workspace))).hexdigest()[:12]
        return self.path / "indexes" / f"{session_id}-{key}"

    def take(
        self, workspace: Path, session_id: str, *, max_file_size: int = MAX_FILE_SIZE, leave_out: Sequence[Path] = ()
    ) -> Taken:
        """Snapshot `workspace` into the store; every object it needs is on disk when this returns.

        `leave_out`: folders never snapshotted (Wren's journals folder, and the store in it, when
        they lie inside the workspace).

        Raises:
            SnapshotError: the workspace or the store could not be read or written (one sentence).
        """
        if not workspace.is_dir():
            raise SnapshotError(f"{workspace}: the workspace is not a folder, so it cannot be snapshotted")
        self.ensure()
        # Prune waits while a snapshot is taken, and keeps the tree recorded here until the journal names it.
        with self._locked(exclusive=False):
            taken = self._take(workspace, session_id, max_file_size, leave_out)
            self._register(session_id, taken.id)
        return taken

    def _take(self, workspace: Path, session_id: str, max_file_size: int, leave_out: Sequence[Path]) -> Taken:
        index = self.index_for(session_id, workspace)
        first = not index.exists()
        before = _dir_times(self.path / "objects")
        left_out = _excluded(workspace, leave_out)
        # The new paths first (git walks only what it does not track): what git must be kept away from.
        new = self.git(
            "ls-files", "-z", "-o", "--exclude-standard", "--", ".", *left_out, work_tree=workspace, index=index
        )
        uncovered: list[str] = []
        kept_out: list[bytes] = []
        root = os.fsencode(workspace)
        names = [n for n in new.split(b"\0") if n]
        refused: set[bytes] = set()
        for name in names:
            if name.endswith(b"/"):
                uncovered.append(f"{_shown(name)} (a git repository of its own: not covered)")
                kept_out.append(name.rstrip(b"/"))
                continue
            bad = git_refuses(name, lambda n: os.path.islink(os.path.join(root, n)))
            if bad is not None:
                if bad not in refused:  # a folder's name: listed (and left out) once, not once a file in it
                    refused.add(bad)
                    shown = _shown(bad) + ("/" if bad != name else "")
                    uncovered.append(f"{shown} (a name git refuses, a spelling of .git: not covered)")
                    kept_out.append(bad)
                continue
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue  # gone already: git does not add it either
            if stat.S_ISREG(st.st_mode) and st.st_size > max_file_size:
                uncovered.append(f"{_shown(name)} (over {max_file_size:,} bytes: not covered)")
                kept_out.append(name)
        kept = set(kept_out)
        fresh = [n for n in names if n not in kept and not n.endswith(b"/") and not _under(n, refused)]
        here = self._take_here(workspace, index, fresh, leave_out) if len(fresh) < BULK else None
        if here is not None:
            return Taken(here[0], here[1], here[2], uncovered[:LISTED], len(uncovered))
        # Else one `git add -A`: it hashes only what the index's stat cache says changed, adds the new,
        # drops the deleted. Many new objects go into one pack, fsynced once, not a loose file (and an fsync) each.
        bulk = {"core.bigFileThreshold": "1"} if first or len(names) >= BULK else None
        spec = [*left_out, *(":(top,literal,exclude)" + os.fsdecode(n) for n in kept_out)]
        said = self.git("add", "-A", "-v", "--", ".", *spec, work_tree=workspace, index=index, config=bulk)
        changed = sum(1 for line in said.split(b"\n") if line.startswith((b"add '", b"remove '")))
        tree = self._trees.get(index) if changed == 0 else None
        # Nothing added or removed since this process's last tree of this index: the same tree, if the store
        # still holds it (freshened, as git freshens what it would write again, so prune's age rule keeps it).
        if tree is None or not _freshen_loose(self.path / "objects", tree):
            try:
                tree = self._write_tree(workspace, index)
            except SnapshotError:
                # write-tree checks that every blob the index names is in the store: one was removed (a command
                # deleted objects). The stat cache is dropped and every file hashed and written again.
                index.unlink(missing_ok=True)
                self.git("add", "-A", "--", ".", *spec, work_tree=workspace, index=index, config=bulk)
                tree = self._write_tree(workspace, index)
            self._sync_new(before)
            self._trees[index] = tree
        return Taken(tree, _index_entries(index), changed, uncovered[:LISTED], len(uncovered))

    def _write_tree(self, workspace: Path, index: Path) -> str:
        tree = self.git("write-tree", work_tree=workspace, index=index).decode().strip()
        if not _OID.fullmatch(tree):
            raise SnapshotError(f"git write-tree gave {tree!r}, not an object id")
        return tree

    def _take_here(
        self, workspace: Path, index: Path, fresh: Sequence[bytes], leave_out: Sequence[Path]
    ) -> tuple[str, int, int] | None:
        """`git add -A` then `git write-tree`, done in this process for a small workspace: (tree, files, changed).

        None when git should do it: an index of more than IN_PROCESS entries (git's stat loop is faster
        there, and a process's start-up no longer matters) or one this process does not read.
        """
        if _index_entries(index) > IN_PROCESS:  # the header's count: a large index is not read here at all
            return None
        from . import gitfiles  # here: only a small workspace's snapshot needs it (and the writer it imports)

        try:
            known = gitfiles.read_index(index)
        except gitfiles.Unreadable:
            return None
        # The workspace itself may be reached through a link (it is what was asked for): its real path, whose
        # last folder is then opened like any other, never through a link.
        root = os.fsencode(os.path.realpath(workspace))
        outside = tuple(os.fsencode(rel) + b"/" for p in leave_out if (rel := _inside(workspace, p)))
        objects = gitfiles.Objects(self.path / "objects")
        try:
            top = os.lstat(root)
        except OSError as exc:
            raise SnapshotError(f"{workspace}: cannot be snapshotted ({_why(exc)})") from None
        folders: dict[bytes, tuple[int, int] | None] = {b"": (top.st_dev, top.st_ino)}
        entries: dict[bytes, gitfiles.Entry] = {}
        changed = 0
        restated = False

        def real_folder(folder: bytes) -> tuple[int, int] | None:
            """The folder's identity when it and every folder on the way is a folder, not a link to one."""
            if folder not in folders:
                parent = folder.rpartition(b"/")[0]
                found: tuple[int, int] | None = None
                if real_folder(parent) is not None:
                    with contextlib.suppress(OSError):
                        st = os.lstat(os.path.join(root, folder))
                        found = (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None
                folders[folder] = found
            return folders[folder]

        def hashed(name: bytes, st: os.stat_result | None = None) -> gitfiles.Entry | None:
            """The entry (chosen by its lstat `st`), its content stored; None when it is gone or is no file or link."""
            path = os.path.join(root, name)
            folder = real_folder(name.rpartition(b"/")[0])
            if folder is None:
                return None
            try:
                found = gitfiles.stored(objects, path, os.lstat(path) if st is None else st, folder)
            except (FileNotFoundError, NotADirectoryError):
                return None
            except gitfiles.Changed as exc:
                raise SnapshotError(f"{os.fsdecode(path)}: cannot be snapshotted ({exc})") from None
            except gitfiles.StoreFailed as exc:
                raise SnapshotError(f"writing its objects failed: {_why(exc.error)}") from None
            except OSError as exc:
                raise SnapshotError(f"{os.fsdecode(path)}: cannot be snapshotted ({_why(exc)})") from None
            if found is None:
                return None
            now, mode, oid = found
            return gitfiles.Entry(gitfiles.stat_of(now, mode), oid)

        for name, old in known.entries.items():
            if name.startswith(outside) or git_refuses(name) is not None:  # (an earlier Wren stored such names)
                changed += 1
                continue
            try:
                st = os.lstat(os.path.join(root, name)) if real_folder(name.rpartition(b"/")[0]) is not None else None
            except OSError:
                st = None
            mode = None if st is None else gitfiles.mode_of(st)
            same = st is not None and mode is not None and gitfiles.stat_of(st, mode) == old.stat
            # Unchanged by its stat data, and its object still in the store (a command may have removed it).
            if same and not gitfiles.racy(old, known) and objects.has(old.oid):
                entries[name] = old
                continue
            restated = True
            entry = hashed(name, st) if mode is not None else None
            if entry is None:
                changed += 1  # deleted, or no longer a file or a link
                continue
            entries[name] = entry
            changed += entry.oid != old.oid or entry.mode != old.mode
        for name in fresh:
            entry = hashed(name)
            if entry is not None:
                entries[name] = entry
                changed += 1
        try:
            # The trees are written every time, never remembered: each one present is checked whole and
            # freshened (so prune's age rule keeps it), one missing or damaged is written again.
            tree = gitfiles.write_trees(objects, entries).hex()
            objects.sync()
            if restated or changed or not index.exists():
                gitfiles.write_index(index, entries)
        except gitfiles.Unreadable:
            return None
        except gitfiles.StoreFailed as exc:
            raise SnapshotError(f"writing its objects failed: {_why(exc.error)}") from None
        except OSError as exc:
            raise SnapshotError(f"writing its objects failed: {_why(exc)}") from None
        self._trees[index] = tree
        return tree, len(entries), changed

    def not_covered(self, workspace: Path, leave_out: Sequence[Path] = ()) -> list[str]:
        """Everything under the workspace a snapshot does not hold: ignored paths, FIFOs, sockets, devices."""
        ignored = self.git(
            "ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory", "--", ".",
            *_excluded(workspace, leave_out), work_tree=workspace, index=self.path / "indexes" / ".none",
        )  # fmt: skip
        names = [n for n in ignored.split(b"\0") if n]
        found = [f"{_shown(n)} (ignored by .gitignore: not covered)" for n in names]
        inside = [_inside(workspace, p) for p in leave_out]
        found += [f"{p}/ (Wren's journals: not covered)" for p in inside if p]
        skip = {os.path.join(os.fsencode(workspace), n.rstrip(b"/")) for n in names}
        skip |= {os.path.join(os.fsencode(workspace), os.fsencode(p)) for p in inside if p}
        found += [f"{_shown(n)} ({kind}: not covered)" for n, kind in _specials(os.fsencode(workspace), skip)]
        return found

    def _sync_new(self, before: dict[str, int]) -> None:
        """fsync the object folders that gained an entry (git fsyncs the objects, not the folders that name them)."""
        objects = self.path / "objects"
        after = _dir_times(objects)
        try:
            for name, stamp in after.items():
                if before.get(name) != stamp:
                    fsync_dir(objects / name)
            if set(after) - set(before):
                fsync_dir(objects)
        except OSError as exc:
            raise SnapshotError(f"{objects}: its new objects could not be made durable ({_why(exc)})") from None

    # --- reading ------------------------------------------------------------------------------

    def files_of(self, tree: str) -> dict[bytes, tuple[str, str]]:
        """Every path of a snapshot -> (mode, object id)."""
        out = self.git("ls-tree", "-r", "-z", "--full-tree", tree)
        files: dict[bytes, tuple[str, str]] = {}
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, _, name = entry.partition(b"\t")
            mode, _, oid = meta.decode().split()
            files[name] = (mode, oid)
        return files

    def changed_between(self, a: str, b: str) -> list[bytes]:
        """The paths that differ between two snapshots."""
        if a == b:
            return []
        if (a, b) in self._compared:
            return list(self._compared[a, b].entries)
        out = self.git("diff-tree", "-r", "-z", "--name-only", "--no-renames", a, b)
        return [n for n in out.split(b"\0") if n]

    def compare(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Compare each pair of snapshots, all in one `git diff-tree --stdin` (each path's entries and lines).

        What it finds is kept (`compared`, `changed_between`): a rewind needs three or four pairs, and one
        process for all of them instead of one each was a tenth of its time. A pair whose tree the store
        does not hold is left out (git says nothing of it on stdout and exits 0), and `compared` then asks again.
        """
        asked = list(dict.fromkeys(p for p in pairs if p[0] != p[1] and p not in self._compared))
        if not asked:
            return
        out = self.git(
            "diff-tree", "--stdin", "-r", "-z", "--no-renames", "--raw", "--numstat",
            input="".join(f"{a} {b}\n" for a, b in asked).encode(),
        )  # fmt: skip
        self._compared.update(_compared(out))

    def compared(self, a: str, b: str) -> Compared:
        """Each path that differs between two snapshots: its entry in a and in b (None: not there), and its lines.

        Raises:
            SnapshotError: a tree is not in the store, or git failed (one sentence).
        """
        if a == b:
            return Compared({}, {})
        self.compare([(a, b)])
        if (a, b) not in self._compared:
            missing = sorted({a, b} - self.present([a, b]))
            raise SnapshotError(f"snapshot {', '.join(missing) or a} is not in the store {self.path}")
        return self._compared[a, b]

    def diff(self, a: str, b: str) -> bytes:
        """A unified diff of the workspace from snapshot a to snapshot b."""
        if a == b:
            return b""
        return self.git("diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff", "--binary", a, b)

    def check_whole(self, tree: str) -> None:
        """Read every object of a snapshot back, every byte; SnapshotError if one is missing or damaged."""
        blobs = [oid for mode, oid in self.files_of(tree).values() if mode != "160000"]
        if not blobs:
            return
        asked = "\n".join(blobs).encode() + b"\n"
        if b" missing" in self.git("cat-file", "--batch-check", input=asked):
            raise SnapshotError(f"snapshot {tree} names an object the store does not hold")
        self.git("cat-file", "--batch", input=asked)  # every byte decompressed: a damaged object fails

    def reader(self) -> ObjectReader:
        """One `git cat-file --batch-command` on the store, for objects asked in rounds (`ObjectReader`).

        Raises:
            SnapshotError: the store is not one Wren uses, or git could not be started (one sentence).
        """
        self._check()
        return ObjectReader(self._git, self.env(), self.path)

    # --- restoring ----------------------------------------------------------------------------

    def materialise(self, tree: str, target: Path, session_id: str) -> int:
        """Write the files of a snapshot into `target` (a new or empty folder): bytes, exec bits, links.

        The index it leaves is the new session's stat cache, so its first snapshot there is fast.
        Returns the number of files written.

        Raises:
            SnapshotError: the snapshot is not in the store, or `target` cannot be used or written.
        """
        self._check()
        try:
            target.mkdir(parents=True, exist_ok=True)
            if any(os.scandir(target)):
                raise SnapshotError(f"{target}: not empty; a fork with its files needs a new or empty folder")
        except OSError as exc:
            raise SnapshotError(f"{target}: cannot be used for the fork's files ({_why(exc)})") from None
        target = target.resolve()
        index = self.index_for(session_id, target)
        index.unlink(missing_ok=True)
        # One process reads the tree and writes its files (by as many workers as there are cores: git's parallel
        # checkout), then the index with their stat data; read-tree then checkout-index took twice as long.
        try:
            with self._locked(exclusive=False):  # prune does not drop the new session's index meanwhile
                self.git("read-tree", "--reset", "-u", tree, work_tree=target, index=index, config=_PARALLEL)
        except SnapshotError:
            if not self.has_tree(tree):
                raise SnapshotError(f"snapshot {tree} is not in the store {self.path}") from None
            raise
        return _index_entries(index)

    # --- pruning ------------------------------------------------------------------------------

    def prune(
        self, named: Callable[[], tuple[Iterable[str], Iterable[str]]], grace: str = "2.hours.ago"
    ) -> tuple[int, int, int]:
        """Drop what only deleted sessions refer to; (bytes before, bytes after, snapshots kept).

        `named()` reads the journals: every snapshot id they name, and their sessions' ids. It is called
        with the store's lock held exclusively, after the trees recorded by runs (`_register`) are read:
        no snapshot is being taken meanwhile, and every tree a run has taken is either recorded or
        already named by its journal (a run records its next tree only after its journal names the
        last). So every snapshot a journal names, or a live session is about to name, is kept (a ref
        per tree, under refs/wren/keep), whatever the timing. So is every object written within
        `grace`, for a writer that does not take the lock (an earlier Wren, or a system with no flock).
        Index files and records of sessions that are gone are removed.
        """
        before = self.size()
        with self._locked(exclusive=True):
            pending = self._pending()
            keep, live_sessions = named()
            live = set(live_sessions)
            wanted = set(keep) | {tree for sid, tree in pending.items() if sid in live}
            for sid in set(pending) - live:
                with contextlib.suppress(OSError):
                    os.unlink(self.path / PENDING / sid)
            indexes = self.path / "indexes"
            with contextlib.suppress(FileNotFoundError):
                for entry in os.scandir(indexes):
                    sid = entry.name.rsplit("-", 1)[0]
                    if not entry.name.startswith(".") and sid not in live:
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)
            existing = self.git("for-each-ref", "--format=%(refname)", "refs/wren/keep/").decode().split()
            commands = [f"delete {ref}" for ref in existing if ref.rsplit("/", 1)[-1] not in wanted]
            commands += [f"update refs/wren/keep/{oid} {oid}" for oid in sorted(wanted) if self.has_tree(oid)]
            if commands:
                self.git("update-ref", "--stdin", input=("\n".join(commands) + "\n").encode())
            # What prune packs anew (loose objects) is compressed: prune is what one runs for space. The packs
            # snapshots wrote are reused as they are (stored), so forks from them stay quick.
            self.git("gc", "--quiet", f"--prune={grace}", config={"pack.compression": "1"})
        return before, self.size(), len(set(keep))


# --- helpers ------------------------------------------------------------------------------------


_IGNORABLE = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")
_DOTGIT = re.compile(rb"(?:\.git|git~1)[ .]*")
_SUSPECT = re.compile(rb"gi[t7]|~[1-9]|\xe2\x80|\xe2\x81|\xef\xbb|(?:^|/)\.\.?(?:/|$)|//|^/|/$", re.IGNORECASE)
# NTFS's short names of .gitmodules too: `gitmod~1`..`~4`, and a shortened `gi7eba` (even none of it) then `~N`.
_DOTGITMODULES = re.compile(rb"\.gitmodules[ .]*|gitmod~[1-4][ .]*|(?:g(?:i(?:7(?:e(?:ba?)?)?)?)?)?~[1-9][0-9]*[ .]*")


def git_refuses(name: bytes, is_link: Callable[[bytes], bool] = lambda name: False) -> bytes | None:
    """The part of a path git refuses to hold, up to the refused name (`name` itself or a folder of it); else None.

    git's `verify_path` with `core.protectNTFS` and `core.protectHFS` (set for the store on every
    platform): no `.`, `..` or empty name, no `.git` in any case, nor what NTFS or HFS+ read as
    `.git` (`git~1`, trailing dots and spaces, `\\` as a separator, Unicode characters HFS+ ignores),
    and no `.gitmodules` that is a link. A little stricter than git where that is simpler (a name is
    cut at `:`): such a name is listed as not covered, never stored so that a fork would fail.
    """
    if not _SUSPECT.search(name):  # most names: one search
        return None
    at = 0
    parts = name.split(b"/")
    for count, part in enumerate(parts):
        at += len(part) + (count > 0)
        last = count == len(parts) - 1
        if part in (b"", b".", b".."):
            return name[:at] or name
        for piece in part.lower().split(b"\\"):
            piece = piece.split(b":", 1)[0]
            hfs = _IGNORABLE.sub("", piece.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
            if _DOTGIT.fullmatch(piece) or _DOTGIT.fullmatch(hfs):
                return name[:at]
            if last and (_DOTGITMODULES.fullmatch(piece) or _DOTGITMODULES.fullmatch(hfs)) and is_link(name):
                return name[:at]
    return None


def _under(name: bytes, folders: set[bytes]) -> bool:
    """`name` is one of `folders` or lies inside one."""
    if not folders:
        return False
    return any(name == f or name.startswith(f + b"/") for f in folders)


def _small(path: Path) -> bytes | None:
    """A small file's bytes (the first 64 KB and one more), never through a link; None when it is not there."""
    try:
        fd = os.open(path, os.O_RDONLY | O_BINARY | O_CLOEXEC | _NOFOLLOW)
    except FileNotFoundError:
        return None
    try:
        return os.read(fd, 65537)
    finally:
        os.close(fd)


def _inside(workspace: Path, folder: Path) -> str | None:
    """`folder` relative to the workspace when it lies inside it (never the workspace itself)."""
    try:
        rel = folder.resolve().relative_to(workspace.resolve())
    except (ValueError, OSError):
        return None
    return rel.as_posix() if rel.parts else None


def _excluded(workspace: Path, leave_out: Sequence[Path]) -> list[str]:
    """Pathspecs that keep git out of the folders left out (literal: no wildcard in a name is expanded)."""
    return [f":(top,literal,exclude){rel}" for p in leave_out if (rel := _inside(workspace, p))]


class ObjectReader:
    """One `git cat-file --batch-command`: what names are (an object id and type each), then objects' bytes.

    Each round's names go to git from a thread while its answers are read here (a pipe holds only so much),
    and the bytes of each object come while git still reads the next ones, so their reader works meanwhile.
    Used as a context manager: git is stopped at the end if it has not ended.
    """

    def __init__(self, git: str, env: dict[str, str], store: Path) -> None:
        try:
            self._proc = subprocess.Popen(
                [git, "cat-file", "--batch-command"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=store,
            )
        except OSError as exc:
            raise SnapshotError(f"git could not be started ({exc.strerror or exc})") from None
        self._feeder: threading.Thread | None = None
        self._ended = False  # every object of the last round read

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def kinds(self, names: Sequence[str]) -> list[tuple[str, str, int] | None]:
        """Each name's object id, type and size (a name: an id, or "TREE:PATH"), None where the store has none."""
        self._send(b"".join(b"info " + name + b"\n" for name in _each(names)), last=False)
        found: list[tuple[str, str, int] | None] = []
        for _ in names:
            parts = self._header().split()
            known = len(parts) == 3 and parts[2].isdigit()
            found.append((parts[0].decode(), parts[1].decode(), int(parts[2])) if known else None)
        return found

    def contents(self, oids: Sequence[str]) -> Iterator[bytes | None]:
        """Each object's bytes (None where the store has none), in order; the last round (git is told it ends)."""
        self._send(b"".join(b"contents " + oid + b"\n" for oid in _each(oids)), last=True)
        stdout = self._proc.stdout
        assert stdout is not None
        for _ in oids:
            parts = self._header().split()
            if len(parts) != 3 or not parts[2].isdigit():  # "NAME missing"
                yield None
                continue
            size = int(parts[2])
            data = stdout.read(size)
            if len(data) != size or stdout.read(1) != b"\n":
                raise SnapshotError(f"git cat-file ended inside object {parts[0].decode()}")
            yield data
        self._ended = True

    def close(self) -> None:
        """git waited for when it was told everything was asked and gave it all; else stopped."""
        proc = self._proc
        if proc.poll() is None:
            if self._ended:
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
            else:
                proc.kill()
            proc.wait()
        if self._feeder is not None:
            self._feeder.join()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def _send(self, data: bytes, *, last: bool) -> None:
        if self._feeder is not None:
            self._feeder.join()
        stdin = self._proc.stdin
        assert stdin is not None

        def feed() -> None:
            with contextlib.suppress(OSError):  # git ended early: its reader says why
                stdin.write(data)
                stdin.flush()
                if last:
                    stdin.close()

        self._feeder = threading.Thread(target=feed, daemon=True)
        self._feeder.start()

    def _header(self) -> bytes:
        assert self._proc.stdout is not None and self._proc.stderr is not None
        header = self._proc.stdout.readline()
        if not header.endswith(b"\n"):
            self._proc.wait()
            said = self._proc.stderr.read().decode("utf-8", "replace").splitlines()
            lines = [ln for ln in said if ln.strip()]
            raise SnapshotError(f"git cat-file failed: {_last(lines) or f'exit {self._proc.returncode}'}")
        return header


def _each(names: Sequence[str]) -> Iterator[bytes]:
    """Names for `git cat-file`, one a line: a path's bytes as they are (surrogate escapes undone)."""
    for name in names:
        yield name.encode("utf-8", "surrogateescape")


def _last(lines: Sequence[str]) -> str:
    for line in reversed(lines):
        text = line.strip()
        if text.startswith(("fatal:", "error:")):
            return text.split(":", 1)[1].strip()
    return lines[-1].strip() if lines else ""


def _why(exc: OSError) -> str:
    return exc.strerror.lower() if exc.strerror else str(exc)


def _shown(name: bytes) -> str:
    """A path as a person can read it: invalid UTF-8 as \\x escapes, control characters escaped."""
    text = name.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _specials(root: bytes, skip: set[bytes]) -> Iterator[tuple[bytes, str]]:
    """FIFOs, sockets and devices under root (never following a link), outside `.git` folders and `skip`."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            path = entry.path
            if entry.name == b".git" or path in skip:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(path)
                elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink():
                    mode = entry.stat(follow_symlinks=False).st_mode
                    yield os.path.relpath(path, root), kind_of(mode).removesuffix(" (named pipe)")
            except OSError:
                continue


def _dir_times(objects: Path) -> dict[str, int]:
    """Each loose-object folder's mtime (ns): one that changed gained an entry."""
    times: dict[str, int] = {}
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(objects):
            if len(entry.name) == 2 or entry.name == "pack":
                with contextlib.suppress(OSError):
                    times[entry.name] = entry.stat(follow_symlinks=False).st_mtime_ns
    return times


def _freshen_loose(objects: Path, oid: str) -> bool:
    """The object is there loose, and its mtime is now; False when it is not (then it is written again)."""
    try:
        os.utime(objects / oid[:2] / oid[2:])
    except OSError:
        return False
    return True


def _index_entries(index: Path) -> int:
    """The number of entries in a git index (its header's third word)."""
    try:
        with open(index, "rb") as f:
            head = f.read(12)
    except FileNotFoundError:
        return 0
    return int.from_bytes(head[8:12], "big") if len(head) == 12 and head[:4] == b"DIRC" else 0


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # two threads may write at once
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | O_BINARY | O_CLOEXEC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
