"""The fleet in `wren ls` and `wren log`: a nats:// reference reads from a fleet's server instead of this machine.

nats-py (the `fleet` extra) is imported only when a fleet command runs, so the core install never
needs it; without it, the command says how to install it.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import msgspec

from ..agent.errors import UsageError
from ..journal.reader import EventSink
from ..journal.verdict import ReadVerdict
from ..journal.visible import visible
from .console import err, out, print_json
from .exits import Exit

if TYPE_CHECKING:
    from ..fleet.names import RemoteRef
    from ..fleet.rows import SessionRow

Scan = Callable[[EventSink], ReadVerdict]


def is_remote(text: str) -> bool:
    """A nats:// reference, not a session id or a path."""
    from ..fleet.names import is_remote as remote

    return remote(text)


def fleet_module(name: str, package: str = "wren_tui.fleet") -> ModuleType:
    """A module of wren_tui.fleet (or of `package`) that needs nats-py, or a FleetError that says how to install it."""
    from ..fleet import needing_nats

    with needing_nats():
        return importlib.import_module(f"{package}.{name}")


# --- wren watch nats://... ---------------------------------------------------------------------


def watch_remote(ref: RemoteRef, *, pick: bool, fork_folder: Path) -> Exit:
    """`wren watch nats://SERVER[/HOST[/SESSION]]`: a fleet's sessions, or one of them; forks go to `fork_folder`."""
    if pick:
        raise UsageError(
            "--pick chooses a fork point of a session on this machine; to fork a session of the fleet, "
            f"open it with wren watch {ref} and press p"
        )
    viewer = fleet_module("fleet_app", package="wren_tui.tui")
    status: int = asyncio.run(viewer.watch_fleet(ref, fork_folder=fork_folder))
    return Exit.ERROR if status else Exit.OK  # non-zero: the viewer crashed (Textual printed why)


# --- wren ls nats://... ------------------------------------------------------------------------


def ls_remote(target: str, as_json: bool, agent: str | None = None) -> Exit:
    """`wren ls nats://SERVER[/HOST]`: the session list, newest first, with each session's host; with
    `--agent NAME|all`, the other agents' sessions the hosts kept (`wren keep`) and their mirrors shipped."""
    from ..fleet.names import parse_ref

    ref = parse_ref(target)
    if ref.session:
        raise UsageError(f"ls lists sessions; to read one, use wren log {ref}")
    remote = fleet_module("remote")
    if agent is not None:
        return _ls_kept(remote, ref, agent, as_json)
    sessions, refused = asyncio.run(_sessions(remote, ref))
    for key in refused:
        # Any writer of one key could otherwise list a session as another host's.
        err(f"warning: {key} in the session list holds a row for another host or session; not listed")
    if as_json:
        print_json(
            [{**_row_fields(s.row), "hostBeat": s.host_beat, "mirrorSilent": s.mirror_silent()} for s in sessions]
        )
        return Exit.OK
    if not sessions:
        out(f"no sessions on {ref}")
        return Exit.OK
    width = max(4, *(len(s.host) for s in sessions))
    out(f"{'HOST':<{width}}  {'ID':<24}  {'STARTED':<24}  {'EVENTS':>6}  {'TOKENS':>7}  {'LAST EVENT':<24}  STATE")
    for s in sessions:
        row = s.row
        state = row.state
        if row.mirror:
            state += " (not mirrored: the stream differs)"
        elif state == "live" and s.mirror_silent():
            state += " (its mirror is silent)"
        out(
            visible(
                f"{s.host:<{width}}  {s.id:<24}  {row.started or '-':<24}  {row.last_seq:>6}  {row.tokens:>7}  "
                f"{row.last_ts or '-':<24}  {state}"
            )
        )
    return Exit.OK


def _ls_kept(remote: ModuleType, ref: RemoteRef, agent: str, as_json: bool) -> Exit:
    """The kept sessions of `agent` ("all": every agent's) on the fleet's server, by host, agent and path."""

    async def listed() -> list[Any]:
        async with await remote.Fleet.connect(ref.server) as fleet:
            rows: list[Any] = await fleet.kept(ref.host)
            return rows

    rows = [row for row in asyncio.run(listed()) if agent == "all" or row.agent == agent]
    if as_json:
        print_json([{f.encode_name: getattr(row, f.name) for f in msgspec.structs.fields(row)} for row in rows])
        return Exit.OK
    if not rows:
        out(f"no kept sessions on {ref}" + ("" if agent == "all" else f" of {agent}"))
        return Exit.OK
    width = max(4, *(len(row.host) for row in rows))
    out(f"{'HOST':<{width}}  {'AGENT':<8}  {'ID':<36}  {'BYTES':>9}  KEPT")
    for row in rows:
        said = row.mark or "kept; its agent still has it"
        if row.mirror:
            said += f" ({row.mirror})"
        out(visible(f"{row.host:<{width}}  {row.agent:<8}  {row.session:<36}  {row.size:>9}  {said}"))
    return Exit.OK


async def _sessions(remote: ModuleType, ref: RemoteRef) -> tuple[list[Any], list[str]]:
    """The sessions listed, and the keys whose rows were refused for naming another host or session."""
    async with await remote.Fleet.connect(ref.server) as fleet:
        found: list[Any] = await fleet.sessions(ref.host)
        return found, list(fleet.refused)


def _row_fields(row: SessionRow) -> dict[str, object]:
    """Every field of a row by the name it has on the wire (lastSeq, not last_seq), defaults included."""
    return {f.encode_name: getattr(row, f.name) for f in msgspec.structs.fields(row)}
