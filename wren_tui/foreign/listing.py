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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..journal.errors import JournalError, NotASession
from ..journal.store import parse_ts
from ..portable import pread
from . import FORMATS, WREN, own_folder_of
from .contract import Format
from .every_agent import every_session
from .folders import KeptMark, session_files, split_member
from .live import FileKey, alive, changed_at, changed_recently, held_for_writing

# What reads a file (its lines, the journal's event types, msgspec): imported by the first file read, not by a
# listing answered from what was kept of each file (`search/listing_cache.py`).
if TYPE_CHECKING:
    import msgspec

    from ..journal.events import Event
    from .base import Translated
    from .folders import Listed

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
    # What Wren's kept store says of it (`KeptMark.sentence`): "kept; deleted by its agent on DATE"; None: nothing.
    kept: str | None = None

    @property
    def duration_s(self) -> float | None:
        first = parse_ts(self.started) if self.started else None
        last = parse_ts(self.last_ts) if self.last_ts else None
        return None if first is None or last is None else max((last - first).total_seconds(), 0.0)


class Keeps(Protocol):
    """The sessions Wren kept (`keep.found.Kept`), as a listing asks: which files an agent's sessions are (its own,
    and the kept copies of those it lost), and what to say of each."""

    def files(self, fmt: Listed, root: Path, skipped: list[str] | None = None) -> list[Path]: ...

    def mark(self, path: Path) -> KeptMark | None: ...

    def lost_members(self, fmt: Format, database: Path, live: set[str]) -> list[Path]: ...


def marked(row: AgentSession, kept: Keeps | None) -> AgentSession:
    """`row` with what the store says of its session (a kept copy is never live: its agent deleted it)."""
    mark = None if kept is None else kept.mark(row.path)
    if mark is None:
        return row
    if mark.copy and row.state == "live" and FORMATS[row.agent].export is None:
        # Nobody writes the copy but `wren keep` (a moment ago): how the session ends is read, not "live".
        row = describe_agent_session(row.path, FORMATS[row.agent], held=set(), live=False)
    return replace(row, kept=mark.sentence)


