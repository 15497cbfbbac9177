"""`wren rewind`: a session's workspace back to its files at a clean point, in place, append-only.

The plan is made from three snapshots: the point's (`target`), the workspace's as it is now
(`before`, taken for the rewind) and the session's own last files (`session_files`: its last
snapshot, or what its last rewind put back). A path that differs between `before` and the session's
own files was changed by someone else since: it is kept and listed, unless forced. The `rewind`
event (point, target, before, kept paths) is journaled, durable, before any file changes; then each
path is replaced on its own (written beside, fsynced, renamed over), so a kill leaves every path
old or new, never half written. A rewind cut short is finished by the next one (`unfinished`).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from ..journal.events import Event, Fork, Message, Rewind, RunStart, Snapshot, ToolStart
from ..portable import O_BINARY, O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW
from .store import SnapshotError, Store, Taken

Files = dict[bytes, tuple[str, str]]  # path -> (mode, object id), as `Store.files_of`
_T = TypeVar("_T")
_R = TypeVar("_R")
_TEMP = ".wren-rewind-"
_BATCH = 256  # objects read from the store at a time
_WRITERS = 8  # threads writing and fsyncing a chunk's files (and fsyncing its folders) at once
# portable's flags are 0 where the system has none (Windows: no O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC).
_DIRECTORY, _NOFOLLOW, _CLOEXEC, _BINARY = O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC, O_BINARY


@dataclass
class Plan:
    """What a rewind does: the paths it writes and deletes, the ones it keeps, what it cannot undo."""

    at_seq: int
    target: str
    before: str
    undoes: int | None = None
    restore: list[tuple[bytes, str, str]] = field(default_factory=list)  # (path, mode, object id)
    delete: list[bytes] = field(default_factory=list)
    kept: list[bytes] = field(default_factory=list)  # changed since by someone else: left as they are
    added: int = 0
    removed: int = 0
    not_covered: list[str] = field(default_factory=list)
    not_covered_count: int = 0
    commands: list[str] = field(default_factory=list)  # commands that ran after the point: not undone

    def event(self) -> Rewind:
        kept = [p.decode("utf-8", "surrogateescape") for p in self.kept] or None
        return Rewind(at_seq=self.at_seq, snapshot=self.target, before=self.before, undoes=self.undoes, kept=kept)

    def preview(self) -> str:
        """One line: "restore 3 files (+42 -17), delete 1, keep 2 you changed since"."""
        parts = [f"restore {_n(len(self.restore), 'file')} (+{self.added} -{self.removed})"]
        parts.append(f"delete {len(self.delete)}")
        parts.append(f"keep {len(self.kept)} changed since by someone else")
        return ", ".join(parts)


def _n(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def shown(path: bytes) -> str:
    return path.decode("utf-8", "backslashreplace")


def last_rewind(events: Sequence[Event]) -> Rewind | None:
    return next((e for e in reversed(events) if isinstance(e, Rewind)), None)


def session_files(events: Sequence[Event], store: Store) -> Files | None:
    """The files as the session itself last left them: its last snapshot, or what its last rewind put back.

    A path a rewind kept (someone else had changed it) stays what the session had before that rewind.
    None: the session has no snapshot.
    """
    for i in range(len(events) - 1, -1, -1):
        event = events[i]
        if isinstance(event, Snapshot) and event.id:
            return store.files_of(event.id)
        if isinstance(event, Fork) and event.snapshot:
            return store.files_of(event.snapshot)
        if isinstance(event, Rewind):
            files = store.files_of(event.snapshot)
            if event.kept:
                earlier = session_files(events[:i], store) or {}
                for name in event.kept:
                    path = name.encode("utf-8", "surrogateescape")
                    if path in earlier:
                        files[path] = earlier[path]
                    else:
                        files.pop(path, None)
            return files
    return None


def workspace_of(events: Sequence[Event]) -> str | None:
    """The folder the session last worked in: its last run_start's cwd, or a later fork's files."""
    for event in reversed(events):
        if isinstance(event, RunStart):
            return event.cwd
        if isinstance(event, Fork) and event.workspace:
            return event.workspace
    return None


def commands_after(events: Sequence[Event], seq: int) -> list[str]:
    """The calls with side effects other than file edits that started after `seq`: their effects are not undone."""
    asked: dict[str, str] = {}
    for event in events:
        if isinstance(event, Message):
            for call in event.message.tool_calls or ():
                asked[call.id] = f"{call.name} {call.args}"
    return [
        asked.get(e.id, e.name)
        for e in events
        if isinstance(e, ToolStart)
        and e.seq > seq
        and not e.read_only
        and e.approval != "denied"
        and e.name not in ("write_file", "edit_file")
    ]


def make_plan(
    store: Store,
    events: Sequence[Event],
    workspace: Path,
    taken: Taken,
    *,
    listed: Sequence[str] = (),
    at_seq: int,
    target: str,
    undoes: int | None,
    force: bool,
    leave_out: Sequence[Path],
) -> Plan:
    """Decide what each path gets, from the workspace's snapshot `taken` now (the rewind's `before`).

    `listed`: what `Store.not_covered` found in the workspace besides (the rules leave out, no files).

    Only the paths that differ are read (git compares the trees), so a rewind of a large workspace
    where few files changed reads few.

    Raises:
        SnapshotError: a snapshot could not be read (one sentence).
    """
    counts: dict[bytes, tuple[int, int]] = {}
    pairs = _diff(store, taken.id, target, counts)  # path -> (now, at the point)
    plan = Plan(at_seq, target, taken.id, undoes)
    plan.not_covered, plan.not_covered_count = list(taken.not_covered), taken.not_covered_count
    plan.not_covered += list(listed)
    plan.not_covered_count += len(listed)
    plan.commands = commands_after(events, at_seq)
    kept: set[bytes] = set() if force else _changed_by_others(store, events, taken.id, pairs)
    # A path to restore under a kept file, or a kept file under a path to restore, is kept too (one is in the way).
    changed = sorted(pairs)
    for path in changed:
        if path in kept:
            continue
        if any(a in kept for a in _ancestors(path)) or any(k.startswith(path + b"/") for k in kept):
            kept.add(path)
    for path in changed:
        goal = pairs[path][1]
        if path in kept:
            continue
        if goal is not None:
            plan.restore.append((path, *goal))
        else:
            plan.delete.append(path)
    plan.kept = sorted(kept)
    done = [counts.get(p, (0, 0)) for p in changed if p not in kept]
    plan.added, plan.removed = sum(a for a, _ in done), sum(r for _, r in done)
    return plan


def _changed_by_others(store: Store, events: Sequence[Event], now: str, pairs: dict[bytes, Pair]) -> set[bytes]:
    """The paths of `pairs` whose entry now differs from the session's own last files (`session_files`)."""
    last = next((e for e in reversed(events) if _names_files(e)), None)
    if last is None:
        return set()
    if isinstance(last, Rewind) and last.kept:
        # The paths it kept are the session's as they were before it: the whole listing, the rare case.
        own, files = session_files(events, store) or {}, store.files_of(now)
        return {p for p in pairs if files.get(p) != own.get(p)}
    tree = last.snapshot if isinstance(last, Rewind | Fork) else last.id if isinstance(last, Snapshot) else None
    return set(store.changed_between(tree, now)) & set(pairs) if tree else set()


