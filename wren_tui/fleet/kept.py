"""Other agents' sessions Wren kept (`wren keep`), carried by the fleet like Wren's journals: shipped by `wren mirror`,
listed and read back by another machine.

A kept copy is another agent's file (JSON lines, a document, a database), not a Wren journal: it travels as its
exact bytes, in order, cut into messages of at most `wire.PART_SIZE` bytes, each saying where its bytes start in the
copy (`Wren-Offset`), on the subject `wren.k.<host>.<agent>.<file>.<version>` of the stream `WREN`. `<file>` is a
token made of the file's path in the agent's folder (the first 32 hex digits of its SHA-256: a path holds dots and
slashes, which a subject cannot), and `<version>` the kept version (`v1`, `v2`: a rewritten file is a new version,
so a subject only ever grows, as a journal's does). The messages of a subject laid end to end are the kept copy.

Exactly once and in order, after any crash, as a journal's lines: each message is published with the stream
sequence its subject must end at (`Nats-Expected-Last-Subject-Sequence`), and on start the mirror reads the
subject's last message, checks its bytes are the copy's at its offset, and goes on after it; bytes that differ stop
that file, never overwritten. Only the bytes the kept store counted are shipped (`size`: checksummed and durable).

The session list (bucket `wren-sessions`) has one row per kept file under `k.<host>.<agent>.<file>` (`KeptRow`):
its agent, session id, path in the agent's folder, version, the bytes in the stream, and what the store says of it
("kept; deleted by its agent on DATE"). This module knows no agent's format: the command gives it the files
(`KeptSource`) and reads what comes back with the agent's own reader.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import msgspec
import nats.js.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from ..journal.visible import visible
from ..portable import open_read_only, pread
from . import FleetError
from .batch import BatchRejected, publish_batch
from .names import KEPT_PREFIX, STREAM
from .wire import PART_SIZE, Outgoing, StreamDamaged

OFFSET = "Wren-Offset"
# Messages of a kept copy published in one atomic batch (well under the server's 1,000).
_BATCH = 64
_COMMIT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class KeptSource:
    """One kept copy, as the command found it in the kept store (`keep.found`)."""

    agent: str  # the format's name: claude, codex, opencode
    session: str  # the session's id, as `wren ls --agent` shows it
    relative: str  # its path in the agent's folder (and in the store's)
    version: int
    copy: Path  # the kept copy, read only
    size: int  # its bytes the store counted (checksummed, durable): only these are shipped
    mark: str | None  # "kept; deleted by its agent on DATE", or None: the agent still has it as kept


class KeptRow(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """The session list's row of one kept file, as its mirror last shipped it."""

    host: str
    agent: str
    session: str
    relative: str
    version: int
    size: int  # its bytes in the stream
    mark: str | None = None
    # Set when the mirror stopped shipping this file: the stream holds other bytes than the copy.
    mirror: str | None = None
    updated: str = ""


_encode = msgspec.json.Encoder().encode
_decode_row = msgspec.json.Decoder(KeptRow).decode


def file_token(relative: str) -> str:
    """A subject token for a path in an agent's folder (dots and slashes are not allowed in one)."""
    return hashlib.sha256(relative.encode()).hexdigest()[:32]


def kept_subject(host: str, agent: str, relative: str, version: int) -> str:
    return f"{KEPT_PREFIX}.{host}.{agent}.{file_token(relative)}.v{version}"


def kept_key(host: str, agent: str, relative: str) -> str:
    """The session list's key of one kept file."""
    return f"k.{host}.{agent}.{file_token(relative)}"


