"""The viewer over a fleet: `wren watch nats://SERVER[/HOST[/SESSION]]`, every machine's sessions from one server.

The same viewer as `WrenApp`, on other screens' sources: the fleet's browser lists the session list
of the server (`fleet.remote`), and a session opens in the same session screen as a local journal,
read through `sources.remote.RemoteSource`. The one write is a fork, into the local journals folder.
Needs the `fleet` extra (nats-py); nothing else of the viewer loads this module.
"""

from __future__ import annotations

from pathlib import Path

from ..fleet import FleetError
from ..fleet.names import RemoteRef, shown
from ..fleet.remote import Fleet
from .app import Clock, ViewerApp, utc_now
from .screens.fleet_browser import FleetBrowserScreen
from .screens.session import SessionScreen
from .sources.remote import TAIL_FIRST, RemoteSource


class FleetApp(ViewerApp):
    """Open on the session `ref` names, else on the browser of its server (or of its host there).

    Forks are written in `fork_folder` (the local journals folder). If the server cannot be reached
    at the start, the app exits at once and `error` says why; later outages are ridden out.
    """

    def __init__(
        self, ref: RemoteRef, *, fork_folder: Path, clock: Clock = utc_now, tail_first: int = TAIL_FIRST
    ) -> None:
        super().__init__()
        self.ref = ref
        self.fork_folder = fork_folder
        self.clock = clock
        self.tail_first = tail_first
        self.fleet: Fleet | None = None
        self.error: str | None = None

    async def on_mount(self) -> None:
        try:
            self.fleet = await Fleet.connect(self.ref.server, reconnect=True)
        except FleetError as exc:
            self.error = str(exc)
            self.exit(None, return_code=1)
            return
        if self.ref.host is not None and self.ref.session is not None:
            self.push_screen(self.session_screen(self.ref.host, self.ref.session))
        else:
            browser = FleetBrowserScreen(
                self.fleet, shown=shown(self.ref.server), host=self.ref.host, open_session=self.open_session
            )
            self.push_screen(browser)

    async def on_unmount(self) -> None:
        if self.fleet is not None:
            await self.fleet.close()

    def session_screen(self, host: str, session: str) -> SessionScreen:
        assert self.fleet is not None, "a session opens once the server is reached"
        source = RemoteSource(self.fleet, host, session, fork_folder=self.fork_folder, tail_first=self.tail_first)
        return SessionScreen(source, clock=self.clock)

    def open_session(self, host: str, session: str) -> None:
        self.push_screen(self.session_screen(host, session))
