"""The viewer's clock: what "time since the last event" and a running call's elapsed time are measured
against. The app takes one (tests give a fixed one) and hands it to every screen and pane."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)
