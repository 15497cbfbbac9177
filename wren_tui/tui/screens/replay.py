"""Replay: a finished session shown as it was at each moment, played at its recorded speed or faster.

The moments are the session's items (every event but the streamed deltas, which arrive with their
reply). The screen is the session screen over a `ReplaySource` cut at the current moment, so every
pane shows the session as it then was; the clock the panes read is the moment's time. A scrubber
line says where the replay is and moves it: by event, by turn, by tool call.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from datetime import datetime, timedelta
from time import monotonic
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from ...journal.store import parse_ts
from ...journal.timing import duration
from ...sessions.replay import ReplaySource
from .. import strings
from ..text import width_of
from ..timeline import KINDS, Timeline
from ..widgets.key_footer import KeyFooter
from .session import SessionScreen

SPEEDS = (1, 10, 100)
# A quiet stretch longer than this (in replayed time) is crossed in this much real time, and said so.
_LONGEST_WAIT_S = 2.0
_USER = KINDS.index("user")


class Moments:
    """The session's items as moments to stop at: where each one's line ends, and which open turns or calls."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.ends = array("q", timeline.ends)
        self.turns = array("i", (i for i, kind in enumerate(timeline.kinds) if kind == _USER))
        self.calls = array("i", timeline.tool_items)

    def __len__(self) -> int:
        return len(self.ends)

    def cap(self, shown: int) -> int:
        """The bytes that hold the first `shown` items."""
        return self.ends[shown - 1] if shown > 0 else 0

    def time(self, shown: int) -> datetime | None:
        """When the last of the first `shown` items was written."""
        if shown <= 0:
            return None
        return parse_ts(self.timeline.event(shown - 1).ts)


