"""The viewer over a fleet: `wren watch nats://SERVER[/HOST[/SESSION]]`, every machine's sessions from one server.

The same viewer as `WrenApp`, on other screens' sources: the fleet's browser lists the session list
of the server (`fleet.remote`), and a session opens in the same session screen as a local journal,
read through `sessions.remote.RemoteSource`. The one write is a fork, into the local journals folder.
Needs the `fleet` extra (nats-py); nothing else of the viewer loads this module.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from textual import work

from ..fleet import FleetError
from ..fleet.kept import KeptRow, materialize
from ..fleet.names import RemoteRef, shown
from ..fleet.remote import Fleet
from ..foreign import FORMATS
from ..sessions.foreign import ForeignFile
from ..sessions.remote import TAIL_FIRST, RemoteSource
from .app import ViewerApp
from .clock import Clock, utc_now
from .screens.fleet_browser import FleetBrowserScreen
from .screens.session import SessionScreen


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
        # Where another agent's kept session read from the server is laid out for its reader (made when one is opened,
        # removed when the app ends): a private folder of this process's, never the agent's or the journals folder.
        self._kept_folder: Path | None = None

    def on_mount(self) -> None:
        if self.ref.host is not None and self.ref.session is not None:
            self.push_screen(self.session_screen(self.ref.host, self.ref.session))
        else:
            browser = FleetBrowserScreen(
                self.fleet,
                shown=shown(self.ref.server),
                host=self.ref.host,
                open_session=self.open_session,
                open_kept=self.open_kept,
            )
            self.push_screen(browser)

    def on_unmount(self) -> None:
        if self._kept_folder is not None:
            shutil.rmtree(self._kept_folder, ignore_errors=True)

    def session_screen(self, host: str, session: str) -> SessionScreen:
        source = RemoteSource(self.fleet, host, session, fork_folder=self.fork_folder, tail_first=self.tail_first)
        return SessionScreen(source, clock=self.clock)

    def open_session(self, host: str, session: str) -> None:
        self.push_screen(self.session_screen(host, session))

    @work(exclusive=True, group="open-kept")
    async def open_kept(self, row: KeptRow) -> None:
        """Another agent's session a host kept: its copy read back from the stream, opened with its agent's reader."""
        if row.agent not in FORMATS:
            self.notify(f"{row.agent}: no agent Wren reads", severity="error")
            return
        try:
            data = await self.fleet.kept_copy(row)
            if self._kept_folder is None:
                self._kept_folder = Path(tempfile.mkdtemp(prefix="wren-kept-"))
            folder = Path(tempfile.mkdtemp(dir=self._kept_folder))  # one each: two hosts' copies share paths
            path = materialize(row, data, folder)
        except (FleetError, OSError) as exc:
            self.notify(f"{row.host} {row.session}: {exc}", severity="error")
            return
        source = ForeignFile(path, FORMATS[row.agent], journals=self.fork_folder)
        self.push_screen(SessionScreen(source, clock=self.clock))
        self.notify(f"{row.agent} {row.session} of {row.host}: {row.mark or 'kept'}")


async def watch_fleet(ref: RemoteRef, *, fork_folder: Path) -> int:
    """Run the viewer over `ref` in this terminal; the app's exit status.

    The server is reached before the terminal is taken over, so a server that cannot be reached is
    one sentence on a normal screen (`FleetError`), not a flash of the app.
    """
    async with await Fleet.connect(ref.server, reconnect=True) as fleet:
        app = FleetApp(ref, fleet, fork_folder=fork_folder)
        await app.run_async()
        return app.return_code or 0
