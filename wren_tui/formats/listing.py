"""Other agents' sessions listed from their folders: each file summarised from its head and its tail.

A folder of thousands of sessions lists at once because no file is parsed whole: the first lines
say when it started and in which folder (its project), the last lines how it ends and, where the
agent writes a running total (Claude Code's cost line, Codex's token counts), its tokens. A file's
lines are counted up to a megabyte and estimated beyond (`exact` is False), and its tokens are
estimated where the agent keeps no running total, as `wren ls` says of a big Wren journal. A line
that is not a JSON object at either end has the file read whole, to say where reading stops.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import msgspec

from ..journal.errors import JournalError
from ..journal.events import Error, Event, Message, Usage
from ..journal.reader import open_for_reading
from ..journal.store import parse_ts
from . import FORMATS
from .base import BadLine, Format, Translated
from .live import FileKey, changed_recently, held_for_writing
from .reader import scan

# Bytes read at each end of a file; a file up to twice this is read whole.
WINDOW = 1 << 14
# A file up to this size has its lines counted (not read as JSON): its line count is exact.
COUNTED_UNDER = 1 << 20
# A first line longer than the window is read on to its end, up to this (Codex's first line holds its instructions).
_HEAD_MAX = 1 << 20


@dataclass(frozen=True)
class AgentSession:
    """One session of another agent, as a listing shows it."""

    agent: str
    id: str
    path: Path
    # live, done, stopped mid-call, interrupted, error, torn tail, corrupt, empty, unreadable
    state: str
    lines: int  # lines of the file, each one of the agent's records (an estimate unless `exact`)
    started: str | None
    last_ts: str | None
    tokens: int
    project: str | None
    reason: str | None = None
    exact: bool = True
    tokens_exact: bool = True

    @property
    def duration_s(self) -> float | None:
        first = parse_ts(self.started) if self.started else None
        last = parse_ts(self.last_ts) if self.last_ts else None
        return None if first is None or last is None else max((last - first).total_seconds(), 0.0)


def roots(
    agents: Iterable[str], env: Mapping[str, str] | None = None, folder: Path | None = None
) -> list[tuple[Format, Path]]:
    """Each agent's sessions folder: `folder` when given, else the one its own variable names, else its default."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    return [(FORMATS[name], folder if folder is not None else FORMATS[name].root(env, home)) for name in agents]


def session_files(fmt: Format, root: Path) -> Iterator[Path]:
    """The session files under `root`, in nested folders too (no link is followed)."""
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                elif entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                    path = Path(entry.path)
                    if fmt.is_session_file(path):
                        yield path
            except OSError:
                continue


class Summaries(Protocol):
    """What a listing learned of each file before, kept by whoever lists (`wren ls`: beside search's index).

    A row is kept as the file was when it was stat'ed (`st`) and as if no process were writing it; the
    listing says "live" itself, from the file's time and the processes that hold it.
    """

    def get(self, path: Path, st: os.stat_result) -> AgentSession | None:
        """The row kept for `path` if the file's device, inode, size and modification time are `st`'s."""
        ...

    def put(self, path: Path, st: os.stat_result, row: AgentSession) -> None: ...


def list_agent_sessions(places: Iterable[tuple[Format, Path]], known: Summaries | None = None) -> list[AgentSession]:
    """Every session in the agents' folders, newest first; with `known`, a file unchanged since is not read."""
    found = [(fmt, path) for fmt, root in places for path in session_files(fmt, root)]
    stats: dict[Path, os.stat_result] = {}
    for _fmt, path in found:
        try:
            stats[path] = os.stat(path)
        except OSError:
            continue
    held = held_for_writing((st.st_dev, st.st_ino) for st in stats.values())
    if known is None:
        rows = [describe_agent_session(path, fmt, held=held) for fmt, path in found]
    else:
        rows = [remembered(path, fmt, stats.get(path), held, known) for fmt, path in found]
    # Times are ISO-8601 UTC, so they sort as text; a session that never said when it started goes last.
    return sorted(rows, key=lambda row: row.started or "", reverse=True)


