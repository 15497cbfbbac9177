"""`wren verify`: every checksum of every kept copy and version read again, and each damaged one named.

A copy is whole when every range its manifest counts has the sha256 recorded for it. What a kill leaves is not
damage: bytes past what the manifest counts (appended, not yet recorded), a copy not yet recorded, a rewrite cut
short (the version it replaces still linked at its place in `versions/`), a torn last manifest line, a `.wren-part`
file. A manifest line whose CRC does not match is damage; nothing is written (no lock is taken).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import portable
from . import store
from .store import Entry, Version

CHUNK = 1 << 20


@dataclass
class Damage:
    """One damaged thing: the file, which agent's kept file and which version it is, and what differs."""

    path: Path
    agent: str
    rel: str
    version: int | None  # None: a manifest line
    what: str

    def sentence(self) -> str:
        which = f"version {self.version} of {self.agent}'s {self.rel}" if self.version else f"{self.agent}'s manifest"
        return f"{self.path}: {which}: {self.what}"

    def as_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "agent": self.agent,
            "file": self.rel,
            "version": self.version,
            "what": self.what,
        }


@dataclass
class Verified:
    root: Path
    files: int = 0
    versions: int = 0
    bytes: int = 0
    damage: list[Damage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what a kill left, not damage

    def as_json(self) -> dict[str, Any]:
        return {
            "store": str(self.root),
            "whole": not self.damage,
            "files": self.files,
            "versions": self.versions,
            "bytes": self.bytes,
            "damaged": [d.as_json() for d in self.damage],
            "notes": self.notes,
        }


def check(path: Path, version: Version) -> str | None:
    """What differs between the copy at `path` and what the manifest says of `version` (None: it is whole)."""
    try:
        fd = portable.open_read_only(path)
    except FileNotFoundError:
        return "it is missing"
    except OSError as exc:
        return f"it cannot be read ({(exc.strerror or str(exc)).lower()})"
    try:
        size = os.fstat(fd).st_size
        if size < version.size:
            return f"it is {size:,} bytes, shorter than the {version.size:,} the manifest counts"
        for r in version.ranges:
            digest = hashlib.sha256()
            at = r.start
            while at < r.stop:
                chunk = portable.pread(fd, min(CHUNK, r.stop - at), at)
                if not chunk:
                    break
                digest.update(chunk)
                at += len(chunk)
            found = digest.hexdigest()
            if found != r.sha256:
                span = f"bytes {r.start:,} to {r.stop - 1:,}" if (r.start, r.stop) != (0, size) else "its bytes"
                return f"{span} do not match their checksum (sha256 recorded {r.sha256[:16]}…, found {found[:16]}…)"
    except OSError as exc:
        return f"it cannot be read ({(exc.strerror or str(exc)).lower()})"
    finally:
        os.close(fd)
    return None


def _entry(folder: Path, agent: str, entry: Entry, out: Verified) -> None:
    out.files += 1
    for version in entry.earlier:
        out.versions += 1
        out.bytes += version.size
        path = store.version_path(folder, entry.rel, version.number)
        what = check(path, version)
        if what is not None:
            out.damage.append(Damage(path, agent, entry.rel, version.number, what))
    current = entry.current
    out.versions += 1
    out.bytes += current.size
    copy = folder / store.FILES / entry.rel
    what = check(copy, current)
    if what is None:
        return
    linked = store.version_path(folder, entry.rel, current.number)
    if os.path.lexists(linked) and check(linked, current) is None:
        # A new version was being put in place when the keep stopped: the one the manifest counts is whole where
        # it was linked first; the next `wren keep` puts it back and records the new one.
        out.notes.append(
            f"{copy}: a newer copy not yet recorded (a keep was stopped); version {current.number} is whole at {linked}"
        )
        return
    out.damage.append(Damage(copy, agent, entry.rel, current.number, what))


def verify(root: Path, agents: list[str] | None = None) -> Verified:
    out = Verified(root)
    names = agents if agents else store.kept_agents({store.ENV: str(root)}, Path.home())
    for agent in names:
        folder = root / agent
        manifest = store.read_manifest(folder)
        for number, why in manifest.damaged:
            out.damage.append(Damage(folder / store.MANIFEST, agent, store.MANIFEST, None, f"line {number}: {why}"))
        if manifest.torn:
            out.notes.append(f"{folder / store.MANIFEST}: its last line was cut short by a kill; it did not count")
        for entry in manifest.entries.values():
            _entry(folder, agent, entry, out)
    return out
