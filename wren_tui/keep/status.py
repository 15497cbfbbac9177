"""`wren keep --status`: what is kept of each agent, its space, and what changed in the agents' folders since the
last keep (nothing is written, no lock is taken; a log's growth is told from its last 4 KiB, a document's change
from its checksum, a database's only from its times: whether its rows changed, the next keep tells)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import portable
from ..journal.sizes import size_words
from . import store
from .keeping import TAIL, Asked, Planned, kind_of, plan, walk


@dataclass
class AgentStatus:
    agent: str
    label: str
    folder: str  # the agent's own folder
    files: int = 0  # files kept (the agent's latest and the ones it deleted)
    deleted: int = 0  # of those, deleted by the agent
    versions: int = 0
    bytes: int = 0  # of every kept version, as the manifest counts them
    last_kept: str | None = None
    # Since the last keep: new, grown, rewritten, truncated, changed (a database), deleted; each a list of paths.
    since: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "label": self.label,
            "folder": self.folder,
            "files": self.files,
            "deleted_by_agent": self.deleted,
            "versions": self.versions,
            "bytes": self.bytes,
            "last_kept": self.last_kept,
            "since": {what: sorted(rels) for what, rels in self.since.items() if rels},
            "problems": self.problems,
        }

    def line(self) -> str:
        gone = f" ({self.deleted} deleted by its agent)" if self.deleted else ""
        kept = f"{self.files:,} file{'' if self.files == 1 else 's'} kept{gone}, {human(self.bytes)}"
        kept += f" in {self.versions:,} version{'' if self.versions == 1 else 's'}"
        changed = ", ".join(f"{len(rels)} {what}" for what, rels in self.since.items() if rels)
        return f"{self.label}: {kept}; since the last keep: {changed or 'nothing changed'}"


def human(size: int) -> str:
    return size_words(size, "{:,} bytes")


def _still_prefix(path: Path, copy: Path, kept: int) -> bool:
    try:
        fd = portable.open_read_only(path)
    except OSError:
        return False
    try:
        with open(copy, "rb") as f:
            start = max(0, kept - TAIL)
            f.seek(start)
            return portable.pread(fd, kept - start, start) == f.read(kept - start)
    except OSError:
        return False
    finally:
        os.close(fd)


def _sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        fd = portable.open_read_only(path)
    except OSError:
        return None
    try:
        offset = 0
        while chunk := portable.pread(fd, 1 << 20, offset):
            digest.update(chunk)
            offset += len(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def agent_status(agent: Planned, root: Path) -> AgentStatus:
    from ..foreign import FORMATS

    fmt = FORMATS[agent.name]
    folder = root / agent.name
    manifest = store.read_manifest(folder)
    out = AgentStatus(agent.name, agent.label, str(agent.start or agent.root))
    within = agent.within()
    for each in manifest.entries.values():
        out.files += 1
        out.deleted += each.state == "deleted"
        out.versions += len(each.earlier) + 1
        out.bytes += each.current.size + sum(v.size for v in each.earlier)
        kept_at = each.current.kept_at
        out.last_kept = kept_at if out.last_kept is None or kept_at > out.last_kept else out.last_kept
    walked = walk(fmt, agent.root, (root,), agent.start)
    out.problems.extend(walked.unreadable)
    since: dict[str, list[str]] = {w: [] for w in ("new", "grown", "rewritten", "truncated", "changed", "deleted")}
    present = set()
    for source in walked.files:
        present.add(source.rel)
        entry = manifest.entries.get(source.rel)
        if entry is None or entry.state == "deleted":
            since["new"].append(source.rel)
            continue
        if entry.src == source.key and not entry.racy:
            continue
        kind = kind_of(source.rel, fmt)
        size = source.st.st_size
        copy = folder / store.FILES / source.rel
        if kind == "log":
            if size < entry.current.size:
                since["truncated"].append(source.rel)
            elif not _still_prefix(source.path, copy, entry.current.size):
                since["rewritten"].append(source.rel)
            elif size > entry.current.size:
                since["grown"].append(source.rel)
        elif kind == "document":
            if size != entry.current.size or _sha256(source.path) != entry.current.sha256:
                since["rewritten"].append(source.rel)
        else:
            since["changed"].append(source.rel)
    for rel, entry in manifest.entries.items():
        if rel not in present and entry.state != "deleted" and (within is None or within(rel)):
            since["deleted"].append(rel)
    out.since = since
    return out


def store_size(root: Path) -> int:
    """The bytes of every file in the store, each counted once (a version linked to the copy it was is one file)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            try:
                st = os.stat(os.path.join(dirpath, name), follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def status(asked: Asked) -> tuple[list[AgentStatus], list[str], int]:
    """Each agent's status, the sentences of agents left out, and the store's size."""
    agents, skipped = plan(asked)
    return [agent_status(agent, asked.root) for agent in agents], skipped, store_size(asked.root)