def comparisons(events: Sequence[Event], now: str, target: str | None) -> list[tuple[str, str]]:
    """The pairs of snapshots a rewind from `now` (the workspace's snapshot) to `target` compares, for `Store.compare`.

    The plan's (now and the target), the others' changes (the session's own last files and now), and a
    rewind cut short's (now and its before).
    """
    pairs = [(now, target)] if target else []
    last = next((e for e in reversed(events) if _names_files(e)), None)
    tree = last.snapshot if isinstance(last, Rewind | Fork) else last.id if isinstance(last, Snapshot) else None
    if tree:
        pairs.append((tree, now))
    cut = last_rewind(events)
    if cut is not None:
        pairs += [(now, cut.before), (cut.before, cut.snapshot)]
    return pairs


def _names_files(event: Event) -> bool:
    return (
        (isinstance(event, Snapshot) and bool(event.id))
        or (isinstance(event, Fork) and bool(event.snapshot))
        or isinstance(event, Rewind)
    )


Entry = tuple[str, str]  # (mode, object id)
Pair = tuple[Entry | None, Entry | None]


def _diff(store: Store, a: str, b: str, lines: dict[bytes, tuple[int, int]] | None = None) -> dict[bytes, Pair]:
    """Each path that differs between two snapshots -> its entry in a and in b (None: not there).

    With `lines`, also each path's lines added and removed. From `Store.compared`: the pairs a rewind
    needs are compared in one git process (`Store.compare`), each once.
    """
    found = store.compared(a, b)
    if lines is not None:
        lines.update(found.lines)
    return found.entries


