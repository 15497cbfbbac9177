"""Reading the fleet: the session list, and a session's lines from the stream, checked by Wren's own reader on arrival.

A session is read with an ordered consumer from its first message: the history in chunks, then
live. Each message is joined into its line (big lines travel in parts), and every line goes
through `journal.reader.Tail.feed`, which checks it exactly as `read_events` checks a file (its
CRC, its seq, that it is one whole line of format 1) and stops at the first line it cannot read.
The lines laid end to end are the journal's bytes, so the byte offsets here are the journal's own.
"""

from __future__ import annotations

import asyncio
import contextlib
from array import array
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import accumulate
from pathlib import Path

import msgspec
import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.kv import KeyValue

from ..journal.index import Chunk
from ..journal.reader import EventSink, Tail
from ..journal.store import parse_ts
from ..journal.verdict import ReadVerdict, Stop
from . import FleetError, why
from .names import STREAM, RemoteRef, beat_key, row_key, shown, subject_of
from .rows import SessionRow, decode_beat, decode_row
from .stream import session_bucket
from .wire import Joiner, StreamDamaged

CONNECT_TIMEOUT_S = 5.0
# A chunk of history holds about this many bytes of lines; live, whatever has arrived.
CHUNK_BYTES = 1 << 20
# Messages received and not yet read are held up to this many bytes, then the server waits (flow control).
INBOX_BYTES = 8 << 20
# Reading history, this long without a message means the server went away.
STALL_S = 30.0
NO_STREAM_POLL_S = 0.5
# A host whose mirror has not said it is alive for this long is shown as silent.
SILENT_AFTER_S = 15.0


@dataclass(frozen=True)
class RemoteSession:
    """One row of the session list, with when its host's mirror last said it was alive."""

    row: SessionRow
    host_beat: str | None = None

    @property
    def host(self) -> str:
        return self.row.host

    @property
    def id(self) -> str:
        return self.row.session

    @property
    def state(self) -> str:
        return self.row.state

    def mirror_silent(self, now: datetime | None = None) -> bool:
        """True when this session's mirror has not been heard from lately: what the row says may be old."""
        beat = parse_ts(self.host_beat) if self.host_beat else None
        if beat is None:
            return True
        return ((now or datetime.now(UTC)) - beat).total_seconds() > SILENT_AFTER_S


@dataclass
class RemoteChunk(Chunk):
    """A run of a remote session's lines that the reader accepted, with their bytes and where reading is.

    `starts`/`ends` are the lines' offsets in the journal (the stream holds its exact bytes);
    `lines` holds exactly these lines, so line i is `lines[starts[i] - starts[0] : ends[i] - starts[0]]`.
    """

    lines: bytes = b""
    stream_seq: int = 0  # the stream sequence of the last message taken
    # True once everything the stream held when reading began has been read; later chunks are live.
    live: bool = False
    # Set on the last chunk when a line cannot be read (its number, offset and why); nothing after it is read.
    stop: Stop | None = None
    warnings: list[str] = field(default_factory=list)


