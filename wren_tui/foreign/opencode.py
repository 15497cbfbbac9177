"""OpenCode's sessions (one SQLite database, `~/.local/share/opencode/opencode.db`), read as Wren events.

OpenCode keeps every session in one database in WAL mode. Its `event` table is the session's
history: per session a `seq` from 0, each row a change (`session.updated.1`, `message.updated.1`,
`message.part.updated.1`, ...) holding the whole record after it. A tool call is one `tool` part
updated in place (`pending`, `running`, then `completed` or `error`); an answer's text part is
written empty, then whole once its stream ends. The `part` table keeps only the last state; the
event rows keep every one, so a call's start is known apart from its end.

The database is read through a private copy (`snapshot`), never opened with SQLite itself. A
session is exported as lines (`export`), one per event row in order, each saying what the row adds
to the conversation (`adds`: a prompt, an answer's finished text, a call asked, a call's result,
an error), worked out here from the rows before it; the translator turns a line into events from
its bytes alone. Rows only ever come after the last, so the lines of a live session only grow.

A session is named `DB#SESSION_ID`; the database alone names its only session.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from ..journal.errors import JournalError
from ..journal.events import Event, ToolCall
from . import make
from .base import (
    MEMBER,
    TOO_DEEP,
    BadLine,
    Folder,
    Format,
    Kinds,
    Progress,
    Tail,
    Translated,
    Translator,
    head_of,
    member_path,
    split_member,
    variable_or_home,
)
from .document import decode_export
from .snapshot import SQLITE_HEADER, DatabaseCopy, Key, borrowed, kept, snapshot, tables_in_file

NAME = "opencode"
LABEL = "OpenCode"
ENV = "XDG_DATA_HOME"
SUFFIX = ".db"
WHERE = "OpenCode keeps every session in one database (one of them is named DB#ID)"
DB_NAME = "opencode.db"
T = TypeVar("T")

# The tables a database must have to be OpenCode's (positive evidence, not its name).
_TABLES = frozenset({"session", "message", "part", "event", "event_sequence"})
# The tables Kilo Code CLI (a fork of OpenCode, `kilo.db`) adds to OpenCode's: a database with them is Kilo's.
KILO_TABLES = frozenset({"kilo_board", "kilo_board_message"})
MAPPED = ("session.created.1", "message.part.updated.1", "message.updated.1")
# A part removed is only ever one never shown (Kilo's transient spinner text, `_transient`).
SKIPPED = ("session.updated.1", "message.part.removed.1")
_KNOWN = frozenset({*MAPPED, *SKIPPED})


@dataclass(frozen=True)
class Schema:
    """Whose database of OpenCode's layout it is, told by its tables: OpenCode's own, or a fork's that adds some."""

    name: str  # as --agent takes it
    label: str  # as a person knows the agent
    tables: frozenset[str]  # the tables it must have
    others: frozenset[str] = frozenset()  # tables it never has (they are a fork's)

    def fits(self, tables: set[str] | frozenset[str]) -> bool:
        return tables >= self.tables and not tables & self.others


OPENCODE = Schema(NAME, LABEL, _TABLES, KILO_TABLES)
KILO = Schema("kilo", "Kilo Code CLI", _TABLES | KILO_TABLES)


# --- naming a session ---------------------------------------------------------------------------


def session_id(path: Path, schema: Schema = OPENCODE) -> str:
    """The id after `#`; for the database alone, its only session's (its name when it has not exactly one)."""
    db, session = split_member(path)
    if session is not None:
        return session
    try:
        with kept(db) as snap:
            ids = snap.query(lambda conn: _ids(conn) if is_opencode(conn, db, schema) else [])
    except JournalError:
        return db.name
    return ids[0] if len(ids) == 1 else db.name


# --- reading the database's copy ----------------------------------------------------------------


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")}


def _has_tables(conn: sqlite3.Connection, schema: Schema = OPENCODE) -> bool:
    return schema.fits(_tables(conn))


