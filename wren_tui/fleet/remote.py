"""Reading the fleet: the session list, and a session's lines from the stream, checked by Wren's own reader on arrival.

A session is read with an ordered consumer from its first message: the history in chunks, then
live. Each message is joined into its line (big lines travel in parts), and every line goes
through `journal.offsets.CheckedLines`, which checks it exactly as `read_events` checks a file (its
CRC, its seq, that it is one whole line of format 1) and stops at the first line it cannot read.
The lines laid end to end are the journal's bytes, so the byte offsets here are the journal's own.
A read may also start at a line further on (`ReadFrom`, found with `find_line`) or stop before one
(`before`), so a viewer can show a long session's last lines first and read its history after.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import msgspec
import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy
from nats.js.kv import KeyValue

from ..forwarding import Forward
from ..journal.offsets import CheckedLines, Chunk
from ..journal.reader import EventSink
from ..journal.store import parse_ts
from ..journal.verdict import ReadVerdict, Stop
from . import FleetError, why
from .kept import KeptRow, kept_bytes, rows_of
from .names import BUCKET, STREAM, RemoteRef, beat_key, row_key, shown, subject_of
from .rows import SessionRow, decode_beat, decode_row
from .stream import session_bucket
from .wire import Joiner, StreamDamaged, part_of

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
# How long the whole session list may take to arrive before that is said (thousands of rows take well under one).
_LIST_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class RemoteSession:
    """One row of the session list, with when its host's mirror last said it was alive."""

    row: SessionRow
    host_beat: str | None = None

    host = Forward[str]("row.host")
    id = Forward[str]("row.session")
    state = Forward[str]("row.state")

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
    stream_seq: int = 0  # the stream sequence of the last message of its last line (0: no line): read on after it
    # True once everything the stream held when reading began has been read; later chunks are live.
    live: bool = False
    # Set on the last chunk when a line cannot be read (its number, offset and why); nothing after it is read.
    stop: Stop | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ReadFrom:
    """Where a read starts when not at the session's first line, and what came before that line.

    A read from a stream sequence delivers the session's messages from there on, so `stream_seq`
    must be where a line starts (`Fleet.find_line` gives one). `offset`, `lineno` and `prev_seq`
    say where that line is in the journal, so offsets and line numbers count from the journal's
    start and its seq is checked against the one before it (0: not known, not checked).
    """

    stream_seq: int
    offset: int = 0
    lineno: int = 0
    prev_seq: int = 0


@dataclass(frozen=True)
class ListChange:
    """What `Fleet.watch_list` hands on: rows written and hosts heard from (the first one is the whole list)."""

    rows: list[SessionRow]
    beats: dict[str, str]  # host -> when its mirror last said it was alive
    whole: bool = False  # the whole list as it was when watching began
    # Other agents' sessions the hosts kept (`wren keep`), as their mirrors listed them (`fleet.kept`).
    kept: list[KeptRow] = field(default_factory=list)


@dataclass(frozen=True)
class Seen:
    """One session's row (None while the list has none) and when its host's mirror last said it was alive."""

    row: SessionRow | None
    host_beat: str | None


# The seq of a line from its first bytes: Wren writes it first, so a line's first part has it.
_LEADING_SEQ = re.compile(rb'\{"seq":([0-9]{1,18})[,}]')


