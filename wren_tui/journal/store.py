"""Where journals live: session ids, the journals folder, listing newest first with each state.

Its names for where journals are and what they are called (`journals_dir`, `journal_paths`, `resolve`, `latest`,
`SUFFIX`, `is_session_id`, `project_label`, `parse_ts`, ...) read no journal, and load no reader, no event type
(msgspec), no datetime and no zlib: the reader, the event types, the calls and the locks are loaded by the first
journal read for its row (`describe_session`, `list_sessions`, `state_of`), datetime by the first `parse_ts`, so a
command that only finds sessions (a warm `wren search`) never loads them.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Mapping
from functools import cache
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeGuard, cast

from ..portable import open_read_only, pread
from ..records import Frozen
from .errors import JournalError, SessionNotFound
from .visible import visible

if TYPE_CHECKING:
    from datetime import datetime, tzinfo

    # Bound at run time by `_load_reading`, below, when a journal is first read for its row.
    from .calls import open_calls
    from .events import Event, Fork, RunEnd, RunStart
    from .locks import lock_holder, read_locks
    from .reader import read_head_and_tail, scan_events
    from .verdict import Stop

    RunMark = RunStart | RunEnd | Fork
    """The events that say where a session's runs start and end: the last one says how its last run ended."""

SUFFIX = ".jsonl"
# Another tool's session that is one JSON document (an ATIF trajectory), opened by path.
DOCUMENT_SUFFIX = ".json"
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"  # string.ascii_lowercase + string.digits


@cache
def _session_id() -> re.Pattern[str]:
    return re.compile(r"^s-\d{8}-\d{6}-[a-z0-9]{4}$")


def is_session_id(text: str) -> bool:
    """Whether `text` is a Wren session's id (`s-20260102-030405-ab12`): its pattern compiled when first asked, not
    by every command that imports the store (a search of another agent's sessions never asks)."""
    return _session_id().match(text) is not None


State = Literal[
    "live",
    "done",
    "cancelled",
    "error",
    "limit",
    "interrupted",
    "outcome unknown",
    "forked",  # a fork made and never resumed: nothing of its own has run
    "torn tail",
    "corrupt",
    "empty",
    "unreadable",
    "unknown",  # not a journal: another agent's session, or a file Wren does not read (said by `wren ls`)
]


def new_session_id(now: datetime | None = None) -> str:
    """s-YYYYMMDD-HHMMSS-xxxx: UTC time so names sort by time, four random characters for ties."""
    import secrets  # here: its hmac and hashlib (OpenSSL) are for a new session, not for every reader of a journal
    from datetime import UTC, datetime

    now = now or datetime.now(UTC)

    tail = "".join(secrets.choice(_ALPHABET) for _ in range(4))
    return f"s-{now:%Y%m%d-%H%M%S}-{tail}"


