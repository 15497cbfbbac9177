"""A foreign session as a conversation: its branches, its clean fork points, and its messages up to one.

The outline reads the whole file once and keeps, per line of the conversation, only what the fork
points need (its role, a preview, the calls it asks and answers, its place in the tree). A point is
clean as in a Wren journal: after a user message, or after an assistant message that asks for no
tool, with no call left open, and where the model's reply does not go on in the next line (Claude
Code writes one reply's text and its tool call as two lines). Every branch of the file has its
points; the branch shown (to the newest entry) comes first.

The messages up to a point are what the agent had in its context there: the branch that leads to
the point, from its last compaction on (whose summary starts it), translated faithfully.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..journal.calls import CallTracker
from ..journal.events import ChatMessage, Message, Role, ToolCall, UnknownEvent
from ..journal.forking import ForkPoint, preview
from ..journal.verdict import Stop
from .base import BadLine, Format, Node
from .make import COMPACTION, COMPACTION_BOUNDARY
from .reader import units

# Notes that become a user message in the context (pi puts a summary of a branch left behind there).
_SUMMARIES = {"branch summary": "Summary of a branch left behind", "summary": "Summary"}


@dataclass(slots=True)
class Step:
    """One line of the conversation, as the fork points need it."""

    lineno: int
    role: str  # user, assistant, tool, or cut (a compaction: the context starts again after it)
    text: str = ""
    asks: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    node: Node | None = None
    # A cut: the entry from which the agent kept what came before it (pi), else nothing before it is kept.
    keep: str | None = None


@dataclass
class Outline:
    """The steps of a file in order, and its tree (empty for a format whose lines are one sequence)."""

    steps: list[Step] = field(default_factory=list)
    nodes: dict[str, Node] = field(default_factory=dict)
    # Line number of each entry, by id, and the line of each step.
    lines: dict[str, int] = field(default_factory=dict)
    # Entries with no child: the leaves, in the order they were written.
    leaves: list[str] = field(default_factory=list)
    stop: Stop | None = None  # where and why reading stopped, if it did before the end


def outline(fd: int, fmt: Format, stop: int | None = None) -> Outline:
    """The conversation of the file read through `fd`, up to `stop` or the first line that cannot be read."""
    translator = fmt.translator()
    out = Outline()
    children: set[str] = set()
    order: list[str] = []
    for lineno, (_start, data) in enumerate(units(fmt, fd, 0, stop), 1):
        try:
            line = translator.translate(lineno, data)
        except BadLine as exc:
            out.stop = Stop(lineno, _start, str(exc))
            break
        node = line.node
        if node is not None:
            if node.side:
                continue  # a subagent's thread: not a branch of this conversation
            out.nodes[node.id] = node
            out.lines[node.id] = lineno
            order.append(node.id)
            parent = node.parent or node.logical_parent
            if parent is not None:
                children.add(parent)
        for part, event in enumerate(line.events):
            if part in line.hidden:
                continue  # given by an earlier line (Gemini CLI's records written again)
            step = _step(lineno, event, node)
            if step is not None:
                out.steps.append(step)
    out.leaves = [id_ for id_ in order if id_ not in children]
    return out


def _step(lineno: int, event: object, node: Node | None) -> Step | None:
    if isinstance(event, Message):
        msg = event.message
        if msg.role == "tool":
            return Step(lineno, "tool", answers=(msg.tool_call_id or "",), node=node)
        asks = tuple(call.id for call in msg.tool_calls or ())
        return Step(lineno, msg.role, msg.content, asks=asks, node=node)
    if isinstance(event, UnknownEvent):
        if event.type == COMPACTION:
            keep = event.fields.get("keep")
            return Step(lineno, "cut", str(event.fields.get("text", "")), node=node, keep=str(keep) if keep else None)
        if event.type == COMPACTION_BOUNDARY:
            return Step(lineno, "cut", node=node)
        if event.type in _SUMMARIES:
            return Step(lineno, "user", str(event.fields.get("text", "")), node=node)
    return None


# --- branches and points ------------------------------------------------------------------------


def branch_lines(out: Outline, leaf: str | None) -> set[int] | None:
    """The line numbers of the entries from the root to `leaf`; None for a file with no tree (every line)."""
    if not out.nodes:
        return None
    lines: set[int] = set()
    at = leaf
    while at is not None and at in out.nodes and out.lines[at] not in lines:
        lines.add(out.lines[at])
        node = out.nodes[at]
        at = node.parent or node.logical_parent
    return lines


def _path(out: Outline, leaf: str | None, through: int | None = None) -> list[Step]:
    """The steps on the branch to `leaf` (every step, with no tree), up to line `through`."""
    on = branch_lines(out, leaf)
    return [
        s
        for s in out.steps
        if (on is None or s.node is None or s.lineno in on) and (through is None or s.lineno <= through)
    ]


def _points(steps: list[Step]) -> list[ForkPoint]:
    """The clean points of one branch's steps, by Wren's own rule (`journal.calls.CallTracker`)."""
    points: list[ForkPoint] = []
    calls = CallTracker(states=False)
    for at, step in enumerate(steps):
        if step.role == "cut":
            continue
        event = _as_message(step)
        clean = calls.is_clean_point(event)
        calls.add(event)
        if not clean:
            continue
        after = steps[at + 1] if at + 1 < len(steps) else None
        if step.role == "assistant" and after is not None and after.role == "assistant":
            continue  # the same reply goes on in the next line
        points.append(ForkPoint(step.lineno, step.role, preview(step.text)))
    return points


def _as_message(step: Step) -> Message:
    """A step as the message it was, with only what the call rule looks at (its role, calls, answer)."""
    if step.role == "tool":
        return Message(message=ChatMessage(role="tool", content="", tool_call_id=step.answers[0]))
    calls = [ToolCall(call_id, "", "") for call_id in step.asks] or None
    role: Role = "assistant" if step.role == "assistant" else "user"
    return Message(message=ChatMessage(role=role, content="", tool_calls=calls))


@dataclass(frozen=True)
class Branches:
    """Every branch's clean points: the branch shown first, then the others newest first."""

    points: list[ForkPoint]
    # How many branches besides the one shown have points of their own.
    others: int


