"""The tool-timings pane: one row per call, a running call's elapsed time ticking.

A Line-API ScrollView with a pinned header row; a row's events are decoded only when it is on screen.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import msgspec
from textual.strip import Strip

from ...journal.store import parse_ts
from .. import strings
from ..text import shorten
from ..timeline import ROW_WORDS, RowState, ToolRow
from .call_list import CallList
from .components import component_classes


class ToolTimings(CallList):
    """Tool calls in the order the model asked for them, with elapsed, size and outcome."""

    DEFAULT_CSS = """
    ToolTimings {
        & > .calls--ok { color: $foreground; }
        & > .calls--unknown { color: $text-warning; text-style: bold reverse; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = component_classes(DEFAULT_CSS)

    def _columns(self, width: int) -> tuple[int, int, int, int, int]:
        tool, elapsed, size, state = 11, 9, 6, 26
        return tool, max(width - tool - elapsed - size - state - 4, 8), elapsed, size, state

    def _cells(self, values: tuple[str, str, str, str, str], width: int) -> str:
        tool, args, elapsed, size, state = self._columns(width)
        name, arguments, ms, chars, outcome = values
        return (
            f"{shorten(name, tool):<{tool}} {shorten(arguments, args):<{args}} "
            f"{ms:>{elapsed}} {chars:>{size}} {shorten(outcome, state)}"
        )

    def render_line(self, y: int) -> Strip:
        if y == 0:
            return self.text_line(self._cells(strings.TOOL_COLUMNS, self.scrollable_content_region.width), "header")
        index = self.row_at(y)
        if isinstance(index, Strip):
            return index
        row = self.timeline.call(index)
        state = row.state(self.writer_alive)
        text = self._cells(self._values(row, state), self.scrollable_content_region.width)
        return self.styled_line(text, self.state_style(state, index))

    def _values(self, row: ToolRow, state: RowState) -> tuple[str, str, str, str, str]:
        end = row.end
        elapsed = ""
        if end is not None and end.elapsed_ms is not None:
            elapsed = f"{end.elapsed_ms} ms"
        elif state == "running" and (started := _started(row)) is not None:
            seconds = (self.clock() - started).total_seconds()
            elapsed = f"{max(seconds, 0):.0f} s…"
        size = f"{end.chars}" if end is not None and end.chars is not None else ""
        notes: list[str] = [ROW_WORDS[state]]
        if end is not None and end.stopped_by:
            notes = [f"stopped: {end.stopped_by}"]
        if end is not None and end.truncated:
            notes.append("truncated")
        if row.start is not None and row.start.approval != "auto":
            notes.append(row.start.approval)
        return row.name, _summary(row.args), elapsed, size, ", ".join(notes)


def _started(row: ToolRow) -> datetime | None:
    """When a running call began: its tool_start, or (another agent's call) its asking."""
    if row.start is not None:
        return parse_ts(row.start.ts)
    return parse_ts(row.asked_ts) if row.foreign and row.asked_ts else None


def _summary(args: str) -> str:
    """`key=value, ...` for JSON object arguments; the raw text otherwise."""
    try:
        data = msgspec.json.decode(args)
    except msgspec.DecodeError:
        return args
    if isinstance(data, dict):
        return ", ".join(f"{k}={v if isinstance(v, str) else msgspec.json.encode(v).decode()}" for k, v in data.items())
    return args