class Fleet:
    """A connection to a fleet's server, for reading: sessions, and one session's lines."""

    def __init__(self, server: str, nc: Client) -> None:
        self.server = server
        self._nc = nc
        self._js: JetStreamContext = nc.jetstream(timeout=CONNECT_TIMEOUT_S)
        self._lost: str | None = None
        self._inboxes: set[_Inbox] = set()
        # Keys of the session list whose row names another host or session: not listed (see `sessions`).
        self.refused: list[str] = []

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
                # One attempt for a command (nats-py's "no reconnect" still tries for two minutes), and for
                # a viewer's first connection (with no limit, nats-py would try for ever before returning).
                max_reconnect_attempts=1,
                error_cb=failed,
                disconnected_cb=lost,
            )
        except (TimeoutError, nats.errors.Error, OSError) as exc:
            said = why(errors[0] if errors else exc, server)
            raise FleetError(f"cannot reach {shown(server)} ({said}); is nats-server -js running there?") from None
        if reconnect:
            nc.options["max_reconnect_attempts"] = -1  # connected: from now on, ride out every outage
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
        """Every session in the list (or one host's), newest first, as their mirrors last wrote them.

        A row whose content names another host or session than its key is left out, and its key is
        added to `refused` (anyone who may write one key of the list could otherwise speak for any host).
        """
        kv = await session_bucket(self._js)
        beats = {b.host: b.beat for b in (_beat(k, v) for k, v in await _latest(self._js, kv, "h.>")) if b is not None}
        rows = []
        for key, value in await _latest(self._js, kv, f"s.{host}.>" if host else "s.>"):
            row = _row(key, value)
            if row is not None:
                rows.append(row)
            elif _foreign_row(key, value):
                self.refused.append(key)
        rows.sort(key=lambda r: (r.session, r.host), reverse=True)
        return [RemoteSession(r, beats.get(r.host)) for r in rows]

    async def kept(self, host: str | None = None) -> list[KeptRow]:
        """The other agents' sessions the hosts' mirrors shipped from their kept stores (`wren keep`), or one host's."""
        kv = await session_bucket(self._js)
        return rows_of(await _latest(self._js, kv, f"k.{host}.>" if host else "k.>"))

    async def kept_copy(self, row: KeptRow) -> bytes:
        """A kept session's copy as its host kept it, read back from the stream (its agent's own bytes)."""
        return await kept_bytes(self._js, row)

    async def wait_for_list(self) -> None:
        """Return once the server holds the session list: at once where a mirror has run, else when one first does."""
        while True:
            try:
                await session_bucket(self._js)
                return
            except FleetError:
                await asyncio.sleep(NO_STREAM_POLL_S)  # no mirror has made it yet: wait for one

    async def session(self, host: str, session: str) -> RemoteSession | None:
        """One session's row (None when the list has none), read by its key."""
        kv = await session_bucket(self._js)
        row = _row(row_key(host, session), await _value(kv, row_key(host, session)))
        if row is None:
            return None
        beat = _beat(beat_key(host), await _value(kv, beat_key(host)))
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
                    beat = _beat(entry.key, entry.value)
                    if beat is not None:
                        beats[beat.host] = beat.beat
                    continue
                row = _row(entry.key, entry.value)
                if row is None:
                    continue
                if listed:
                    yield [RemoteSession(row, beats.get(row.host))]
                else:
                    first.append(row)
        finally:
            await _stop(watcher)

    async def watch_list(self) -> AsyncIterator[ListChange]:
        """The whole list and every host's last beat first, then each row written and each beat, as they come."""
        kv = await session_bucket(self._js)
        watcher = await kv.watch(">", ignore_deletes=True)
        first = ListChange([], {}, whole=True)
        listed = False
        try:
            async for entry in watcher:
                if entry is None:  # the end of what was there when watching began
                    first.rows.sort(key=_newest, reverse=True)
                    yield first
                    listed = True
                    continue
                change = _change_of(entry.key, entry.value)
                if change is None:
                    continue
                if listed:
                    yield change
                else:
                    first.rows.extend(change.rows)
                    first.beats.update(change.beats)
                    first.kept.extend(change.kept)
        finally:
            await _stop(watcher)

    async def watch_session(self, host: str, session: str) -> AsyncIterator[Seen]:
        """One session's row and its host's beat: first as they are, then again each time either is written."""
        kv = await session_bucket(self._js)
        changes: asyncio.Queue[tuple[str, bytes | None] | BaseException] = asyncio.Queue()

        async def pump(key: str) -> None:
            try:
                watcher = await kv.watch(key, ignore_deletes=True)
            except (TimeoutError, nats.errors.Error) as exc:
                await changes.put(exc)
                return
            try:
                async for entry in watcher:
                    await changes.put((key, None if entry is None else entry.value or b""))
            except (TimeoutError, nats.errors.Error) as exc:
                await changes.put(exc)
            finally:
                await _stop(watcher)

        keys = row_key(host, session), beat_key(host)
        pumps = [asyncio.create_task(pump(key)) for key in keys]
        row: SessionRow | None = None
        beat: str | None = None
        started: set[str] = set()
        try:
            while True:
                change = await changes.get()
                if isinstance(change, BaseException):
                    raise FleetError(f"cannot watch {session} on {shown(self.server)} ({why(change)})")
                key, value = change
                if value is None:
                    started.add(key)  # the end of what was there: nothing, or the value already taken
                elif key == keys[0]:
                    row = _row(key, value) or row
                else:
                    found = _beat(key, value)
                    beat = found.beat if found is not None else beat
                if len(started) == len(keys):
                    yield Seen(row, beat)
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)

    # --- one session's lines --------------------------------------------------------------------

    async def read(
        self,
        host: str,
        session: str,
        *,
        follow: bool = False,
        chunk_bytes: int = CHUNK_BYTES,
        start: ReadFrom | None = None,
        before: int | None = None,
    ) -> AsyncGenerator[RemoteChunk, None]:
        """The session's lines from seq 1 (or `start`), in chunks; with `follow`, then each new line as it is mirrored.

        Without `follow` it ends once the lines the stream held at the start are read; with `before`
        (a stream sequence where a line starts), once the lines before that one are read. It ends
        early, with `stop` set on the last chunk, at the first line Wren's reader does not accept.
        """
        subject = subject_of(host, session)
        end = await self._last_stream_seq(subject)
        while end < 0 and follow:
            await asyncio.sleep(NO_STREAM_POLL_S)  # no mirror has made the stream yet: wait for one
            end = await self._last_stream_seq(subject)
        if end < 0:
            raise FleetError(f"{shown(self.server)} has no stream {STREAM}: no `wren mirror` has used it")
        first = start.stream_seq if start is not None else 1
        if before is not None:
            end = min(end, before - 1)
            follow = False
        if end < first and not follow:
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
                deliver_policy=DeliverPolicy.ALL if first <= 1 else DeliverPolicy.BY_START_SEQUENCE,
                config=ConsumerConfig(opt_start_seq=first) if first > 1 else None,
                inactive_threshold=60.0,
            )
        except (TimeoutError, nats.errors.Error) as exc:
            self._inboxes.discard(inbox)
            raise FleetError(f"cannot read {subject} from {shown(self.server)} ({why(exc)})") from None
        try:
            lines = _Lines(subject, live=end < first, start=start, before=before)
            if lines.live:
                lines.said_live = True
                yield lines.empty()  # nothing to read back: live from here on
            while True:
                messages = await inbox.take(chunk_bytes, None if follow and lines.live else STALL_S)
                chunk = lines.take(messages, end)
                if chunk.events or chunk.stop is not None or (chunk.live and not lines.said_live):
                    lines.said_live = chunk.live
                    yield chunk
                if chunk.stop is not None or (chunk.live and not follow) or lines.ended:
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

    async def find_line(self, host: str, session: str, seq: int, last: int) -> tuple[int, int] | None:
        """Where the session's first line with a seq of at least `seq` starts in the stream, and its seq.

        A binary search over stream sequences up to `last` (the session's last message), asking the
        stream's leader for the session's next message at each: about log2(last) requests, whatever
        the session's size. None when there is no such line or the messages do not say their seq.
        """
        subject = subject_of(host, session)
        low, high = 1, last
        found: tuple[int, int] | None = None
        try:
            while low <= high:
                middle = (low + high) // 2
                line = await self._line_from(subject, middle)
                if line is None:
                    high = middle - 1
                    continue
                begins, line_seq, at = line
                if line_seq >= seq:
                    found, high = (begins, line_seq), begins - 1
                else:
                    low = at + 1
        except StreamDamaged:
            return None
        return found

    async def _line_from(self, subject: str, stream_seq: int) -> tuple[int, int, int] | None:
        """The line of the subject's first message at or after `stream_seq`: where it begins, its seq, the message's."""
        try:
            msg = await self._js.get_msg(STREAM, seq=stream_seq, subject=subject, next=True)
        except nats.js.errors.NotFoundError:
            return None
        except (TimeoutError, nats.errors.Error) as exc:
            raise FleetError(f"cannot read {subject} from {shown(self.server)} ({why(exc)})") from None
        at = msg.seq or 0
        part = part_of(msg.headers)
        begins = at - (part[0] - 1) if part is not None else at
        head = msg
        if begins != at:  # a part of a big line: its first part (stored just before, in one batch) has the seq
            head = await self._js.get_msg(STREAM, seq=begins)
            if head.subject != subject:
                raise StreamDamaged(f"stream message {begins} belongs to {head.subject}, not to the line at {at}")
        said = _LEADING_SEQ.match(head.data or b"")
        if said is None:
            raise StreamDamaged(f"stream message {begins} does not begin with a seq")
        return begins, int(said.group(1)), at