def remembered(
    path: Path, fmt: Format, st: os.stat_result | None, held: set[FileKey], known: Summaries
) -> AgentSession:
    """A file's row from `known` when it is unchanged, else read (and kept); "live" said as of now."""
    if st is None:
        return describe_agent_session(path, fmt, held=held)
    row = known.get(path, st)
    if row is None:
        row = describe_agent_session(path, fmt, held=set(), live=False)
        if row.state == "unreadable":
            return row
        known.put(path, st, row)
    if changed_recently(st.st_mtime) or (st.st_dev, st.st_ino) in held:
        return dataclasses.replace(row, state="live")
    return row


def describe_agent_session(
    path: Path, fmt: Format, *, held: set[FileKey] | None = None, live: bool | None = None
) -> AgentSession:
    """One session's listing row, from its head and its tail. `held`: files a process holds open for writing;
    `live`: whether it is live, when the caller says so."""
    session_id = fmt.session_id(path)
    try:
        fd = open_for_reading(path)
    except JournalError as exc:
        return _unreadable(fmt, session_id, path, str(exc))
    try:
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        if live is None:
            live = changed_recently(st.st_mtime) or key in (held if held is not None else held_for_writing([key]))
        return _summary(fd, fmt, session_id, path, st.st_size, live)
    except OSError as exc:
        return _unreadable(fmt, session_id, path, f"{path}: {exc.strerror or exc}")
    finally:
        os.close(fd)


def _unreadable(fmt: Format, session_id: str, path: Path, reason: str) -> AgentSession:
    return AgentSession(fmt.name, session_id, path, "unreadable", 0, None, None, 0, None, reason)


def _summary(fd: int, fmt: Format, session_id: str, path: Path, size: int, live: bool) -> AgentSession:
    if size == 0:
        return AgentSession(fmt.name, session_id, path, "live" if live else "empty", 0, None, None, 0, None)
    whole = size <= 2 * WINDOW
    head = os.pread(fd, size if whole else WINDOW, 0)
    while not whole and b"\n" not in head and len(head) < min(size, _HEAD_MAX):
        head += os.pread(fd, WINDOW, len(head))
    head_end = head.rfind(b"\n") + 1
    head_lines = head[:head_end].split(b"\n")[:-1]
    window = WINDOW
    try:
        _check(head_lines)
        start, cwd = _start(fmt, head_lines)
        while True:
            tail_start = max(size - window, head_end)
            tail = b"" if whole else os.pread(fd, size - tail_start, tail_start)
            if tail and tail_start > head_end:
                tail = tail[tail.find(b"\n") + 1 :]  # the window began inside a line
            tail_lines = tail.split(b"\n")[:-1]
            _check(tail_lines)
            state, last_ts = _end(fmt, tail_lines or head_lines)
            # A tail of the client's bookkeeping alone (a long prompt record) says nothing of the ending: look further.
            if state != "empty" or tail_start <= head_end or window >= _HEAD_MAX:
                break
            window *= 4
    except BadLine:
        return _read_whole(fd, fmt, session_id, path, live)
    torn = not (tail or head).endswith(b"\n")
    read_all = whole or tail_start <= head_end
    if read_all:
        lines = len(head_lines) + len(tail_lines)
    elif size <= COUNTED_UNDER:
        lines = os.pread(fd, size, 0).count(b"\n")  # counted, not parsed: a small file costs little
    else:
        # Estimated from the lines of both ends, as many per byte as there.
        lines = round((len(head_lines) + len(tail_lines)) * size / max(head_end + len(tail), 1))
    total = _totals(fmt, tail_lines or head_lines)
    tokens = total if total is not None else _tokens(fmt, head_lines + tail_lines)
    return AgentSession(
        agent=fmt.name,
        id=session_id,
        path=path,
        state="live" if live else "torn tail" if torn else state,
        lines=lines,
        started=start,
        last_ts=last_ts or start,
        tokens=tokens,
        project=cwd,
        exact=read_all or size <= COUNTED_UNDER,
        tokens_exact=read_all or total is not None,
    )


