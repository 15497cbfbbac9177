"""A session as Markdown for a pull request's description: what was asked, the calls, the answers.

Every text from the journal goes into a fenced block (longer than any run of backticks it holds)
or a table cell as inline code, with its control characters made visible, so nothing in it is
read as Markdown or HTML. Long tool results keep their first lines.
"""

from __future__ import annotations

import re

from ..journal.events import Delta, Event, Message, describe, event_type
from ..journal.timing import duration
from .atomic import AtomicOutput
from .reading import Reading
from .text import clock, shown, shown_line

TOOL_LINES = 40  # a tool result shows this many lines; the rest is said to be in the journal
_TICKS = re.compile(r"`+")
_ROLE = {"user": "you", "assistant": "assistant", "tool": "tool result"}


def fenced(text: str) -> str:
    """`text` in a fenced block no line of it can close."""
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}\n"


def code(text: str) -> str:
    """`text` as inline code in a table cell: one line, its pipes escaped, delimited past its backticks."""
    text = shown_line(text).replace("|", "\\|")
    if not text:
        return ""
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def plain(text: str) -> str:
    """Words outside code: visible, and with the characters Markdown or HTML would act on escaped."""
    return re.sub(r"([\\`*_{}\[\]()#+!|<>&~-])", r"\\\1", shown_line(text))


class MarkdownConversation:
    def __init__(self, out: AtomicOutput) -> None:
        self.write = out.write

    def close(self) -> None:
        pass  # nothing is held back

    def message(self, event: Message) -> None:
        msg = event.message
        who = _ROLE[msg.role]
        if msg.tool_call_id:
            who += f" {code(msg.tool_call_id)}"
        parts = [f"**{who}** · #{event.seq} · {clock(event.ts)}\n\n"]
        if msg.content:
            text = shown(msg.content)
            if msg.role == "tool":
                lines = text.split("\n")
                if len(lines) > TOOL_LINES:
                    more = len(lines) - TOOL_LINES
                    text = "\n".join(lines[:TOOL_LINES])
                    parts.append(fenced(text))
                    parts.append(f"\n*… {more:,} more lines (the whole result is in the journal)*\n")
                else:
                    parts.append(fenced(text))
            else:
                parts.append(fenced(text))
        for call in msg.tool_calls or ():
            parts.append(f"\n→ {code(call.name)} {code(call.args)}\n")
        parts.append("\n")
        self.write("".join(parts))

    def partial(self, first: Delta, last_seq: int, text: str) -> None:
        seqs = f"#{first.seq}" if last_seq == first.seq else f"#{first.seq}–#{last_seq}"
        self.write(
            f"**partial reply, discarded** (no reply followed it) · {seqs} · {clock(first.ts)}\n\n"
            f"{fenced(shown(text))}\n"
        )

    def note(self, event: Event, error: bool) -> None:
        if event_type(event) in ("usage", "tool_start", "tool_end"):
            return  # the calls table and the totals say these
        mark = "**!**" if error else "·"
        self.write(f"{mark} {plain(event_type(event))} #{event.seq} {clock(event.ts)} {plain(describe(event))}\n\n")


def head(reading: Reading) -> str:
    lines = [f"# Session {code(reading.id)}\n"]
    stop = reading.stop_sentence()
    if stop:
        lines.append(f"> **{plain(stop)}**\n")
    spent = reading.spent
    state = "live (still being written)" if reading.writer_alive else (reading.ended or "interrupted (it never ended)")
    facts = [
        f"- events: {reading.events:,} · state: {plain(state)} · tokens: {reading.tokens:,}",
        # Times as code: plain inside (a PR description is often read raw), where escaped they read 2026\-12\-07.
        f"- started {code(reading.first_ts or '') or '-'}, last event {code(reading.last_ts or '') or '-'}",
        f"- waiting for the model {duration(spent.model_ms)} · running tools {duration(spent.tools_ms)}",
    ]
    if reading.forked_from:
        facts.append(f"- forked from {code(reading.forked_from)} at seq {reading.fork_at}")
    lines.append("\n".join(facts) + "\n")
    if reading.calls:
        lines.append("## Tool calls\n")
        rows = ["| # | tool | arguments | elapsed | state |", "| ---: | --- | --- | ---: | --- |"]
        for call in reading.calls:
            elapsed = "" if call.elapsed_ms is None else duration(call.elapsed_ms)
            state = call.state(reading.writer_alive)
            rows.append(f"| {call.number} | {code(call.name)} | {code(call.args)} | {elapsed} | {plain(state)} |")
        lines.append("\n".join(rows) + "\n")
    lines.append("## Conversation\n\n")
    return "\n".join(lines)