class _Lines:
    """Stream messages of one subject in, checked journal lines out: the state of one read."""

    def __init__(self, subject: str, *, live: bool, start: ReadFrom | None = None, before: int | None = None) -> None:
        # The journal's lines from where this read starts (its offset, lines and last seq before it).
        self._lines = CheckedLines()
        if start is not None:
            self._lines = CheckedLines(offset=start.offset, lineno=start.lineno, prev_seq=start.prev_seq)
        self._joiner = Joiner()
        self._before = before
        self.live = live
        self.said_live = False
        self.ended = False  # a message at `before` arrived: every line before it is read

    @property
    def offset(self) -> int:
        """Just past the last good line read, in the journal."""
        return self._lines.offset

    def empty(self) -> RemoteChunk:
        return RemoteChunk([], live=self.live)

    def take(self, messages: list[Msg], end: int) -> RemoteChunk:
        whole: list[bytes] = []
        line_ends: list[int] = []  # the stream sequence of each whole line's last message
        damaged: str | None = None  # why the stream cannot give the next line
        for msg in messages:
            if self._before is not None and msg.metadata.sequence.stream >= self._before:
                self.live = self.ended = True
                break
            stream_seq: int = msg.metadata.sequence.stream
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
            line_ends.append(stream_seq)
            if stream_seq >= end:
                self.live = True
        data = b"".join(whole)
        lines, begin = self._lines, self._lines.offset
        checked = lines.chunk(data) if lines.stop is None else Chunk([])
        good = len(checked.events)
        chunk = RemoteChunk(
            checked.events,
            checked.starts,
            checked.ends,
            lines=data[: lines.offset - begin],
            stream_seq=line_ends[good - 1] if good else 0,
            live=self.live,
            warnings=lines.warnings,
        )
        if lines.stop is None and damaged is not None:
            lines.fail(damaged)
        chunk.stop = lines.stop
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