def journals_dir(
    option: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path:
    """--dir, else WREN_DIR, else $XDG_STATE_HOME/wren/journals, else ~/.local/state/wren/journals.

    The default is outside every workspace, so the agent's own commands (`rm -rf`, `git clean`) do
    not reach it. A --dir or WREN_DIR that is relative is relative to where it was typed.
    """
    env = os.environ if env is None else env
    chosen = option or env.get("WREN_DIR")
    if chosen:
        path = Path(os.path.expanduser(chosen))
        return path if path.is_absolute() else (cwd or Path.cwd()) / path
    state = env.get("XDG_STATE_HOME", "")
    # The XDG spec says a relative value is to be ignored.
    if not os.path.isabs(state):
        home = env.get("HOME") or str(Path.home())
        state = os.path.join(home, ".local", "state")
    return Path(state) / "wren" / "journals"


def session_path(folder: Path, session_id: str) -> Path:
    if not is_session_id(session_id):
        raise SessionNotFound(f"{session_id!r} is not a session id (expected s-YYYYMMDD-HHMMSS-xxxx)")
    return folder / f"{session_id}{SUFFIX}"


def session_id_of(path: Path) -> str:
    name = path.name
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name


def resolve(folder: Path, ref: str) -> Path:
    """The journal a person means: a session id in `folder`, or a path to a .jsonl file.

    Ids never escape the folder, and only a .jsonl name is taken as a path, so a mistyped id never
    opens some other file. A bare file name is also looked for in `folder`.

    Raises:
        SessionNotFound: no such session or file, not an id or .jsonl path, a link, or not a file.
    """
    if "\x00" in ref:
        raise SessionNotFound("a session id cannot contain a NUL byte")
    if is_session_id(ref):
        path = folder / f"{ref}{SUFFIX}"
        if not os.path.lexists(path):
            raise SessionNotFound(f"no session {ref} in {folder}")
        return _journal_file(path)
    candidate = Path(os.path.expanduser(ref))
    # Only a .jsonl name is taken as a path, so a mistyped id cannot open some other file; a .json one
    # too, for a trajectory (ATIF) that the commands then open only if its content says it is one.
    if candidate.suffix in (SUFFIX, DOCUMENT_SUFFIX):
        if not os.path.lexists(candidate):
            beside = folder / candidate.name
            # A bare file name (as `wren ls` shows ids) is looked for in the journals folder too.
            if candidate.name == ref and os.path.lexists(beside):
                return _journal_file(beside)
            also = f" (nor in {folder})" if candidate.name == ref else ""
            what = "journal file" if candidate.suffix == SUFFIX else "file"
            raise SessionNotFound(f"{candidate}: no such {what}{also}")
        return _journal_file(candidate)
    raise SessionNotFound(
        f"{ref!r} is neither a session id (s-YYYYMMDD-HHMMSS-xxxx) nor a path to a .jsonl journal "
        "(or a .json ATIF trajectory)"
    )


def _journal_file(path: Path) -> Path:
    """The same refusals for an id and a path: a journal is a regular file, never reached through a link."""
    if path.is_symlink():
        raise SessionNotFound(f"{path}: is a symbolic link; journals are opened only directly")
    if not path.is_file():
        raise SessionNotFound(f"{path}: not a regular file, so not a journal")
    return path


def journal_paths(folder: Path, misnamed: list[Path] | None = None) -> list[Path]:
    """The journals in a folder, newest first (names sort by time).

    Args:
        misnamed: Given, it receives what has a session's name but is no regular file (a link, a
            FIFO, a folder), for a listing to show as unreadable rather than leave out.
    """
    try:
        names = []
        for entry in os.scandir(folder):
            if not entry.name.endswith(SUFFIX):
                continue
            if entry.is_file(follow_symlinks=False):
                names.append(entry.name)
            elif misnamed is not None and is_session_id(entry.name[: -len(SUFFIX)]):
                misnamed.append(folder / entry.name)
    except FileNotFoundError:
        return []
    except NotADirectoryError:
        raise JournalError(f"{folder}: not a folder") from None
    except OSError as exc:
        raise JournalError(f"{folder}: {_why(exc)}, so its journals cannot be listed") from None
    return [folder / n for n in sorted(names, reverse=True)]


def _some_sessions(folder: Path) -> list[Path]:
    """`_sessions`, or SessionNotFound where there are none."""
    paths = _sessions(folder)
    if not paths:
        raise SessionNotFound(f"no sessions in {folder}")
    return paths


def latest(folder: Path) -> Path:
    """The newest session in `folder`.

    Raises:
        SessionNotFound: there is none.
        JournalError: the folder cannot be listed.
    """
    return _some_sessions(folder)[0]


def latest_of_project(folder: Path, project: Path) -> Path:
    """The newest session in `folder` whose last run worked in `project` (each journal's head and tail read).

    Raises:
        SessionNotFound: there is none.
        JournalError: the folder cannot be listed.
    """
    for path in _some_sessions(folder):
        if project_of(path) == str(project):
            return path
    listing = "wren ls" if folder == journals_dir() else f"wren ls --dir {folder}"
    raise SessionNotFound(f"no session of {project} in {folder}; `{listing}` lists them all")


def _sessions(folder: Path) -> list[Path]:
    """The journals of `folder` named as sessions, newest first."""
    return [p for p in journal_paths(folder) if is_session_id(session_id_of(p))]


def project_of(path: Path) -> str | None:
    """The folder the session's last run worked in (its last run_start's cwd); None if unreadable or none.

    A journal over WHOLE_UNDER bytes is judged by its head and tail, as in its listing row.
    """
    try:
        return describe_session(path).project
    except (JournalError, OSError):
        return None


def in_project(project: str | None, folder: Path) -> bool:
    """Whether a session's project is `folder` or a folder inside it."""
    return project is not None and Path(project).is_relative_to(folder)


def project_label(project: str | None, width: int) -> str:
    """A project as a listing shows it: ~ for the home folder, whole folders cut from the head, made visible."""
    if not project:
        return "-"
    home = os.path.expanduser("~")
    text = "~" + project[len(home) :] if home != "/" and (project + "/").startswith(home + "/") else project
    text = visible(text)  # the placeholders every other listing shows (␛, <U+202E>)
    parts = text.split("/")
    while len(text) > width and len(parts) > 1:
        parts = parts[1:]
        text = "…/" + "/".join(parts)
    return text if len(text) <= width else "…" + text[len(text) - width + 1 :]


class SessionInfo(Frozen):
    __slots__ = (
        "events",
        "exact",
        "fork_at",
        "forked_from",
        "id",
        "last_ts",
        "path",
        "project",
        "reason",
        "started",
        "state",
        "stop",
        "tokens",
    )
    id: str
    path: Path
    state: State
    events: int
    started: str | None
    last_ts: str | None
    tokens: int
    forked_from: str | None
    fork_at: int | None
    # Why the row is corrupt, torn or unreadable, as a sentence; for corrupt and torn, `stop` holds its parts.
    reason: str | None
    # False for a big journal summarised from its head and tail: tokens, open calls and the fork
    # event count only there, and events is the last seq.
    exact: bool
    # The workspace of the last run (its run_start's cwd): the session's project.
    project: str | None
    # Where and why reading stopped (corrupt or torn tail), as the reader said it; None otherwise.
    stop: Stop | None

    def __init__(
        self,
        id: str,
        path: Path,
        state: State,
        events: int,
        started: str | None,
        last_ts: str | None,
        tokens: int,
        forked_from: str | None,
        fork_at: int | None,
        reason: str | None,
        exact: bool = True,
        project: str | None = None,
        stop: Stop | None = None,
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "id", id)
        set_field(self, "path", path)
        set_field(self, "state", state)
        set_field(self, "events", events)
        set_field(self, "started", started)
        set_field(self, "last_ts", last_ts)
        set_field(self, "tokens", tokens)
        set_field(self, "forked_from", forked_from)
        set_field(self, "fork_at", fork_at)
        set_field(self, "reason", reason)
        set_field(self, "exact", exact)
        set_field(self, "project", project)
        set_field(self, "stop", stop)

    @property
    def duration_s(self) -> float | None:
        if not self.started or not self.last_ts:
            return None
        first, last = parse_ts(self.started), parse_ts(self.last_ts)
        return None if first is None or last is None else (last - first).total_seconds()


# datetime's parser and UTC, loaded by the first `parse_ts` (a listing's durations, a search by time), not by every
# command that only finds journals; kept here so that each later call costs no import statement.
_TIME: tuple[Callable[[str], datetime], tzinfo] | None = None


def parse_ts(ts: str) -> datetime | None:
    """A journal ts as an aware UTC time; None for a ts in a shape this version cannot read.

    Lines from other writers may carry any string as ts, and the reader keeps them.
    """
    global _TIME
    if _TIME is None:
        from datetime import UTC, datetime

        _TIME = (datetime.fromisoformat, UTC)
    fromisoformat, utc = _TIME
    try:
        moment = fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=utc)


