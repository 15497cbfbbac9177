"""`wren mirror`: a process of its own that ships every journal of a folder to JetStream, line by line, and follows.

Each session's lines go to its own subject in atomic batches, each batch expected to follow the
subject's last stream sequence exactly, so the stream holds seq 1..N once each and in order
however often this process or the server dies. On start, and after any error, the mirror asks the
stream's leader for the session's last line, compares its bytes with the journal's line of that
seq, and goes on after it; when they differ it stops mirroring that session and says so.

The agent never talks to this process: if the server is away the journals are simply read later.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nats
import nats.errors
from nats.aio.client import Client
from nats.js import JetStreamContext

from .. import __version__
from ..journal.errors import JournalError
from ..journal.events import Event, Fork, Usage
from ..journal.locks import lock_holder, read_locks
from ..journal.reader import decode_line
from ..journal.store import SUFFIX, describe_session, is_session_id
from ..journal.verdict import Stop
from ..journal.visible import visible
from ..journal.writer import now_ts
from . import FleetError, why
from .batch import MAX_MESSAGES, BatchRejected, BatchUnanswered, publish_batch
from .kept import KeptShipper, KeptSource
from .names import shown, subject_of
from .rows import HostBeat, RowWriter, SessionRow
from .source import DurableLines, Line, SourceChanged
from .stream import ensure_bucket, ensure_stream, last_line
from .watch import watch_folder
from .wire import PART_SIZE, Outgoing, StreamDamaged, messages_of

Report = Callable[[str], None]

# A batch also stops at this many bytes: the server stages a batch until its commit.
MAX_BATCH_BYTES = 8 << 20
COMMIT_TIMEOUT_S = 10.0
# A session's row is rewritten at most this often while it grows (at once when its state changes).
ROW_INTERVAL_S = 0.5
BEAT_INTERVAL_S = 5.0
# Rows written at once (a folder of thousands of sessions lists them all when the mirror starts).
ROWS_AT_ONCE = 32
# Every session is looked at this often even without a change notification (a writer's lock released).
SCAN_INTERVAL_S = 1.0
# Up to this many lines, none in parts, go one acknowledged publish each: the server stages an atomic
# batch in a store of its own first, which costs about as much as eight single publishes (measured).
ONE_BY_ONE = 8
# Sessions shipped at once: the server allows 50 open atomic batches per stream, shared by all hosts.
CONCURRENCY = 4
RETRY_S = (0.2, 0.5, 1.0, 2.0, 5.0)


@dataclass
class MirrorOptions:
    folder: Path
    server: str
    host: str
    replicas: int = 1
    part_size: int = PART_SIZE
    poll: bool = False  # poll the folder instead of using change notifications
    # The other agents' sessions Wren kept (`wren keep`), asked again at each full round: shipped too (fleet/kept.py).
    kept: Callable[[], list[KeptSource]] | None = None


@dataclass
class _Summary:
    """What the session list says of a session, gathered from its lines in order as they reach the stream."""

    events: int = 0
    last_seq: int = 0
    started: str | None = None
    last_ts: str | None = None
    tokens: int = 0
    forked_from: str | None = None
    fork_at: int | None = None

    def add(self, events: Sequence[Event]) -> None:
        if not events:
            return
        self.events += len(events)
        self.last_seq = events[-1].seq
        self.started = self.started or events[0].ts
        self.last_ts = events[-1].ts
        for event in events:
            if isinstance(event, Usage):
                self.tokens += event.input_tokens + event.output_tokens
            elif isinstance(event, Fork) and self.forked_from is None:
                self.forked_from, self.fork_at = event.from_, event.at_seq


@dataclass
class _Session:
    id: str
    path: Path
    subject: str
    msg_id: str  # the prefix of each batch's Nats-Msg-Id (the seq of its first line follows)
    lines: DurableLines
    pending: deque[Line] = field(default_factory=deque)  # read from the journal, not in the stream yet
    last: Line | None = None  # the last line known to be in the stream
    stream_seq: int = 0  # the stream sequence of the subject's last message (0: none)
    synced: bool = False
    stopped: str | None = None  # why this session is no longer mirrored
    summary: _Summary = field(default_factory=_Summary)
    failures: int = 0
    caught_up: bool = False  # the last look found nothing durable left to ship
    retry_at: float = 0.0
    seen: tuple[int, int, int, int | None] | None = None  # (inode, size, mtime, lock holder) when last looked at
    described: tuple[int, int] | None = None  # (size, mtime) the state below was derived from
    state: str = "empty"
    state_stop: Stop | None = None  # where the journal stops, when its state is torn tail or corrupt
    row: SessionRow | None = None
    row_at: float = 0.0
    reported: str | None = None  # the last reading problem said, so it is said once

    def restart(self) -> None:
        """Forget what was read: the journal is read again from its start (it changed, or the stream went back)."""
        self.lines = DurableLines(self.path, self.lines.read_size)
        self.caught_up = False
        self.pending.clear()
        self.last = None
        self.summary = _Summary()
        self.synced = False


class Mirror:
    """Ships one folder's journals to a NATS server until stopped."""

    def __init__(self, options: MirrorOptions, report: Report) -> None:
        self.options = options
        self.report = report
        self.sessions: dict[str, _Session] = {}
        self._nc: Client | None = None
        self._js: JetStreamContext | None = None
        self._rows: RowWriter | None = None
        self._gate = asyncio.Semaphore(CONCURRENCY)
        self._changed: set[Path] = set()
        self._wake = asyncio.Event()
        self._connected = asyncio.Event()
        self._max_messages = MAX_MESSAGES
        self._beat_at = 0.0
        self._outage: str | None = None
        self._closing = False
        self._errors: list[Exception] = []  # the connection's last error, for the sentence that says it
        self._kept: KeptShipper | None = None
        self._kept_behind: dict[str, str] = {}  # kept files not all shipped yet (the server away), by path: why
        self._kept_stopped: dict[str, str] = {}  # kept files no longer shipped (the stream holds other bytes): why

    # --- the loop -------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event, *, once: bool = False) -> int:
        """Mirror until `stop` is set; with `once`, until what is durable now is shipped.

        Returns:
            How many sessions could not be mirrored (0: all of them were): stopped, or left behind by `once`.
        """
        try:
            if not await self._start(stop, once=once):
                return 0
            if once:
                return await self._catch_up(stop)
            watcher = asyncio.create_task(watch_folder(self.options.folder, self._on_change, poll=self.options.poll))
            try:
                await self._follow(stop)
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            return 0
        finally:
            await self._close()

    async def _start(self, stop: asyncio.Event, *, once: bool) -> bool:
        """Connect and make sure the stream and the session list exist; False when stopped first."""
        options = self.options
        self.report(
            f"mirroring {options.folder} to {shown(options.server)} as host {options.host} "
            f"(stream WREN, subjects wren.j.{options.host}.<session>)"
        )
        connecting = asyncio.create_task(self._connect(once=once))
        stopping = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait([connecting, stopping], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if not connecting.done():
            connecting.cancel()
            with contextlib.suppress(asyncio.CancelledError, nats.errors.Error, OSError):
                await connecting
            return False
        try:
            self._nc = connecting.result()
        except (TimeoutError, nats.errors.Error, OSError) as exc:
            said = why(self._errors[0] if self._errors else exc, options.server)
            raise FleetError(
                f"cannot reach {shown(options.server)} ({said}); is nats-server -js running there?"
            ) from None
        self._js = self._nc.jetstream(timeout=COMMIT_TIMEOUT_S)
        while not stop.is_set():
            try:
                await ensure_stream(self._js, options.replicas)
                self._rows = RowWriter(await ensure_bucket(self._js, options.replicas))
                self._kept = KeptShipper(self._nc, self._js, self._rows.kv, options.host)
                self._connected.set()
                self._back()
                return True
            except (TimeoutError, nats.errors.Error, OSError) as exc:
                if once:
                    raise FleetError(f"{shown(options.server)}: cannot set up the stream ({why(exc)})") from None
                self._lost(exc)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), RETRY_S[-1])
        return False

    async def _connect(self, *, once: bool) -> Client:
        async def failed(exc: Exception) -> None:
            # Said once per outage; nats-py would print every attempt.
            self._errors[:] = [exc]
            if not self._connected.is_set() and not once:
                self._lost(exc)

        async def disconnected() -> None:
            self._connected.clear()
            if not self._closing:
                self._lost(None)

        async def reconnected() -> None:
            self._connected.set()
            self._back()
            self._wake.set()

        return await nats.connect(
            self.options.server,
            name=f"wren mirror {self.options.host}",
            connect_timeout=2,
            allow_reconnect=True,
            # Forever, also for the first connection: the server may come up after the mirror.
            max_reconnect_attempts=1 if once else -1,
            reconnect_time_wait=0.5,
            error_cb=failed,
            disconnected_cb=disconnected,
            reconnected_cb=reconnected,
        )

    async def _catch_up(self, stop: asyncio.Event) -> int:
        """Ship what is durable now in every session, retrying a few times; how many stopped or fell behind."""
        for _round in range(len(RETRY_S) + 1):
            await self._round(full=True)
            await self._flush_rows(force=True)
            behind = [s for s in self.sessions.values() if not s.stopped and not s.caught_up]
            if (not behind and not self._kept_behind) or stop.is_set():
                break
            wait = max(0.0, self._next_retry() - time.monotonic())
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), min(wait, RETRY_S[-1]))
        else:
            for session in behind:
                self.report(visible(f"{session.id}: not all of it could be shipped; run the mirror again"))
            return (
                len(behind)
                + sum(1 for s in self.sessions.values() if s.stopped)
                + len(self._kept_behind)
                + len(self._kept_stopped)
            )
        return sum(1 for s in self.sessions.values() if s.stopped) + len(self._kept_stopped)

    async def _close(self) -> None:
        self._closing = True
        if self._nc is not None and not self._nc.is_closed:
            with contextlib.suppress(nats.errors.Error, OSError, asyncio.TimeoutError):
                await asyncio.wait_for(self._nc.close(), 5)

    async def _follow(self, stop: asyncio.Event) -> None:
        next_full = 0.0
        while not stop.is_set():
            self._wake.clear()  # before the round: a change during it wakes the next one at once
            now = time.monotonic()
            full = now >= next_full
            if full:
                next_full = now + SCAN_INTERVAL_S
            due = next_full
            if self._connected.is_set():
                await self._round(full=full)
                await self._flush_rows(force=False)
                await self._beat()
                due = min(due, self._next_retry())
            waits = [asyncio.create_task(self._wake.wait()), asyncio.create_task(stop.wait())]
            timeout = max(0.0, due - time.monotonic())
            try:
                await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in waits:
                    task.cancel()

    async def _on_change(self, paths: set[Path]) -> None:
        self._changed.update(paths)
        self._wake.set()

    def _next_retry(self) -> float:
        due = [s.retry_at for s in self.sessions.values() if s.retry_at and not s.stopped]
        return min(due, default=float("inf"))

    # --- one round over the sessions ----------------------------------------------------------

    async def _round(self, *, full: bool) -> None:
        changed, self._changed = self._changed, set()
        if full or any(path.name not in self.sessions for path in changed):
            self._discover()
        locks = read_locks()  # once per round, not once per journal (None: each journal is asked)
        now = time.monotonic()
        due = []
        for session in list(self.sessions.values()):
            look = self._look(session, locks)
            if look is None:
                continue
            if session.stopped or now < session.retry_at:
                continue
            if session.path in changed or look != session.seen or not session.synced or not session.caught_up:
                due.append((session, look, locks))
        await asyncio.gather(*(self._guarded(s, look, locks) for s, look, locks in due))
        if full:
            await self._ship_kept()

    async def _ship_kept(self) -> None:
        """Ship the kept sessions (`MirrorOptions.kept`) after what the stream holds of each, and list them."""
        if self._kept is None or self.options.kept is None:
            return
        for source in self.options.kept():
            where = str(source.copy)
            try:
                stopped = await self._kept.ship(source)
            except (TimeoutError, BatchUnanswered, BatchRejected, nats.errors.Error, OSError, JournalError) as exc:
                said = f"{source.agent} {source.session}: kept copy not shipped yet: {why(exc)}"
                if self._kept_behind.get(where) != said:
                    self.report(visible(said))
                self._kept_behind[where] = said
                continue
            self._kept_behind.pop(where, None)
            if stopped is not None:
                if self._kept_stopped.get(where) != stopped:
                    self.report(visible(f"{source.agent} {source.session}: kept copy {stopped}"))
                self._kept_stopped[where] = stopped

    def _discover(self) -> None:
        try:
            entries = list(os.scandir(self.options.folder))
        except FileNotFoundError:
            return  # not made yet: the first agent run makes it
        except NotADirectoryError:
            raise FleetError(f"{self.options.folder}: not a folder") from None
        for entry in entries:
            name = entry.name
            if not name.endswith(SUFFIX) or name in self.sessions:
                continue
            sid = name[: -len(SUFFIX)]
            if not is_session_id(sid) or not entry.is_file(follow_symlinks=False):
                continue
            path = Path(entry.path)
            self.sessions[name] = _Session(
                id=sid,
                path=path,
                subject=subject_of(self.options.host, sid),
                msg_id=f"{self.options.host}.{sid}",
                lines=DurableLines(path),
            )

    def _look(self, session: _Session, locks: str | None) -> tuple[int, int, int, int | None] | None:
        """What a session's file looks like now; None (and the session forgotten) when it is gone."""
        try:
            st = os.stat(session.path, follow_symlinks=False)
        except FileNotFoundError:
            del self.sessions[session.path.name]
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns, lock_holder(session.path, locks)

    async def _guarded(self, session: _Session, look: tuple[int, int, int, int | None], locks: str | None) -> None:
        async with self._gate:
            try:
                session.caught_up = False
                await self._mirror(session, until=look[1])
                session.failures, session.retry_at = 0, 0.0
            except (TimeoutError, BatchUnanswered, nats.errors.Error, OSError) as exc:
                # The server is away or slow: what the stream holds is asked again before going on.
                session.synced = False
                self._retry_later(session)
                if self._connected.is_set() and not isinstance(exc, OSError):
                    self._say(session, f"will retry: {why(exc)}")
                elif isinstance(exc, OSError):
                    self._say(session, f"cannot read the journal: {why(exc)}")
            except BatchRejected as exc:
                session.synced = False
                if exc.max_messages:
                    self._max_messages = exc.max_messages
                elif not exc.conflict:
                    self._say(session, f"{exc}; will retry")
                    self._retry_later(session)
            except JournalError as exc:
                self._say(session, str(exc))
                self._retry_later(session)
            except asyncio.CancelledError:
                session.synced = False
                raise
            session.seen = look
            self._derive_state(session, look, locks)
            row = self._row_of(session)
            if row.stop is not None and row.state in ("torn tail", "corrupt"):
                self._say(
                    session,
                    f"the journal stops at line {row.stop.line} [{row.state}]: {row.stop.why}; lines 1 to "
                    f"{row.events} are in the stream, nothing after them is shipped",
                )

    def _retry_later(self, session: _Session) -> None:
        session.retry_at = time.monotonic() + RETRY_S[min(session.failures, len(RETRY_S) - 1)]
        session.failures += 1

    async def _mirror(self, session: _Session, until: int) -> None:
        """Bring the stream up to the journal's durable, valid end for one session."""
        for _attempt in range(3):
            try:
                if not session.synced:
                    await self._sync(session)
                if session.stopped:
                    return
                await self._ship(session, until)
                return
            except SourceChanged:
                session.restart()  # then compare with the stream again, from the journal's start
            except BatchRejected as exc:
                if not exc.conflict:
                    raise
                session.synced = False  # someone else wrote to the subject: see what it holds now

    # --- comparing with the stream ----------------------------------------------------------

    async def _sync(self, session: _Session) -> None:
        """Find where the stream's copy of this session ends, check it is the journal's line, and go on after it."""
        assert self._js is not None
        try:
            found = await last_line(self._js, session.subject)
        except StreamDamaged as exc:
            self._stop(session, f"the stream's copy is damaged ({exc})")
            return
        if found is None:
            if session.last is not None:
                session.restart()  # the stream lost this session (purged, or made anew): ship it again
            session.stream_seq, session.synced = 0, True
            return
        stream_seq, data = found
        try:
            seq = decode_line(data).seq
        except JournalError as exc:
            self._stop(
                session, f"the stream's last message for it (stream seq {stream_seq}) is not a journal line: {exc}"
            )
            return
        if session.last is not None and seq < session.last.event.seq:
            session.restart()  # the stream holds less than was shipped (a server that lost its last writes)
        line = (
            session.last if session.last is not None and session.last.event.seq == seq else self._advance(session, seq)
        )
        if line is None:
            return
        if line.data != data:
            self._stop(
                session,
                f"the stream holds seq {seq} with other bytes than line {seq} of the journal (stream seq "
                f"{stream_seq}); nothing was overwritten",
            )
            return
        session.last, session.stream_seq, session.synced = line, stream_seq, True

    def _advance(self, session: _Session, seq: int) -> Line | None:
        """Read the journal up to the line with `seq` (already in the stream, so not shipped); None if it has none."""
        while True:
            if not session.pending:
                session.pending.extend(session.lines.read())
            if not session.pending:
                stop = session.lines.stop
                where = f"stops at {stop}" if stop else f"ends at seq {session.summary.last_seq}"
                self._stop(
                    session, f"the stream already holds seq {seq}, but the journal {where}; nothing was overwritten"
                )
                return None
            line = session.pending.popleft()
            session.summary.add([line.event])
            if line.event.seq == seq:
                return line
            if line.event.seq > seq:
                self._stop(
                    session,
                    f"the stream's last line is seq {seq}, which the journal does not have (it goes from "
                    f"{session.last.event.seq if session.last else 0} to {line.event.seq}); nothing was overwritten",
                )
                return None
            session.last = line

    def _stop(self, session: _Session, reason: str) -> None:
        session.stopped = reason
        self.report(visible(f"{session.id}: not mirrored any more: {reason}"))

    # --- shipping ---------------------------------------------------------------------------

    async def _ship(self, session: _Session, until: int) -> None:
        """Ship new lines up to about byte `until` (the size when looked at): one busy session cannot hold a round."""
        assert self._nc is not None
        while True:
            if not session.pending:
                if session.lines.offset >= until:
                    session.caught_up = True
                    return
                session.pending.extend(session.lines.read())
                if not session.pending:
                    session.caught_up = True
                    return
            chosen, messages = self._next_batch(session)
            if not chosen:
                return
            if len(messages) <= ONE_BY_ONE and len(messages) == len(chosen):
                # A few whole lines (following a live session): each alone, acknowledged before the next.
                chosen, messages = chosen[:1], messages[:1]
            ahead = None
            if len(session.pending) - len(chosen) < self._max_messages and session.lines.offset < until:
                # The next lines are read (and checked, and fdatasynced) while the server commits this batch.
                ahead = asyncio.create_task(asyncio.to_thread(session.lines.read))
            try:
                ack = await publish_batch(
                    self._nc,
                    session.subject,
                    messages,
                    expected_last=session.stream_seq,
                    timeout=COMMIT_TIMEOUT_S,
                    msg_id=f"{session.msg_id}.{chosen[0].event.seq}",
                )
            finally:
                if ahead is not None:
                    session.pending.extend(await ahead)
            for _ in chosen:
                session.pending.popleft()
            session.summary.add([line.event for line in chosen])
            session.last, session.stream_seq = chosen[-1], ack.stream_seq

    def _next_batch(self, session: _Session) -> tuple[list[Line], list[Outgoing]]:
        """The next lines to ship and their messages: whole lines only, within the batch limits."""
        assert self._nc is not None
        limit, room = self._max_messages, self._nc.max_payload - 16 * 1024  # headers need room too
        chosen: list[Line] = []
        messages: list[Outgoing] = []
        size = 0
        for line in session.pending:
            part = self.options.part_size
            if len(line.data) > part * limit:
                part = -(-len(line.data) // limit)  # bigger parts, so the line still fits one batch
                if part > room:
                    if not chosen:
                        self._stop(
                            session,
                            f"line {line.event.seq} is {len(line.data):,} bytes, more than one batch can carry "
                            f"({limit} messages of at most {room:,} bytes)",
                        )
                    break
            parts = messages_of(line.data, min(part, room))
            if chosen and (len(messages) + len(parts) > limit or size + len(line.data) > MAX_BATCH_BYTES):
                break
            chosen.append(line)
            messages.extend(parts)
            size += len(line.data)
        return chosen, messages

    # --- the session list -------------------------------------------------------------------

    def _derive_state(self, session: _Session, look: tuple[int, int, int, int | None], locks: str | None) -> None:
        """The state `wren ls` would show: live while a writer holds the journal, else read from it once per change."""
        _inode, size, mtime, holder = look
        if holder is not None:
            session.state, session.state_stop, session.described = "live", None, None
            return
        if session.described == (size, mtime):
            return
        try:
            info = describe_session(session.path, locks)
        except (JournalError, OSError):
            return
        session.state, session.described = info.state, (size, mtime)
        session.state_stop = info.stop if info.state in ("torn tail", "corrupt") else None

    def _row_of(self, session: _Session) -> SessionRow:
        summary = session.summary
        # The whole file's verdict says whether a stop is torn; what this mirror read stops at the same line.
        stop = session.state_stop or session.lines.stop
        # Where the journal stops, once every line before that point is in the stream.
        stops = stop is not None and not session.pending and stop.offset == session.lines.offset
        return SessionRow(
            host=self.options.host,
            session=session.id,
            state=session.state,
            last_seq=summary.last_seq,
            events=summary.events,
            stream_seq=session.stream_seq,
            size=session.last.end if session.last is not None else 0,
            started=summary.started,
            last_ts=summary.last_ts,
            tokens=summary.tokens,
            forked_from=summary.forked_from,
            fork_at=summary.fork_at,
            stop=stop if stops else None,
            mirror=session.stopped,
        )

    async def _flush_rows(self, *, force: bool) -> None:
        if self._rows is None:
            return
        now = time.monotonic()
        due: list[tuple[_Session, SessionRow]] = []
        for session in list(self.sessions.values()):
            if not session.synced and session.stopped is None:
                continue  # what the stream holds is not known yet
            row = self._row_of(session)
            if row == session.row:
                continue
            urgent = force or session.row is None or row.state != session.row.state or row.mirror != session.row.mirror
            if urgent or now - session.row_at >= ROW_INTERVAL_S:
                due.append((session, row))
        for start in range(0, len(due), ROWS_AT_ONCE):
            try:
                await asyncio.gather(*(self._put_row(s, row, now) for s, row in due[start : start + ROWS_AT_ONCE]))
            except (TimeoutError, nats.errors.Error, OSError):
                return  # the server is away: the rows are written when it is back

    async def _put_row(self, session: _Session, row: SessionRow, now: float) -> None:
        assert self._rows is not None
        row.updated = now_ts()
        await self._rows.put(row)
        row.updated = ""  # compared without it next time
        session.row, session.row_at = row, now

    async def _beat(self) -> None:
        now = time.monotonic()
        if self._rows is None or now - self._beat_at < BEAT_INTERVAL_S:
            return
        self._beat_at = now
        beat = HostBeat(
            host=self.options.host, pid=os.getpid(), folder=str(self.options.folder), version=__version__, beat=now_ts()
        )
        with contextlib.suppress(nats.errors.Error, OSError, asyncio.TimeoutError):
            await self._rows.beat(beat)

    # --- saying what happens -------------------------------------------------------------------

    def _say(self, session: _Session, text: str) -> None:
        if session.reported != text:
            session.reported = text
            self.report(visible(f"{session.id}: {text}"))

    def _lost(self, exc: BaseException | None) -> None:
        said = "connection lost" if exc is None else why(exc)
        if self._outage is None:
            self._outage = said
            self.report(
                visible(f"cannot reach {shown(self.options.server)} ({said}); the journals are shipped when it is back")
            )

    def _back(self) -> None:
        if self._outage is not None:
            self._outage = None
            self.report(f"reached {shown(self.options.server)} again; catching up")
