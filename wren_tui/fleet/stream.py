"""The stream and the session list on the server: made when missing, checked when there; a subject's last line.

The journal stream keeps every message (no limits, file storage, atomic batches on); the session
list is a key-value bucket of one entry per session and host. Production settings (replicas,
sync_interval) are the operator's: see the README's Fleet section.
"""

from __future__ import annotations

import nats.errors
import nats.js.errors
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType, StreamConfig
from nats.js.kv import KeyValue

from . import FleetError
from .names import BUCKET, KEPT_PREFIX, STREAM, SUBJECT_PREFIX
from .wire import Joiner, StreamDamaged, part_of

# Nats-Msg-Id is a second safeguard: duplicates within this window are refused (the expected
# sequence check is what makes duplicates impossible at any distance).
DUPLICATE_WINDOW_S = 120.0


async def ensure_stream(js: JetStreamContext, replicas: int = 1) -> None:
    """The journal stream: made if missing; refused with a sentence if it exists but cannot take atomic batches."""
    subjects = f"{SUBJECT_PREFIX}.>"
    kept = f"{KEPT_PREFIX}.>"
    try:
        info = await js.stream_info(STREAM)
    except nats.js.errors.NotFoundError:
        config = StreamConfig(
            name=STREAM,
            description="Wren journals, one subject per session: wren.j.<host>.<session>; other agents' sessions Wren "
            "kept: wren.k.<host>.<agent>.<file>.<version>",
            subjects=[subjects, kept],
            storage=StorageType.FILE,
            num_replicas=replicas,
            allow_atomic=True,
            allow_direct=True,
            duplicate_window=DUPLICATE_WINDOW_S,
        )
        try:
            await js.add_stream(config)
            return
        except nats.js.errors.BadRequestError:
            info = await js.stream_info(STREAM)  # another mirror made it in the meantime
    if not info.config.allow_atomic:
        raise FleetError(
            f"the stream {STREAM} exists but does not allow atomic batch publish; turn that on "
            f"(allow_atomic: true in its configuration) and start the mirror again"
        )
    if subjects not in (info.config.subjects or []):
        raise FleetError(f"the stream {STREAM} exists but does not take the subjects {subjects}; add them to it")
    if kept not in (info.config.subjects or []):
        # A stream an earlier mirror made: the kept sessions' subjects are added to it (nothing it holds changes).
        info.config.subjects = [*(info.config.subjects or []), kept]
        try:
            await js.update_stream(info.config)
        except nats.js.errors.BadRequestError as exc:
            raise FleetError(
                f"the stream {STREAM} does not take the subjects {kept} and cannot be given them ({exc.description}); "
                "add them to it"
            ) from None


async def ensure_bucket(js: JetStreamContext, replicas: int = 1) -> KeyValue:
    """The session list: a key-value bucket with one value per key (no history)."""
    try:
        return await js.key_value(BUCKET)
    except nats.js.errors.BucketNotFoundError:
        pass
    try:
        return await js.create_key_value(
            KeyValueConfig(
                bucket=BUCKET, description="Wren sessions", history=1, storage=StorageType.FILE, replicas=replicas
            )
        )
    except nats.js.errors.BadRequestError:
        return await js.key_value(BUCKET)  # another mirror made it in the meantime


async def session_bucket(js: JetStreamContext) -> KeyValue:
    """The session list for a reader: a FleetError when no mirror has made it yet."""
    try:
        return await js.key_value(BUCKET)
    except nats.js.errors.BucketNotFoundError:
        raise FleetError(
            f"the server has no session list ({BUCKET}): no `wren mirror` has run against it yet"
        ) from None


async def last_line(js: JetStreamContext, subject: str) -> tuple[int, bytes] | None:
    """The stream sequence and the bytes of the last line on `subject`, asked of the stream's leader; None when empty.

    A line in parts is read back part by part: an atomic batch stores its messages at
    consecutive stream sequences, so part i of n of a line ending at sequence s is at s - n + i.
    """
    try:
        last = await js.get_msg(STREAM, subject=subject)
    except nats.js.errors.NotFoundError:
        return None
    if last.seq is None:
        raise StreamDamaged(f"the server's answer for the last message on {subject} has no sequence")
    part = part_of(last.headers)
    if part is None:
        return last.seq, last.data or b""
    index, count = part
    if index != count or last.seq < count:
        raise StreamDamaged(f"the last message on {subject} is part {index} of {count} of a line, not its end")
    joiner, line = Joiner(), None
    for seq in range(last.seq - count + 1, last.seq + 1):
        msg = last if seq == last.seq else await js.get_msg(STREAM, seq=seq)
        if msg.subject != subject:
            raise StreamDamaged(f"stream message {seq} belongs to {msg.subject}, not to the line ending at {last.seq}")
        line = joiner.add(msg.data or b"", msg.headers, seq)
    assert line is not None  # the last part was added
    return last.seq, line