WHOLE_UNDER = 1 << 20  # journals up to this size are read whole for their listing row


def describe_session(path: Path, locks: str | None = None) -> SessionInfo:
    """One journal's listing row, derived from its events and whether a writer holds it.

    A journal over WHOLE_UNDER bytes whose head and tail read cleanly is summarised from them, so a
    folder of big journals lists at once (`exact` is then False); any problem there and it is read
    whole, to say why. A journal that cannot be opened or read gets an `unreadable` row saying why.

    Args:
        path: The journal.
        locks: The system's lock table already read (`locks.read_locks()`), when listing many.

    Raises:
        SessionNotFound: the journal is gone.
    """
    if not _READING:
        _load_reading()
    try:
        if path.stat().st_size > WHOLE_UNDER:
            ends = read_head_and_tail(path)
            if ends is not None:
                return _row(path, ends.head + ends.tail, None, exact=False, locks=locks)
        events: list[Event] = []
        result = scan_events(path, lambda chunk, _lines: events.extend(chunk))
    except FileNotFoundError:
        raise SessionNotFound(f"{path}: no such journal") from None
    except JournalError as exc:
        if not os.path.lexists(path):
            raise SessionNotFound(f"{path}: no such journal") from None
        return _unreadable(path, str(exc))
    except OSError as exc:
        return _unreadable(path, f"{path}: {_why(exc)}")
    return _row(path, events, result.stop, exact=True, locks=locks)