async def _latest(js: JetStreamContext, kv: KeyValue, keys: str) -> list[tuple[str, bytes]]:
    """The current value of every key matching `keys` (key, value), read with one ordered consumer.

    How many keys there are is asked of the stream first, and exactly that many entries are read:
    nats-py's watcher can say its first replay is over (`None`) before entries already on their way
    have arrived (nats-io/nats.py#842), which made a list read right after a mirror's write empty.
    """
    info = await js.stream_info(f"KV_{BUCKET}", subjects_filter=f"$KV.{BUCKET}.{keys}")
    expected = len(info.state.subjects or {})
    values: list[tuple[str, bytes]] = []
    if expected == 0:
        return values
    seen = 0
    # Deleted keys are counted among the subjects too: they are read (and left out) so the count holds.
    watcher = await kv.watch(keys, ignore_deletes=False)
    try:
        async with asyncio.timeout(_LIST_TIMEOUT_S):
            async for entry in watcher:
                if entry is None:
                    continue  # maybe early: the count says when the replay is over
                seen += 1
                if entry.operation is None:  # a value, not a delete or purge marker
                    values.append((entry.key, entry.value or b""))
                if seen >= expected:
                    break
    except TimeoutError:
        raise FleetError(
            f"the session list on the server sent {seen} of its {expected} entries in {_LIST_TIMEOUT_S:.0f} s"
        ) from None
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


def _change_of(key: str, value: bytes | None) -> ListChange | None:
    """One entry of the list as a change: a session's row, or a host's beat (None: neither, or unreadable)."""
    if key.startswith("h."):
        beat = _beat(key, value)
        return None if beat is None else ListChange([], {beat.host: beat.beat})
    if key.startswith("k."):
        kept = rows_of([(key, value or b"")])
        return ListChange([], {}, kept=kept) if kept else None
    row = _row(key, value)
    return None if row is None else ListChange([row], {})


def _row(key: str, value: bytes | None) -> SessionRow | None:
    """The row stored under `key`, believed only under its own key: None for one that names another."""
    try:
        row = decode_row(value or b"")
    except msgspec.DecodeError:
        return None  # written by something else: not listed
    return row if row_key(row.host, row.session) == key else None


def _foreign_row(key: str, value: bytes | None) -> bool:
    """Whether `value` is a row, stored under a key other than its own (what `_row` refuses)."""
    try:
        row = decode_row(value or b"")
    except msgspec.DecodeError:
        return False
    return row_key(row.host, row.session) != key


def _beat(key: str, value: bytes | None) -> _Beat | None:
    """The beat stored under `key`, believed only under its own key (one host cannot keep another alive)."""
    try:
        beat = decode_beat(value or b"")
    except msgspec.DecodeError:
        return None
    return _Beat(beat.host, beat.beat) if beat_key(beat.host) == key else None


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
    if verdict.stop is None and row is not None and row.stop is not None and row.last_seq == verdict.last_seq:
        verdict.stop = row.stop
    return verdict
