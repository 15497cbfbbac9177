"""Gemini CLI's session files (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`), read as Wren events.

The file is a log of changes to one session object, not a list of messages: a header line
(`sessionId`, `projectHash`, `startTime`, `kind`; written again on a resume), `{"$set": {...}}`
lines that set its fields (`lastUpdated` after every record; `messages`, the whole list, at the start
and on a resume), and message records `{id, timestamp, type, content, ...}`: `user` (parts: text or
a `functionResponse`) and `gemini` (the reply's text, `thoughts`, `tokens`, `model`). A record
written again with the same `id` replaces the earlier one: a reply is written when its stream ends,
then again with `toolCalls` (each with its result, status and time) once its tools ran.

So a call is recorded only together with its result: a session never shows a call open, and one
whose last record is a reply may have ended there or been stopped while a tool ran (the listing
says "last: reply", never "done"). What a line gives depends on its bytes; the translator's memory
(records, calls and answers seen) hides what an earlier line already gave (a rewritten reply's text,
a result given twice, a resume's copy of the history).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import msgspec

from ..journal.events import ChatMessage, Event, Message, ToolCall, ToolEnd, UnknownEvent
from . import make
from .base import BadLine, Format, Kinds, Translated, Translator, not_json
from .folders import GEMINI
from .gemini_parts import content_parts, function_call, response_text

NAME = GEMINI.name
LABEL = "Gemini CLI"
ENV = GEMINI.folder.env

MAPPED = ("header", "user", "gemini", "info", "warning", "error", "$set:messages")
SKIPPED = ("$set:lastUpdated", "$set:sessionId", "$set:summary")
_RECORDS = frozenset({"user", "gemini", "info", "warning", "error"})
# What the client writes as the first user message for the model: context, not a person's words.
_CONTEXT = "<session_context>"

_any = msgspec.json.Decoder()
_WORKSPACE = re.compile(r"Workspace Directories:\**\n\s*- (.+)")
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)


@dataclass
class _Gave:
    """What a record's events were, as later lines need to know it."""

    text: str = ""


