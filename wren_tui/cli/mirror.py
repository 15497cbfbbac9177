"""`wren mirror`: ship every journal of a folder to a NATS JetStream server, live (the fleet).

nats-py (the `fleet` extra) is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from typing import Any

from ..agent.errors import UsageError
from ..portable import STOP_SIGNALS, add_signal_handler
from .exits import Exit
from .fleet import fleet_module
from .options import command_parser, named_folder_of

URL_ENV = "WREN_NATS_URL"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(
        sub,
        "mirror",
        cmd_mirror,
        "Watch a journals folder and ship each journal's durable, valid lines to a NATS "
        "JetStream stream, exactly once and in order, then keep following; the other agents' sessions "
        "Wren kept (wren keep) go too, byte for byte. The agent never waits "
        "for it: if the server is away, the lines are shipped when it is back. Needs the fleet "
        "extra (pip install 'wren-tui[fleet]').",
        common,
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


def cmd_mirror(args: argparse.Namespace) -> Exit:
    from ..fleet.names import check_host, host_token, parse_ref, shown

    url = args.url or os.environ.get(URL_ENV)
    if not url:
        raise UsageError(f"mirror needs a server: --url nats://SERVER[:PORT] (or ${URL_ENV})")
    ref = parse_ref(url)
    if ref.host or ref.session:
        raise UsageError(f"--url names a server only, not a host or a session: {shown(ref.server)}")
    if args.replicas < 1:
        raise UsageError("--replicas must be 1 or more")
    host = check_host(args.host) if args.host is not None else host_token()  # --host '' is refused, not replaced
    mirror = fleet_module("mirror")
    options = mirror.MirrorOptions(
        folder=named_folder_of(args),
        server=ref.server,
        host=host,
        replicas=args.replicas,
        poll=args.poll,
        kept=_kept_sources,
    )
    return asyncio.run(_mirror_until_signal(mirror.Mirror(options, _report), once=args.once))


async def _mirror_until_signal(mirror: Any, *, once: bool) -> Exit:
    """Run the mirror until SIGINT, SIGTERM or SIGHUP; then exit 128 + its number, as every wren command does."""
    stop = asyncio.Event()
    received: list[signal.Signals] = []
    loop = asyncio.get_running_loop()

    def on_signal(sig: signal.Signals) -> None:
        received.append(sig)
        stop.set()

    handled = [sig for sig in STOP_SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN]  # nohup's SIGHUP stays
    removers = [add_signal_handler(loop, sig, on_signal, sig) for sig in handled]
    try:
        not_mirrored: int = await mirror.run(stop, once=once)
    finally:
        for remove in removers:
            remove()
    if received:
        _report(f"stopped by {received[0].name}")
        return Exit.stopped_by(received[0])
    return Exit.ERROR if not_mirrored else Exit.OK


def _kept_sources() -> list[Any]:
    """The other agents' sessions Wren kept (`wren keep`), as the mirror ships them (`fleet.kept.KeptSource`)."""
    from ..keep.found import Kept

    kept = fleet_module("kept")
    return [
        kept.KeptSource(s.agent, s.session, s.relative, s.version, s.copy, s.size, s.mark) for s in Kept().shipped()
    ]


def _report(text: str) -> None:
    """The mirror's own lines (what it ships, outages, a session it stops mirroring), on stderr."""
    sys.stderr.write(f"wren mirror: {text}\n")
    sys.stderr.flush()
