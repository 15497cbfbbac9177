"""The fleet's browser: every host's sessions from a fleet's server, newest first, appearing and changing live.

It reads the session list only (`fleet.remote.Fleet.watch_list`: one row per session and a beat
per host, written by each machine's `wren mirror`), never a session's lines, so a server holding
thousands of sessions lists at once. A live session whose host's mirror has gone silent says so:
what its row says may be old.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

from rich.text import Text
from textual import work

from ...fleet import FleetError
from ...fleet.kept import KeptRow
from ...fleet.remote import Fleet, RemoteSession
from ...fleet.rows import SessionRow
from .. import strings
from ..text import shorten, visible
from ..widgets.session_table import STATE_STYLE, UNKNOWN_STATE, SessionTable
from .session_list import SessionList

OpenRemote = Callable[[str, str], None]
OpenKept = Callable[[KeptRow], object]
# Columns given up first when the terminal is too narrow for all of them; the rest always show.
_DROP_FIRST = ("tokens", "started", "forked from", "last event", "events")
# After the list could not be read (no server, no mirror yet), it is asked again this long after.
_RETRY_S = 2.0


def state_of(session: RemoteSession, now: datetime | None = None) -> str:
    """The state as the list shows it: the row's, and what its mirror says of it (silent, stopped)."""
    row = session.row
    if row.mirror:
        return f"{row.state}, not mirrored"
    if row.state == "live" and session.mirror_silent(now):
        return strings.FLEET_SILENT
    return row.state


class FleetBrowserScreen(SessionList):
    def __init__(
        self,
        fleet: Fleet,
        *,
        shown: str,
        host: str | None = None,
        open_session: OpenRemote,
        open_kept: OpenKept | None = None,
    ) -> None:
        self.fleet = fleet
        self.shown = shown  # the server as a person reads it (no password)
        self.host = host  # only this host's sessions
        self.open_session = open_session
        self.open_kept = open_kept
        self.rows: dict[str, SessionRow] = {}  # by "host/session"
        # Other agents' sessions the hosts kept (`wren keep`), by "kept:host/agent/path".
        self.kept: dict[str, KeptRow] = {}
        self.beats: dict[str, str] = {}
        self.problem: str | None = None
        # Session ids begin with their UTC start time, so by id is newest first.
        table = SessionTable(
            strings.FLEET_COLUMNS, drop_first=_DROP_FIRST, newest_first=("id", "host"), empty=self._empty_text()
        )
        where = shown if host is None else f"{shown}/{host}"
        super().__init__(strings.FLEET_TITLE.format(server=shorten(where, 200)), table)

    def on_mount(self) -> None:
        self.table.focus()
        self.set_interval(1.0, self._recheck_silence)
        self._watch_list()

    def _empty_text(self) -> str:
        if self.problem is not None:
            return strings.FLEET_CANNOT_LIST.format(server=shorten(self.shown, 200), why=self.problem)
        return strings.FLEET_EMPTY.format(server=shorten(self.shown, 200))

    # --- the list -------------------------------------------------------------------------

    @work(exclusive=True, group="fleet-list")
    async def _watch_list(self) -> None:
        while True:
            try:
                async for change in self.fleet.watch_list():
                    if self.problem is not None:
                        self.problem = None
                        self._show_empty()
                    self.beats.update(change.beats)
                    rows = [r for r in change.rows if self.host is None or r.host == self.host]
                    self._show_kept([r for r in change.kept if self.host is None or r.host == self.host])
                    self._show_rows(rows, hosts=set(change.beats))
            except FleetError as exc:
                self.problem = str(exc)
                self._show_empty()
            await asyncio.sleep(_RETRY_S)

    def _show_rows(self, rows: list[SessionRow], *, hosts: set[str]) -> None:
        """Show the rows given, and again the live rows of the hosts heard from (their silence may have ended)."""
        now = datetime.now(UTC)
        for row in rows:
            key = f"{row.host}/{row.session}"
            self.rows[key] = row
            self.table.put(key, _cells(RemoteSession(row, self.beats.get(row.host)), now))
        self._recheck_silence(hosts)
        self._show_empty()

    def _show_kept(self, rows: list[KeptRow]) -> None:
        """The kept sessions of other agents: their host, id, and what the host's kept store says of them."""
        for row in rows:
            key = f"kept:{row.host}/{row.agent}/{row.relative}"
            self.kept[key] = row
            self.table.put(key, _kept_cells(row))

    def _show_empty(self) -> None:
        self.table.say_empty(self._empty_text())

    def _recheck_silence(self, hosts: set[str] | None = None) -> None:
        """Show again the state of live sessions whose mirror fell silent or was heard from again (of `hosts`
        only, if given), and every row changed since the table last settled."""
        now = datetime.now(UTC)
        for key, row in self.rows.items():
            if row.state != "live" or (hosts is not None and row.host not in hosts):
                continue
            cells = _cells(RemoteSession(row, self.beats.get(row.host)), now)
            if self.table.get(key) != cells:
                self.table.put(key, cells)
        self.table.settle()

    # --- opening --------------------------------------------------------------------------

    def on_session_table_opened(self, event: SessionTable.Opened) -> None:
        row = self.rows.get(event.key)
        if row is not None:
            self.open_session(row.host, row.session)
        kept = self.kept.get(event.key)
        if kept is not None and self.open_kept is not None:
            self.open_kept(kept)


def _cells(session: RemoteSession, now: datetime) -> dict[str, Text]:
    row = session.row
    state = state_of(session, now)
    style = STATE_STYLE.get(row.state, UNKNOWN_STATE)
    if state != row.state:
        style = "bold reverse yellow"  # what the row says may be old, or is no longer mirrored
    origin = f"{row.forked_from}@{row.fork_at}" if row.forked_from else ""
    # A row is whatever was written to the server: its text is shown with control characters made visible.
    values = (
        Text(shorten(visible(row.host), 24)),
        Text(shorten(visible(row.session), 40)),
        Text(shorten(visible((row.started or "-").replace("T", " ")[:16]), 16)),
        Text(str(row.events), justify="right"),
        Text(str(row.tokens), justify="right"),
        Text(shorten(visible((row.last_ts or "-").replace("T", " ")[:19]), 19)),
        Text(shorten(visible(state), 40), style=style),
        Text(shorten(visible(origin), 40)),
    )
    return dict(zip(strings.FLEET_COLUMNS, values, strict=True))


def _kept_cells(row: KeptRow) -> dict[str, Text]:
    """A kept session of another agent: no journal's counts, its agent and what its host's store says of it."""
    said = f"{row.agent}: {row.mark or 'kept'}"
    if row.mirror:
        said += ", not mirrored"
    values = (
        Text(shorten(visible(row.host), 24)),
        Text(shorten(visible(row.session), 40)),
        Text("-"),
        Text("-", justify="right"),
        Text("-", justify="right"),
        Text("-"),
        Text(shorten(visible(said), 80)),
        Text(""),
    )
    return dict(zip(strings.FLEET_COLUMNS, values, strict=True))
