"""The fleet's commands: `wren mirror`, and `wren ls` / `wren log` given a nats:// reference.

Registered on the `wren` parser like the agent's commands; nats-py (the `fleet` extra) is imported
only when one of them runs, so the core install never needs it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable
from functools import partial
from types import ModuleType
from typing import Any

import msgspec

from ..journal.reader import EventSink
from ..journal.store import journals_dir
from ..journal.verdict import ReadVerdict
from ..journal.visible import visible
from . import FleetError
from .names import RemoteRef, check_host, host_token, is_remote, parse_ref, shown

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
URL_ENV = "WREN_NATS_URL"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "mirror",
        parents=[common],
        help="ship every journal of a folder to NATS JetStream, live (the fleet)",
        description="Watch a journals folder and ship each journal's durable, valid lines to a NATS "
        "JetStream stream, exactly once and in order, then keep following. The agent never waits "
        "for it: if the server is away, the lines are shipped when it is back. Needs the fleet "
        "extra (pip install 'wren-tui[fleet]').",
    )
    p.add_argument("--url", metavar="nats://SERVER[:PORT]", help=f"the NATS server (default: ${URL_ENV})")
    p.add_argument(
        "--host",
        metavar="TOKEN",
        help="this machine's name in the fleet: lowercase letters, digits, - and _ (default: the host name, "
        "lowercased, any other character made -)",
    )
    p.add_argument(
        "--once",
        action="store_true",
        help="ship what is durable now, then exit (exit 1 if a session cannot be mirrored)",
    )
    p.add_argument(
        "--replicas", type=int, default=1, metavar="N", help="replicas of the stream and list it creates (default: 1)"
    )
    p.add_argument("--poll", action="store_true", help="poll the folder instead of using change notifications")
    p.set_defaults(handler=cmd_mirror)


def _fleet(module: str) -> ModuleType:
    """A fleet module that needs nats-py, or a FleetError that says how to install it."""
    import importlib

    try:
        return importlib.import_module(f"wren_tui.fleet.{module}")
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("nats"):
            raise
        raise FleetError(
            "the fleet needs nats-py, which is not installed: pip install 'wren-tui[fleet]' (it brings nats-server too)"
        ) from None


# --- wren mirror ------------------------------------------------------------------------------


def cmd_mirror(args: argparse.Namespace) -> int:
    url = args.url or os.environ.get(URL_ENV)
    if not url:
        sys.stderr.write(f"wren: mirror needs a server: --url nats://SERVER[:PORT] (or ${URL_ENV})\n")
        return EXIT_USAGE
    ref = parse_ref(url)
    if ref.host or ref.session:
        sys.stderr.write(f"wren: --url names a server only, not a host or a session: {shown(ref.server)}\n")
        return EXIT_USAGE
    if args.replicas < 1:
        sys.stderr.write("wren: --replicas must be 1 or more\n")
        return EXIT_USAGE
    host = check_host(args.host) if args.host else host_token()
    mirror = _fleet("mirror")
    options = mirror.MirrorOptions(
        folder=journals_dir(args.dir), server=ref.server, host=host, replicas=args.replicas, poll=args.poll
    )
    return asyncio.run(_mirror_until_signal(mirror.Mirror(options, _report), once=args.once))


async def _mirror_until_signal(mirror: Any, *, once: bool) -> int:
    """Run the mirror until SIGINT, SIGTERM or SIGHUP; then exit 128 + its number, as every wren command does."""
    stop = asyncio.Event()
    received: list[int] = []
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        received.append(signum)
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup's ignored SIGHUP stays ignored
            loop.add_signal_handler(signum, on_signal, signum)
    try:
        status: int = await mirror.run(stop, once=once)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(signum)
    if received:
        _report(f"stopped by {signal.Signals(received[0]).name}")
        return 128 + received[0]
    return status


def _report(text: str) -> None:
    sys.stderr.write(f"wren mirror: {text}\n")
    sys.stderr.flush()


# --- wren ls nats://... ------------------------------------------------------------------------


def cmd_ls_remote(target: str, as_json: bool) -> int:
    """`wren ls nats://SERVER[/HOST]`: the session list, newest first, with each session's host."""
    ref = parse_ref(target)
    if ref.session:
        sys.stderr.write(f"wren: ls lists sessions; to read one, use wren log {ref}\n")
        return EXIT_USAGE
    remote = _fleet("remote")
    sessions = asyncio.run(_sessions(remote, ref))
    if as_json:
        rows = [
            {**msgspec.structs.asdict(s.row), "hostBeat": s.host_beat, "mirrorSilent": s.mirror_silent()}
            for s in sessions
        ]
        sys.stdout.buffer.write(msgspec.json.encode(rows) + b"\n")
        return EXIT_OK
    if not sessions:
        print(f"no sessions on {ref}")
        return EXIT_OK
    width = max(4, *(len(s.host) for s in sessions))
    print(f"{'HOST':<{width}}  {'ID':<24}  {'STARTED':<24}  {'EVENTS':>6}  {'TOKENS':>7}  {'LAST EVENT':<24}  STATE")
    for s in sessions:
        row = s.row
        state = row.state
        if row.mirror:
            state += " (not mirrored: the stream differs)"
        elif state == "live" and s.mirror_silent():
            state += " (its mirror is silent)"
        print(
            visible(
                f"{s.host:<{width}}  {s.id:<24}  {row.started or '-':<24}  {row.lastSeq:>6}  {row.tokens:>7}  "
                f"{row.lastTs or '-':<24}  {state}"
            )
        )
    return EXIT_OK


async def _sessions(remote: ModuleType, ref: RemoteRef) -> list[Any]:
    async with await remote.Fleet.connect(ref.server) as fleet:
        found: list[Any] = await fleet.sessions(ref.host)
        return found


# --- wren log nats://... -----------------------------------------------------------------------

Scan = Callable[[EventSink], ReadVerdict]


def remote_log_source(target: str) -> tuple[Scan, str, str]:
    """For `wren log nats://SERVER/HOST/SESSION`: how to read it (as `scan_events` reads a file), its id, its name."""
    ref = parse_ref(target)
    if ref.host is None or ref.session is None:
        raise FleetError(f"{target!r}: wren log reads one session: nats://SERVER[:PORT]/HOST/SESSION")
    remote = _fleet("remote")
    return partial(remote.scan_remote, ref), ref.session, str(ref)


__all__ = ["cmd_ls_remote", "cmd_mirror", "is_remote", "register", "remote_log_source"]