def is_opencode(conn: sqlite3.Connection, db: Path | str = "the database", schema: Schema = OPENCODE) -> bool:
    """Whether the database has the tables of `schema` (OpenCode's, or Kilo's); JournalError when they are there
    but the ones read are not plain tables of stored columns (a generated column, a virtual table: SQL of the
    file's own that reading would run)."""
    if not _has_tables(conn, schema):
        return False
    for table in sorted(_TABLES):
        sql = conn.execute("select sql from sqlite_master where type = 'table' and name = ?", (table,)).fetchone()
        if sql is None or not isinstance(sql[0], str) or sql[0].lstrip()[:14].lower() == "create virtual":
            raise JournalError(f"{db}: its {table} table is a virtual table, not OpenCode's; Wren does not read it")
        for column in conn.execute(f'pragma table_xinfo("{table}")'):
            if column[6] != 0:  # 2 or 3: generated (computed by the schema's SQL on each read); 1: hidden
                raise JournalError(
                    f"{db}: its column {table}.{column[1]} is computed by the database's own SQL (a "
                    "generated column), which OpenCode never writes; Wren runs no SQL of a file's, so it does not "
                    "read it"
                )
    return True


def _ids(conn: sqlite3.Connection) -> list[str]:
    """The sessions' ids, newest first (an id that is not UTF-8 text names no session a person can name: left out)."""
    ids = []
    for (raw,) in conn.execute("select cast(id as blob) from session order by time_created desc, id"):
        try:
            ids.append(bytes(raw).decode())
        except (UnicodeDecodeError, TypeError):
            continue
    return ids


def _rows(
    conn: sqlite3.Connection, session: str | None, bad: list[int] | None = None
) -> Iterator[tuple[str, int, str, bytes]]:
    """(session, seq, type, data) of the event rows of `session` (or every session), in order. Every column is
    read as bytes: a row whose session id is not UTF-8 text is of no session (counted in `bad`), and a type
    that is not is read with its bad bytes replaced (it is then of no kind Wren knows)."""
    if session is None:
        rows = conn.execute(
            "select cast(aggregate_id as blob), seq, cast(type as blob), cast(data as blob) from event"
            " order by aggregate_id, seq"
        )
    else:
        rows = conn.execute(
            "select cast(aggregate_id as blob), seq, cast(type as blob), cast(data as blob) from event"
            " where aggregate_id = ? order by seq",
            (session,),
        )
    for raw_id, seq, raw_type, data in rows:
        try:
            owner = bytes(raw_id).decode()
        except (UnicodeDecodeError, TypeError):
            if bad is not None:
                bad.append(seq)
            continue
        kind = bytes(raw_type or b"").decode("utf-8", "replace")
        yield owner, seq, kind, data if data is not None else b"null"


def _one(conn: sqlite3.Connection, db: Path, session: str | None, schema: Schema = OPENCODE) -> str:
    if not is_opencode(conn, db, schema):
        if schema is OPENCODE and KILO.fits(_tables(conn)):
            raise JournalError(f"{db}: a Kilo Code CLI database (OpenCode's tables and Kilo's), not OpenCode's")
        raise JournalError(
            f"{db}: a SQLite database, but not {schema.label}'s (it has no session, part and event tables)"
        )
    ids = _ids(conn)
    if session is None:
        if len(ids) == 1:
            return ids[0]
        if not ids:
            raise JournalError(f"{db}: {_an(schema.label)} database that holds no session yet")
        raise JournalError(
            f"{db}: {_an(schema.label)} database of {len(ids)} sessions; name one as {db}{MEMBER}ID "
            f"(`wren ls --agent {schema.name} --dir {db.parent}` lists them)"
        )
    if session not in ids:
        raise JournalError(f"{db}: no {schema.label} session {session} in it")
    return session


def _an(label: str) -> str:
    return f"{'an' if label[:1] in 'AEIOU' else 'a'} {label}"


