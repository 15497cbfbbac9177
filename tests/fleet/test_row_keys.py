"""The session list believes a row only under its own key: one that names another host or session is not listed.

Anyone who may write one key of the `wren-sessions` bucket could otherwise list a session as any host's
(a row under s.evil.ID that says `host: vm`), or keep another host's mirror looking alive.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import nats

from tests.conftest import run_wren
from tests.fleet.conftest import NatsServer
from tests.fleet.test_mirror import mirror_once, write_journal
from tests.fleet.test_watch import row_of, watching
from tests.tui.conftest import screen_text, wait_for, wait_for_text
from wren_tui.fleet.names import BUCKET


async def _put(url: str, key: str, value: bytes) -> None:
    """One entry of the session list, written by something other than a mirror."""
    nc = await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=1, connect_timeout=5)
    try:
        kv = await nc.jetstream().key_value(BUCKET)
        await kv.put(key, value)
    finally:
        await nc.close()


def _row_of(url: str, host: str, session: str) -> dict[str, object]:
    listing = run_wren(["ls", "--json", f"{url}/{host}"], cwd=Path("/"))
    (row,) = [r for r in json.loads(listing.stdout) if r["session"] == session]
    assert isinstance(row, dict)
    return row


def _forge(url: str, host: str, session: str, under: str, **changes: object) -> str:
    """A copy of `host`'s row of `session`, changed, stored under key s.`under`.`session`; the key."""
    row = {**_row_of(url, host, session), **changes}
    row.pop("hostBeat", None)
    row.pop("mirrorSilent", None)
    key = f"s.{under}.{session}"
    asyncio.run(_put(url, key, msgspec.json.encode(row)))
    return key


def test_wren_ls_leaves_out_a_row_stored_under_another_hosts_key_and_says_so(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = write_journal(tmp_path / "vm")
    assert mirror_once(nats_server, path.parent, "vm")[0] == 0
    key = _forge(nats_server.url, "vm", path.stem, "evil", state="error")
    # A beat under evil's key that says it is vm's: vm's mirror must not look alive by it.
    asyncio.run(
        _put(nats_server.url, "h.evil", b'{"host":"vm","pid":1,"folder":"/","version":"x","beat":"2999-01-01"}')
    )
    warning = f"wren: warning: {key} in the session list holds a row for another host or session; not listed\n"

    listing = run_wren(["ls", nats_server.url], cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    rows = listing.stdout.splitlines()[1:]
    assert len(rows) == 1 and rows[0].split()[:2] == ["vm", path.stem] and rows[0].endswith("done")
    assert listing.stderr == warning

    only_evil = run_wren(["ls", f"{nats_server.url}/evil"], cwd=tmp_path)
    assert (only_evil.returncode, only_evil.stdout, only_evil.stderr) == (
        0,
        f"no sessions on {nats_server.url}/evil\n",
        warning,
    )

    as_json = run_wren(["ls", "--json", nats_server.url], cwd=tmp_path)
    (row,) = json.loads(as_json.stdout)
    assert (row["host"], row["session"], row["state"]) == ("vm", path.stem, "done")
    assert row["hostBeat"] != "2999-01-01"


def test_a_row_whose_session_is_not_its_keys_is_left_out_too(nats_server: NatsServer, tmp_path: Path) -> None:
    path = write_journal(tmp_path / "vm")
    assert mirror_once(nats_server, path.parent, "vm")[0] == 0
    other = "s-20260101-000000-zzzz"
    row = {**_row_of(nats_server.url, "vm", path.stem), "session": path.stem}
    row.pop("hostBeat", None)
    row.pop("mirrorSilent", None)
    asyncio.run(_put(nats_server.url, f"s.vm.{other}", msgspec.json.encode(row)))
    listing = run_wren(["ls", nats_server.url], cwd=tmp_path)
    assert len(listing.stdout.splitlines()) == 2 and other not in listing.stdout
    assert f"s.vm.{other} in the session list holds a row for another host or session" in listing.stderr


async def test_the_fleet_browser_never_lists_a_row_under_another_hosts_key(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    path = write_journal(tmp_path / "vm")
    assert mirror_once(nats_server, path.parent, "vm")[0] == 0
    await asyncio.to_thread(_forge, nats_server.url, "vm", path.stem, "evil", state="error")
    async with watching(nats_server.url, tmp_path / "here") as (app, pilot):
        await wait_for(pilot, lambda: row_of(app, "vm", path.stem).endswith(" done"), "vm's own row", 30)
        # One written while the browser is open: not listed either.
        await asyncio.to_thread(_forge, nats_server.url, "vm", path.stem, "mallory", state="corrupt")
        late = write_journal(tmp_path / "ci")
        assert (await asyncio.to_thread(mirror_once, nats_server, late.parent, "ci"))[0] == 0
        await wait_for_text(pilot, late.stem, timeout=30)  # a row written after the forged one has arrived
        shown = [line for line in screen_text(app).splitlines() if path.stem in line]
        assert len(shown) == 1 and shown[0].split()[0] == "vm" and shown[0].rstrip().endswith(" done")
        assert "evil" not in screen_text(app) and "mallory" not in screen_text(app)
