"""Running a session: a new one for a task, or a resumed one under the refusal rule."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .. import __version__
from ..journal.events import ChatMessage, Error, Event, Recovery, RunEnd, RunStart, ToolEnd
from ..journal.fork import fork_points
from ..journal.index import LineScanner
from ..journal.reader import ReadVerdict, open_for_reading
from ..journal.replay import OpenCall, Replayed, Replayer
from ..journal.store import (
    SESSION_ID,
    latest,
    lock_holder,
    resolve,
    session_id_of,
    session_path,
)
from ..journal.writer import FsyncPolicy, JournalChanged, JournalCorrupt, JournalLocked, JournalUnusable, JournalWriter
from .approval import ApprovalGate, preview_call
from .gateway import Gateway, GatewayError
from .loop import Agent, Limits, Printer
from .redact import Redactor
from .scripted import UNKNOWN_OUTCOME, ScriptedModel
from .tools import COMMAND_TIMEOUT, Toolbox

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_REFUSED, EXIT_UNREADABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
EXIT_CHANGED = 5  # the journal was deleted, replaced or written by another program under the run

SYSTEM_PROMPT = (
    "You are Wren, a coding agent working in the workspace folder {root}. Use the tools to look before you "
    "change anything; run the tests after a change; keep replies short. A tool result that starts with "
    "'not run:' explains why a call did not run (denied, repeated, cancelled): do not retry it blindly."
)


class UsageError(Exception):
    """A bad option value; the command exits 2 with this sentence."""


@dataclass
class Settings:
    workspace: Path
    folder: Path
    model: Literal["scripted", "openai"] | None = None
    yes: bool = False
    pace: float = 0.0
    max_steps: int = 30
    command_timeout: float = COMMAND_TIMEOUT
    seq_fd: int | None = None
    printer: Printer = field(default_factory=Printer)
    # fdatasync after every event unless a benchmark asks otherwise.
    fsync: FsyncPolicy = "event"


def choose_gateway(settings: Settings) -> Gateway:
    """`openai` when asked for, or when WREN_API_KEY is set; the offline scripted model otherwise."""
    kind = settings.model or ("openai" if os.environ.get("WREN_API_KEY") else "scripted")
    if kind == "scripted":
        return ScriptedModel(settings.workspace, pace=settings.pace)
    from .openai_compat import OpenAIGateway

    if not os.environ.get("WREN_API_KEY") and not os.environ.get("WREN_BASE_URL"):
        raise UsageError("--model openai needs WREN_API_KEY (or WREN_BASE_URL for a local server that needs no key)")
    return OpenAIGateway.from_env(SYSTEM_PROMPT.format(root=settings.workspace))


def make_agent(settings: Settings, writer: JournalWriter, messages: list[ChatMessage] | None = None) -> Agent:
    reporter = _seq_reporter(settings.seq_fd)
    return Agent(
        writer,
        choose_gateway(settings),
        Toolbox(settings.workspace, protected=(settings.folder,), command_timeout=settings.command_timeout),
        ApprovalGate.for_terminal(settings.yes),
        redactor=Redactor(),
        limits=Limits(max_steps=settings.max_steps),
        printer=settings.printer,
        on_append=reporter,
        messages=messages,
    )


def _seq_reporter(fd: int | None) -> Callable[[int], None] | None:
    if fd is None:
        return None

    def report(seq: int) -> None:
        # After append returns the event is durable, so a supervisor may count on every seq it reads here.
        with contextlib.suppress(OSError):
            os.write(fd, b"%d\n" % seq)

    return report


def run_until_signal(work: Callable[[], Awaitable[int]]) -> int:
    """Run `work` with Ctrl+C (and SIGTERM) cancelling it, so it can record the cancel and return."""

    async def main() -> int:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        try:
            return await work()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    return asyncio.run(main())


async def drive(agent: Agent, turn: Callable[[], Awaitable[str]]) -> int:
    """One unit of work between run_start and run_end; every way out records how it ended."""
    try:
        return await _drive(agent, turn)
    except JournalChanged as exc:
        # Whatever else was going on, a run whose journal is gone never ends as done or cancelled.
        _err(f"{exc}.")
        return EXIT_CHANGED


async def _drive(agent: Agent, turn: Callable[[], Awaitable[str]]) -> int:
    try:
        reason = await turn()
    except asyncio.CancelledError:
        _end(agent, "cancelled")
        agent.printer.line("[cancelled]")
        return EXIT_INTERRUPTED
    except GatewayError as exc:
        agent.append(Error(message=str(exc), retryable=exc.retryable, attempt=exc.attempt))
        _end(agent, "error")
        _err(str(exc))
        return EXIT_ERROR
    except JournalChanged:
        raise
    except JournalUnusable as exc:
        _err(f"{str(exc).rstrip('.')}. The run stopped; nothing more was recorded.")
        return EXIT_ERROR
    _end(agent, "limit" if reason == "limit" else "done")
    return EXIT_OK


def _end(agent: Agent, reason: Literal["done", "cancelled", "error", "limit"]) -> None:
    try:
        agent.append(RunEnd(reason=reason))
    except JournalChanged:
        raise
    except JournalUnusable:
        pass


def _err(text: str) -> None:
    sys.stderr.write(f"wren: {text}\n")
    sys.stderr.flush()


def run_start(agent: Agent, workspace: Path, *, resumed: bool) -> None:
    agent.append(
        RunStart(pid=os.getpid(), cwd=str(workspace), model=agent.gateway.model, version=__version__, resumed=resumed)
    )


# --- wren run -----------------------------------------------------------------------------------


def new_session(settings: Settings, session_id: str | None) -> JournalWriter:
    if session_id is not None and not SESSION_ID.match(session_id):
        raise UsageError(f"--session-id {session_id!r} is not a session id (expected s-YYYYMMDD-HHMMSS-xxxx)")
    from ..journal.store import new_session_id

    path = session_path(settings.folder, session_id or new_session_id())
    if path.exists():
        raise UsageError(f"{path}: a session with this id already exists; choose a new id or resume it")
    return JournalWriter.create(path, fsync=settings.fsync)


async def run_task(settings: Settings, task: str, session_id: str | None) -> int:
    writer = new_session(settings, session_id)
    with writer:
        agent = make_agent(settings, writer)
        settings.printer.line(f"session {session_id_of(writer.path)}  (journal: {writer.path})")
        run_start(agent, settings.workspace, resumed=False)

        async def turn() -> str:
            agent.say(ChatMessage(role="user", content=task))
            return await agent.turn()

        status = await drive(agent, turn)
    if status != EXIT_CHANGED:
        settings.printer.line(f'continue with: wren resume {session_id_of(writer.path)} "MESSAGE"')
    return status


# --- wren resume --------------------------------------------------------------------------------


@dataclass
class ResumePlan:
    path: Path
    result: ReadVerdict
    replayed: Replayed


class ResumeStop(Exception):
    """Resume ends before anything is written: the exit status, and the sentence for the person."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status, self.text = status, text