def _unreadable(path: Path, reason: str) -> SessionInfo:
    return SessionInfo(
        id=session_id_of(path),
        path=path,
        state="unreadable",
        events=0,
        started=None,
        last_ts=None,
        tokens=0,
        forked_from=None,
        fork_at=None,
        reason=reason,
    )


# The reader, the event types, the locks and the calls, bound here by the first journal read for its row (each function
# that reads one calls `_load_reading` first): a command that only finds journals never loads them, and a listing
# loads them once, not once a journal. isinstance as C functions, so filter() and map() in `_row` run with no Python
# frame per event.
_READING = False
_is_usage: Callable[[object], bool]
_is_fork: Callable[[object], bool]
_is_run_start: Callable[[object], bool]
_is_run_mark: Callable[[object], TypeGuard[RunMark]]


def _load_reading() -> None:
    global _READING, open_calls, Fork, RunEnd, lock_holder, read_locks, read_head_and_tail, scan_events
    global _is_usage, _is_fork, _is_run_start, _is_run_mark
    from .calls import open_calls
    from .events import Fork, RunEnd, RunStart, Usage
    from .locks import lock_holder, read_locks
    from .reader import read_head_and_tail, scan_events

    _is_usage = cast("Callable[[object], bool]", Usage.__instancecheck__)
    _is_fork = cast("Callable[[object], bool]", Fork.__instancecheck__)
    _is_run_start = cast("Callable[[object], bool]", RunStart.__instancecheck__)
    _is_run_mark = cast("Callable[[object], TypeGuard[RunMark]]", lambda e: type(e) in (RunStart, RunEnd, Fork))
    _READING = True


_TOKENS = attrgetter("input_tokens", "output_tokens")


def _row(path: Path, events: list[Event], stop: Stop | None, *, exact: bool, locks: str | None = None) -> SessionInfo:
    tokens = sum(map(sum, map(_TOKENS, filter(_is_usage, events))))
    # The last fork event is this journal's own; earlier ones came with a forked parent's prefix.
    fork = cast("Fork | None", next(filter(_is_fork, reversed(events)), None))
    start = cast("RunStart | None", next(filter(_is_run_start, reversed(events)), None))
    state = state_of(
        stop,
        live=lambda: lock_holder(path, locks) is not None,
        empty=not events,
        uncertain=lambda: _uncertain(events),
        last_run=next(filter(_is_run_mark, reversed(events)), None),
    )
    # A fork's own life starts at its fork event; the events before it are its parent's.
    started = fork.ts if fork else events[0].ts if events else None
    return SessionInfo(
        id=session_id_of(path),
        path=path,
        state=state,
        events=(len(events) if exact else events[-1].seq) if events else 0,
        started=started,
        last_ts=events[-1].ts if events else None,
        tokens=tokens,
        forked_from=fork.from_ if fork else None,
        fork_at=fork.at_seq if fork else None,
        reason=None if stop is None else str(stop),
        exact=exact,
        project=(fork.workspace if fork and fork.workspace and (start is None or fork.seq > start.seq) else None)
        or (start.cwd if start else None),
        stop=stop,
    )