def export(
    path: Path, snap: DatabaseCopy | None = None, progress: Progress | None = None, schema: Schema = OPENCODE
) -> bytes:
    """The session `path` names, as lines (one per event row, each saying what it adds), from a private copy."""
    db, session = split_member(path)

    def read(conn: sqlite3.Connection) -> bytes:
        chosen = _one(conn, db, session, schema)
        rows = _rows(conn, chosen)
        if progress is not None:
            total = conn.execute("select count(*) from event where aggregate_id = ?", (chosen,)).fetchone()[0]
            rows = _told(rows, int(total), progress)
        return b"".join(Exporter().lines(rows))

    if snap is not None:
        return snap.query(read)
    with snapshot(db) as snap_:
        return snap_.query(read)


class Follower:
    """The session's export again and again from one snapshot, whose copy of the database is kept while unchanged;
    the last export is kept while neither the database nor its WAL changed."""

    def __init__(self, path: Path, schema: Schema = OPENCODE) -> None:
        self.path = path
        self.schema = schema
        self._snap: DatabaseCopy | None = None
        self._keys: tuple[Key, Key] | None = None
        self._last = b""

    @property
    def snap(self) -> DatabaseCopy:
        if self._snap is None:  # at the first export: the copy recognising and naming the session took, if still right
            self._snap = borrowed(split_member(self.path)[0])
        return self._snap

    def __call__(self, progress: Progress | None = None) -> bytes:
        keys = self.snap.keys()
        if keys != self._keys:
            self._last = export(self.path, self.snap, progress, self.schema)
            self._keys = self.snap.taken  # the files as they were copied for that export
        return self._last

    def tail(self, least: int) -> Tail | None:
        return export_tail(self.path, least, self.snap, self.schema)


def exporter(path: Path) -> Follower:
    return Follower(path)


def export_tail(path: Path, least: int, snap: DatabaseCopy | None = None, schema: Schema = OPENCODE) -> Tail | None:
    """The session's last rows as `export` gives them, about `least` bytes of rows or more, read newest first.

    The rows are cut where a user's message starts a turn (its first row: OpenCode records the
    message again at each step of its turn, and the previous prompt's last row comes before it). The
    exporter's memory of earlier rows (roles, models, what was already added) then holds nothing the
    rows after need, which is checked: every message a part among them belongs to is recorded among
    them. None when the whole session is not much bigger, or no such place is found (export it whole).
    """
    db, session = split_member(path)

    def read(conn: sqlite3.Connection) -> Tail | None:
        chosen = _one(conn, db, session, schema)
        newest_first = conn.execute(
            "select aggregate_id, seq, type, cast(data as blob) from event where aggregate_id = ? order by seq desc",
            (chosen,),
        )
        size, prompt, latest = 0, None, 0
        for row in newest_first:
            size += len(row[3])
            message, role = _message_of(row)
            if size >= least and role == "user":
                prompt, latest = message, row[1]
                break
        newest_first.close()
        if prompt is None:
            return None  # the first row reached: the session is small, or has no prompt that far back
        # Back through the messages' own rows alone (an index holds them by type) to the prompt's first.
        first = latest
        records = conn.execute(
            "select aggregate_id, seq, type, cast(data as blob) from event"
            " where aggregate_id = ? and type = 'message.updated.1' and seq < ? order by seq desc",
            (chosen, latest),
        )
        for row in records:
            message, role = _message_of(row)
            if message == prompt:
                first = row[1]
            elif role == "user":
                break  # the prompt before: the one cut at started after its last row
        records.close()
        rows = conn.execute(
            "select aggregate_id, seq, type, cast(data as blob) from event where aggregate_id = ? and seq >= ?"
            " order by seq",
            (chosen, first),
        ).fetchall()
        made, used = set[str](), set[str]()
        for row in rows:
            message, role = _message_of(row)
            if message is not None:
                (used if role is None else made).add(message)
        if not used <= made:
            return None  # a part of a message recorded before the cut: only the whole export knows it
        before = conn.execute(
            "select count(*) from event where aggregate_id = ? and seq < ?", (chosen, first)
        ).fetchone()[0]
        return Tail(b"".join(Exporter().lines(iter(rows))), int(before))

    if snap is not None:
        return snap.query(read)
    with snapshot(db) as snap_:
        return snap_.query(read)


