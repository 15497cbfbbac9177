"""Damaged journals: the mirror ships exactly what Wren's reader accepts, says where it stopped, never overwrites."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import nats
import pytest

from tests.conftest import run_wren
from tests.fleet.conftest import NatsServer, assert_mirrored, journal_lines, stored, until_stream_holds
from wren_tui.fleet.mirror import Mirror, MirrorOptions
from wren_tui.journal.events import ChatMessage, Delta, Message
from wren_tui.journal.store import new_session_id
from wren_tui.journal.writer import JournalWriter, encode_line


def ten_lines(folder: Path) -> Path:
    path = folder / f"{new_session_id()}.jsonl"
    with JournalWriter.create(path) as writer:
        writer.append(Message(message=ChatMessage(role="user", content="count to nine")))
        for n in range(1, 10):
            writer.append(Delta(text=f"{n} "))
    return path


def mirror_once(server: NatsServer, folder: Path) -> tuple[int, str]:
    result = run_wren(
        ["mirror", "--url", server.url, "--dir", str(folder), "--host", "box", "--once"], cwd=folder.parent
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stderr


def row_of(server: NatsServer, path: Path) -> dict[str, object]:
    listing = run_wren(["ls", "--json", server.url], cwd=path.parent)
    (row,) = [r for r in json.loads(listing.stdout) if r["session"] == path.stem]
    return row


def logs(server: NatsServer, path: Path) -> tuple[tuple[int, str], tuple[int, str]]:
    """`wren log` of the journal on its host, and of its copy in the stream: (status, stdout) each."""
    local = run_wren(["log", "--dir", str(path.parent), path.stem], cwd=path.parent)
    remote = run_wren(["log", f"{server.url}/box/{path.stem}"], cwd=path.parent)
    return (local.returncode, local.stdout), (remote.returncode, remote.stdout)


def test_a_torn_tail_is_not_shipped_and_the_list_says_where_the_journal_stops(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = ten_lines(tmp_path / "journals")
    whole = path.read_bytes()
    with open(path, "ab") as f:
        f.write(encode_line(Delta(text="cut in the middle of its write"), 11, "2026-01-01T00:00:00.000Z")[:30])
    status, err = mirror_once(nats_server, path.parent)
    assert status == 0, err
    assert_mirrored(nats_server.url, f"wren.j.box.{path.stem}", path, upto=10)
    assert f"{path.stem}: the journal stops at line 11 [torn tail]: the last line was cut short" in err
    row = row_of(nats_server, path)
    assert (row["state"], row["lastSeq"]) == ("torn tail", 10)
    # The reader's stop in its parts: nothing reads a sentence back.
    assert row["stop"] == {
        "line": 11,
        "offset": len(whole),
        "why": "the last line was cut short (no newline at its end)",
        "torn": True,
    }
    local, remote = logs(nats_server, path)
    assert remote == local
    assert local[0] == 4 and "stopped at line 11 (byte" in local[1] and "[torn tail]" in local[1]


def test_a_zero_filled_tail_after_a_power_cut_is_not_shipped(nats_server: NatsServer, tmp_path: Path) -> None:
    path = ten_lines(tmp_path / "journals")
    with open(path, "ab") as f:
        f.write(b"\x00" * 4096)
    assert mirror_once(nats_server, path.parent)[0] == 0
    assert_mirrored(nats_server.url, f"wren.j.box.{path.stem}", path, upto=10)
    row = row_of(nats_server, path)
    assert (row["state"], row["lastSeq"], row["stop"]["line"], row["stop"]["torn"]) == ("torn tail", 10, 11, True)


def test_a_bad_crc_in_the_middle_stops_shipping_at_that_line_and_is_reported(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = ten_lines(tmp_path / "journals")
    lines = journal_lines(path)
    lines[5] = lines[5].replace(b'"5 "', b'"X "')  # same length, different bytes: the CRC no longer matches
    path.write_bytes(b"".join(lines))
    status, err = mirror_once(nats_server, path.parent)
    assert status == 0, err
    assert_mirrored(nats_server.url, f"wren.j.box.{path.stem}", path, upto=5)
    assert "the journal stops at line 6 [corrupt]: its CRC does not match its bytes" in err
    row = row_of(nats_server, path)
    assert (row["state"], row["lastSeq"]) == ("corrupt", 5)
    assert row["stop"] == {
        "line": 6,
        "offset": sum(map(len, lines[:5])),
        "why": "its CRC does not match its bytes (the line was changed after it was written)",
        "torn": False,
    }
    local, remote = logs(nats_server, path)
    assert remote == local
    assert local[0] == 4 and "[corrupt]" in local[1]


def test_a_journal_whose_line_differs_from_the_stream_is_not_mirrored_and_nothing_is_overwritten(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = ten_lines(tmp_path / "journals")
    shipped = path.read_bytes()
    assert mirror_once(nats_server, path.parent)[0] == 0
    # Another journal under the same name: the same first nine lines, another tenth, and an eleventh.
    lines = journal_lines(path)[:9]
    lines.append(encode_line(Delta(text="another ending"), 10, "2026-01-01T00:00:00.000Z"))
    lines.append(encode_line(Delta(text="and more"), 11, "2026-01-01T00:00:00.000Z"))
    replacement = path.with_suffix(".new")
    replacement.write_bytes(b"".join(lines))
    os.replace(replacement, path)
    status, err = mirror_once(nats_server, path.parent)
    assert status == 1
    assert (
        f"{path.stem}: not mirrored any more: the stream holds seq 10 with other bytes than line 10 of the journal "
        "(stream seq 10); nothing was overwritten"
    ) in err
    assert [m.data for m in stored(nats_server.url, f"wren.j.box.{path.stem}")] == shipped.splitlines(keepends=True)
    row = row_of(nats_server, path)
    assert row["lastSeq"] == 10 and "other bytes" in str(row["mirror"])
    listing = run_wren(["ls", nats_server.url], cwd=tmp_path)
    assert "(not mirrored: the stream differs)" in listing.stdout


def test_a_journal_shorter_than_its_copy_in_the_stream_is_not_mirrored(nats_server: NatsServer, tmp_path: Path) -> None:
    path = ten_lines(tmp_path / "journals")
    shipped = path.read_bytes()
    assert mirror_once(nats_server, path.parent)[0] == 0
    path.write_bytes(b"".join(journal_lines(path)[:8]))
    status, err = mirror_once(nats_server, path.parent)
    assert status == 1
    assert "the stream already holds seq 10, but the journal ends at seq 8; nothing was overwritten" in err
    assert [m.data for m in stored(nats_server.url, f"wren.j.box.{path.stem}")] == shipped.splitlines(keepends=True)


def test_a_journal_replaced_under_a_running_mirror_is_compared_again_and_not_overwritten(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = ten_lines(tmp_path / "journals")
    shipped = path.read_bytes()
    said: list[str] = []
    options = MirrorOptions(folder=path.parent, server=nats_server.url, host="box")

    async def scenario() -> None:
        stop = asyncio.Event()
        mirror = Mirror(options, said.append)
        running = asyncio.create_task(mirror.run(stop))
        try:
            await until_stream_holds(nats_server.url, f"wren.j.box.{path.stem}", 10)
            lines = journal_lines(path)
            lines[9] = encode_line(Delta(text="rewritten"), 10, "2026-01-01T00:00:00.000Z")
            replacement = path.with_suffix(".new")
            replacement.write_bytes(b"".join(lines))
            os.replace(replacement, path)
            deadline = time.monotonic() + 30
            while not any("not mirrored any more" in text for text in said):
                assert time.monotonic() < deadline, said
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            await running

    asyncio.run(scenario())
    assert [m.data for m in stored(nats_server.url, f"wren.j.box.{path.stem}")] == shipped.splitlines(keepends=True)


def test_a_line_the_stream_holds_that_fails_its_crc_stops_the_remote_reader(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = ten_lines(tmp_path / "journals")
    assert mirror_once(nats_server, path.parent)[0] == 0
    forged = encode_line(Delta(text="forged"), 11, "2026-01-01T00:00:00.000Z").replace(b"forged", b"FORGED")

    async def publish() -> None:
        nc = await nats.connect(nats_server.url)
        await nc.jetstream().publish(f"wren.j.box.{path.stem}", forged)
        await nc.close()

    asyncio.run(publish())
    remote = run_wren(["log", f"{nats_server.url}/box/{path.stem}"], cwd=tmp_path)
    assert remote.returncode == 4
    assert (
        remote.stdout.splitlines()[:10]
        == run_wren(["log", "--dir", str(path.parent), path.stem], cwd=tmp_path).stdout.splitlines()
    )
    assert remote.stdout.splitlines()[-1] == (
        f"stopped at line 11 (byte {path.stat().st_size}): its CRC does not match its bytes (the line was changed "
        "after it was written) [corrupt] (nothing after it is read; fork from an earlier point or move the file aside)"
    )


@pytest.mark.parametrize(
    ("forged", "why"),
    [
        (
            b'{"seq": 11, "ts": "2026-01-01T00:00:00.000Z", "type": "delta", "text": "FORGED", "crc": "00000000"}\n',
            'its crc member is not written as Wren writes it (,"crc":"xxxxxxxx"} at the end of the line)',
        ),
        (
            b'{"seq":11,"ts":"2026-01-01T00:00:00.000Z","type":"delta","text":"FORGED"}\n',
            "it has no crc member (Wren ends every line with one; this line was not written by Wren's writer)",
        ),
    ],
)
def test_a_line_the_stream_holds_without_the_writers_crc_stops_the_remote_reader(
    nats_server: NatsServer, tmp_path: Path, forged: bytes, why: str
) -> None:
    path = ten_lines(tmp_path / "journals")
    assert mirror_once(nats_server, path.parent)[0] == 0
    asyncio.run(_publish(nats_server.url, f"wren.j.box.{path.stem}", forged))
    remote = run_wren(["log", f"{nats_server.url}/box/{path.stem}"], cwd=tmp_path)
    assert remote.returncode == 4, remote.stderr
    assert "FORGED" not in remote.stdout
    assert remote.stdout.splitlines()[-1].startswith(
        f"stopped at line 11 (byte {path.stat().st_size}): {why} [corrupt]"
    )


async def _publish(url: str, subject: str, data: bytes, headers: dict[str, str] | None = None) -> None:
    """One message on the session's subject, written by something other than a mirror."""
    nc = await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=1, connect_timeout=5)
    try:
        await nc.jetstream().publish(subject, data, stream="WREN", headers=headers)
    finally:
        await nc.close()