def _check(lines: list[bytes]) -> None:
    """BadLine when a line is not a JSON object: the lines' syntax is checked in one C call, nothing built."""
    if not all(data.lstrip()[:1] == b"{" for data in lines):
        raise BadLine("it is not a JSON object")
    try:
        _syntax.decode(b"[" + b",".join(lines) + b"]")
    except msgspec.DecodeError:
        raise BadLine("it is not JSON") from None


_syntax = msgspec.json.Decoder(list[msgspec.Raw])


def _start(fmt: Format, lines: list[bytes]) -> tuple[str | None, str | None]:
    """When the session started (its first event's time) and its project, from its first lines."""
    translator = fmt.translator()
    started: str | None = None
    cwd: str | None = None
    for lineno, data in enumerate(lines, 1):
        line = translator.translate(lineno, data)
        cwd = cwd or line.cwd
        if started is None:
            started = next((e.ts for e in line.events if e.ts), None)
        if started is not None and cwd is not None:
            break
    return started, cwd


def _end(fmt: Format, lines: list[bytes]) -> tuple[str, str | None]:
    """How the session ends and its last event's time, read from its last line back until a message says."""
    translator = fmt.translator()
    last_ts: str | None = None
    for lineno in range(len(lines), 0, -1):
        events = translator.translate(lineno, lines[lineno - 1], learn=False).events
        if last_ts is None:
            last_ts = next((e.ts for e in reversed(events) if e.ts), None)
        state = _ending(events)
        if state != "empty":
            return state, last_ts
    return "empty", last_ts


def _tokens(fmt: Format, lines: list[bytes]) -> int:
    """The tokens of the usage these lines record (all of them, for a file read whole)."""
    if fmt.tokens_of is not None:
        return sum(map(fmt.tokens_of, lines))
    translator = fmt.translator()
    total = 0
    for lineno, data in enumerate(lines, 1):
        line = translator.translate(lineno, data)
        for part, event in enumerate(line.events):
            if isinstance(event, Usage) and part not in line.hidden:
                total += event.inputTokens + event.outputTokens
    return total


def _ending(events: list[Event]) -> str:
    """How a session ends, from its last events: its last reply done, a call with no result, or cut short."""
    for event in reversed(events):
        if isinstance(event, Error):
            return "error"
        if not isinstance(event, Message):
            continue
        msg = event.message
        if msg.role == "assistant":
            return "stopped mid-call" if msg.toolCalls else "done"
        return "interrupted"  # a prompt or a tool's result that no reply followed
    return "empty"


def _totals(fmt: Format, lines: list[bytes]) -> int | None:
    for data in reversed(lines):
        total = fmt.totals(data)
        if total is not None:
            return total
    return None


def _read_whole(fd: int, fmt: Format, session_id: str, path: Path, live: bool) -> AgentSession:
    """A file with a damaged line in either end: read whole, to say where reading stops and why."""
    events: list[Event] = []
    cwd: list[str] = []

    def take(_lineno: int, line: Translated, _data: bytes) -> None:
        events.extend(e for i, e in enumerate(line.events) if i not in line.hidden)
        if line.cwd and not cwd:
            cwd.append(line.cwd)

    verdict = scan(fd, fmt, take)
    state = "live" if live else "torn tail" if verdict.torn else "corrupt" if verdict.stop else _ending(events)
    return AgentSession(
        agent=fmt.name,
        id=session_id,
        path=path,
        state=state,
        lines=verdict.lines,
        started=next((e.ts for e in events if e.ts), None),
        last_ts=next((e.ts for e in reversed(events) if e.ts), None),
        tokens=sum(e.inputTokens + e.outputTokens for e in events if isinstance(e, Usage)),
        project=cwd[0] if cwd else None,
        reason=None if verdict.stop is None else str(verdict.stop),
    )