class GeminiTranslator(Translator):
    """Remembers the records, calls and answers seen, to hide what a later line gives again."""

    def __init__(self) -> None:
        self._records: dict[str, _Gave] = {}
        self._asked: dict[str, int | None] = {}
        self._answered: set[str] = set()
        self._headers = 0
        self._resumed: set[int] = set()
        # Per line read: what its reading hid and the text it left out (a line decoded again gives the same).
        self._hidden_at: dict[int, frozenset[int]] = {}
        self._blanked_at: dict[int, frozenset[int]] = {}

    def translate(self, lineno: int, data: bytes, *, learn: bool = True) -> Translated:
        try:
            value = _any.decode(data)
        except msgspec.DecodeError as exc:
            raise not_json(exc) from None
        if not isinstance(value, dict):
            raise BadLine("it is JSON but not an object")
        if "$set" in value:
            return self._set(lineno, value, learn)
        if "sessionId" in value and "startTime" in value and "type" not in value:
            return self._header(lineno, value, learn)
        kind = value.get("type")
        if kind not in _RECORDS:
            return Translated([], kind if isinstance(kind, str) else "(no type)", "unknown")
        events, hidden = self._records_of(lineno, [value], learn)
        out = Translated(events, kind, hidden=hidden)
        out.cwd = _workspace(events)
        out.model = value.get("model") if isinstance(value.get("model"), str) else None
        return out

    # --- the header and the session object's fields ---------------------------------------------

    def _header(self, seq: int, value: dict[str, Any], learn: bool) -> Translated:
        ts = str(value.get("startTime") or "")
        if learn:
            self._headers += 1
            if self._headers > 1:
                self._resumed.add(seq)  # the header written again by a resume
        what = "resumed" if seq in self._resumed else "session"
        return Translated([make.note(seq, ts, what, id=value.get("sessionId"), kind=value.get("kind"))], "header")

    def _set(self, seq: int, value: dict[str, Any], learn: bool) -> Translated:
        fields = value["$set"]
        if not isinstance(fields, dict):
            return Translated([], "$set", "unknown")
        messages = fields.get("messages")
        if isinstance(messages, list):
            records = [m for m in messages if isinstance(m, dict)]
            events, hidden = self._records_of(seq, records, learn)
            out = Translated(events, "$set:messages", hidden=hidden)
            out.cwd = _workspace(events)
            return out
        names = sorted(fields)
        kind = f"$set:{names[0]}" if names else "$set"
        return Translated([], kind, "skipped" if kind in SKIPPED else "unknown")

    # --- message records ------------------------------------------------------------------------

    def _records_of(self, seq: int, records: list[dict[str, Any]], learn: bool) -> tuple[list[Event], frozenset[int]]:
        """Every record's events in order; hidden: what an earlier line gave (known on the line's first reading)."""
        if not learn:
            blank = self._blanked_at.get(seq, frozenset())
            given = [e for record in records for e in _record(seq, record)]
            again = [_blank(e) if at in blank else e for at, e in enumerate(given)]
            return again, self._hidden_at.get(seq, frozenset())
        events: list[Event] = []
        hidden: set[int] = set()
        blanked: set[int] = set()
        for record in records:
            record_id = str(record.get("id") or "")
            seen = self._records.get(record_id) if record_id else None
            for event in _record(seq, record):
                at = len(events)
                if isinstance(event, Message) and event.message.role == "assistant":
                    msg = event.message
                    words = msg.content
                    if seen is not None and words and words == seen.text:
                        event = _blank(event)  # its words were shown with its first writing; its calls are new
                        blanked.add(at)
                        words = ""
                    calls = msg.tool_calls or []
                    if (not calls and not words) or (calls and all(c.id in self._asked for c in calls)):
                        hidden.add(at)
                    for call in calls:
                        self._asked.setdefault(call.id, make.ms_of(event.ts))
                elif isinstance(event, Message) and event.message.role == "tool":
                    call_id = event.message.tool_call_id or ""
                    if call_id in self._answered:
                        hidden.update((at - 1, at))  # the result and its tool_end, given before
                    self._answered.add(call_id)
                elif isinstance(event, ToolEnd):
                    pass  # decided with its result, the next event
                elif seen is not None:
                    hidden.add(at)  # the same prompt, thinking, usage or note, written again
                events.append(event)
            if record_id:
                content = record.get("content")
                text = content if isinstance(content, str) else (seen.text if seen is not None else "")
                self._records[record_id] = _Gave(text)
        self._hidden_at[seq] = frozenset(hidden)
        self._blanked_at[seq] = frozenset(blanked)
        return events, frozenset(hidden)


def _workspace(events: list[Event]) -> str | None:
    """The first workspace folder the client's context message names (Gemini CLI records no cwd of its own)."""
    for event in events:
        if isinstance(event, UnknownEvent) and event.type == "context":
            found = _WORKSPACE.search(str(event.fields.get("text", "")))
            if found is not None:
                return found.group(1).strip()
    return None


def _blank(event: Event) -> Event:
    """An assistant message without its words (shown before, with the record's first writing)."""
    assert isinstance(event, Message)
    msg = event.message
    return Message(
        seq=event.seq, ts=event.ts, message=ChatMessage(role="assistant", content="", tool_calls=msg.tool_calls)
    )