def _uncertain(events: list[Event]) -> bool:
    """Some call is left open that resume would refuse to guess about."""
    return any(call.uncertain for call in open_calls(events))


def __getattr__(name: str) -> object:
    """`RunMark` at run time (for a caller that imports it), made on first use: this module loads no event type."""
    if name == "RunMark":
        from .events import Fork, RunEnd, RunStart

        mark = RunStart | RunEnd | Fork
        globals()[name] = mark  # found once; later lookups do not come here
        return mark
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def state_of(
    stop: Stop | None,
    *,
    live: Callable[[], bool],
    empty: bool,
    uncertain: Callable[[], bool],
    last_run: RunMark | None,
) -> State:
    """A session's state from what its reader found: the one word `wren ls`, the viewer's list and its session
    screen say.

    Args:
        stop: Where and why reading stopped (a corrupt line, a torn tail), or None.
        live: Whether a writer holds it (asked only when the state is not already corrupt).
        empty: It holds no event.
        uncertain: Whether some call is left open that resume would refuse to guess about.
        last_run: Its last run_start, run_end or fork event: how its last run ended (interrupted when it never
            did; forked when a fork was made and never resumed).
    """
    if not _READING:
        _load_reading()
    if stop is not None and not stop.torn:
        return "corrupt"
    if live():
        return "live"
    if stop is not None:
        return "torn tail"
    if empty:
        return "empty"
    if uncertain():
        return "outcome unknown"
    if isinstance(last_run, RunEnd):
        return last_run.reason
    if isinstance(last_run, Fork):
        return "forked"
    return "interrupted"


def list_sessions(folder: Path) -> list[SessionInfo]:
    """Every journal's row (`describe_session`), newest first; one that cannot be read is listed as unreadable.

    A folder that does not exist holds no sessions.

    Raises:
        JournalError: `folder` is not a folder or cannot be listed.
    """
    if not _READING:
        _load_reading()
    misnamed: list[Path] = []
    paths = journal_paths(folder, misnamed)
    locks = read_locks()  # once for the folder, not once per journal (None: each journal is asked)
    rows = []
    # A link or a FIFO named like a session is listed as unreadable, with why, never silently left out.
    for path in sorted([*paths, *misnamed], key=lambda p: p.name, reverse=True):
        try:
            rows.append(describe_session(path, locks))
        except SessionNotFound:
            continue  # deleted between the folder's listing and its reading: it is no longer there
    return rows


def _why(exc: OSError) -> str:
    """An OSError as the few words a person reads ("permission denied"), without the errno number."""
    return exc.strerror.lower() if exc.strerror else str(exc)


def write_problem(folder: Path, exc: OSError) -> str:
    """Why no journal can be written in `folder`, in words that begin with its path (the caller says what to do)."""
    if exc.errno in (errno.ENOTDIR, errno.EEXIST) or (os.path.lexists(folder) and not folder.is_dir()):
        return f"{folder} is not a folder"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"{folder}: permission denied (this user cannot write there)"
    if exc.errno == errno.EROFS:
        return f"{folder} is on a read-only file system"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return f"{folder}: the disk is full ({_why(exc)})"
    return f"{folder}: a journal cannot be written there ({_why(exc)})"


def starts_as_journal(path: Path) -> bool:
    """True when the file at `path` begins as every line Wren writes does (`{"seq":`): a Wren journal,
    maybe damaged past that. The one cheap test, before any other agent's format is asked (`foreign.kind_of`)."""
    from ._framing import LINE_START  # here: the framing's CRC (zlib) is for reading lines, not for finding journals

    try:
        fd = open_read_only(path)
    except OSError:
        return False
    try:
        return pread(fd, len(LINE_START), 0) == LINE_START
    except OSError:
        return False
    finally:
        os.close(fd)