def session_to_resume(folder: Path, ref: str | None, workspace: Path) -> Path:
    """ID (or a journal path), else the latest session of this workspace: never another project's."""
    return resolve(folder, ref) if ref else latest(folder, workspace)


def open_resume(path: Path, decide: Callable[[ResumePlan], object]) -> tuple[JournalWriter, ResumePlan]:
    """Read the journal once, under the writer's lock, replaying as it streams; memory holds the messages only.

    `decide` sees the plan before anything is written: a ResumeStop (or any exception) from it
    leaves the journal byte-identical, a torn tail still in place.
    """
    replayer = Replayer()
    plans: list[ResumePlan] = []

    def check(verdict: ReadVerdict) -> None:
        plans.append(ResumePlan(path, verdict, replayer.result()))
        decide(plans[0])

    writer = JournalWriter.open(path, on_events=replayer.feed, check=check)
    return writer, plans[0]


def _events(path: Path) -> Iterator[Event]:
    fd = open_for_reading(path)
    try:
        yield from (event for chunk in LineScanner(path, fd).chunks() for event in chunk.events)
    finally:
        os.close(fd)


def refusal(plan: ResumePlan) -> str:
    """Why resume will not guess: each call whose outcome is unknown, and what a person can do."""
    sid = session_id_of(plan.path)
    lines = [f"will not resume {sid}: a call with side effects started and its outcome is unknown."]
    for open_call in plan.replayed.uncertain_calls:
        start = open_call.started
        when = f"started at {start.ts} (seq {start.seq})" if start else "started"
        if open_call.ended is not None:
            when += f"; {ended_but_lost(open_call.ended)}"
        lines.append(f"  {preview_call(open_call.call)}  [{open_call.call.id}] {when}")
    lines.append("Nothing was written. Choose one:")
    lines.append(
        f"  wren resume {sid} --assume-failed   record that its outcome is unknown, tell the model to check "
        "before redoing it, and continue"
    )
    points = fork_points(_events(plan.path))
    if points:
        lines.append(
            f"  wren fork {sid} {points[-1].seq}   branch a new session from the last clean point "
            f"(seq {points[-1].seq}), then resume that"
        )
    return "\n".join(lines)