def _told(rows: Iterator[T], total: int, progress: Progress) -> Iterator[T]:
    """`rows`, telling `progress` how far through `total` they are every few thousand."""
    for done, row in enumerate(rows, 1):
        if done % 4096 == 0:
            progress(done / max(total, 1))
        yield row


def _message_of(row: tuple[str, int, str, bytes]) -> tuple[str | None, str | None]:
    """The message a row is of, and its role when the row records the message itself (`message.updated`)."""
    kind = row[2]
    if not kind.startswith(("message.updated", "message.part.updated")):
        return None, None
    try:
        data = _xdata.decode(row[3])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None, None
    if kind.startswith("message.updated"):
        return (data.info.id, data.info.role) if data.info is not None else (None, None)
    return (data.part.message_id or None) if data.part is not None else None, None


def export_all(db: Path, said: list[str] | None = None, schema: Schema = OPENCODE) -> dict[Path, bytes]:
    """Every session of the database (by its path, `DB#ID`), as `export` gives each, from one copy; a row of no
    session (its session id not UTF-8 text) is left out, and `said` told so in a sentence."""

    tables = tables_in_file(db)  # no copy of another program's database (nor of what is no database)
    if tables is not None and not schema.fits(tables):
        return {}

    def read(conn: sqlite3.Connection) -> dict[Path, bytes]:
        if not is_opencode(conn, db, schema):
            return {}  # another program's database beside it: no session of OpenCode's
        out: dict[str, list[bytes]] = {id_: [] for id_ in _ids(conn)}
        exporters: dict[str, Exporter] = {}
        bad: list[int] = []
        for row in _rows(conn, None, bad):
            exporter = exporters.get(row[0])
            if exporter is None:
                exporter = exporters[row[0]] = Exporter()
            out.setdefault(row[0], []).extend(exporter.pieces(row))
        if bad and said is not None:
            # As every sentence of what a listing leaves out, the caller says "; they are not listed" after it.
            said.append(
                f"{db}: event rows whose session id is not UTF-8 text belong to no session ({len(bad)} of them; "
                "each session is listed without them, as `wren log` reads it)"
            )
        return {member_path(db, id_): b"".join(lines) for id_, lines in out.items()}

    with snapshot(db) as snap:
        return snap.query(read)


# --- rows to lines: what each row adds ---------------------------------------------------------


class _Time(msgspec.Struct):
    created: int | None = None
    completed: int | None = None
    start: int | None = None
    end: int | None = None


class _State(msgspec.Struct):
    status: str = ""
    input: Any = None
    output: Any = None
    error: Any = None
    metadata: Any = None
    time: _Time | None = None


class _Part(msgspec.Struct):
    id: str = ""
    message_id: str = msgspec.field(default="", name="messageID")
    type: str = ""
    text: str | None = None
    synthetic: bool = False
    ignored: bool = False
    time: _Time | None = None
    call_id: str = msgspec.field(default="", name="callID")
    tool: str = ""
    state: _State | None = None
    tokens: Any = None
    reason: str | None = None


class _Info(msgspec.Struct):
    id: str = ""
    role: str = ""
    time: _Time | None = None
    error: Any = None
    model_id: str | None = msgspec.field(default=None, name="modelID")
    directory: str | None = None
    version: str | None = None
    title: str | None = None
    path: Any = None


class _Data(msgspec.Struct):
    info: _Info | None = None
    part: _Part | None = None
    time: int | None = None


_data = msgspec.json.Decoder(_Data)
_encode = msgspec.json.Encoder()


# What the exporter looks at in a row, and no more: the rest of it (a tool's output, its input) is
# skipped by the decoder without being built.
class _XState(msgspec.Struct):
    status: str = ""


class _XMeta(msgspec.Struct):
    lifecycle: str = msgspec.field(default="", name="kilocode.lifecycle")


class _XPart(msgspec.Struct):
    id: str = ""
    message_id: str = msgspec.field(default="", name="messageID")
    type: str = ""
    text: msgspec.Raw = msgspec.Raw(b"")
    ignored: bool = False
    synthetic: bool = False
    metadata: _XMeta | None = None
    time: _Time | None = None
    call_id: str = msgspec.field(default="", name="callID")
    state: _XState | None = None