class KeptShipper:
    """Ships kept copies to the stream, each from where its subject ends, and writes their rows."""

    def __init__(self, nc: Client, js: JetStreamContext, kv: KeyValue, host: str) -> None:
        self.nc, self.js, self.kv, self.host = nc, js, kv, host
        # (subject, size, mark) of each file shipped whole (or stopped) and listed: not looked at until one changes.
        self._done: set[tuple[str, int, str | None]] = set()
        self._stopped: dict[str, str] = {}  # subject -> why it is not shipped any more

    async def ship(self, source: KeptSource) -> str | None:
        """Bring the stream up to `source`'s counted bytes and its row up to date; why it was stopped, if it was.

        Raises:
            nats.errors.Error, TimeoutError, OSError: the server is away, or the copy cannot be read: try again later.
        """
        subject = kept_subject(self.host, source.agent, source.relative, source.version)
        done = (subject, source.size, source.mark)
        if done in self._done:
            return self._stopped.get(subject)
        stopped = self._stopped.get(subject)
        if stopped is None:
            try:
                shipped = await self._send(subject, source)
            except (StreamDamaged, BatchRejected) as exc:
                stopped = self._stopped[subject] = f"not mirrored any more: {exc}"
                shipped = 0
        else:
            shipped = 0
        row = KeptRow(
            host=self.host,
            agent=source.agent,
            session=source.session,
            relative=source.relative,
            version=source.version,
            size=shipped,
            mark=source.mark,
            mirror=stopped,
            updated=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        await self.kv.put(kept_key(self.host, source.agent, source.relative), _encode(row))
        self._done.add(done)  # shipped whole, or stopped (said once): not looked at again until it changes
        return stopped

    async def _send(self, subject: str, source: KeptSource) -> int:
        """Ship the copy's counted bytes after what the subject holds; how many bytes it holds then."""
        stream_seq, end = await self._end_of(subject, source)
        fd = open_read_only(source.copy)
        try:
            while end < source.size:
                messages: list[Outgoing] = []
                at = end
                while at < source.size and len(messages) < _BATCH:
                    data = pread(fd, min(PART_SIZE, source.size - at), at)
                    if not data:
                        raise FleetError(f"{source.copy}: shorter than the {source.size} bytes the kept store counted")
                    messages.append(Outgoing(data, {OFFSET: str(at)}))
                    at += len(data)
                ack = await publish_batch(
                    self.nc,
                    subject,
                    messages,
                    expected_last=stream_seq,
                    timeout=_COMMIT_TIMEOUT_S,
                    msg_id=f"{subject}.{end}",
                )
                stream_seq, end = ack.stream_seq, at
        finally:
            os.close(fd)
        return end

    async def _end_of(self, subject: str, source: KeptSource) -> tuple[int, int]:
        """The subject's last stream sequence and how many of the copy's bytes it holds, checked against the copy."""
        try:
            last = await self.js.get_msg(STREAM, subject=subject)
        except nats.js.errors.NotFoundError:
            return 0, 0
        offset = (last.headers or {}).get(OFFSET, "")
        if last.seq is None or not offset.isdigit():
            raise StreamDamaged(f"the last message on {subject} says no {OFFSET}")
        data = last.data or b""
        start = int(offset)
        with open(source.copy, "rb") as copy:
            copy.seek(start)
            if start + len(data) > source.size or copy.read(len(data)) != data:
                raise StreamDamaged(
                    f"the stream holds other bytes at {start} of {source.relative} than the kept copy; nothing was "
                    "overwritten"
                )
        return last.seq, start + len(data)


# --- reading them back (another machine) -------------------------------------------------------------


def materialize(row: KeptRow, data: bytes, folder: Path) -> Path:
    """`data` (a kept copy read back) written as `<folder>/<agent>/<relative>`, the agent's own layout, so its
    format's reader reads it as it reads the agent's folder; `folder` is a private one the caller made and removes.

    Raises:
        FleetError: a row whose path leaves the folder (`..`, an absolute path): never written.
    """
    parts = PurePosixPath(row.relative).parts
    if (
        not parts
        or any(p in ("", ".", "..") or "\\" in p or "\x00" in p for p in parts)
        or row.relative.startswith("/")
    ):
        raise FleetError(
            visible(f"a kept session's path {row.relative!r} on the server is no path in an agent's folder")
        )
    if not row.agent.isidentifier():
        raise FleetError(visible(f"a kept session's agent {row.agent!r} on the server is no agent's name"))
    path = folder.joinpath(row.agent, *parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as out:
        out.write(data)
    return path


def rows_of(entries: list[tuple[str, bytes]]) -> list[KeptRow]:
    """The kept files of the session list's `k.` entries (key, value); one whose content names another host, agent
    or file than its key is left out (anyone who may write one key could otherwise speak for any host)."""
    rows = []
    for key, value in entries:
        try:
            row = _decode_row(value)
        except msgspec.DecodeError:
            continue
        if key == kept_key(row.host, row.agent, row.relative):
            rows.append(row)
    return sorted(rows, key=lambda r: (r.host, r.agent, r.relative))


async def kept_bytes(js: JetStreamContext, row: KeptRow) -> bytes:
    """The kept copy as the stream holds it: its messages laid end to end, each checked to start where the last ended.

    Raises:
        StreamDamaged: a message that does not follow the one before it.
    """
    subject = kept_subject(row.host, row.agent, row.relative, row.version)
    out = bytearray()
    seq = 1
    while len(out) < row.size:
        try:
            msg = await js.get_msg(STREAM, seq=seq, subject=subject, next=True)
        except nats.js.errors.NotFoundError:
            raise StreamDamaged(f"{subject} holds {len(out)} bytes, not the {row.size} its row says") from None
        offset = (msg.headers or {}).get(OFFSET, "")
        if msg.seq is None or offset != str(len(out)):
            raise StreamDamaged(visible(f"stream message {msg.seq} on {subject} starts at {offset!r}, not {len(out)}"))
        out += msg.data or b""
        seq = msg.seq + 1
    return bytes(out)