def _record(seq: int, record: dict[str, Any]) -> list[Event]:
    """One message record's events, from its bytes alone."""
    kind = record.get("type")
    ts = str(record.get("timestamp") or "")
    content = record.get("content")
    events: list[Event] = []
    if kind == "user":
        texts: list[str] = []
        for part in content_parts(content):
            if part.text is not None:
                texts.append(part.text)
            if part.function_response is not None:
                response = part.function_response
                text, failed = response_text(response)
                events += make.answer(seq, ts, str(response.get("id") or ""), text, ok=not failed, took=None)
        if texts:
            text = "\n".join(texts)
            events.insert(
                0, make.note(seq, ts, "context", text=text) if text.startswith(_CONTEXT) else make.user(seq, ts, text)
            )
        return events
    if kind == "gemini":
        for thought in _listed(record.get("thoughts")):
            if isinstance(thought, dict):
                said = "\n".join(str(thought[k]) for k in ("subject", "description") if thought.get(k))
                events.append(make.thinking(seq, ts, said))
        texts = []
        calls: list[ToolCall] = []
        results: list[Event] = []
        for part in content_parts(content, empty_strings=False):
            if part.text is not None and not part.thought:
                texts.append(part.text)
            elif part.text is not None:
                events.append(make.thinking(seq, ts, part.text))
            if part.function_call is not None:
                calls.append(function_call(part.function_call))
        asked = make.ms_of(ts)
        for call in _listed(record.get("toolCalls")):
            if not isinstance(call, dict):
                continue
            calls.append(function_call(call))
            text, failed = _result_text(call)
            status = str(call.get("status") or "")
            # The shell tool says a command's failure only in its output ("Exit Code: 1"), its status "success".
            code = _EXIT_CODE.search(text)
            failed = failed or (code is not None and code.group(1) != "0")
            ok = None if status in ("", "cancelled") else status == "success" and not failed
            took = make.elapsed(asked, call.get("timestamp") if isinstance(call.get("timestamp"), str) else None)
            results += make.answer(seq, ts, str(call.get("id") or ""), text, ok=ok, took=took)
        if texts or calls:
            events.append(make.assistant(seq, ts, "\n".join(texts), calls))
        tokens = record.get("tokens")
        if isinstance(tokens, dict):
            used_in = _int(tokens.get("input"))
            used_out = _int(tokens.get("output")) + _int(tokens.get("thoughts"))
            events.append(
                make.usage(
                    seq, ts, used_in, used_out, record.get("model") if isinstance(record.get("model"), str) else None
                )
            )
        return events + results
    text = content if isinstance(content, str) else msgspec.json.encode(content).decode()
    if kind == "error":
        return [make.error(seq, ts, text)]
    return [make.note(seq, ts, str(kind), text=text)]


def _listed(value: object) -> list[Any]:
    """A member that should be a list, or none (a number there said nothing, and stopped the reading)."""
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _result_text(call: dict[str, Any]) -> tuple[str, bool]:
    """A recorded call's result as the model got it, and whether it says the call failed."""
    texts: list[str] = []
    failed = False
    for part in _listed(call.get("result")):
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict):
            text, bad = response_text(response)
            texts.append(text)
            failed = failed or bad
    if not texts and isinstance(call.get("resultDisplay"), str):
        texts.append(call["resultDisplay"])
    return "\n".join(texts), failed


# --- which files are its (where its sessions are: `folders`) ---------------------------------


def claims(line: dict[str, Any]) -> bool:
    """The header (session id, project hash, start time) or a `$set` of the session object's fields."""
    if "sessionId" in line and "projectHash" in line and "startTime" in line:
        return True
    fields = line.get("$set")
    return isinstance(fields, dict) and len(line) == 1 and bool(set(fields) & {"messages", "lastUpdated"})


# Its tools that change the workspace: the calls the writes filter keeps.
WRITE_TOOLS = frozenset(("run_shell_command", "write_file", "replace", "edit"))


FORMAT = Format(
    name=NAME,
    label=LABEL,
    folder=GEMINI.folder,
    translator=GeminiTranslator,
    kinds=Kinds(mapped=MAPPED, skipped=SKIPPED, write_tools=WRITE_TOOLS, claims=claims),
    session_id=GEMINI.session_id,
    open_calls_recorded=False,
)