class Scrubber(Widget):
    """Where the replay is: playing or not, its speed, the moment's time, and a bar of the whole session."""

    DEFAULT_CSS = """
    Scrubber {
        height: 1;
        background: $accent 30%;
        color: $foreground;
        & > .scrubber--played { color: $text-accent; }
        & > .scrubber--state { text-style: bold; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"scrubber--played", "scrubber--state"}

    shown: reactive[int] = reactive(0)
    playing: reactive[bool] = reactive(False)
    speed: reactive[int] = reactive(1)
    moment: reactive[str] = reactive("")
    where: reactive[str] = reactive("")

    def __init__(self, total: int) -> None:
        super().__init__()
        self.total = total

    def render(self) -> Text:
        style = self.get_component_rich_style
        state = strings.REPLAY_PLAYING.format(speed=self.speed) if self.playing else strings.REPLAY_PAUSED
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f" {state} ", style("scrubber--state"))
        text.append(f" {self.moment} · {self.where} ")
        room = self.size.width - width_of(text.plain) - 2
        if room >= 10:
            done = round(room * self.shown / self.total) if self.total else room
            text.append("━" * done, style("scrubber--played"))
            text.append("─" * (room - done))
        return text


class ReplayScreen(SessionScreen):
    """The session screen, cut at a moment that the replay keys move."""

    FOOTER_KEEP: ClassVar[tuple[str, ...]] = ("quit", "toggle_help", "play", "step(1)", "turn(1)", "call(1)", "back")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("space", "play", "Play/pause", priority=True),
        Binding("right", "step(1)", "Next event", priority=True),
        Binding("left", "step(-1)", "Prev event", show=False, priority=True),
        Binding("right_square_bracket", "turn(1)", "Next turn"),
        Binding("left_square_bracket", "turn(-1)", "Prev turn", show=False),
        Binding("full_stop", "call(1)", "Next call"),
        Binding("comma", "call(-1)", "Prev call", show=False),
        Binding("greater_than_sign", "edge(1)", "End", show=False),
        Binding("less_than_sign", "edge(-1)", "Start", show=False),
        Binding("1", "speed(1)", "1x", show=False),
        Binding("2", "speed(10)", "10x", show=False),
        Binding("3", "speed(100)", "100x", show=False),
    ]

    def __init__(self, source: ReplaySource, moments: Moments, *, start: int = 0) -> None:
        self.replay = source
        self.moments = moments
        self._shown = start
        self._played_at: float | None = None  # real time the current moment began while playing
        self._speed = 1
        self._timer: Timer | None = None
        source.move_to(moments.cap(start))
        super().__init__(source, clock=self._now)

    def _now(self) -> datetime:
        """The replayed time: the moment's, running on at the replay's speed while it plays."""
        moment = self.moments.time(self._shown) or self.moments.time(1) or datetime.min
        if self._played_at is None:
            return moment
        later = moment + timedelta(seconds=(monotonic() - self._played_at) * self._speed)
        following = self.moments.time(self._shown + 1)
        return min(later, following) if following is not None else moment

    def on_mount(self) -> None:
        super().on_mount()
        self.title = strings.REPLAY_TITLE.format(session=self.session)
        scrubber = Scrubber(len(self.moments))
        self._show_moment(scrubber)
        self.mount(scrubber, before=self.query_one(KeyFooter))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("replay", "fork_points", "toggle_follow", "live"):
            return False  # a replay is already one, and forks are made from the session itself
        return super().check_action(action, parameters)

    # --- moving -----------------------------------------------------------------------------

    def go(self, shown: int) -> None:
        """Show the session with its first `shown` items (0: before anything was written)."""
        shown = min(max(shown, 0), len(self.moments))
        self._shown = shown
        self.replay.move_to(self.moments.cap(shown))
        self._show_moment()

    def _show_moment(self, scrubber: Scrubber | None = None) -> None:
        if scrubber is None:
            if not self.is_mounted or not self.query(Scrubber):
                return
            scrubber = self.query_one(Scrubber)
        moments, shown = self.moments, self._shown
        when = moments.time(shown)
        scrubber.shown, scrubber.playing, scrubber.speed = shown, self._timer is not None, self._speed
        scrubber.moment = when.strftime("%Y-%m-%d %H:%M:%S") + f".{when.microsecond // 1000:03d}" if when else "-"
        turn = bisect_left(moments.turns, shown)
        call = bisect_left(moments.calls, shown)
        scrubber.where = strings.REPLAY_WHERE.format(
            event=shown, events=len(moments), turn=turn, turns=len(moments.turns), call=call, calls=len(moments.calls)
        )

    def action_step(self, delta: int) -> None:
        self._pause()
        self.go(self._shown + delta)

    def action_turn(self, delta: int) -> None:
        self._jump(self.moments.turns, delta, "turns")

    def action_call(self, delta: int) -> None:
        self._jump(self.moments.calls, delta, "tool calls")

    def _jump(self, positions: array[int], delta: int, what: str) -> None:
        """To the moment just after the next (or previous) item among `positions` was written."""
        self._pause()
        shown = self._shown
        if delta > 0:
            at = bisect_right(positions, shown - 1)
            target = positions[at] + 1 if at < len(positions) else None
        else:
            at = bisect_left(positions, shown - 1)
            target = positions[at - 1] + 1 if at > 0 else None
        if target is None:
            self.notify(strings.NO_MORE.format(what=what), timeout=2)
            return
        self.go(target)

    def action_edge(self, delta: int) -> None:
        self._pause()
        self.go(len(self.moments) if delta > 0 else 0)

    # --- playing ----------------------------------------------------------------------------

    def action_play(self) -> None:
        if self._timer is not None:
            self._pause()
        else:
            if self._shown >= len(self.moments):
                self.go(0)
            self._schedule()
        self._show_moment()

    def action_speed(self, speed: int) -> None:
        self._speed = speed
        if self._timer is not None:
            self._pause()
            self._schedule()
        self._show_moment()

    def _pause(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._played_at = None
        self._show_moment()

    def _schedule(self) -> None:
        """Wait as long as the session waited before its next item (at the speed chosen), then show it."""
        now, following = self.moments.time(self._shown), self.moments.time(self._shown + 1)
        wait = 0.0
        if now is not None and following is not None:
            wait = max((following - now).total_seconds(), 0.0) / self._speed
        if wait > _LONGEST_WAIT_S:
            self.notify(strings.REPLAY_GAP.format(gap=duration(int(wait * self._speed * 1000))), timeout=2)
            wait = _LONGEST_WAIT_S
        self._played_at = monotonic()
        # Items written in the same millisecond follow each other at once (a timer needs a delay above 0).
        self._timer = self.set_timer(max(wait, 0.001), self._advance)

    def _advance(self) -> None:
        self._timer = None
        self.go(self._shown + 1)
        if self._shown < len(self.moments):
            self._schedule()
        else:
            self._played_at = None
        self._show_moment()