def fork_points(out: Outline) -> Branches:
    """The clean points of every branch; a point two branches share is listed once, with the first."""
    if not out.nodes:
        return Branches(_points(out.steps), 0)
    leaves = list(reversed(out.leaves))  # newest first: the branch shown is the newest entry's
    seen: set[int] = set()
    listed: list[ForkPoint] = []
    others = 0
    for number, leaf in enumerate(leaves):
        fresh = [p for p in _points(_path(out, leaf)) if p.seq not in seen]
        if number and fresh:
            others += 1
            fresh = [ForkPoint(p.seq, f"{p.role} · branch {others + 1}", p.preview) for p in fresh]
        seen.update(p.seq for p in fresh)
        listed += fresh
    return Branches(listed, others)


def leaf_of(out: Outline, lineno: int) -> str | None:
    """The entry of line `lineno` (a point's line), whose branch the conversation follows up to it."""
    for id_, line in out.lines.items():
        if line == lineno:
            return id_
    return None


# --- the messages up to a point -------------------------------------------------------------------


@dataclass
class Context:
    """What a new Wren journal forked at a point starts from: the messages, and where the agent worked."""

    messages: list[ChatMessage]
    cwd: str | None
    model: str | None


def context(fd: int, fmt: Format, out: Outline, lineno: int) -> Context:
    """The messages the agent had in its context after line `lineno`, on that line's branch.

    From the last compaction on the way (its summary first, then what it kept), in order;
    consecutive assistant lines (one reply written as several) become one message; a tool message
    whose call is not in the context (cut away by a compaction) is left out.
    """
    wanted = _path(out, leaf_of(out, lineno), lineno)
    cuts = [at for at, step in enumerate(wanted) if step.role == "cut"]
    messages: list[ChatMessage] = []
    if cuts:
        cut = wanted[cuts[-1]]
        if cut.text:
            messages.append(ChatMessage(role="user", content=f"Summary of the conversation so far:\n{cut.text}"))
        kept_from = out.lines.get(cut.keep or "", cut.lineno)
        wanted = [s for s in wanted[: cuts[-1]] if s.lineno >= kept_from] + wanted[cuts[-1] + 1 :]
    needed = {s.lineno for s in wanted}
    translator = fmt.translator()
    cwd: str | None = None
    model: str | None = None
    for number, (_start, data) in enumerate(units(fmt, fd, 0), 1):
        if number > lineno:
            break
        line = translator.translate(number, data)
        cwd, model = line.cwd or cwd, line.model or model
        if number in needed:
            for part, event in enumerate(line.events):
                if part not in line.hidden:
                    _add(messages, event)
    return Context(_answered_only(messages), cwd, model)


def _add(messages: list[ChatMessage], event: object) -> None:
    if isinstance(event, Message):
        msg = event.message
        last = messages[-1] if messages else None
        if msg.role == "assistant" and last is not None and last.role == "assistant":
            text = "\n".join(t for t in (last.content, msg.content) if t)
            calls = [*(last.tool_calls or ()), *(msg.tool_calls or ())] or None
            messages[-1] = ChatMessage(role="assistant", content=text, tool_calls=calls)
        else:
            messages.append(msg)
    elif isinstance(event, UnknownEvent) and event.type in _SUMMARIES:
        text = str(event.fields.get("text", ""))
        messages.append(ChatMessage(role="user", content=f"{_SUMMARIES[event.type]}:\n{text}"))


def _answered_only(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Without tool messages that answer no call asked in these messages."""
    asked: set[str] = set()
    kept: list[ChatMessage] = []
    for msg in messages:
        if msg.role == "tool" and msg.tool_call_id not in asked:
            continue
        asked.update(call.id for call in msg.tool_calls or ())
        kept.append(msg)
    return kept
