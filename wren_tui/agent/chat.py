"""`wren chat`: a REPL over one session. Ctrl+C during a turn cancels the turn; at the prompt it ends the chat."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Literal

from ..journal.events import ChatMessage, Error, RunEnd, event_type
from ..journal.fork import NotAForkPoint, fork, fork_points
from ..journal.reader import JournalError, read_events
from ..journal.replay import replay
from ..journal.store import list_sessions, session_id_of
from ..journal.writer import JournalChanged, JournalCorrupt, JournalUnusable, JournalWriter
from .gateway import GatewayError
from .loop import Agent
from .session import (
    EXIT_CHANGED,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REFUSED,
    ResumePlan,
    ResumeStop,
    Settings,
    make_agent,
    new_session,
    open_resume,
    refusal,
    run_start,
    run_until_signal,
    session_to_resume,
)

HELP = "commands: /log  /fork [SEQ]  /sessions  /quit   (Ctrl+C stops a turn; Ctrl+D or /quit leaves)"


def chat(settings: Settings, resume_ref: str | None) -> int:
    out = settings.printer
    if resume_ref is not None:

        def decide(plan: ResumePlan) -> None:
            if plan.replayed.uncertain_calls:
                raise ResumeStop(EXIT_REFUSED, refusal(plan))

        try:
            writer, plan = open_resume(
                session_to_resume(settings.folder, resume_ref or None, settings.workspace), decide
            )
        except ResumeStop as stop:
            out.line("wren: " + stop.text)
            return stop.status
        except JournalCorrupt as exc:
            out.line(f"wren: {exc.path}: {exc.reason}; nothing was written")
            return EXIT_ERROR
        messages = plan.replayed.messages
    else:
        writer, messages = new_session(settings, None), []
    agent = make_agent(settings, writer, messages)
    out.line(f"session {session_id_of(writer.path)}  (journal: {writer.path})")
    out.line(HELP)
    run_start(agent, settings.workspace, resumed=resume_ref is not None)
    end: Literal["done", "cancelled"] = "done"
    try:
        while True:
            try:
                line = input("you > ").strip()
            except EOFError:
                break
            except KeyboardInterrupt:
                end = "cancelled"
                break
            if not line:
                continue
            if line.startswith("/"):
                if line.split()[0] in ("/quit", "/exit"):
                    break
                agent = _command(agent, settings, line)
                continue
            current, text = agent, line
            run_until_signal(lambda: _turn(current, text))  # noqa: B023 (called before the loop moves on)
    except JournalChanged as exc:
        out.line(f"wren: {exc}.")
        return EXIT_CHANGED
    except JournalUnusable as exc:
        out.line(f"wren: {str(exc).rstrip('.')}. The chat stopped; nothing more was recorded.")
        return EXIT_ERROR
    finally:
        with contextlib.suppress(JournalUnusable):
            agent.append(RunEnd(reason=end))
        agent.writer.close()
    if agent.writer.changed:  # found by the run_end above: no `continue with` over a lost journal
        out.line(f"wren: {agent.writer.changed}.")
        return EXIT_CHANGED
    out.line(f'continue with: wren resume {session_id_of(agent.writer.path)} "MESSAGE"')
    return EXIT_INTERRUPTED if end == "cancelled" else EXIT_OK


async def _turn(agent: Agent, text: str) -> int:
    agent.say(ChatMessage(role="user", content=text))
    try:
        await agent.turn()
    except asyncio.CancelledError:
        agent.printer.line("[turn cancelled]")
        return EXIT_INTERRUPTED
    except GatewayError as exc:
        agent.append(Error(message=str(exc), retryable=exc.retryable, attempt=exc.attempt))
        agent.printer.line(f"wren: {exc}")
        return EXIT_ERROR
    return EXIT_OK


def _command(agent: Agent, settings: Settings, line: str) -> Agent:
    from ..cli import summarize

    out = settings.printer
    name, *rest = line.split()
    if name == "/log":
        result = read_events(agent.writer.path)
        for event in result.events:
            out.line(f"{event.seq:>5}  {event_type(event):<10}  {summarize(event)}")
    elif name == "/sessions":
        for info in list_sessions(settings.folder):
            mark = "*" if info.path == agent.writer.path else " "
            out.line(f"{mark} {info.id}  {info.state:<15}  {info.events:>5} events")
    elif name == "/fork" and not rest:
        points = fork_points(read_events(agent.writer.path).events)
        out.line("clean fork points (fork with /fork SEQ):" if points else "no clean fork point yet")
        for point in points:
            out.line(f"  {point}")
    elif name == "/fork":
        return _switch_to_fork(agent, settings, rest[0])
    else:
        out.line(HELP)
    return agent


def _switch_to_fork(agent: Agent, settings: Settings, seq_text: str) -> Agent:
    out = settings.printer
    try:
        seq = int(seq_text)
    except ValueError:
        out.line(f"/fork takes a seq number, not {seq_text!r}")
        return agent
    try:
        forked = fork(agent.writer.path, seq, folder=agent.writer.path.parent)
    except (NotAForkPoint, JournalError) as exc:
        out.line(f"wren: {exc}")
        return agent
    agent.append(RunEnd(reason="done"))
    agent.writer.close()
    writer = JournalWriter.open(forked.path)
    child = make_agent(settings, writer, replay(read_events(forked.path).events).messages)
    run_start(child, settings.workspace, resumed=True)
    out.line(f"forked {forked.parent} at seq {forked.at_seq}: now in {forked.id}")
    return child
