"""The viewer app: a journal browser or one session, watched live, never written to."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from ..foreign import Format
from ..journal.store import journals_dir
from ..sessions.opening import source_of
from ..sessions.replay import ReplaySource
from ..sessions.tailing import WatchMode
from . import strings
from .clock import Clock, utc_now
from .commands import key_commands
from .filters import Only
from .screens.browser import BrowserScreen
from .screens.foreign import ForeignBrowser, ForeignFolder
from .screens.fork_flow import Picked
from .screens.launchers import ReplayWanted
from .screens.session import SessionScreen


class ViewerApp(App[Picked | None]):
    """What every viewer app has: its keys, help and command palette (the screens it opens are its own)."""

    CSS_PATH = "app.tcss"
    TITLE = strings.TITLE
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        # With the help panel open, q and Esc close it (Esc before the screen's own Esc, which goes back).
        Binding("escape", "close_help", show=False, priority=True),
        Binding("q", "close_help", show=False),
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "toggle_help", "Help"),
    ]

    def on_replay_wanted(self, message: ReplayWanted) -> None:
        from .screens.replay import Moments, ReplayScreen  # only a replay needs it

        source = ReplaySource(message.source, end=message.end)
        self.push_screen(ReplayScreen(source, Moments(message.timeline)))

    async def action_toggle_help(self) -> None:
        if self.screen.query("HelpPanel"):
            await self.action_close_help()
        else:
            self.action_show_help_panel()
            self.refresh_bindings()  # q and Esc now close it

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # With no help open, q and Esc do what they do without it (quit, the screen's Esc).
        return bool(self.screen.query("HelpPanel")) if action == "close_help" else True

    async def action_close_help(self) -> None:
        await self.screen.query("HelpPanel").remove()
        self.refresh_bindings()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        own = list(super().get_system_commands(screen))
        yield from own
        # Every key of the screen and the app is in the palette too (tui/commands.py).
        yield from key_commands(self, screen, taken=(command.title for command in own))


class WrenApp(ViewerApp):
    """Open on `session` if given, else on the browser of `folder`.

    `clock` is what "time since the last event" and a running call's elapsed time are measured
    against; tests and screenshots pass a fixed one so no wall clock reaches the frame.
    """

    def __init__(
        self,
        *,
        folder: Path,
        session: Path | None = None,
        pick: bool = False,
        clock: Clock = utc_now,
        watch_mode: WatchMode = "auto",
        only: Only | None = None,
        agents: Sequence[ForeignFolder] | None = None,
        journals: Path | None = None,
    ) -> None:
        super().__init__()
        self.only = only
        self.folder = folder
        self.session = session
        self.pick = pick
        self.clock = clock
        self.watch_mode = watch_mode
        # Browse other agents' session folders instead of a journals folder (`wren watch --agent`).
        self.agents = agents
        # Where a fork of another agent's session goes (a Wren journals folder); None: the default.
        self.journals = journals

    def on_mount(self) -> None:
        if self.session is not None:
            self.push_screen(self.session_screen(self.session))
        elif self.agents is not None:
            store = journals_dir(self.journals)
            self.push_screen(
                ForeignBrowser(
                    self.agents,
                    open_session=self.open_session,
                    watch_mode=self.watch_mode,
                    store=store,
                    open_at=self.open_at,
                    clock=self.clock,
                )
            )
        else:
            self.push_screen(
                BrowserScreen(
                    self.folder, open_session=self.open_session, watch_mode=self.watch_mode, open_at=self.open_at
                )
            )

    def session_screen(self, path: Path, at: tuple[int, int] | None = None, match: str = "") -> SessionScreen:
        """The screen the session at `path` is shown in (at the item at `at`, with `match` marked): a Wren
        journal, or another agent's file (by its content)."""
        source = source_of(path, self._folder_format(path), watch_mode=self.watch_mode, journals=self.journals)
        return SessionScreen(source, clock=self.clock, pick=self.pick, only=self.only, at=at, match=match)

    def _folder_format(self, path: Path) -> Format | None:
        """The format of the agent's folder browsed that holds `path`: a session its agent created but has not
        written a line to yet (Qwen Code creates the file empty) is that agent's, not a Wren journal."""
        try:
            if path.stat().st_size:
                return None  # lines in it: its content says what it is
        except OSError:
            return None
        for folder in self.agents or ():
            if folder.format is not None and path.is_relative_to(folder.root):
                return folder.format
        return None

    def open_session(self, path: Path) -> None:
        self.push_screen(self.session_screen(path))

    def open_at(self, path: Path, at: tuple[int, int], match: str) -> None:
        """Open a session at a search hit: the item whose line starts at `at` selected, `match` marked."""
        self.push_screen(self.session_screen(path, at, match))