def _ancestors(path: bytes) -> Iterator[bytes]:
    parts = path.split(b"/")
    for i in range(1, len(parts)):
        yield b"/".join(parts[:i])


def unfinished(store: Store, events: Sequence[Event], now: str) -> Rewind | None:
    """The session's last rewind, if a kill cut it short: a path it was to change still holds its before bytes.

    `now`: a snapshot of the workspace as it is. Only when nothing ran since (a run snapshots what it found).
    """
    for event in reversed(events):
        if isinstance(event, RunStart | Snapshot):
            return None
        if isinstance(event, Rewind):
            rest = finish_plan(store, event, now)
            return event if rest.restore or rest.delete else None
    return None


def finish_plan(store: Store, rewind: Rewind, now: str) -> Plan:
    """The rest of a rewind a kill cut short: the paths it was to change that still hold their before bytes."""
    kept = {k.encode("utf-8", "surrogateescape") for k in rewind.kept or ()}
    moved = set(store.changed_between(now, rewind.before))  # paths that no longer hold their before bytes
    plan = Plan(rewind.at_seq, rewind.snapshot, rewind.before, rewind.undoes)
    for path, (_before, goal) in sorted(_diff(store, rewind.before, rewind.snapshot).items()):
        if path in kept or path in moved:
            continue
        if goal is not None:
            plan.restore.append((path, *goal))
        else:
            plan.delete.append(path)
    return plan


def rewound_paths(store: Store, rewind: Rewind) -> list[bytes]:
    """The paths a rewind was to change."""
    return list(_diff(store, rewind.before, rewind.snapshot))


# --- applying -----------------------------------------------------------------------------------


def apply(store: Store, plan: Plan, workspace: Path, step: Callable[[str], object] = lambda what: None) -> list[str]:
    """Delete and write the plan's paths, each atomically; returns a sentence per path that could not be done.

    `step` hears each path once it is done (the kill test's seam: `--seq-fd`).
    """
    root = workspace.resolve()
    problems: list[str] = []
    touched: set[Path] = set()
    for path in sorted(plan.delete, key=lambda p: -p.count(b"/")):
        full = root / os.fsdecode(path)
        try:
            _no_link_on_the_way(path, root)
            full.unlink(missing_ok=True)
        except OSError as exc:
            problems.append(f"{shown(path)}: not deleted ({exc.strerror})")
            continue
        touched.add(full.parent)
        _drop_empty(full.parent, root)
        step(f"deleted {shown(path)}")
    umask = _umask()
    for chunk in _chunks(plan.restore, _BATCH):
        contents = _read_blobs(store, [oid for _, mode, oid in chunk if mode != "160000"])
        # Each path's new bytes written beside it and fsynced, the chunk's at once (the disk commits
        # concurrent fsyncs together); then each renamed over its path, in order. A kill before a
        # rename leaves that path's old file and a temporary one (`remove_temps`): old or new, never half.
        ready: list[tuple[bytes, Path, bytes, str]] = []
        for path, mode, oid in chunk:
            full = root / os.fsdecode(path)
            try:
                _no_link_on_the_way(path, root)
                _make_folders(full.parent, root)
            except OSError as exc:
                problems.append(f"{shown(path)}: not restored ({exc.strerror or exc})")
                continue
            ready.append((path, full, contents.get(oid, b""), mode))
        numbered = [(n, full, data, mode) for n, (_path, full, data, mode) in enumerate(ready)]
        written = _in_threads(lambda item: _write_beside(item[1], item[3], item[2], umask, item[0]), numbered)
        for (path, full, _data, _mode), temp in zip(ready, written, strict=True):
            try:
                if isinstance(temp, OSError):
                    raise temp
                if full.is_dir() and not full.is_symlink():
                    full.rmdir()  # an empty folder where the file goes (a non-empty one raises: not Wren's)
                os.replace(temp, full)
            except OSError as exc:
                if isinstance(temp, Path):
                    temp.unlink(missing_ok=True)
                problems.append(f"{shown(path)}: not restored ({exc.strerror or exc})")
                continue
            touched.add(full.parent)
            step(f"restored {shown(path)}")
    folders = {folder if folder.is_dir() else _existing(folder, root) for folder in touched}
    for failed in _in_threads(_fsync_folder, sorted(folders)):  # each folder's renames durable, fsynced at once
        if isinstance(failed, OSError):
            raise failed  # as before the threads: a rename not known durable is an error, never a rewind done
    return problems