def test_a_stream_whose_last_line_fails_the_readers_checks_is_not_mirrored_and_reads_back_stopping_there(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = ten_lines(tmp_path / "journals")
    assert mirror_once(nats_server, path.parent)[0] == 0
    subject = f"wren.j.box.{path.stem}"
    good = b"".join(journal_lines(path))
    # Seq 11 whose text was changed after its CRC was computed: valid JSON, not a line the reader accepts.
    changed = encode_line(Delta(text="eleven"), 11, "2026-01-01T00:00:00.000Z").replace(b"eleven", b"Eleven")
    asyncio.run(_publish(nats_server.url, subject, changed))
    with open(path, "ab") as f:
        f.write(encode_line(Delta(text="eleven"), 11, "2026-01-01T00:00:00.000Z"))
    status, err = mirror_once(nats_server, path.parent)
    assert status == 1
    assert (
        f"{path.stem}: not mirrored any more: the stream's last message for it (stream seq 11) is not a journal "
        "line: its CRC does not match its bytes (the line was changed after it was written)"
    ) in err
    assert [m.data for m in stored(nats_server.url, subject)][-1] == changed  # nothing was overwritten
    remote = run_wren(["log", "--json", f"{nats_server.url}/box/{path.stem}"], cwd=tmp_path)
    assert remote.returncode == 4, remote.stderr
    document = json.loads(remote.stdout)
    assert len(document["events"]) == 10
    assert (document["stoppedAtLine"], document["stoppedAtOffset"], document["torn"]) == (11, len(good), False)
    assert document["reason"] == "line 11: its CRC does not match its bytes (the line was changed after it was written)"


def test_a_stream_holding_a_part_without_its_line_reads_back_stopping_at_that_line(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = ten_lines(tmp_path / "journals")
    assert mirror_once(nats_server, path.parent)[0] == 0
    subject = f"wren.j.box.{path.stem}"
    asyncio.run(_publish(nats_server.url, subject, b'{"seq":11,', {"Wren-Part": "2/2"}))
    remote = run_wren(["log", f"{nats_server.url}/box/{path.stem}"], cwd=tmp_path)
    assert remote.returncode == 4, remote.stderr
    said = remote.stdout.splitlines()
    assert len(said) == 11
    assert said[-1] == (
        f"stopped at line 11 (byte {len(path.read_bytes())}): stream message 11 is part 2 of 2, but a whole line "
        "or part 1 was expected [corrupt] (nothing after it is read; fork from an earlier point or move the file aside)"
    )
