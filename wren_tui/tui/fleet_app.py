"""The viewer over a fleet: `wren watch nats://SERVER[/HOST[/SESSION]]`, every machine's sessions from one server.

The same viewer as `WrenApp`, on other screens' sources: the fleet's browser lists the session list
of the server (`fleet.remote`), and a session opens in the same session screen as a local journal,
read through `sources.remote.RemoteSource`. The one write is a fork, into the local journals folder.
Needs the `fleet` extra (nats-py); nothing else of the viewer loads this module.
"""

from __future__ import annotations

from pathlib import Path

from ..fleet.names import RemoteRef, shown
from ..fleet.remote import Fleet
from .app import ViewerApp
from .clock import Clock, utc_now
from .screens.fleet_browser import FleetBrowserScreen
from .screens.session import SessionScreen
from .sources.remote import TAIL_FIRST, RemoteSource


class FleetApp(ViewerApp):
    """Open on the session `ref` names, else on the browser of its server (or of its host there).

    `fleet` is a connection to `ref.server` made with `reconnect=True` (outages are ridden out), on
    the loop the app runs on; its maker closes it. Forks are written in `fork_folder` (the local
    journals folder).
    """

    def __init__(
        self, ref: RemoteRef, fleet: Fleet, *, fork_folder: Path, clock: Clock = utc_now, tail_first: int = TAIL_FIRST
    ) -> None:
        super().__init__()
        self.ref = ref
        self.fleet = fleet
        self.fork_folder = fork_folder
        self.clock = clock
        self.tail_first = tail_first

    def on_mount(self) -> None:
        if self.ref.host is not None and self.ref.session is not None:
            self.push_screen(self.session_screen(self.ref.host, self.ref.session))
        else:
            browser = FleetBrowserScreen(
                self.fleet, shown=shown(self.ref.server), host=self.ref.host, open_session=self.open_session
            )
            self.push_screen(browser)

    def session_screen(self, host: str, session: str) -> SessionScreen:
        source = RemoteSource(self.fleet, host, session, fork_folder=self.fork_folder, tail_first=self.tail_first)
        return SessionScreen(source, clock=self.clock)

    def open_session(self, host: str, session: str) -> None:
        self.push_screen(self.session_screen(host, session))


async def watch_fleet(ref: RemoteRef, *, fork_folder: Path) -> int:
    """Run the viewer over `ref` in this terminal; the app's exit status.

    The server is reached before the terminal is taken over, so a server that cannot be reached is
    one sentence on a normal screen (`FleetError`), not a flash of the app.
    """
    async with await Fleet.connect(ref.server, reconnect=True) as fleet:
        app = FleetApp(ref, fleet, fork_folder=fork_folder)
        await app.run_async()
        return app.return_code or 0