def _no_link_on_the_way(path: bytes, root: Path) -> None:
    """OSError when a folder on the way to `path` is a link now (swapped in since the plan): never written through."""
    at = root
    for part in path.split(b"/")[:-1]:
        at = at / os.fsdecode(part)
        try:
            st = os.lstat(at)
        except FileNotFoundError:
            return  # made as a real folder when the file is written
        if stat.S_ISLNK(st.st_mode):
            raise OSError(errno.ELOOP, f"{shown(os.fsencode(at.relative_to(root)))} is a link now, not followed")


def _chunks(items: list[tuple[bytes, str, str]], size: int) -> Iterator[list[tuple[bytes, str, str]]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _read_blobs(store: Store, oids: list[str]) -> dict[str, bytes]:
    if not oids:
        return {}
    out = store.git("cat-file", "--batch", input=("\n".join(dict.fromkeys(oids)) + "\n").encode())
    found: dict[str, bytes] = {}
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) != 3:
            raise SnapshotError(f"object {header[0].decode(errors='replace')} is not in the store {store.path}")
        size = int(header[2])
        found[header[0].decode()] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return found


def _in_threads(work: Callable[[_T], _R], items: Sequence[_T]) -> list[_R | OSError]:
    """`work` of each item, up to _WRITERS at once in threads (each waits on the disk); an OSError is its result."""
    results: list[_R | OSError | None] = [None] * len(items)  # every place filled before it is returned
    taken = iter(range(len(items)))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                at = next(taken, None)
            if at is None:
                return
            try:
                results[at] = work(items[at])
            except OSError as exc:
                results[at] = exc

    threads = [threading.Thread(target=worker) for _ in range(min(_WRITERS, len(items)) - 1)]
    for thread in threads:
        thread.start()
    try:
        worker()
    finally:
        for thread in threads:
            thread.join()
    return results  # type: ignore[return-value]


def _write_beside(full: Path, mode: str, data: bytes, umask: int, n: int) -> Path:
    """Write `data` beside `full` as a file (or a link, mode 120000), fsynced; returns the temporary path (its
    name has `n`, the path's place in its chunk, before the name cut to 255: two long names never share one)."""
    temp = full.parent / f"{_TEMP}{os.getpid()}-{n}-{full.name}"[:255]
    temp.unlink(missing_ok=True)
    if mode == "120000":
        os.symlink(os.fsdecode(data), temp)
        return temp
    perms = (0o777 if mode == "100755" else 0o666) & ~umask
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY, perms)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(temp, perms)
    return temp


def _umask() -> int:
    """The process's umask (read by setting it and back: in the main thread, before the writers start)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _make_folders(folder: Path, root: Path) -> None:
    missing = []
    while folder != root and not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        if made.is_symlink() or made.exists():
            made.unlink()  # a file or link where a folder goes: the plan deleted or replaces it
        made.mkdir()
        _fsync_folder(made.parent)


def _drop_empty(folder: Path, root: Path) -> None:
    """Remove folders a deletion left empty, up to the workspace (snapshots hold no empty folders)."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _existing(folder: Path, root: Path) -> Path:
    while folder != root and not folder.is_dir():
        folder = folder.parent
    return folder


def _fsync_folder(folder: Path) -> None:
    """fsync a folder so the renames in it are durable; where folders cannot be opened (Windows), nothing to do."""
    if not _DIRECTORY:
        return
    try:
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_temps(workspace: Path, paths: Sequence[bytes]) -> int:
    """Remove the files a rewind killed between writing beside a path and renaming left (in those paths' folders)."""
    removed = 0
    root = workspace.resolve()
    for folder in {(root / os.fsdecode(p)).parent for p in paths}:
        try:
            names = [e.name for e in os.scandir(folder) if e.name.startswith(_TEMP)]
        except OSError:
            continue
        for name in names:
            try:
                os.unlink(folder / name)
                removed += 1
            except OSError:
                pass
    return removed


__all__ = [
    "Files",
    "Plan",
    "apply",
    "commands_after",
    "comparisons",
    "finish_plan",
    "last_rewind",
    "make_plan",
    "remove_temps",
    "rewound_paths",
    "session_files",
    "unfinished",
    "workspace_of",
]