def roots(
    agents: Iterable[str], env: Mapping[str, str] | None = None, folder: Path | None = None
) -> list[tuple[Format, Path]]:
    """Each agent's sessions folder: `folder` when given, else the one its own variable names, else its default."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    return [(FORMATS[name], folder if folder is not None else FORMATS[name].folder.root(env, home)) for name in agents]


def owner_of(folder: Path) -> tuple[Format, Path] | None:
    """The agent whose own sessions folder `folder` is or is inside (links resolved), and that folder; else None.

    Wren writes nothing there: no fork, no search index, no listing store.
    """
    owner = own_folder_of(folder)
    return None if owner is None else (FORMATS[owner[0]], owner[1])


def list_every_session(folder: Path, skipped: list[str] | None = None) -> list[AgentSession]:
    """The rows of every other agent's session below `folder` (`every_session`), a file no session Wren reads
    listed as unknown; newest first."""
    rows: list[AgentSession] = []
    for kind, path in every_session(folder, skipped):
        if kind == WREN:
            continue
        if not isinstance(kind, Format):
            rows.append(unknown_session(path))
        elif kind.export is not None:
            rows += describe_exported(path, kind)
        else:
            rows.append(describe_agent_session(path, kind))
    return sorted(rows, key=lambda row: row.started or "", reverse=True)


class Summaries(Protocol):
    """What a listing learned of each file before, kept by whoever lists (`wren ls`: beside search's index).

    A row is kept as the file was when it was stat'ed (`st`) and as if no process were writing it; the
    listing says "live" itself, from the file's time and the processes that hold it.
    """

    def get(self, path: Path, st: os.stat_result) -> AgentSession | None:
        """The row kept for `path` if the file's device, inode, size and modification time are `st`'s."""
        ...

    def put(self, path: Path, st: os.stat_result, row: AgentSession) -> None: ...


def looked_at(paths: Iterable[Path]) -> tuple[dict[Path, os.stat_result], set[FileKey]]:
    """Each file stat'ed once (one gone since it was found: left out), and which of them a process holds open for
    writing (`live.held_for_writing`): what a listing says "live" by."""
    stats: dict[Path, os.stat_result] = {}
    for path in paths:
        try:
            stats[path] = os.stat(path)
        except OSError:
            continue
    return stats, held_for_writing((st.st_dev, st.st_ino) for st in stats.values())


def list_agent_sessions(
    places: Iterable[tuple[Format, Path]],
    skipped: list[str] | None = None,
    known: Summaries | None = None,
    now: float | None = None,
    kept: Keeps | None = None,
) -> list[AgentSession]:
    """Every session in the agents' folders, newest first; `skipped`: as for `session_files`; with `known`, a
    file unchanged since is not read; `now`: the time "live" is judged at (seconds since the epoch; else the
    clock's); with `kept`, the sessions Wren kept that their agents lost are listed too, each marked."""
    found = [
        (fmt, path)
        for fmt, root in places
        for path in (session_files(fmt, root, skipped) if kept is None else kept.files(fmt, root, skipped))
    ]
    exported = []
    for fmt, path in found:
        if fmt.export is None:
            continue
        rows = describe_exported(path, fmt, now, skipped)
        exported += rows
        if kept is not None and fmt.export_all is not None:
            # The sessions its agent deleted from a database it still has: from the newest kept version holding each.
            live = {session for row in rows if (session := split_member(row.path)[1]) is not None}
            for member in kept.lost_members(fmt, path, live):
                exported += describe_exported(member, fmt, now)
    found = [(fmt, path) for fmt, path in found if fmt.export is None]
    stats, held = looked_at(path for _fmt, path in found)
    if known is None:
        rows = [describe_agent_session(path, fmt, held=held, now=now) for fmt, path in found]
    else:
        rows = [remembered(path, fmt, stats.get(path), held, known, now) for fmt, path in found]
    rows += exported
    if kept is not None:
        rows = [marked(row, kept) for row in rows]
    # Times are ISO-8601 UTC, so they sort as text; a session that never said when it started goes last.
    return sorted(rows, key=lambda row: row.started or "", reverse=True)


def describe_exported(
    path: Path, fmt: Format, now: float | None = None, said: list[str] | None = None
) -> list[AgentSession]:
    """The listing rows of the sessions a file of an exported format holds (OpenCode: a database, many).

    Each is read from its export as a JSONL session is from its file. Live: the file changed in the
    last few seconds (aider's), or the session's last record is that recent (a database's).
    """
    try:
        if fmt.export_all is not None and split_member(path)[1] is None:
            sessions = fmt.export_all(path, said)
        else:
            assert fmt.export is not None
            sessions = {path: fmt.export(path)}
    except JournalError as exc:
        return [_unreadable(fmt, fmt.session_id(path), path, str(exc))]
    mtime: float | None = None  # a database's sessions: the time of each one's last record
    if fmt.export_all is None:
        mtime = changed_at(path, fmt)
    from .exported import memory_file

    rows = []
    for where, data in sessions.items():
        fd = memory_file(data)
        try:
            row = _summary(fd, fmt, fmt.session_id(where), where, len(data), live=False)
        finally:
            os.close(fd)
        last = parse_ts(row.last_ts) if row.last_ts else None
        when = mtime if mtime is not None else last.timestamp() if last is not None else None
        if when is not None and changed_recently(when, now):
            row = replace(row, state="live")
        rows.append(row)
    return rows


def remembered(
    path: Path, fmt: Listed, st: os.stat_result | None, held: set[FileKey], known: Summaries, now: float | None = None
) -> AgentSession:
    """A file's row from `known` when it is unchanged, else read (and kept); "live" said as of `now` (else now).

    `fmt` may be the agent's `Home`: its whole Format (its reader) is loaded only when the file must be read.
    """
    if st is None:
        return describe_agent_session(path, whole_format(fmt), held=held, now=now)
    row = known.get(path, st)
    if row is None:
        row = describe_agent_session(path, whole_format(fmt), held=set(), live=False)
        if row.state == "unreadable":
            return row
        known.put(path, st, row)
    if alive(st, held, now):
        return dataclasses.replace(row, state="live")
    return row


def whole_format(listed: Listed) -> Format:
    """The agent's whole Format, to read one of its files: its module (and msgspec) imported now, not to list."""
    return listed if isinstance(listed, Format) else FORMATS[listed.name]


def describe_agent_session(
    path: Path,
    fmt: Format,
    *,
    held: set[FileKey] | None = None,
    live: bool | None = None,
    now: float | None = None,
) -> AgentSession:
    """One session's listing row, from its head and its tail. `held`: files a process holds open for writing;
    `live`: whether it is live, when the caller says so, else judged at `now` (else the clock's)."""
    if fmt.export is not None:
        rows = describe_exported(path, fmt, now)
        if len(rows) == 1:
            return rows[0]
        return _unreadable(fmt, fmt.session_id(path), path, f"{path}: holds {len(rows)} sessions; name one as PATH#ID")
    session_id = fmt.session_id(path)
    from ..journal.reader import open_for_reading  # a file read: not by a listing answered from what was kept

    try:
        fd = open_for_reading(path)
    except JournalError as exc:
        return _unreadable(fmt, session_id, path, str(exc))
    try:
        st = os.fstat(fd)
        if live is None:
            live = alive(st, held, now)
        return _summary(fd, fmt, session_id, path, st.st_size, live)
    except OSError as exc:
        return _unreadable(fmt, session_id, path, f"{path}: {exc.strerror or exc}")
    finally:
        os.close(fd)


def unknown_session(path: Path) -> AgentSession:
    """A file in a folder of sessions that is no session Wren reads: listed as unknown, never guessed at."""
    from . import what_wren_opens

    reason = str(NotASession(path, what_wren_opens()))
    return AgentSession("unknown", path.stem, path, "unknown", 0, None, None, 0, None, reason)


def _unreadable(fmt: Format, session_id: str, path: Path, reason: str) -> AgentSession:
    return AgentSession(fmt.name, session_id, path, "unreadable", 0, None, None, 0, None, reason)


def _summary(fd: int, fmt: Format, session_id: str, path: Path, size: int, live: bool) -> AgentSession:
    from .base import BadLine  # a file read: the translators' helpers

    if size == 0:
        return AgentSession(fmt.name, session_id, path, "live" if live else "empty", 0, None, None, 0, None)
    whole = size <= 2 * WINDOW
    head = pread(fd, size if whole else WINDOW, 0)
    while not whole and b"\n" not in head and len(head) < min(size, _HEAD_MAX):
        head += pread(fd, WINDOW, len(head))
    head_end = head.rfind(b"\n") + 1
    head_lines = head[:head_end].split(b"\n")[:-1]
    window = WINDOW
    counted = None if whole or size > COUNTED_UNDER else pread(fd, size, 0)
    try:
        # A file up to COUNTED_UNDER has every line checked, so its row says what `wren log` says of it.
        _check(head[:head_end] if counted is None else counted[: counted.rfind(b"\n") + 1])
        start, cwd = _start(fmt, head_lines)
        while True:
            tail_start = max(size - window, head_end)
            tail = b"" if whole else pread(fd, size - tail_start, tail_start)
            if tail and tail_start > head_end:
                tail = tail[tail.find(b"\n") + 1 :]  # the window began inside a line
            tail_lines = tail.split(b"\n")[:-1]
            _check(tail[: tail.rfind(b"\n") + 1])
            state, last_ts = _end(fmt, tail_lines or head_lines)
            # A tail of the client's bookkeeping alone (a long prompt record) says nothing of the ending: look further.
            if state != "empty" or tail_start <= head_end or window >= _HEAD_MAX:
                break
            window *= 4
        total = _totals(fmt, tail_lines or head_lines)
        tokens = total if total is not None else _tokens(fmt, head_lines + tail_lines)
    except BadLine:
        # A line that may not read (or does not): the file read whole, as `wren log` reads it, says.
        return _read_whole(fd, fmt, session_id, path, live)
    torn = not (tail or head).endswith(b"\n")
    read_all = whole or tail_start <= head_end
    counted_all = False
    if read_all:
        lines = len(head_lines) + len(tail_lines)
    elif counted is not None:
        lines = counted.count(b"\n")
    elif len(head_lines) + len(tail_lines) < _FEW_LINES:
        # Lines too big for their ends to say how many there are (a few huge records): counted, newline by
        # newline; such a file is rare, and its few lines make the count a read of its bytes and no more.
        from .reader import count_lines

        lines = count_lines(fd, size)
        counted_all = True
    else:
        # Estimated from the lines of both ends, as many per byte as there.
        lines = round((len(head_lines) + len(tail_lines)) * size / max(head_end + len(tail), 1))
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
        exact=read_all or counted_all or size <= COUNTED_UNDER,
        tokens_exact=read_all or total is not None,
    )


# Fewer lines than this in a big file's two ends, and its line count is counted rather than estimated.
_FEW_LINES = 64


def _check(lines: bytes) -> None:
    """BadLine when a line of `lines` (whole lines, each ended by its newline) may not read as the agent's reader
    reads it: the file is then read whole (`_read_whole`), which says whether and where reading stops.

    Each line must be one JSON object and the bytes UTF-8: checked in C, nothing built but an empty
    object per line. The translators skip fields they do not know unchecked, so a line with bad bytes
    there still reads: only the whole reading can say so.
    """
    import msgspec

    from .base import BadLine

    try:
        objects = len(_objects().decode_lines(lines))
    except (msgspec.DecodeError, RecursionError):  # ValidationError (not an object) is a DecodeError
        raise BadLine("it is not a JSON object") from None
    if objects != lines.count(b"\n"):
        raise BadLine("it is empty")  # decode_lines skips a blank line; the agent's reader does not
    if not lines.isascii():
        try:
            lines.decode("utf-8")
        except UnicodeDecodeError:
            raise BadLine("its bytes are not valid UTF-8") from None


@cache
def _objects() -> msgspec.json.Decoder[Any]:
    """A decoder of any JSON object, its members skipped unread (made at the first check)."""
    import msgspec

    class _Object(msgspec.Struct):
        """Any JSON object: its members are skipped, unread."""

    return msgspec.json.Decoder(_Object)


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
        state = ending(events, fmt)
        if state != "empty":
            return state, last_ts
    return "empty", last_ts


def _tokens(fmt: Format, lines: list[bytes]) -> int:
    """The tokens of the usage these lines record (all of them, for a file read whole)."""
    if fmt.tokens_of is not None:
        return sum(map(fmt.tokens_of, lines))
    from ..journal.events import Usage

    translator = fmt.translator()
    total = 0
    for lineno, data in enumerate(lines, 1):
        line = translator.translate(lineno, data)
        for part, event in enumerate(line.events):
            if isinstance(event, Usage) and part not in line.hidden:
                total += event.input_tokens + event.output_tokens
    return total


# A session whose format writes a call only with its result, ending in a reply: done, or stopped in a tool.
LAST_REPLY = "last: reply"


def ending(events: list[Event], fmt: Format) -> str:
    """How a session ends, from its last events: its last reply done (or only its last record, where calls come with
    their results), a call with no result, or cut short."""
    from ..journal.events import Error, Message, Usage

    for event in reversed(events):
        if isinstance(event, Error):
            return "error"
        if isinstance(event, Usage) and not fmt.open_calls_recorded:
            return LAST_REPLY  # a reply with no words: its calls, if any, come only with their results
        if not isinstance(event, Message):
            continue
        msg = event.message
        if msg.role == "assistant":
            if msg.tool_calls:
                return "stopped mid-call"
            return "done" if fmt.open_calls_recorded else LAST_REPLY
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

    from ..journal.events import Usage
    from .reader import scan  # the translating reader: only for a file read whole, not by every listing

    verdict = scan(fd, fmt, take)
    state = "live" if live else "torn tail" if verdict.torn else "corrupt" if verdict.stop else ending(events, fmt)
    return AgentSession(
        agent=fmt.name,
        id=session_id,
        path=path,
        state=state,
        lines=verdict.lines,
        started=next((e.ts for e in events if e.ts), None),
        last_ts=next((e.ts for e in reversed(events) if e.ts), None),
        tokens=sum(e.input_tokens + e.output_tokens for e in events if isinstance(e, Usage)),
        project=cwd[0] if cwd else None,
        reason=None if verdict.stop is None else str(verdict.stop),
    )