class _XInfo(msgspec.Struct):
    id: str = ""
    role: str = ""
    time: _Time | None = None
    error: msgspec.Raw = msgspec.Raw(b"")
    model_id: str | None = msgspec.field(default=None, name="modelID")


class _XData(msgspec.Struct):
    info: _XInfo | None = None
    part: _XPart | None = None
    time: int | None = None


_xdata = msgspec.json.Decoder(_XData)
_EMPTY_TEXT = (b"", b'""', b"null")


class _Line(msgspec.Struct, omit_defaults=True):
    """One exported line: an event row, what it adds, and the context the row alone lacks."""

    type: str
    n: int  # the row's seq
    ts: str = ""
    role: str = ""  # the role of the message a part belongs to
    model: str = ""
    adds: list[str] = []
    # The rows of calls held back until the text said before them was finished (added after it: "held").
    calls: list[msgspec.Raw] = []
    data: msgspec.Raw = msgspec.Raw(b"{}")


def iso(ms: int | None) -> str:
    """Milliseconds since the epoch as ISO-8601 UTC, as Wren writes times."""
    if ms is None:
        return ""
    seconds, millis = divmod(ms, 1000)
    return f"{_iso_second(seconds)}.{millis:03d}Z"


@functools.lru_cache(maxsize=1024)
def _iso_second(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")


@dataclass
class Exporter:
    """Turns one session's event rows into lines, in order, remembering what was already added."""

    roles: dict[str, str] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    said: set[str] = field(default_factory=set)  # parts whose text was added
    asked: set[str] = field(default_factory=set)  # calls added
    answered: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)  # messages whose error was added
    last_ts: str = ""
    # Per message, its text parts started and not yet finished; and the calls (their rows) that started while
    # one was open. OpenCode finishes a text said before a call only once the call runs: the call is added
    # with that text's last row, after it, as it was said.
    open_text: dict[str, set[str]] = field(default_factory=dict)
    held: dict[str, dict[str, bytes]] = field(default_factory=dict)

    def lines(self, rows: Iterator[tuple[str, int, str, bytes]]) -> Iterator[bytes]:
        """Each row's line, in pieces (joined once by the caller: a row's data is not copied per line)."""
        for row in rows:
            yield from self.pieces(row)

    def line(self, row: tuple[str, int, str, bytes]) -> bytes:
        return b"".join(self.pieces(row))

    def pieces(self, row: tuple[str, int, str, bytes]) -> tuple[bytes, bytes, bytes]:
        _session, seq, kind, raw = row
        if isinstance(raw, str):
            raw = raw.encode()
        if b"\n" in raw:
            # A row always fits one line: in JSON a newline is only ever whitespace between tokens (one in a
            # string is escaped), so a space does as well, with nothing decoded.
            raw = raw.replace(b"\n", b" ")
        try:
            data = _xdata.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            data = _XData()  # the line goes out as the row is; its translation says what is wrong with it
        ts = self._ts(data)
        role = model = ""
        adds: list[str] = []
        calls: list[bytes] = []
        info, part = data.info, data.part
        if info is not None and kind.startswith("message.updated"):
            if info.role:
                self.roles[info.id] = info.role
            if info.model_id:
                self.models[info.id] = info.model_id
            if bytes(info.error) not in _EMPTY_TEXT and info.id not in self.failed:
                self.failed.add(info.id)
                adds.append("error")
        elif part is not None and kind.startswith("message.part.updated"):
            role = self.roles.get(part.message_id, "")
            model = self.models.get(part.message_id, "")
            adds = self._part(part, role, raw)
            if part.type == "text" and "text" in adds:
                calls = self._released(part.message_id)
                if calls:
                    adds.append("held")
        # As `_Line` encodes, written out: this runs once per row of a session that may hold a hundred thousand.
        head = b'{"type":%s,"n":%d,"ts":"%s"' % (_encode.encode(kind), seq, ts.encode())
        if role:
            head += b',"role":%s' % _encode.encode(role)
        if model:
            head += b',"model":%s' % _encode.encode(model)
        if adds:
            head += b',"adds":%s' % _encode.encode(adds)
        if calls:
            head += b',"calls":[%s]' % b",".join(calls)
        return head + b',"data":', raw, b"}\n"

    def _released(self, message: str) -> list[bytes]:
        """The rows of the calls of `message` held back, once none of its texts is still being said."""
        if self.open_text.get(message) or message not in self.held:
            return []
        held = self.held.pop(message)
        self.asked.update(held)
        return list(held.values())

    def _ts(self, data: _XData) -> str:
        ms = data.time
        if ms is None and data.info is not None and data.info.time is not None:
            ms = data.info.time.completed or data.info.time.created
        ts = iso(ms) or self.last_ts
        self.last_ts = ts
        return ts

    def _part(self, part: _XPart, role: str, raw: bytes) -> list[str]:
        if part.type in ("text", "reasoning"):
            if _transient(part):
                return []
            finished = part.time is None or part.time.end is not None
            if part.type == "text" and role == "assistant":
                opened = self.open_text.setdefault(part.message_id, set())
                if finished:
                    opened.discard(part.id)
                elif part.time is not None and part.time.start is not None:
                    opened.add(part.id)
            if finished and bytes(part.text) not in _EMPTY_TEXT and not part.ignored and part.id not in self.said:
                self.said.add(part.id)
                return [part.type]
            return []
        if part.type == "tool" and part.state is not None:
            adds: list[str] = []
            status = part.state.status
            held = self.held.get(part.message_id, {})
            if status == "running" and part.call_id not in self.asked and self.open_text.get(part.message_id):
                held.setdefault(part.call_id, raw)  # the text before it is still being said: added after it
                self.held[part.message_id] = held
                return []
            if status in ("running", "completed", "error") and part.call_id not in self.asked:
                self.asked.add(part.call_id)
                held.pop(part.call_id, None)
                adds.append("call")
            if status in ("completed", "error") and part.call_id not in self.answered:
                self.answered.add(part.call_id)
                adds.append("result")
            return adds
        if part.type == "step-finish" and part.id not in self.said:
            self.said.add(part.id)
            return ["usage"]
        if part.type == "compaction" and part.id not in self.said:
            self.said.add(part.id)
            return ["compaction"]
        return []