def ended_but_lost(end: ToolEnd) -> str:
    """What a tool_end with no tool message after it says: how the call ended, and that its output is lost."""
    how = "it ended ok" if end.ok else ("it failed" if end.ok is False else "it ended")
    if end.stoppedBy:
        how += f" (stopped by {end.stoppedBy})"
    if end.elapsedMs is not None:
        how += f" after {end.elapsedMs} ms"
    size = f"{end.chars} chars of output" if end.chars is not None else "its output"
    return f"{how}, but {size} never reached the journal"


def _has_work(replayed: Replayed, message: str | None) -> bool:
    if message or replayed.open_calls:
        return True
    last = replayed.messages[-1] if replayed.messages else None
    return last is not None and not (last.role == "assistant" and not last.toolCalls)


async def resume_session(settings: Settings, ref: str | None, message: str | None, assume_failed: bool) -> int:
    path = session_to_resume(settings.folder, ref, settings.workspace)

    def decide(plan: ResumePlan) -> None:
        if plan.replayed.uncertain_calls and not assume_failed:
            raise ResumeStop(EXIT_REFUSED, refusal(plan))
        if not _has_work(plan.replayed, message):
            sid = session_id_of(plan.path)
            state = "is finished" if plan.replayed.messages else "holds no conversation yet"
            raise ResumeStop(EXIT_OK, f'{sid} {state}; give a message to continue it: wren resume {sid} "MESSAGE"')

    try:
        writer, plan = open_resume(path, decide)
    except ResumeStop as stop:
        if stop.status == EXIT_OK:
            settings.printer.line(stop.text)
        else:
            _err(stop.text)
        return stop.status
    except JournalCorrupt as exc:
        _err(
            f"{exc.path}: line {exc.line}: {exc.reason.removeprefix(f'line {exc.line}: ')}. Nothing was written. "
            f"Read it with `wren log {exc.path}`, then fork from a point before that line."
        )
        return EXIT_UNREADABLE
    except JournalLocked:
        holder = lock_holder(path)
        who = f"process {holder}" if holder is not None else "another process"
        _err(
            f"{path}: {who} is still writing this session; wait for it to finish (or stop it), "
            "then resume. Nothing was written."
        )
        return EXIT_ERROR
    sid = session_id_of(plan.path)
    with writer:
        agent = make_agent(settings, writer, plan.replayed.messages)
        settings.printer.line(f"session {sid} resumed ({plan.replayed.replayed} messages replayed)")
        if plan.result.torn:
            settings.printer.line(f"[the torn last line was moved aside to {plan.path.name}.torn]")
        run_start(agent, settings.workspace, resumed=True)

        async def turn() -> str:
            await settle(agent, plan.replayed.open_calls)
            if message:
                agent.say(ChatMessage(role="user", content=message))
            last = agent.messages[-1] if agent.messages else None
            if last is not None and last.role == "assistant" and not last.toolCalls:
                return "done"
            return await agent.turn()

        status = await drive(agent, turn)
    return status


async def settle(agent: Agent, open_calls: list[OpenCall]) -> None:
    """Close the calls a previous process left open, as the refusal rule says, before the model goes on."""
    for open_call in open_calls:
        call = open_call.call
        if open_call.state == "outcome_unknown":
            when = open_call.started.ts if open_call.started else "an unknown time"
            if open_call.ended is None:
                decision = "assumed failed (--assume-failed); the model is told to check"
                told = (
                    f"Wren stopped after it started (at {when}) and before it recorded a result. Treat it as "
                    "failed, but check the workspace before doing it again: it may have done some or all of its work."
                )
                printed = "outcome unknown, recorded as assumed failed"
            else:
                decision = "output lost (--assume-failed); the model is told to check"
                told = (
                    f"It started at {when} and {ended_but_lost(open_call.ended)}: Wren stopped before it recorded "
                    "the output. Do not count on what it printed; check the workspace before doing it again."
                )
                printed = "it finished but its output was lost; the model is told to check"
            agent.append(Recovery(id=call.id, decision=decision))
            agent.say(ChatMessage(role="tool", toolCallId=call.id, content=f"{UNKNOWN_OUTCOME}. {told}"))
            agent.printer.line(f"  [{preview_call(call)}: {printed}]")
        elif open_call.state == "not_run" and open_call.ended is not None:
            # It was decided before the interruption that this call would not run: say so again.
            stopped = open_call.ended.stoppedBy
            agent.say(ChatMessage(role="tool", toolCallId=call.id, content=agent.not_run_message(call, stopped)))
            agent.printer.line(f"  [{preview_call(call)}: not run ({stopped or 'limit'}), as recorded before]")
        elif open_call.state == "read_only_started":
            await agent.run_call(call, note="  [running it again: it is read-only and was cut off]")
        else:
            await agent.run_call(call, note="  [it had not started before the interruption]")
