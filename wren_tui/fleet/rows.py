"""The session list: a key-value entry per session (and per host), so a viewer lists thousands without reading them.

Rows are written by the mirrors and only ever move forward: a row is replaced through the
bucket's per-key expected revision, and never by one that has shipped less of its session.
"""

from __future__ import annotations

import msgspec
import nats.js.errors
from nats.js.kv import KeyValue

from ..journal.verdict import Stop
from ..records import fields_of
from .names import beat_key, row_key


class SessionRow(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """What the list shows of one session, as its mirror last saw it."""

    host: str
    session: str
    # The journal's state as `wren ls` says it: live, done, interrupted, outcome unknown, forked, torn tail,
    # corrupt, empty.
    state: str
    last_seq: int = 0  # the seq of the last line in the stream
    events: int = 0  # lines in the stream
    stream_seq: int = 0  # the stream sequence of the session's last message
    size: int = 0  # the journal's bytes up to the end of its last line in the stream (0: not said)
    started: str | None = None  # ts of the first line
    last_ts: str | None = None  # ts of the last line in the stream
    tokens: int = 0
    forked_from: str | None = None
    fork_at: int | None = None
    # Where and why the journal cannot be read past a line, as its reader said (line, offset, why, torn):
    # set once every line before it is in the stream; it and the lines after it are not shipped.
    stop: Stop | None = None
    # Set when the mirror stopped shipping this session: the stream holds other bytes than the journal.
    mirror: str | None = None
    updated: str = ""  # when the mirror wrote this row (UTC, like a journal ts)


class HostBeat(msgspec.Struct, kw_only=True):
    """A mirror's sign of life, renewed every few seconds: a live session whose host is silent may be stale."""

    host: str
    pid: int
    folder: str
    version: str
    beat: str  # UTC, like a journal ts


class _StopFields(msgspec.Struct):
    """A row's `stop` as msgspec reads it (`Stop` is a record, no type msgspec knows): each field of its type."""

    line: int
    offset: int
    why: str
    torn: bool = False


def _stop_of(kind: type, value: object) -> Stop:
    """A row's `stop`, in its parts (`fields_of` wrote it, as mirrors that knew it as a dataclass did), as a `Stop`."""
    if kind is not Stop:
        raise NotImplementedError
    try:
        fields = msgspec.convert(value, _StopFields)
    except msgspec.ValidationError as exc:
        # Said at the row's `stop` (msgspec says where within what the hook was given: `$.line`, or nowhere).
        said, at, where = str(exc).rpartition(" - at `$")
        raise msgspec.ValidationError(f"{said} - at `$.stop{where}" if at else f"{exc} - at `$.stop`") from None
    return Stop(fields.line, fields.offset, fields.why, fields.torn)


encode = msgspec.json.Encoder(enc_hook=fields_of).encode
decode_row = msgspec.json.Decoder(SessionRow, dec_hook=_stop_of).decode
decode_beat = msgspec.json.Decoder(HostBeat).decode


class RowWriter:
    """Writes rows through expected revisions, so two mirrors of one folder never move a row backwards."""

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv
        self._revisions: dict[str, int] = {}

    async def put(self, row: SessionRow) -> bool:
        """Store `row` unless the list already holds more of its session; True when stored."""
        key = row_key(row.host, row.session)
        for _ in range(5):
            revision = self._revisions.get(key)
            if revision is None:
                revision, stored = await self._current(key)
                self._revisions[key] = revision
                if stored is not None and stored.last_seq > row.last_seq:
                    return False
            try:
                self._revisions[key] = await self.kv.update(key, encode(row), last=revision)
                return True
            except nats.js.errors.KeyWrongLastSequenceError:
                del self._revisions[key]  # another writer came between: read it again
        return False

    async def beat(self, beat: HostBeat) -> None:
        await self.kv.put(beat_key(beat.host), encode(beat))

    async def _current(self, key: str) -> tuple[int, SessionRow | None]:
        try:
            entry = await self.kv.get(key)
        except nats.js.errors.KeyNotFoundError as exc:
            # A deleted key's tombstone still has a revision to write after.
            return (exc.entry.revision or 0) if exc.entry else 0, None
        try:
            return entry.revision or 0, decode_row(entry.value or b"")
        except msgspec.DecodeError:
            return entry.revision or 0, None
