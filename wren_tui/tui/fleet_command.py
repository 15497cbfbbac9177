"""`wren watch nats://SERVER[/HOST[/SESSION]]`: the viewer over a fleet, started from the command line.

`tui/commands.py` hands a nats:// target here. nats-py (the `fleet` extra) is imported only now,
so the core install never needs it; without it, one sentence says how to install it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ..fleet import FleetError
from ..fleet.names import parse_ref
from ..journal.store import journals_dir

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
NEEDS_EXTRA = (
    "the fleet needs nats-py, which is not installed: pip install 'wren-tui[fleet]' (it brings nats-server too)"
)


def cmd_watch_remote(args: argparse.Namespace) -> int:
    """Browse a fleet's sessions (every host's, or one host's), or open one; forks go to the local journals folder."""
    ref = parse_ref(args.target)
    if args.pick:
        sys.stderr.write(
            "wren: --pick chooses a fork point of a session on this machine; to fork a session of the fleet, "
            f"open it with wren watch {ref} and press p\n"
        )
        return EXIT_USAGE
    try:
        from .fleet_app import watch_fleet
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("nats"):
            raise
        raise FleetError(NEEDS_EXTRA) from None
    status = asyncio.run(watch_fleet(ref, fork_folder=journals_dir(getattr(args, "dir", None))))
    return EXIT_ERROR if status else EXIT_OK
