"""JetStream atomic batch publish (nats-server 2.12+, ADR-50): a batch's messages are stored all together or not at all.

nats-py 2.16 has the header names but no batch API, so the batch is sent here with the headers
the server reads: `Nats-Batch-Id` on every message, `Nats-Batch-Sequence` 1..n, and
`Nats-Batch-Commit: 1` on the last, sent as a request whose reply is the batch's one ack. The
first message carries `Nats-Expected-Last-Subject-Sequence`, which the server checks when it
commits: a batch that does not follow exactly what the subject holds is refused whole. Nothing is
pipelined past an unacknowledged batch: a message refused in the middle then cannot leave a gap.

The first message also carries `Nats-Msg-Id`, the second safeguard: within the server's duplicate
window a batch that starts with a stored line is refused. One id a batch is enough, because
messages are stored in order and a batch is stored whole: a batch whose first line is new holds
only new lines.

A batch of one message is sent as a plain publish with the same two headers: one message is
stored whole anyway, and the server stages an atomic batch in a store of its own first, which
costs a single line about ten times as much (4.4 ms against 0.46 ms here).
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import msgspec
import nats.errors
from nats.aio.client import Client

from . import FleetError, why
from .wire import Outgoing

# The server's default limit of messages in one atomic batch (`max_batch_size` can lower it).
MAX_MESSAGES = 1000

# Every this many messages the event loop gets a turn, so the batch goes out while the rest is built.
YIELD_EVERY = 128
MSG_ID = "Nats-Msg-Id"
BATCH_ID = "Nats-Batch-Id"
BATCH_SEQUENCE = "Nats-Batch-Sequence"
BATCH_COMMIT = "Nats-Batch-Commit"
EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence"

# Server error codes (nats-server's errors.json) that mean "the subject is not where you thought".
_CONFLICTS = frozenset({10071, 10164, 10158, 10201})
_TOO_LARGE = 10199
_TOO_LARGE_SIZE = re.compile(r"too large: (\d+)")


class BatchRejected(FleetError):
    """The server answered the commit with an error: nothing of the batch was stored."""

    def __init__(self, err_code: int, description: str) -> None:
        super().__init__(f"the server refused the batch: {description} (error {err_code})")
        self.err_code, self.description = err_code, description

    @property
    def conflict(self) -> bool:
        """True when the subject holds something else than expected: read it again before going on."""
        return self.err_code in _CONFLICTS

    @property
    def max_messages(self) -> int | None:
        """The server's smaller batch limit, when that is why the batch was refused."""
        match = _TOO_LARGE_SIZE.search(self.description) if self.err_code == _TOO_LARGE else None
        return int(match.group(1)) if match else None


class BatchUnanswered(FleetError):
    """No answer came (timeout, connection lost): the batch may or may not be stored; read the subject to know."""


@dataclass(frozen=True)
class BatchAck:
    stream_seq: int  # the stream sequence of the batch's last message; the others precede it
    count: int


def _protocol_queue(nc: Client) -> Callable[[bytes], Awaitable[None]] | None:
    """nats-py's queue of protocol commands (what its publish ends in), or None if this nats-py has none.

    nats-py builds each message's headers in a Python loop, which made publishing cost as much as
    everything else the mirror does; the batch's plain messages go straight to that queue
    instead, in order with the ones published normally (which also have its flusher send them).
    Private: pyproject caps nats-py below 2.17, and tests/test_private_api_fences.py fails when it moves.
    """
    send = getattr(nc, "_send_command", None)
    return send if callable(send) and asyncio.iscoroutinefunction(send) else None


class _Ack(msgspec.Struct):
    stream: str = ""
    seq: int = 0
    batch: str = ""
    count: int = 0
    error: _ApiError | None = None


class _ApiError(msgspec.Struct):
    code: int = 0
    err_code: int = 0
    description: str = ""


_decode_ack = msgspec.json.Decoder(_Ack).decode


async def publish_batch(
    nc: Client, subject: str, messages: Sequence[Outgoing], *, expected_last: int, timeout: float, msg_id: str = ""
) -> BatchAck:
    """Publish `messages` to `subject` as one atomic batch that must follow stream sequence `expected_last`.

    `expected_last` is the stream sequence of the subject's last message (0: the subject is empty);
    `msg_id`, when given, is the first message's Nats-Msg-Id.
    """
    if not messages or len(messages) > MAX_MESSAGES:
        raise ValueError(f"an atomic batch holds 1 to {MAX_MESSAGES} messages, not {len(messages)}")
    batch_id = secrets.token_urlsafe(12)
    last = len(messages)
    send = _protocol_queue(nc)
    plain = b"NATS/1.0\r\n%b: %b\r\n%b: " % (BATCH_ID.encode(), batch_id.encode(), BATCH_SEQUENCE.encode())
    target = subject.encode()
    try:
        if not nc.is_connected:
            raise nats.errors.ConnectionReconnectingError
        if last == 1:
            headers = {EXPECTED_LAST_SUBJECT_SEQUENCE: str(expected_last), **messages[0].headers}
            if msg_id:
                headers[MSG_ID] = msg_id
            reply = await nc.request(subject, messages[0].payload, timeout=timeout, headers=headers)
        for n, message in enumerate(messages if last > 1 else (), 1):
            if send is not None and 1 < n < last and n % YIELD_EVERY and not message.headers:
                # Most messages carry only the two batch headers: their HPUB is built here in one step.
                head = plain + b"%d\r\n\r\n" % n
                size = len(head) + len(message.payload)
                await send(b"HPUB %b %d %d\r\n%b%b\r\n" % (target, len(head), size, head, message.payload))
                continue
            headers = {BATCH_ID: batch_id, BATCH_SEQUENCE: str(n), **message.headers}
            if n == 1:
                headers[EXPECTED_LAST_SUBJECT_SEQUENCE] = str(expected_last)
                if msg_id:
                    headers[MSG_ID] = msg_id
            if n < last:
                await nc.publish(subject, message.payload, headers=headers)
                if not n % YIELD_EVERY:
                    await asyncio.sleep(0)  # the client's flusher writes what is ready: the server stages it meanwhile
            else:
                headers[BATCH_COMMIT] = "1"
                reply = await nc.request(subject, message.payload, timeout=timeout, headers=headers)
    except (nats.errors.Error, OSError) as exc:
        raise BatchUnanswered(f"no answer to a batch of {last} messages on {subject}: {why(exc)}") from exc
    try:
        ack = _decode_ack(reply.data)
    except msgspec.DecodeError:
        raise BatchUnanswered(
            f"the answer to a batch on {subject} is not a JetStream ack: {reply.data[:200]!r}"
        ) from None
    if ack.error is not None:
        raise BatchRejected(ack.error.err_code, ack.error.description)
    if ack.count != (last if last > 1 else 0) or ack.seq < last:
        raise BatchUnanswered(f"the ack of a batch of {last} messages on {subject} counts {ack.count}")
    return BatchAck(ack.seq, last)
