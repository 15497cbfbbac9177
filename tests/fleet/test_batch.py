"""Atomic batch publish against a real server: a batch is stored whole or not at all, and only where it was expected."""

from __future__ import annotations

from pathlib import Path

import nats
import pytest
from nats.js.api import StorageType, StreamConfig

from tests.fleet.conftest import NatsServer
from wren_tui.fleet import batch
from wren_tui.fleet.batch import BatchRejected, publish_batch
from wren_tui.fleet.wire import Outgoing

SUBJECT = "wren.j.box.s-20260101-000000-abcd"


async def _stream(server: NatsServer, **config: object) -> tuple[nats.NATS, int]:
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    await js.add_stream(
        StreamConfig(name="WREN", subjects=["wren.j.>"], storage=StorageType.FILE, allow_atomic=True, **config)  # type: ignore[arg-type]
    )
    return nc, 0


async def _messages(nc: nats.NATS) -> int:
    info = await nc.jetstream().stream_info("WREN")
    return info.state.messages


async def test_a_message_refused_in_the_middle_of_a_batch_leaves_nothing_of_it(nats_server: NatsServer) -> None:
    nc, _ = await _stream(nats_server, max_msg_size=1000)
    try:
        too_big = [Outgoing(b"first\n"), Outgoing(b"x" * 2000 + b"\n"), Outgoing(b"third\n")]
        with pytest.raises(BatchRejected) as refused:
            await publish_batch(nc, SUBJECT, too_big, expected_last=0, timeout=5)
        assert not refused.value.conflict
        assert await _messages(nc) == 0
        ack = await publish_batch(nc, SUBJECT, [Outgoing(b"first\n"), Outgoing(b"third\n")], expected_last=0, timeout=5)
        assert (ack.stream_seq, ack.count) == (2, 2)
    finally:
        await nc.close()


async def test_a_batch_that_does_not_follow_the_subjects_last_message_is_refused_whole(
    nats_server: NatsServer,
) -> None:
    nc, _ = await _stream(nats_server)
    try:
        await publish_batch(nc, SUBJECT, [Outgoing(b"1\n"), Outgoing(b"2\n")], expected_last=0, timeout=5)
        # Another session's message in between moves the stream on, not this subject's last sequence.
        await nc.jetstream().publish("wren.j.box.s-20260101-000000-efgh", b"other\n")
        for stale in (0, 1, 3):
            with pytest.raises(BatchRejected) as refused:
                await publish_batch(nc, SUBJECT, [Outgoing(b"3\n"), Outgoing(b"4\n")], expected_last=stale, timeout=5)
            assert refused.value.conflict
        assert await _messages(nc) == 3
        ack = await publish_batch(nc, SUBJECT, [Outgoing(b"3\n"), Outgoing(b"4\n")], expected_last=2, timeout=5)
        assert ack.stream_seq == 5
    finally:
        await nc.close()


async def test_a_message_id_already_stored_refuses_the_batch(nats_server: NatsServer) -> None:
    nc, _ = await _stream(nats_server)
    try:
        one = Outgoing(b"1\n")
        await publish_batch(nc, SUBJECT, [one], expected_last=0, timeout=5, msg_id="box.s.1")
        with pytest.raises(BatchRejected) as refused:
            await publish_batch(nc, SUBJECT, [one, Outgoing(b"2\n")], expected_last=1, timeout=5, msg_id="box.s.1")
        assert refused.value.conflict
        assert await _messages(nc) == 1
    finally:
        await nc.close()


def test_the_servers_smaller_batch_limit_is_read_from_its_refusal() -> None:
    assert BatchRejected(10199, "atomic publish batch is too large: 200").max_messages == 200
    assert BatchRejected(10071, "wrong last sequence: 7").max_messages is None
    assert BatchRejected(10071, "wrong last sequence: 7").conflict


def test_a_batch_holds_one_to_a_thousand_messages(tmp_path: Path) -> None:
    import asyncio

    with pytest.raises(ValueError, match="1 to 1000"):
        asyncio.run(publish_batch(None, SUBJECT, [], expected_last=0, timeout=1))  # type: ignore[arg-type]


@pytest.mark.parametrize("queue", ["the client's command queue", "the client's publish"])
async def test_a_batch_stores_the_same_messages_whichever_way_it_is_sent(
    nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch, queue: str
) -> None:
    if queue == "the client's publish":
        monkeypatch.setattr(batch, "_protocol_queue", lambda nc: None)
    nc, _ = await _stream(nats_server)
    try:
        lines = [b'{"n":%d}\n' % n for n in range(1, 301)]
        messages = [Outgoing(line) for line in lines]
        messages[7] = Outgoing(lines[7], {"Wren-Part": "1/1"})
        ack = await publish_batch(nc, SUBJECT, messages, expected_last=0, timeout=5, msg_id="box.s.1")
        assert (ack.stream_seq, ack.count) == (300, 300)
        sub = await nc.jetstream().subscribe(SUBJECT, ordered_consumer=True)
        got = [await sub.next_msg(timeout=10) for _ in range(300)]
        assert [m.data for m in got] == lines
        assert [m.headers.get("Nats-Batch-Sequence") for m in got] == [str(n) for n in range(1, 301)]
        assert got[7].headers.get("Wren-Part") == "1/1" and got[0].headers.get("Nats-Msg-Id") == "box.s.1"
        assert [m for m in got[1:] if "Nats-Msg-Id" in (m.headers or {})] == []
    finally:
        await nc.close()