class Fleet:
    """A connection to a fleet's server, for reading: sessions, and one session's lines."""

    def __init__(self, server: str, nc: Client) -> None:
        self.server = server
        self._nc = nc
        self._js: JetStreamContext = nc.jetstream(timeout=CONNECT_TIMEOUT_S)
        self._lost: str | None = None
        self._inboxes: set[_Inbox] = set()

    @classmethod
    async def connect(cls, server: str, *, reconnect: bool = False) -> Fleet:
        """Connect to `server`; with `reconnect`, ride out outages (a viewer), else fail on the first (a command)."""
        fleet: Fleet | None = None
        errors: list[Exception] = []

        async def failed(exc: Exception) -> None:
            errors.append(exc)  # said once, by the caller; nats-py would print each attempt

        async def lost() -> None:
            if fleet is not None and not reconnect:
                fleet._fail(f"lost the connection to {shown(server)}")

        try:
            nc = await nats.connect(
                server,
                name="wren reader",
                connect_timeout=CONNECT_TIMEOUT_S,
                allow_reconnect=reconnect,
                # One attempt for a command (nats-py's "no reconnect" still tries for two minutes).
                max_reconnect_attempts=-1 if reconnect else 1,
                error_cb=failed,
                disconnected_cb=lost,
            )
        except (TimeoutError, nats.errors.Error, OSError) as exc:
            said = why(errors[0] if errors else exc)
            raise FleetError(f"cannot reach {shown(server)} ({said}); is nats-server -js running there?") from None
        fleet = cls(server, nc)
        return fleet

    async def close(self) -> None:
        with contextlib.suppress(TimeoutError, nats.errors.Error, OSError):
            await asyncio.wait_for(self._nc.close(), 5)

    async def __aenter__(self) -> Fleet:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _fail(self, why: str) -> None:
        self._lost = why
        for inbox in self._inboxes:
            inbox.fail(why)

    # --- the session list -------------------------------------------------------------------

    async def sessions(self, host: str | None = None) -> list[RemoteSession]:
        """Every session in the list (or one host's), newest first, as their mirrors last wrote them."""
        kv = await session_bucket(self._js)
        beats = {b.host: b.beat for b in map(_beat, await _latest(kv, "h.>")) if b is not None}
        rows = [r for r in map(_row, await _latest(kv, f"s.{host}.>" if host else "s.>")) if r is not None]
        rows.sort(key=lambda r: (r.session, r.host), reverse=True)
        return [RemoteSession(r, beats.get(r.host)) for r in rows]

    async def session(self, host: str, session: str) -> RemoteSession | None:
        """One session's row (None when the list has none), read by its key."""
        kv = await session_bucket(self._js)
        row = _row(await _value(kv, row_key(host, session)))
        if row is None:
            return None
        beat = _beat(await _value(kv, beat_key(host)))
        return RemoteSession(row, beat.beat if beat else None)

    async def watch_sessions(self) -> AsyncIterator[list[RemoteSession]]:
        """The whole list first, then each change as it is written (a row, with its host's last beat)."""
        kv = await session_bucket(self._js)
        watcher = await kv.watch(">", ignore_deletes=True)
        beats: dict[str, str] = {}
        first: list[SessionRow] = []
        listed = False
        try:
            async for entry in watcher:
                if entry is None:  # the end of what was there when watching began
                    yield [RemoteSession(r, beats.get(r.host)) for r in sorted(first, key=_newest, reverse=True)]
                    first, listed = [], True
                    continue
                if entry.key.startswith("h."):
                    beat = _beat(entry.value)
                    if beat is not None:
                        beats[beat.host] = beat.beat
                    continue
                row = _row(entry.value)
                if row is None:
                    continue
                if listed:
                    yield [RemoteSession(row, beats.get(row.host))]
                else:
                    first.append(row)
        finally:
            await _stop(watcher)

    # --- one session's lines --------------------------------------------------------------------

    async def read(
        self, host: str, session: str, *, follow: bool = False, chunk_bytes: int = CHUNK_BYTES
    ) -> AsyncIterator[RemoteChunk]:
        """The session's lines from seq 1, in chunks; with `follow`, then every new line as it is mirrored.

        Without `follow` it ends once the lines the stream held at the start are read. It ends early,
        with `stop` set on the last chunk, at the first line Wren's reader does not accept.
        """
        subject = subject_of(host, session)
        end = await self._last_stream_seq(subject)
        while end < 0 and follow:
            await asyncio.sleep(NO_STREAM_POLL_S)  # no mirror has made the stream yet: wait for one
            end = await self._last_stream_seq(subject)
        if end < 0:
            raise FleetError(f"{shown(self.server)} has no stream {STREAM}: no `wren mirror` has used it")
        if end == 0 and not follow:
            return
        inbox = _Inbox(INBOX_BYTES)
        self._inboxes.add(inbox)
        if self._lost:
            inbox.fail(self._lost)
        try:
            sub = await self._js.subscribe(
                subject,
                stream=STREAM,
                cb=inbox.put,
                ordered_consumer=True,
                deliver_policy=DeliverPolicy.ALL,
                inactive_threshold=60.0,
            )
        except (TimeoutError, nats.errors.Error) as exc:
            self._inboxes.discard(inbox)
            raise FleetError(f"cannot read {subject} from {shown(self.server)} ({why(exc)})") from None
        try:
            lines = _Lines(subject, live=end == 0)
            if lines.live:
                lines.said_live = True
                yield lines.empty()  # nothing to read back: live from here on
            while True:
                messages = await inbox.take(chunk_bytes, None if follow and lines.live else STALL_S)
                chunk = lines.take(messages, end)
                if chunk.events or chunk.stop is not None or (chunk.live and not lines.said_live):
                    lines.said_live = chunk.live
                    yield chunk
                if chunk.stop is not None or (chunk.live and not follow):
                    return
        finally:
            self._inboxes.discard(inbox)
            with contextlib.suppress(TimeoutError, nats.errors.Error):
                await sub.unsubscribe()

    async def _last_stream_seq(self, subject: str) -> int:
        """The stream sequence of the subject's last message, asked of the stream's leader (0: none, -1: no stream)."""
        try:
            last = await self._js.get_msg(STREAM, subject=subject)
        except nats.js.errors.NotFoundError as exc:
            return -1 if exc.err_code == 10059 else 0  # 10059: the stream itself is missing
        except (TimeoutError, nats.errors.Error) as exc:
            raise FleetError(f"cannot read {subject} from {shown(self.server)} ({why(exc)})") from None
        return last.seq or 0