def _transient(part: _XPart) -> bool:
    """A part the client shows while it works and then removes (Kilo's "Initializing snapshot..."): never said."""
    return part.synthetic and part.metadata is not None and part.metadata.lifecycle == "transient"


# --- lines to events ----------------------------------------------------------------------------


_lines = msgspec.json.Decoder(_Line)


def _tokens(value: Any) -> tuple[int, int]:
    if not isinstance(value, dict):
        return 0, 0
    cache = value.get("cache")
    if not isinstance(cache, dict):
        cache = {}

    def num(v: Any) -> int:
        return v if isinstance(v, int) else 0

    tokens_in = num(value.get("input")) + num(cache.get("read")) + num(cache.get("write"))
    return tokens_in, num(value.get("output")) + num(value.get("reasoning"))


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def _failed(state: _State) -> bool:
    if state.status == "error":
        return True
    meta = state.metadata
    code = meta.get("exit") if isinstance(meta, dict) else None
    return isinstance(code, int) and code != 0


class OpenCodeTranslator(Translator):
    """Each exported line says what it adds: the events come from its bytes alone."""

    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        line = decode_export(_lines, data, "an exported OpenCode session")
        seq, ts, kind = lineno, line.ts, line.type
        try:
            row = _data.decode(line.data)
        except RecursionError:
            raise BadLine(TOO_DEEP) from None
        except msgspec.DecodeError:
            why = "its data is not an object"
            return Translated([make.note(seq, ts, "not understood", kind=kind, why=why)], kind, "malformed")
        if kind.startswith("session.created"):
            info = row.info or _Info()
            shown = make.note(seq, ts, "session", id=info.id, cwd=info.directory, version=info.version)
            return Translated([shown], kind, cwd=info.directory)
        if kind not in _KNOWN:
            return Translated([], kind, "unknown")
        events: list[Event] = []
        if row.info is not None and "error" in line.adds:
            events.append(make.error(seq, ts, _error_text(row.info.error)))
        part = row.part
        if part is not None:
            events += self._part(seq, ts, line, part)
        return Translated(events, kind, "mapped" if kind in MAPPED else "skipped", model=line.model or None)

    def _part(self, seq: int, ts: str, line: _Line, part: _Part) -> list[Event]:
        events: list[Event] = []
        for add in line.adds:
            if add == "text":
                text = part.text or ""
                events.append(make.user(seq, ts, text) if line.role == "user" else make.assistant(seq, ts, text))
            elif add == "reasoning":
                events.append(make.thinking(seq, ts, part.text or ""))
            elif add == "call" and part.state is not None:
                events.append(_call(seq, ts, part))
            elif add == "held":
                for held in line.calls:
                    try:
                        call = _data.decode(held).part
                    except msgspec.DecodeError:
                        call = None
                    if call is not None and call.state is not None:
                        events.append(_call(seq, ts, call))
            elif add == "result" and part.state is not None:
                state = part.state
                out = _text(state.output) if state.status == "completed" else _text(state.error)
                took = None
                if state.time is not None and state.time.start is not None and state.time.end is not None:
                    took = max(state.time.end - state.time.start, 0)
                events += make.answer(seq, ts, part.call_id, out, ok=not _failed(state), took=took)
            elif add == "usage":
                tokens_in, tokens_out = _tokens(part.tokens)
                events.append(make.usage(seq, ts, tokens_in, tokens_out, line.model))
            elif add == "compaction":
                events.append(make.note(seq, ts, make.COMPACTION, text=""))
        return events


