"""A session as one self-contained HTML page: the conversation, the tool timings and the waterfall.

No script, no external asset (a Content-Security-Policy says so to the browser too), and every text
from the journal is made visible (control characters shown, see journal.visible) and then escaped,
so a hostile journal can neither run anything nor reach the network from the page. The markup itself
is ASCII (entities for its arrows and dots), so a page of ASCII text is joined and encoded as bytes are.
"""

from __future__ import annotations

from ..journal.events import KNOWN_TYPES, Delta, Event, Message, ToolEnd, ToolStart, Usage, describe, event_type
from ..journal.timing import duration
from ..journal.visible import visible_text
from .atomic import AtomicOutput
from .reading import CallRow, Reading
from .text import clock, shown, shown_line


def escape(text: str, quote: bool = False) -> str:
    """Text for an HTML text node (`quote`: for an attribute value too)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("'", "&#x27;") if quote else text


_OPEN_UNDER = 9  # a tool result of fewer lines shows unfolded
_ROLE = {"user": "you", "assistant": "assistant", "tool": "tool result"}

_STYLE = """
:root { color-scheme: light dark; --ok: #2e7d32; --bad: #c62828; --unknown: #ef6c00; --run: #1565c0; --muted: #777; }
body { font: 15px/1.45 system-ui, sans-serif; max-width: 72rem; margin: 1.5rem auto; padding: 0 1rem; }
h1 { font-size: 1.4rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #8884; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0 .3rem 1rem; font: 13px/1.4 monospace; }
.stop { border: 2px solid var(--bad); padding: .6rem 1rem; font-weight: bold; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; }
dl.facts dt { color: var(--muted); }
.msg h3 { font-size: .95rem; margin: 1rem 0 0; }
.msg .seq, .note .seq { color: var(--muted); font-weight: normal; }
.user h3 { color: var(--run); }
.assistant h3 { color: var(--ok); }
.tool summary { color: var(--unknown); }
.partial h3 { color: var(--unknown); font-style: italic; }
.call { margin: .2rem 0 .2rem 1rem; font: 13px ui-monospace, monospace; color: var(--muted); }
.note { margin: .1rem 0; color: var(--muted); font-size: 13px; }
.note.error { color: var(--bad); }
table { border-collapse: collapse; font-size: 13px; width: 100%; }
th, td { text-align: left; padding: .15rem .5rem; border-bottom: 1px solid #8883; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
td.args { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.ok { color: var(--ok); }
.failed, .stopped { color: var(--bad); }
.unknown { color: var(--unknown); font-weight: bold; }
.running { color: var(--run); }
.muted { color: var(--muted); }
.wf { font-size: 12px; }
.wf-row { display: grid; grid-template-columns: 9rem 1fr 6rem; gap: .5rem; align-items: center; }
.wf-row .name { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; font-family: ui-monospace, monospace; }
.track { position: relative; height: .8rem; background: #8881; }
.bar { position: absolute; top: 0; bottom: 0; min-width: 2px; }
.bar.ok { background: var(--ok); }
.bar.failed, .bar.stopped { background: var(--bad); }
.bar.unknown { background: var(--unknown); }
.bar.running { background: var(--run); }
.bar.muted { background: var(--muted); }
.axis { display: grid; grid-template-columns: 9rem 1fr 6rem; gap: .5rem; color: var(--muted); }
.axis .ticks { display: flex; justify-content: space-between; }
.spark { display: flex; align-items: flex-end; gap: 1px; height: 3rem; }
.spark span { flex: 1; background: var(--run); min-height: 1px; }
"""


def state_class(state: str) -> str:
    if state == "ok":
        return "ok"
    if state == "failed":
        return "failed"
    if state.startswith("stopped"):
        return "stopped"
    if state in ("outcome unknown", "interrupted"):
        return "unknown"
    if state == "running":
        return "running"
    return "muted"


class HtmlConversation:
    """The conversation as HTML, written to the export's body as the journal is read."""

    def __init__(self, out: AtomicOutput) -> None:
        self.write = out.write
        # A tool_start held back: when its tool_end comes next, the two are one line.
        self._started: ToolStart | None = None

    def message(self, event: Message) -> None:
        if self._started is not None:
            self.close()
        msg = event.message
        role = msg.role
        who = _ROLE[role]
        if msg.tool_call_id:
            who += f" [{escape(shown_line(msg.tool_call_id))}]"
        when = f'<span class="seq">#{event.seq} {clock(event.ts)}</span>'
        content = msg.content
        body = ""
        if content:
            # shown() and escape(), written out: this runs once for every message of the journal.
            if not content.replace("\n", "").isprintable():
                content = visible_text(content)
            content = content.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            body = f"<pre>{content}</pre>"
        if role == "tool":
            lines = msg.content.count("\n") + 1 if msg.content else 0
            fold = " open" if lines < _OPEN_UNDER else ""
            self.write(
                f'<details class="msg tool" id="seq-{event.seq}"{fold}><summary>{who} {when} &middot; {lines} lines'
                f"</summary>{body}</details>\n"
            )
            return
        calls = (
            "".join(
                f'<p class="call">&rarr; {escape(shown_line(c.name))}({escape(shown_line(c.args))})</p>'
                for c in msg.tool_calls
            )
            if msg.tool_calls
            else ""
        )
        self.write(f'<article class="msg {role}" id="seq-{event.seq}"><h3>{who} {when}</h3>{body}{calls}</article>\n')

    def partial(self, first: Delta, last_seq: int, text: str) -> None:
        if self._started is not None:
            self.close()
        seqs = f"#{first.seq}" if last_seq == first.seq else f"#{first.seq}&ndash;#{last_seq}"
        self.write(
            f'<article class="msg partial" id="seq-{first.seq}"><h3>partial reply, discarded (no reply followed '
            f'it) <span class="seq">{seqs} {escape(clock(first.ts))}</span></h3><pre>{escape(shown(text))}</pre>'
            "</article>\n"
        )

    def note(self, event: Event, error: bool) -> None:
        if isinstance(event, Usage):
            return  # the facts and the tokens per turn say these
        started = self._started
        if isinstance(event, ToolStart):
            if started is not None:
                self._note(started, False)
            self._started = event
            return
        if started is not None:
            self._started = None
            if isinstance(event, ToolEnd) and event.id == started.id:
                self._call_note(started, event, error)
                return
            self._note(started, False)
        self._note(event, error)

    def close(self) -> None:
        if self._started is not None:
            self._note(self._started, False)
            self._started = None

    def _note(self, event: Event, error: bool) -> None:
        cls = "note error" if error else "note"
        mark = "!" if error else "&middot;"
        kind = event_type(event)
        if kind not in KNOWN_TYPES:
            kind = escape(shown_line(kind))
        self.write(
            f'<p class="{cls}" id="seq-{event.seq}">{mark} {kind} <span '
            f'class="seq">#{event.seq} {clock(event.ts)}</span> {escape(shown_line(describe(event)))}</p>\n'
        )

    def _call_note(self, start: ToolStart, end: ToolEnd, error: bool) -> None:
        """A call's start and its end, one after the other in the journal, as one line."""
        cls = "note error" if error else "note"
        mark = "!" if error else "&middot;"
        self.write(
            f'<p class="{cls}" id="seq-{start.seq}">{mark} tool <span class="seq">#{start.seq}&ndash;#{end.seq} '
            f"{clock(start.ts)}</span> {escape(shown_line(describe(start)))}; "
            f'<span id="seq-{end.seq}">{escape(shown_line(describe(end)))}</span></p>\n'
        )


def head(reading: Reading) -> str:
    """Everything before the conversation: the title, where reading stopped, the facts, the waterfall, the calls."""
    sid = escape(shown_line(reading.id))
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>wren &middot; {sid}</title><style>{_STYLE}</style></head><body>\n",
        f"<header><h1>Session {sid}</h1>\n",
    ]
    stop = reading.stop_sentence()
    if stop:
        parts.append(f'<p class="stop" id="stopped">{escape(stop)}</p>\n')
    parts.append(_facts(reading))
    parts.append("</header>\n")
    parts.append(_sparkline(reading.turn_tokens))
    parts.append(_waterfall(reading))
    parts.append(_call_table(reading))
    parts.append('<section id="conversation"><h2>Conversation</h2>\n')
    return "".join(parts)


FOOT = "</section>\n</body></html>\n"


def _facts(reading: Reading) -> str:
    spent = reading.spent
    state = "live (still being written)" if reading.writer_alive else (reading.ended or "interrupted (it never ended)")
    rows = [
        ("events", f"{reading.events:,}"),
        ("state", state),
        ("tokens", f"{reading.tokens:,}"),
        ("started", reading.first_ts or "-"),
        ("last event", reading.last_ts or "-"),
        ("waiting for the model", duration(spent.model_ms)),
        ("running tools", duration(spent.tools_ms)),
    ]
    if reading.forked_from:
        rows.append(("forked from", f"{reading.forked_from} at seq {reading.fork_at}"))
    cells = "".join(f"<dt>{escape(k)}</dt><dd>{escape(shown_line(v))}</dd>" for k, v in rows)
    return f'<dl class="facts">{cells}</dl>\n'


def _sparkline(turns: list[int]) -> str:
    if not turns:
        return ""
    top = max(turns) or 1
    bars = "".join(
        f'<span style="height:{100 * t / top:.1f}%" title="turn {i}: {t} tokens"></span>'
        for i, t in enumerate(turns, 1)
    )
    return f'<section id="tokens"><h2>Tokens per turn</h2><div class="spark">{bars}</div></section>\n'


def _waterfall(reading: Reading) -> str:
    first, last = reading.first_ms, reading.last_ms
    timed = [c for c in reading.calls if c.start_ms is not None]
    if first is None or last is None or not timed:
        return ""
    span = max(last - first, 1)
    rows = []
    names: dict[str, str] = {}
    for call in timed:
        assert call.start_ms is not None
        name = names.get(call.name)
        if name is None:
            name = names[call.name] = escape(shown_line(call.name), quote=True)
        state = call.state(reading.writer_alive)
        cls = state_class(state)
        elapsed = call.elapsed_ms if call.elapsed_ms is not None else max(last - call.start_ms, 0)
        left = 100 * (call.start_ms - first) / span
        width = min(100 * elapsed / span, 100 - left)
        label = duration(elapsed) if call.elapsed_ms is not None else state
        rows.append(
            f'<div class="wf-row"><span class="name">{name}</span><span class="track"><span class="bar {cls}" '
            f'style="left:{left:.3f}%;width:{width:.3f}%" title="#{call.number} {name}: {state}"></span></span>'
            f'<span class="{cls}">{label}</span></div>\n'
        )
    ticks = "".join(f"<span>{escape(duration(span * k // 4))}</span>" for k in range(5))
    axis = f'<div class="axis"><span></span><span class="ticks">{ticks}</span><span></span></div>\n'
    return f'<section id="waterfall" class="wf"><h2>Tool calls over time</h2>{axis}{"".join(rows)}</section>\n'


def _call_table(reading: Reading) -> str:
    if not reading.calls:
        return ""
    rows = []
    for call in reading.calls:
        rows.append(_call_row(call, reading.writer_alive))
    head_row = "<tr><th>#</th><th>tool</th><th>arguments</th><th>elapsed</th><th>size</th><th>state</th></tr>"
    return f'<section id="tools"><h2>Tool calls</h2><table>{head_row}\n{"".join(rows)}</table></section>\n'


def _call_row(call: CallRow, writer_alive: bool) -> str:
    state = call.state(writer_alive)
    end = call.end
    elapsed = "" if call.elapsed_ms is None else duration(call.elapsed_ms)
    size = "" if end is None or end.chars is None else f"{end.chars:,}"
    notes = [state]
    if end is not None and end.truncated:
        notes.append("truncated")
    if call.start is not None and call.start.approval != "auto":
        notes.append(call.start.approval)
    return (
        f'<tr><td class="num"><a href="#seq-{call.asked_seq}">{call.number}</a></td>'
        f'<td>{escape(shown_line(call.name))}</td><td class="args">{escape(shown_line(call.args))}</td>'
        f'<td class="num">{elapsed}</td><td class="num">{size}</td>'
        f'<td class="{state_class(state)}">{escape(", ".join(notes))}</td></tr>\n'
    )
