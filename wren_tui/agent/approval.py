"""The approval gate: read-only tools pass; the rest are allowed (--yes), asked at the terminal, or denied.

The prompt shows what will run exactly: every character a terminal would obey (CR, ESC, backspace,
bidi overrides, C1, format characters) is shown as a placeholder and named, and a command too long
to show whole says how much of it is not shown. An edit or a write shows its change, the first lines of
a unified diff, the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import os
import sys
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from ..journal.events import ToolCall
from ..journal.visible import hidden_characters, placeholder, visible
from . import outcomes
from .tools import Tool

Approval = Literal["auto", "approved", "denied"]
Mode = Literal["yes", "ask", "deny"]
Ask = Callable[[str], Awaitable[str | None]]


# A command longer than this is shown at the prompt as its head and its tail, and says how much is not shown.
PROMPT_LIMIT = 4000
_PREVIEW_WIDTH = 200
_NAMES = {
    "\n": "newline",
    "\r": "carriage return",
    "\x1b": "escape",
    "\x08": "backspace",
    "\x07": "bell",
    "\x00": "NUL",
    "\x7f": "delete",
    "\x0b": "vertical tab",
    "\x0c": "form feed",
}
NO_ANSWER = "no answer"


@dataclass(frozen=True)
class Decision:
    approval: Approval
    # Why a call was denied: the whole tool result the model reads.
    reason: str = ""
    # How the printed line marks a denied call.
    label: str = "denied"


@dataclass
class ApprovalGate:
    mode: Mode
    ask: Ask | None = None
    always: set[str] = field(default_factory=set)

    @classmethod
    def for_terminal(cls, yes: bool) -> ApprovalGate:
        """--yes allows all; a terminal on stdin is asked; otherwise side effects are denied."""
        if yes:
            return cls("yes")
        if sys.stdin.isatty():
            return cls("ask", ask_terminal)
        return cls("deny")

    async def decide(self, call: ToolCall, tool: Tool | None) -> Decision:
        if tool is None or tool.read_only:
            return Decision("auto")
        if self.mode == "yes" or call.name in self.always:
            return Decision("approved")
        if self.mode == "deny" or self.ask is None:
            return Decision(
                "denied",
                outcomes.denied(
                    "there is no terminal to ask for approval and --yes was not given, so side effects are denied"
                ),
            )
        answer = await self.ask(approval_prompt(call))
        if answer is None:
            # End of input (Ctrl+D, or the terminal went away) is not a person answering no.
            return Decision(
                "denied",
                f"{outcomes.NOT_RUN} no answer: the terminal closed its input at the approval prompt "
                "(end of input, such as Ctrl+D), so the call was not run",
                NO_ANSWER,
            )
        choice = answer.strip().lower()
        if choice in ("a", "always"):
            self.always.add(call.name)
            return Decision("approved")
        if choice in ("y", "yes"):
            return Decision("approved")
        return Decision("denied", outcomes.denied("the user answered no at the approval prompt"))


def approval_prompt(call: ToolCall, screen: tuple[int, int] | None = None) -> str:
    """The question asked at the terminal: the call shown exactly, a note for each kind of hidden character.

    `screen` is the terminal's (columns, rows), the one on stderr by default. A command that would not fit
    is folded (its first and last lines, and how many are not shown), so the question's first line never
    scrolls away; and the question line itself says how many lines the command has and shows its first.
    """
    columns, rows = screen or _screen()
    args = _args(call)
    choices = f"[y]es / [n]o / [a]lways {call.name}: "
    if call.name == "run_command":
        command = str(args.get("command", ""))
        head, notes = _command_shown(command)
        if len(head) > 1 or _height(head[0] + "  " + choices, columns) > max(rows - 4, 1):
            return _folded(command, head, notes, choices, columns, rows)
    else:
        head = [f"allow {preview_call(call, width=PROMPT_LIMIT)}?"]
        notes = _notes(*_subject(call, args))
        if call.name in ("edit_file", "write_file"):
            head, notes = _change_shown(call.name, args, head, notes, columns, rows)
    if not notes and len(head) == 1:
        return f"\n{head[0]}  {choices}"
    return "\n" + "\n".join([*head, *(f"  ({note})" for note in notes), choices])


def _change_shown(
    name: str, args: dict[str, object], head: list[str], notes: list[str], columns: int, rows: int
) -> tuple[list[str], list[str]]:
    """An edit's or a write's prompt: its question line, then the first lines of the change as a unified diff (the
    text replaced and its replacement; a write's content, all added), each behind the gutter and made visible, as
    many as fit the screen, and how many more there are; with a note for the hidden characters of the text."""
    if name == "edit_file":
        old, new, what = str(args.get("old", "")), str(args.get("new", "")), "the edit"
    else:
        old, new, what = "", str(args.get("content", "")), "the content"
    # Split on newlines alone: a CR, form feed or separator in a line is shown as a placeholder, never as a break.
    before, after = old.split("\n") if old else [], new.split("\n") if new else []
    diff = list(difflib.unified_diff(before, after, lineterm="", n=2))[2:]  # its ---/+++ lines: the path is above
    notes = [*notes, *_notes((old + new).replace("\n", ""), what)]
    width = max(columns - 4, 20)
    shown = [f"  | {_cut(line, width)}" for line in diff]
    # The blank line before, the question, the notes, the line of what is left out, the choices and a spare row.
    room = max(rows - 5 - len(notes), 3)
    body = _take(shown, room, columns)
    left = len(shown) - len(body)
    if left:
        body.append(f"  ... {left} more line{'s' if left != 1 else ''} of the diff not shown here ...")
    return [*head, *body], notes


def _screen() -> tuple[int, int]:
    """The terminal's columns and rows (the prompt is written on stderr); 80x24 when there is none."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError):
        return 80, 24
    if not size.columns or not size.lines:  # a pty nobody gave a size
        return 80, 24
    return max(size.columns, 20), max(size.lines, 6)


def _height(line: str, columns: int) -> int:
    """How many rows of the terminal one printed line takes (it wraps at `columns`)."""
    return max(1, -(-len(line) // columns))


def _folded(command: str, head: list[str], notes: list[str], choices: str, columns: int, rows: int) -> str:
    """A multi-line (or very long) command's prompt made to fit the screen, the question line saying what it is."""
    count = command.count("\n") + 1
    first = _cut(command.split("\n", 1)[0], max(40, columns - len(choices) - 45))
    lines = "line" if count == 1 else "lines"
    question = f"allow this command of {count} {lines} (the first: `{first}`)? {choices}"
    notes_shown = [f"  ({note})" for note in notes]
    if len(head) == 1:  # one line too long for the screen: shown behind the gutter, like the lines of any other
        head = [f"allow run_command, a command of {count} {lines}?", f"  | {visible(command)}"]
    # The blank line before, the header, the notes, the question and a spare row stay on the screen.
    room = rows - 2 - sum(_height(line, columns) for line in [head[0], *notes_shown, question])
    body = _fit(head[1:], max(room, 3), columns)
    return "\n" + "\n".join([head[0], *body, *notes_shown, question])


def _fit(body: list[str], room: int, columns: int) -> list[str]:
    """The command's lines in at most `room` rows: its first and last, and one line saying how many are not shown."""
    if sum(_height(line, columns) for line in body) <= room:
        return body
    share = (room - 1) // 2
    top = _take(body, share, columns)
    bottom = _take(body[len(top) :][::-1], room - 1 - share, columns)[::-1]
    left = body[len(top) : len(body) - len(bottom)]
    # What is left out is one line: how many of the command's lines, or (past PROMPT_LIMIT) its characters.
    missing = sum(line.startswith("  | ") for line in left)
    middle = [f"  ... {missing} more line{'s' if missing != 1 else ''} not shown here ..."] if missing else left[:1]
    return [*top, *middle, *bottom]


def _take(lines: list[str], room: int, columns: int) -> list[str]:
    """Lines from the start while they fit in `room` rows; the first one at least (cut to fit, see _shorten)."""
    taken: list[str] = []
    used = 0
    for line in lines:
        need = _height(line, columns)
        if taken and used + need > room:
            break
        taken.append(line if need <= room else _shorten(line, room, columns))
        used += min(need, room)
    return taken


def _shorten(line: str, room: int, columns: int) -> str:
    """A line cut to `room` rows: its start and its end, and how many characters between are not shown."""
    if _height(line, columns) <= room:
        return line
    keep = max(room * columns - 45, 48)
    head, tail = keep * 3 // 4, keep // 4
    return f"{line[:head]} ... [{len(line) - head - tail} characters not shown] ... {line[-tail:]}"


def _command_shown(command: str) -> tuple[list[str], list[str]]:
    """The prompt's lines for a command, and its notes: hidden characters, and how much is not shown."""
    notes = _notes(command.replace("\n", ""), "the command")
    count = command.count("\n") + 1
    if len(command) <= PROMPT_LIMIT:
        lines = [visible(line) for line in command.split("\n")]
        if count == 1:
            return [f"allow run_command `{lines[0]}`?"], notes
        # Each line of a multi-line command behind a gutter, so none can pass for Wren's own text.
        return [f"allow run_command, a command of {count} lines?", *(f"  | {line}" for line in lines)], notes
    head, tail = PROMPT_LIMIT * 3 // 4, PROMPT_LIMIT // 4
    cut = len(command) - head - tail
    notes.append(f"the command is {len(command)} characters long: {cut} in the middle are not shown here")
    return [
        f"allow run_command, a command of {count} line{'s' if count > 1 else ''}?",
        *(f"  | {visible(line)}" for line in command[:head].split("\n")),
        f"  ... {cut} characters not shown ...",
        *(f"  | {visible(line)}" for line in command[-tail:].split("\n")),
    ], notes


def _notes(text: str, what: str) -> list[str]:
    hidden = hidden_characters(text)
    if not hidden:
        return []
    named = ", ".join(f"{placeholder(c)} {_name(c)}" for c in hidden)
    return [f"{what} contains control characters, shown as {named}"]


def _name(char: str) -> str:
    if char in _NAMES:
        return _NAMES[char]
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"control U+{code:04X}"
    return unicodedata.name(char, f"U+{code:04X}").lower()


def _args(call: ToolCall) -> dict[str, object]:
    try:
        args = json.loads(call.args or "{}")
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {}


def _subject(call: ToolCall, args: dict[str, object]) -> tuple[str, str]:
    """The part of a call's preview that comes from the model (a path, or the raw arguments), and its name."""
    if call.name in ("edit_file", "write_file"):
        return str(args.get("path", "")), "the path"
    return f"{call.name} {call.args}", "the call"


def preview_call(call: ToolCall, width: int = _PREVIEW_WIDTH) -> str:
    """The call on one line as a person judges it: the command, or the path and the size of the change.

    Every hidden character is shown as a placeholder (a newline as ␊); a preview cut to `width`
    says how many characters of the call it leaves out.
    """
    args = _args(call)
    if call.name == "run_command":
        return f"run_command `{_cut(str(args.get('command', '')), width)}`"
    if call.name == "edit_file":
        old, new = str(args.get("old", "")), str(args.get("new", ""))
        path = _cut(str(args.get("path", "")), width)
        return f"edit_file {path} ({old.count(chr(10)) + 1} line(s) -> {new.count(chr(10)) + 1})"
    if call.name == "write_file":
        return f"write_file {_cut(str(args.get('path', '')), width)} ({len(str(args.get('content', '')))} characters)"
    return _cut(f"{call.name} {call.args}", width)


def _cut(text: str, width: int) -> str:
    """`text` made visible; past `width` characters, the rest is replaced by how many characters it held."""
    if len(text) <= width:
        return visible(text)
    return f"{visible(text[:width])}... [{len(text) - width} more characters not shown]"


async def ask_terminal(prompt: str) -> str | None:
    """One line from the terminal without blocking the event loop, so Ctrl+C still cancels the turn.

    None means no answer came: end of input (Ctrl+D) or a terminal that is gone.
    """
    try:
        sys.stderr.write(prompt)
        sys.stderr.flush()
    except OSError:
        return None
    loop = asyncio.get_running_loop()
    fd = sys.stdin.fileno()
    got: asyncio.Future[bytes] = loop.create_future()

    def readable() -> None:
        if not got.done():
            try:
                got.set_result(os.read(fd, 4096))
            except OSError as exc:
                got.set_exception(exc)

    loop.add_reader(fd, readable)
    try:
        data = await got
    except OSError:
        return None
    finally:
        loop.remove_reader(fd)
    if not data:
        # The prompt line was left open; what is printed next starts on a line of its own.
        with contextlib.suppress(OSError):
            sys.stderr.write("\n")
            sys.stderr.flush()
        return None
    return data.decode("utf-8", errors="replace")