def _call(seq: int, ts: str, part: _Part) -> Event:
    assert part.state is not None
    args = msgspec.json.encode(part.state.input if part.state.input is not None else {}).decode()
    return make.assistant(seq, ts, "", [ToolCall(part.call_id, part.tool, args)])


def _error_text(value: Any) -> str:
    if isinstance(value, dict):
        data = value.get("data")
        message = data.get("message") if isinstance(data, dict) else None
        name = value.get("name")
        return str(message or name or _text(value))
    return _text(value)


class _UsagePart(msgspec.Struct):
    tokens: Any = None


class _UsageData(msgspec.Struct):
    part: _UsagePart | None = None


class _UsageLine(msgspec.Struct):
    data: _UsageData | None = None


_usage_lines = msgspec.json.Decoder(_UsageLine)


def tokens_of(data: bytes) -> int:
    """The tokens a line records (a step's, once), read without translating it."""
    if b'"adds":["usage"]' not in data:
        return 0
    try:
        line = _usage_lines.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return 0
    if line.data is None or line.data.part is None:
        return 0
    return sum(_tokens(line.data.part.tokens))


# --- recognising and finding ---------------------------------------------------------------------


def claims_file(path: Path, head: bytes, schema: Schema = OPENCODE) -> bool:
    """A SQLite database (its header) whose copy has OpenCode's tables (and not Kilo's: `schema`)."""
    if not head.startswith(SQLITE_HEADER):
        return False
    try:
        tables = tables_in_file(path)  # from its own pages, before anything is copied
        if tables is not None:
            return schema.fits(tables)
        with kept(path) as snap:
            return snap.query(lambda conn: _has_tables(conn, schema))
    except JournalError:
        return False


def is_session_file(path: Path) -> bool:
    """A SQLite database file (not its -wal or -shm); whether it is OpenCode's, its tables say when it is read."""
    return path.name.endswith(".db") and head_of(path, len(SQLITE_HEADER)) == SQLITE_HEADER


# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("bash", "write", "edit", "patch", "multiedit"))


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=Folder(
        env=ENV,
        root=variable_or_home(ENV, ".local/share", "opencode"),
        suffix=SUFFIX,
        is_session_file=is_session_file,
        where=WHERE,
    ),
    translator=OpenCodeTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS),
    session_id=session_id,
    tokens_of=tokens_of,
    claims_file=claims_file,
    export=export,
    export_all=export_all,
    exporter=exporter,
)
