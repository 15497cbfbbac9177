"""`wren mirror` ships journals to JetStream exactly, and `wren ls` / `wren log` read them back from any machine."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.fleet.conftest import NatsServer, assert_mirrored, journal_lines, stored
from tests.journal.helpers import session_events
from wren_tui.fleet.mirror import Mirror, MirrorOptions
from wren_tui.fleet.remote import Fleet
from wren_tui.journal.events import ChatMessage, Delta, Message, Usage
from wren_tui.journal.store import new_session_id
from wren_tui.journal.writer import JournalWriter


def write_journal(folder: Path, *, big: tuple[int, ...] = (), extra: int = 0) -> Path:
    """A finished session through the real writer; each size in `big` adds a tool message of that many bytes."""
    path = folder / f"{new_session_id()}.jsonl"
    with JournalWriter.create(path) as writer:
        for event in session_events():
            writer.append(event)
        for size in big:
            writer.append(Message(message=ChatMessage(role="tool", content="x" * size, tool_call_id="c9")))
            writer.append(Delta(text="after a big line"))
        for n in range(extra):
            writer.append(Delta(text=f"delta {n}"))
    return path


def mirror_once(server: NatsServer, folder: Path, host: str, *extra: str) -> tuple[int, str]:
    result = run_wren(
        ["mirror", "--url", server.url, "--dir", str(folder), "--host", host, "--once", *extra], cwd=folder.parent
    )
    return result.returncode, result.stderr


def subject(host: str, path: Path) -> str:
    return f"wren.j.{host}.{path.stem}"


def test_mirror_ships_every_line_of_every_journal_byte_for_byte(nats_server: NatsServer, tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    first, second = write_journal(folder, extra=300), write_journal(folder)
    status, err = mirror_once(nats_server, folder, "laptop")
    assert status == 0, err
    assert_mirrored(nats_server.url, subject("laptop", first), first)
    assert_mirrored(nats_server.url, subject("laptop", second), second)


def test_each_message_is_one_journal_line_and_each_batch_starts_with_a_message_id(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = write_journal(tmp_path / "journals", extra=1500)
    assert mirror_once(nats_server, path.parent, "laptop")[0] == 0
    messages = stored(nats_server.url, subject("laptop", path))
    assert [m.data for m in messages] == journal_lines(path)
    ids = [(n, m.headers["Nats-Msg-Id"]) for n, m in enumerate(messages, 1) if "Nats-Msg-Id" in m.headers]
    assert ids == [(1, f"laptop.{path.stem}.1"), (1001, f"laptop.{path.stem}.1001")]


def test_running_the_mirror_again_ships_nothing_twice_and_only_what_is_new(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = write_journal(tmp_path / "journals")
    assert mirror_once(nats_server, path.parent, "laptop")[0] == 0
    assert mirror_once(nats_server, path.parent, "laptop")[0] == 0
    assert_mirrored(nats_server.url, subject("laptop", path), path)
    with JournalWriter.open(path) as writer:
        for n in range(5):
            writer.append(Delta(text=f"more {n}"))
    assert mirror_once(nats_server, path.parent, "laptop")[0] == 0
    assert_mirrored(nats_server.url, subject("laptop", path), path)


def test_lines_of_600_kb_and_3_mb_travel_in_parts_and_come_back_exactly(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = write_journal(tmp_path / "journals", big=(600_000, 3_000_000))
    assert mirror_once(nats_server, path.parent, "laptop")[0] == 0
    messages = stored(nats_server.url, subject("laptop", path))
    parts = [m.headers["Wren-Part"] for m in messages if "Wren-Part" in m.headers]
    assert parts == [f"{i}/3" for i in range(1, 4)] + [f"{i}/12" for i in range(1, 13)]
    assert max(len(m.data) for m in messages) <= 256 * 1024
    assert_mirrored(nats_server.url, subject("laptop", path), path)
    local = run_wren(["log", "--json", "--dir", str(path.parent), path.stem], cwd=tmp_path)
    remote = run_wren(["log", "--json", f"{nats_server.url}/laptop/{path.stem}"], cwd=tmp_path)
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout)["events"] == json.loads(local.stdout)["events"]


def test_a_line_too_big_for_a_batch_of_parts_gets_bigger_parts(nats_server: NatsServer, tmp_path: Path) -> None:
    # With 1 KiB parts, a 2 MB line would need 2,000 parts: more than one atomic batch holds.
    path = write_journal(tmp_path / "journals", big=(2_000_000,))
    options = MirrorOptions(folder=path.parent, server=nats_server.url, host="laptop", part_size=1024)
    said: list[str] = []
    assert asyncio.run(Mirror(options, said.append).run(asyncio.Event(), once=True)) == 0, said
    messages = stored(nats_server.url, subject("laptop", path))
    assert sum(1 for m in messages if "Wren-Part" in m.headers) == 1000
    assert_mirrored(nats_server.url, subject("laptop", path), path)


def test_wren_log_of_a_remote_session_prints_what_wren_log_prints_on_its_host(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = write_journal(tmp_path / "journals")
    assert mirror_once(nats_server, path.parent, "laptop")[0] == 0
    local = run_wren(["log", "--dir", str(path.parent), path.stem], cwd=tmp_path)
    remote = run_wren(["log", f"{nats_server.url}/laptop/{path.stem}"], cwd=tmp_path)
    assert (remote.returncode, remote.stdout) == (0, local.stdout)
    local_json = json.loads(run_wren(["log", "--json", "--dir", str(path.parent), path.stem], cwd=tmp_path).stdout)
    remote_json = json.loads(run_wren(["log", "--json", f"{nats_server.url}/laptop/{path.stem}"], cwd=tmp_path).stdout)
    assert remote_json["id"] == path.stem
    assert remote_json["path"] == f"{nats_server.url}/laptop/{path.stem}"
    assert {k: v for k, v in remote_json.items() if k != "path"} == {k: v for k, v in local_json.items() if k != "path"}


def test_wren_ls_lists_every_hosts_sessions_with_their_host_and_state(nats_server: NatsServer, tmp_path: Path) -> None:
    laptop = write_journal(tmp_path / "laptop", extra=3)
    ci = write_journal(tmp_path / "ci")
    assert mirror_once(nats_server, laptop.parent, "laptop")[0] == 0
    assert mirror_once(nats_server, ci.parent, "ci-runner-7")[0] == 0
    listing = run_wren(["ls", nats_server.url], cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].split()[:2] == ["HOST", "ID"]
    rows = {tuple(line.split()[:2]): line for line in lines[1:]}
    assert set(rows) == {("laptop", laptop.stem), ("ci-runner-7", ci.stem)}
    assert rows[("laptop", laptop.stem)].endswith("done")
    rows_json = json.loads(run_wren(["ls", "--json", nats_server.url], cwd=tmp_path).stdout)
    by_host = {r["host"]: r for r in rows_json}
    assert by_host["laptop"]["lastSeq"] == len(journal_lines(laptop))
    assert by_host["laptop"]["tokens"] == sum(
        e.input_tokens + e.output_tokens for e in session_events() if isinstance(e, Usage)
    )
    assert by_host["ci-runner-7"]["session"] == ci.stem
    only = run_wren(["ls", f"{nats_server.url}/laptop"], cwd=tmp_path)
    assert [line.split()[0] for line in only.stdout.splitlines()[1:]] == ["laptop"]


def test_the_session_list_is_one_row_per_session_read_without_reading_the_stream(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    paths = [write_journal(tmp_path / "journals") for _ in range(3)]
    assert mirror_once(nats_server, tmp_path / "journals", "box")[0] == 0

    async def listed() -> list[tuple[str, str, int]]:
        async with await Fleet.connect(nats_server.url) as fleet:
            return [(s.host, s.id, s.row.last_seq) for s in await fleet.sessions()]

    expected = sorted(((p.stem, len(journal_lines(p))) for p in paths), reverse=True)
    assert [(sid, seq) for _host, sid, seq in asyncio.run(listed())] == expected


def test_a_reader_follows_a_session_live_as_it_is_mirrored(nats_server: NatsServer, tmp_path: Path) -> None:
    path = write_journal(tmp_path / "journals")
    before = len(journal_lines(path))
    mirror = MirrorOptions(folder=path.parent, server=nats_server.url, host="laptop")

    async def scenario() -> list[int]:
        stop = asyncio.Event()
        running = asyncio.create_task(Mirror(mirror, lambda _text: None).run(stop))
        seqs: list[int] = []
        try:
            async with await Fleet.connect(nats_server.url) as fleet:
                reading = fleet.read("laptop", path.stem, follow=True)
                async with asyncio.timeout(60):
                    async for chunk in reading:
                        seqs.extend(e.seq for e in chunk.events)
                        if len(seqs) == before:
                            with JournalWriter.open(path) as writer:
                                writer.append(Delta(text="appended while watched"))
                        if len(seqs) == before + 1:
                            break
                await reading.aclose()
        finally:
            stop.set()
            await running
        return seqs

    assert asyncio.run(scenario()) == list(range(1, before + 2))


def test_without_a_server_the_commands_say_so_in_one_sentence(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    write_journal(folder)
    ls = run_wren(["ls", "nats://127.0.0.1:9"], cwd=tmp_path)
    assert ls.returncode == 1
    assert ls.stderr.startswith("wren: cannot reach nats://127.0.0.1:9 (") and "Traceback" not in ls.stderr
    mirror = run_wren(["mirror", "--once", "--url", "nats://127.0.0.1:9", "--dir", str(folder)], cwd=tmp_path)
    assert mirror.returncode == 1
    assert "wren: cannot reach nats://127.0.0.1:9" in mirror.stderr and "Traceback" not in mirror.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["log", "nats://127.0.0.1:9/laptop"], "wren log reads one session: nats://SERVER[:PORT]/HOST/SESSION"),
        (["log", "nats://127.0.0.1:9/Lap.Top/s-20260101-000000-abcd"], "is not a host token"),
        (["log", "nats://127.0.0.1:9/laptop/not-a-session"], "is not a session id"),
        (["mirror", "--url", "nats://127.0.0.1:9", "--host", "my laptop"], "is not a host token"),
        (["mirror"], "mirror needs a server: --url"),
    ],
)
def test_bad_references_are_refused_with_what_to_type(tmp_path: Path, args: list[str], says: str) -> None:
    result = run_wren(args, cwd=tmp_path)
    assert result.returncode in (1, 2)
    assert says in result.stderr and "Traceback" not in result.stderr


def test_a_missing_remote_session_is_named(nats_server: NatsServer, tmp_path: Path) -> None:
    write_journal(tmp_path / "journals")
    assert mirror_once(nats_server, tmp_path / "journals", "laptop")[0] == 0
    result = run_wren(["log", f"{nats_server.url}/laptop/s-20200101-000000-none"], cwd=tmp_path)
    assert result.returncode == 1
    where = f"{nats_server.url}/laptop/s-20200101-000000-none"
    assert result.stderr == f"wren: {where}: no such session (`wren ls {nats_server.url}` lists them)\n"


def test_the_mirror_never_writes_the_journals_folder(nats_server: NatsServer, tmp_path: Path) -> None:
    path = write_journal(tmp_path / "journals")
    os.chmod(path, 0o400)
    before = {p.name: p.read_bytes() for p in path.parent.iterdir()}
    assert mirror_once(nats_server, path.parent, "laptop")[0] == 0
    assert {p.name: p.read_bytes() for p in path.parent.iterdir()} == before


def test_a_viewer_watching_the_list_gets_every_session_then_each_change(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    first = write_journal(tmp_path / "laptop")
    assert mirror_once(nats_server, first.parent, "laptop")[0] == 0
    second = write_journal(tmp_path / "ci")

    async def watched() -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
        async with await Fleet.connect(nats_server.url) as fleet:
            updates = fleet.watch_sessions()
            listed = [(s.host, s.id, s.state) for s in await anext(updates)]
            await asyncio.to_thread(mirror_once, nats_server, second.parent, "ci")
            async with asyncio.timeout(30):
                changed = [(s.host, s.id, s.state) for s in await anext(updates)]
            await updates.aclose()
            return listed, changed

    listed, changed = asyncio.run(watched())
    assert listed == [("laptop", first.stem, "done")]
    assert changed == [("ci", second.stem, "done")]