class _Lines:
    """Stream messages of one subject in, checked journal lines out: the state of one read."""

    def __init__(self, subject: str, *, live: bool) -> None:
        self._tail = Tail(Path(subject))  # fed bytes only: the path is never opened
        self._joiner = Joiner()
        self.offset = 0
        self.live = live
        self.said_live = False

    def empty(self) -> RemoteChunk:
        return RemoteChunk([], live=self.live)

    def take(self, messages: list[Msg], end: int) -> RemoteChunk:
        whole: list[bytes] = []
        stream_seq = 0
        damaged: str | None = None  # why the stream cannot give the next line
        for msg in messages:
            stream_seq = msg.metadata.sequence.stream
            try:
                line = self._joiner.add(msg.data, msg.headers, stream_seq)
            except StreamDamaged as exc:
                damaged = str(exc)
                break
            if line is None:
                continue
            if not line.endswith(b"\n"):
                damaged = f"stream message {stream_seq} is not a whole line (no newline at its end)"
                break
            whole.append(line)
            if stream_seq >= end:
                self.live = True
        data = b"".join(whole)
        batch = self._tail.feed(data)
        good = whole[: len(batch.events)]
        ends = array("q", accumulate(map(len, good), initial=self.offset))
        starts, ends = ends[:-1], ends[1:]
        chunk = RemoteChunk(
            batch.events,
            starts,
            ends,
            lines=b"".join(good) if len(good) < len(whole) else data,
            stream_seq=stream_seq,
            live=self.live,
            warnings=batch.warnings,
        )
        if ends:
            self.offset = ends[-1]
        if batch.stop is not None:
            chunk.stop = batch.stop
        elif damaged is not None:
            chunk.stop = Stop(self._tail.lineno + 1, self.offset, damaged)
        return chunk


class _Inbox:
    """Messages handed over by the subscription, held up to a number of bytes (then the server waits)."""

    def __init__(self, limit: int) -> None:
        self._messages: deque[Msg] = deque()
        self._bytes = 0
        self._limit = limit
        self._ready = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._failed: str | None = None

    async def put(self, msg: Msg) -> None:
        while self._bytes >= self._limit:
            self._room.clear()
            await self._room.wait()
        self._messages.append(msg)
        self._bytes += len(msg.data)
        self._ready.set()

    def fail(self, why: str) -> None:
        self._failed = why
        self._ready.set()

    async def take(self, max_bytes: int, timeout: float | None) -> list[Msg]:
        """At least one message, and as many more as have arrived, up to about `max_bytes`."""
        while not self._messages:
            if self._failed:
                raise FleetError(self._failed)
            self._ready.clear()
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except TimeoutError:
                raise FleetError(f"the server sent nothing for {timeout:.0f} s while there was more to read") from None
        taken: list[Msg] = []
        size = 0
        while self._messages and (not taken or size < max_bytes):
            msg = self._messages.popleft()
            taken.append(msg)
            size += len(msg.data)
        self._bytes -= size
        if self._bytes < self._limit:
            self._room.set()
        return taken


async def _latest(kv: KeyValue, keys: str) -> list[bytes]:
    """The current value of every key matching `keys`, read with one ordered consumer."""
    values: list[bytes] = []
    watcher = await kv.watch(keys, ignore_deletes=True)
    try:
        async for entry in watcher:
            if entry is None:
                break
            values.append(entry.value or b"")
    finally:
        await _stop(watcher)
    return values


async def _value(kv: KeyValue, key: str) -> bytes | None:
    try:
        return (await kv.get(key)).value
    except nats.js.errors.KeyNotFoundError:
        return None


async def _stop(watcher: KeyValue.KeyWatcher) -> None:
    with contextlib.suppress(TimeoutError, nats.errors.Error):
        await watcher.stop()  # type: ignore[no-untyped-call]


def _row(value: bytes | None) -> SessionRow | None:
    try:
        return decode_row(value or b"")
    except msgspec.DecodeError:
        return None  # written by something else: not listed


def _beat(value: bytes | None) -> _Beat | None:
    try:
        beat = decode_beat(value or b"")
    except msgspec.DecodeError:
        return None
    return _Beat(beat.host, beat.beat)


@dataclass(frozen=True)
class _Beat:
    host: str
    beat: str


def _newest(row: SessionRow) -> tuple[str, str]:
    return row.session, row.host


def scan_remote(ref: RemoteRef, sink: EventSink) -> ReadVerdict:
    """Read a remote session as `scan_events` reads a file: each run of good events to `sink`, then the verdict.

    When the stream holds every line up to where the journal itself cannot be read further (its
    mirror says so in the session list), the verdict says where and why, as `wren log` on its host would.
    """
    assert ref.host is not None and ref.session is not None
    return asyncio.run(_scan(ref, sink))


async def _scan(ref: RemoteRef, sink: EventSink) -> ReadVerdict:
    host, session = ref.host, ref.session
    assert host is not None and session is not None
    verdict = ReadVerdict()
    async with await Fleet.connect(ref.server) as fleet:
        found = await fleet.session(host, session)
        async for chunk in fleet.read(host, session):
            if chunk.events:
                sink(chunk.events, chunk.lines)
                verdict.lines += len(chunk.events)
                verdict.last_seq = chunk.events[-1].seq
                verdict.good_bytes = chunk.ends[-1]
            verdict.warnings.extend(chunk.warnings)
            if chunk.stop is not None:
                verdict.stop = chunk.stop
        if verdict.lines == 0 and found is None:
            raise FleetError(f"{ref}: no such session (`wren ls {shown(ref.server)}` lists them)")
    row = found.row if found else None
    if verdict.stop is None and row is not None and row.stop is not None and row.lastSeq == verdict.last_seq:
        verdict.stop = row.stop
    return verdict
