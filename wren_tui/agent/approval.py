"""The approval gate: read-only tools pass; the rest are allowed (--yes), asked at the terminal, or denied."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from ..journal.events import ToolCall
from .tools import ToolSpec

Approval = Literal["auto", "approved", "denied"]
Mode = Literal["yes", "ask", "deny"]
Ask = Callable[[str], Awaitable[str | None]]


@dataclass(frozen=True)
class Verdict:
    approval: Approval
    # Why a call was denied, in words the model reads.
    reason: str = ""


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

    async def decide(self, call: ToolCall, spec: ToolSpec | None) -> Verdict:
        if spec is None or spec.read_only:
            return Verdict("auto")
        if self.mode == "yes" or call.name in self.always:
            return Verdict("approved")
        if self.mode == "deny" or self.ask is None:
            return Verdict(
                "denied", "there is no terminal to ask for approval and --yes was not given, so side effects are denied"
            )
        answer = await self.ask(f"\nallow {preview_call(call)}?  [y]es / [n]o / [a]lways {call.name}: ")
        choice = (answer or "").strip().lower()
        if choice in ("a", "always"):
            self.always.add(call.name)
            return Verdict("approved")
        if choice in ("y", "yes"):
            return Verdict("approved")
        return Verdict("denied", "the user answered no at the approval prompt")


def preview_call(call: ToolCall, width: int = 200) -> str:
    """The call as a person judges it: the command, or the path and the size of the change."""
    try:
        args = json.loads(call.args or "{}")
    except ValueError:
        args = {}
    if not isinstance(args, dict):
        args = {}
    if call.name == "run_command":
        text = f"run_command `{args.get('command', '')}`"
    elif call.name == "edit_file":
        old, new = str(args.get("old", "")), str(args.get("new", ""))
        text = f"edit_file {args.get('path', '')} ({old.count(chr(10)) + 1} line(s) -> {new.count(chr(10)) + 1})"
    elif call.name == "write_file":
        text = f"write_file {args.get('path', '')} ({len(str(args.get('content', '')))} characters)"
    else:
        text = f"{call.name} {call.args}"
    return text if len(text) <= width else text[: width - 3] + "..."


async def ask_terminal(prompt: str) -> str | None:
    """One line from the terminal without blocking the event loop, so Ctrl+C still cancels the turn."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
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
    return data.decode("utf-8", errors="replace") if data else None
