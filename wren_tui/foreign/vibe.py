"""Mistral Vibe's sessions (`~/.vibe/logs/session/unified/<session uuid>/`), read as Wren events.

Vibe keeps a session as a folder: `meta.json` (its id, start, workspace, model), a hash-chained
recovery journal split into segments (`journal/<first sequence>.jsonl`, each line `{type, sequence,
payload, record_sha256, ...}`, appended as it works), and compacted generations
(`generations/<sequence>/manifest.json`, naming the journal segment that follows it and the
`chunks/<sha256>.json` that hold its state). What a person saw is the public projection: entries
(`message` of the user or the assistant, `effect` of a tool with its input, status and output) that
the journal's `projection_delta` records append or replace. The tokens of each model call are in
the `action_result` of a completion. A compaction deletes the segments it covers: the turns before
it exist only in the generation's projection chunks.

A session is read (`export`) as the generation that the first segment left follows (its
projection's entries, and their tokens as one total), then every record of the segments from
there, in order; a record already covered is never read twice, nor an entry shown twice. A tool's
effect is appended `running` before the tool runs, so a run killed in its tool ends with the call
open. The session's path is its `meta.json`; its journal folder is watched (`parts`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import msgspec

from ..journal.errors import JournalError
from ..journal.events import Event, ToolCall
from . import make
from .base import Format, Kinds, Translated, Translator
from .document import ExportedLine, decode_document, decode_export, iso_of_ms, read_document
from .folders import Folder, variable_or_home

NAME = "vibe"
LABEL = "Mistral Vibe"
ENV = "VIBE_HOME"
SUFFIX = "meta.json"
MAPPED = ("session", "user", "assistant", "call", "result", "usage", "gap")
SKIPPED = ()
WHERE = "Mistral Vibe keeps each session as a folder, <uuid>/meta.json beside its journal/ and generations/"
# The biggest file read (a journal segment holds every request in full; one this big is no session of a person's).
MAX_BYTES = 1 << 28
META = "meta.json"
JOURNAL = "journal"
GENERATIONS = "generations"
CHUNKS = "chunks"
_NUMBERED = re.compile(r"\A(\d{1,20})(?:\.jsonl)?\Z")
# A tool's status while it has no result yet.
_GOING = frozenset(("running", "pending", "queued", "in_progress", "awaiting_approval"))


class _Meta(msgspec.Struct):
    session_id: str = ""
    start_time: str | None = None
    title: str | None = None
    environment: dict[str, Any] | None = None
    config: dict[str, Any] | None = None


class _Output(msgspec.Struct):
    type: str = ""
    structured_content: Any = None
    content: Any = None


class _State(msgspec.Struct, rename="camel"):
    status: str = ""
    output: _Output | None = None
    output_text: str = ""


class _Detail(msgspec.Struct, rename="camel"):
    kind: str = ""
    tool_name: str = ""
    input: Any = None


class _Entry(msgspec.Struct, rename="camel"):
    id: str = ""
    type: str = ""
    role: str | None = None
    content: Any = None
    created_at: int | None = None
    updated_at: int | None = None
    generation_status: str | None = None
    detail: _Detail | None = None
    state: _State | None = None


class _Op(msgspec.Struct):
    op: str = ""
    entry: _Entry | None = None


class _Inner(msgspec.Struct):
    type: str = ""
    result: Any = None


class _Payload(msgspec.Struct):
    delta: list[_Op] | None = None
    result: _Inner | None = None


class _Record(msgspec.Struct):
    type: str = ""
    sequence: int = 0
    payload: _Payload | str | None = None


class _Segment(msgspec.Struct):
    first_sequence: int = 0


class _Part(msgspec.Struct):
    chunks: list[str] = []


class _Manifest(msgspec.Struct):
    recovery_journal_segment: _Segment | None = None
    projection_state: _Part | None = None


class _Usage(msgspec.Struct, rename="camel"):
    input_tokens: int = 0
    output_tokens: int = 0


class _Session(msgspec.Struct, rename="camel"):
    token_usage: _Usage | None = None


class _Snapshot(msgspec.Struct):
    session: _Session | None = None


class _ProjectionState(msgspec.Struct):
    snapshot: _Snapshot | None = None


class _Line(ExportedLine):
    """One exported line: the session's head, a message, a call, its result, a model call's tokens, or a gap."""

    name: str = ""
    args: str = ""
    cwd: str = ""
    ok: bool = True
    took: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    model: str = ""


_meta = msgspec.json.Decoder(_Meta)
_record = msgspec.json.Decoder(_Record)
_payload = msgspec.json.Decoder(_Payload)
_manifest = msgspec.json.Decoder(_Manifest)
_entries = msgspec.json.Decoder(list[_Entry])
_projection = msgspec.json.Decoder(_ProjectionState)
_encode = msgspec.json.Encoder()
_decode = msgspec.json.Decoder(_Line)


def _read(path: Path) -> bytes:
    return read_document(path, MAX_BYTES, LABEL)


_iso = iso_of_ms


def _numbered(folder: Path, files: bool) -> list[tuple[int, Path]]:
    """The entries of `folder` named by a sequence number (`0000000000000022.jsonl`, or a generation's folder), in
    order; none when it cannot be listed."""
    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                match = _NUMBERED.match(entry.name)
                if match is None or entry.name.endswith(".jsonl") != files:
                    continue
                if (entry.is_file if files else entry.is_dir)(follow_symlinks=False):
                    found.append((int(match[1]), Path(entry.path)))
    except OSError:
        return []
    return sorted(found)


def _result_text(output: _Output | None, fallback: str) -> tuple[str, bool]:
    """A tool's output as text, and whether it succeeded (Vibe's success with a shell's exit status 0, if any)."""
    if output is None:
        return fallback, True
    ok = output.type == "success"
    value = output.structured_content
    if isinstance(value, dict):
        if isinstance(value.get("returncode"), int) and value["returncode"] != 0:
            ok = False
        if "stdout" in value or "stderr" in value:
            text = "".join(v for v in (value.get("stdout"), value.get("stderr")) if isinstance(v, str))
        elif isinstance(value.get("content"), str):
            text = value["content"]
        else:
            text = msgspec.json.encode(value).decode()
    elif value is not None:
        text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    else:
        text = make.text_of(output.content) or fallback
    return text, ok


class _Exporter:
    """The lines of one session, from the entries and records given in order; an entry never shown twice."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.lines: list[_Line] = []
        self.last = ""
        self._said: set[str] = set()
        self._called: dict[str, int | None] = {}
        self._answered: set[str] = set()

    def entry(self, entry: _Entry) -> None:
        if entry.type == "message" and entry.role in ("user", "assistant"):
            if entry.generation_status not in (None, "completed") or entry.id in self._said:
                return
            self._said.add(entry.id)
            ts = self._ts(entry.created_at)
            self.lines.append(_Line(entry.role, ts, text=make.text_of(entry.content)))
        elif entry.type == "effect" and entry.detail is not None and entry.detail.kind == "tool":
            state = entry.state or _State()
            if entry.id not in self._called:
                self._called[entry.id] = entry.created_at
                args = msgspec.json.encode(entry.detail.input if entry.detail.input is not None else {}).decode()
                line = _Line("call", self._ts(entry.created_at), id=entry.id, name=entry.detail.tool_name, args=args)
                self.lines.append(line)
            if state.status and state.status not in _GOING and entry.id not in self._answered:
                self._answered.add(entry.id)
                text, ok = _result_text(state.output, state.output_text)
                asked, done = self._called[entry.id], entry.updated_at
                took = max(done - asked, 0) if asked is not None and done is not None else None
                ts = self._ts(entry.updated_at)
                self.lines.append(
                    _Line("result", ts, text=text, id=entry.id, ok=ok and state.status == "completed", took=took)
                )

    def usage(self, tokens_in: int, tokens_out: int) -> None:
        if tokens_in or tokens_out:
            self.lines.append(_Line("usage", self.last, tokens_in=tokens_in, tokens_out=tokens_out, model=self.model))

    def record(self, record: _Record) -> None:
        payload = record.payload
        if isinstance(payload, str):  # a payload kept as JSON text
            try:
                payload = _payload.decode(payload)
            except (msgspec.DecodeError, RecursionError):
                return
        if payload is None:
            return
        if record.type == "projection_delta":
            for op in payload.delta or ():
                if op.entry is not None and op.op in ("append_entry", "replace_entry", "upsert_entry"):
                    self.entry(op.entry)
        elif record.type == "action_result" and payload.result is not None:
            inner = payload.result
            if inner.type == "completion_succeeded" and isinstance(inner.result, dict):
                used = inner.result.get("usage")
                if isinstance(used, dict):
                    tokens_in, tokens_out = used.get("input_tokens"), used.get("output_tokens")
                    self.usage(
                        tokens_in if isinstance(tokens_in, int) else 0, tokens_out if isinstance(tokens_out, int) else 0
                    )

    def _ts(self, ms: int | None) -> str:
        ts = _iso(ms)
        if ts:
            self.last = ts
        return ts or self.last


def folder_of(path: Path) -> Path:
    """The session's folder, from its meta.json or one of its journal's segments."""
    if path.parent.name == JOURNAL:
        return path.parent.parent
    return path.parent


def _checkpoint(folder: Path, first: int | None, out: _Exporter) -> None:
    """The entries of the generation that the journal's first segment (numbered `first`) follows, and their tokens;
    a gap said when only an older generation is there (the records between are gone)."""
    chosen: tuple[int, _Manifest, Path] | None = None
    for _number, generation in _numbered(folder / GENERATIONS, files=False):
        try:
            manifest = _manifest.decode(_read(generation / "manifest.json"))
        except (JournalError, msgspec.DecodeError, RecursionError):
            continue
        segment = manifest.recovery_journal_segment
        after = segment.first_sequence if segment is not None else 0
        if (first is None or after <= first) and (chosen is None or after > chosen[0]):
            chosen = (after, manifest, generation)
    if chosen is None:
        return
    after, manifest, generation = chosen
    for chunk in manifest.projection_state.chunks if manifest.projection_state else ():
        if not re.fullmatch(r"[0-9a-f]{64}", chunk):
            continue  # a name that is no chunk's: never a path out of the folder
        try:
            for entry in _entries.decode(_read(folder / CHUNKS / f"{chunk}.json")):
                out.entry(entry)
        except (JournalError, msgspec.DecodeError, RecursionError) as exc:
            out.lines.append(_Line("gap", out.last, text=f"a chunk of the compacted turns cannot be read: {exc}"))
    try:
        state = _projection.decode(_read(generation / "projection-state.json"))
    except (JournalError, msgspec.DecodeError, RecursionError):
        state = _ProjectionState()
    session = state.snapshot.session if state.snapshot is not None else None
    if session is not None and session.token_usage is not None:
        out.usage(session.token_usage.input_tokens, session.token_usage.output_tokens)
    if first is not None and after < first:
        out.lines.append(_Line("gap", out.last, text=f"journal records {after} to {first - 1} are gone"))


class _Compacted(Exception):
    """A journal segment listed was gone when read: Vibe's compaction deleted it meanwhile (its generation holds it)."""


def export(path: Path) -> bytes:
    """The session whose meta.json (or journal segment) is at `path`, as lines: its head, the compacted turns, then
    the journal's records from where they end; read again from its new generation when a compaction deleted a
    segment while it was read."""
    for _attempt in range(3):
        try:
            return _export(path)
        except _Compacted:
            continue
    return _export(path)


def _export(path: Path) -> bytes:
    folder = folder_of(path)
    meta = decode_document(_meta, _read(folder / META), folder / META, LABEL)
    cwd = (meta.environment or {}).get("working_directory")
    model = (meta.config or {}).get("model_name")
    out = _Exporter(model if isinstance(model, str) else "")
    started = _iso(make.ms_of(meta.start_time))
    out.last = started
    out.lines.append(
        _Line("session", started, id=meta.session_id or folder.name, cwd=cwd if isinstance(cwd, str) else "")
    )
    segments = _numbered(folder / JOURNAL, files=True)
    _checkpoint(folder, segments[0][0] if segments else None, out)
    seen = segments[0][0] - 1 if segments else 0
    for _first, segment in segments:
        try:
            data = _read(segment)
        except JournalError:
            if os.path.lexists(segment):
                raise
            raise _Compacted from None
        whole = data[: data.rfind(b"\n") + 1]  # a last line still being written waits for its newline
        for lineno, line in enumerate(whole.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = _record.decode(line)
            except (msgspec.DecodeError, RecursionError) as exc:
                why = f"{segment.name} line {lineno} cannot be read ({exc})"
                out.lines.append(_Line("gap", out.last, text=why))
                continue
            if record.sequence <= seen:
                continue  # already read: never twice
            seen = record.sequence
            out.record(record)
    return b"".join(_encode.encode(line) + b"\n" for line in out.lines)


class VibeTranslator(Translator):
    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        line = decode_export(_decode, data, "an exported Mistral Vibe session")
        seq, ts, kind = lineno, line.ts, line.type
        if kind == "session":
            return Translated(
                [make.note(seq, ts, "session", id=line.id, cwd=line.cwd or None)], kind, cwd=line.cwd or None
            )
        if kind == "user":
            return Translated([make.user(seq, ts, line.text)], kind)
        if kind == "assistant":
            return Translated([make.assistant(seq, ts, line.text)], kind)
        if kind == "call":
            return Translated([make.assistant(seq, ts, "", [ToolCall(line.id, line.name, line.args)])], kind)
        if kind == "result":
            return Translated(make.answer(seq, ts, line.id, line.text, ok=line.ok, took=line.took), kind)
        if kind == "usage":
            events: list[Event] = [make.usage(seq, ts, line.tokens_in, line.tokens_out, line.model or None)]
            return Translated(events, kind, model=line.model or None)
        if kind == "gap":
            return Translated([make.note(seq, ts, "gap", why=line.text)], kind)
        return Translated([], kind, "unknown")


# --- recognising and finding ---------------------------------------------------------------------


def claims_file(path: Path, head: bytes) -> bool:
    """A session's meta.json as Vibe writes it (an object with its session_id, start_time and environment members)
    beside the session's journal folder."""
    if path.name != META or not head.lstrip().startswith(b"{"):
        return False
    if not all(member in head for member in (b'"session_id"', b'"start_time"', b'"environment"')):
        return False
    return (path.parent / JOURNAL).is_dir()


def claims(line: dict[str, Any]) -> bool:
    """A record of a Vibe recovery journal: its version, its sequence, its kind and its hash (a segment is a part of
    its session, listed by the session's meta.json)."""
    return (
        isinstance(line.get("recovery_journal_record_version"), int)
        and isinstance(line.get("sequence"), int)
        and isinstance(line.get("type"), str)
        and isinstance(line.get("record_sha256"), str)
        and "payload" in line
    )


def is_session_file(path: Path) -> bool:
    return path.name == META


def kept_with(path: Path) -> tuple[Path, ...]:
    """The session's other files, all its reader reads: its journal segments, compacted generations and chunks (a
    segment the agent deletes once compacted stays in Wren's kept copy; the reader shows each turn once)."""
    found: list[Path] = []
    for below in (JOURNAL, GENERATIONS, CHUNKS):
        for folder, _dirs, names in os.walk(folder_of(path) / below):  # links to folders are not followed
            found.extend(Path(folder) / name for name in names)
    return tuple(sorted(found))


def session_id(path: Path) -> str:
    """The session's uuid: the name of its folder."""
    return folder_of(path).name


def parts(path: Path) -> Path:
    """The folder of the session's journal segments: watched for its changes, its newest file's time the session's."""
    return folder_of(path) / JOURNAL


# Its tools that change the workspace: the calls the writes filter keeps (as the effects name them: the recordings'
# `file_system.bash`; its file writes as its documentation names them, write_file, search_replace and edit).
WRITE_TOOLS = frozenset(
    ("file_system.bash", "file_system.write_file", "file_system.search_replace", "file_system.edit")
)

FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=Folder(
        env=ENV,
        root=variable_or_home(ENV, ".vibe", "logs/session/unified"),
        suffix=SUFFIX,
        is_session_file=is_session_file,
        where=WHERE,
        parts=parts,
        kept_with=kept_with,
    ),
    translator=VibeTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    session_id=session_id,
    claims_file=claims_file,
    export=export,
)
