"""`wren chat`: a REPL over one session. Ctrl+C during a turn cancels the turn; at the prompt it ends the chat."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator
from types import FrameType
from typing import Literal

from ..journal.events import ChatMessage, Error, RunEnd, event_type
from ..journal.fork import NotAForkPoint, fork, fork_points
from ..journal.reader import JournalError, read_events
from ..journal.replay import replay
from ..journal.store import list_sessions, session_id_of
from ..journal.writer import JournalCorrupt, JournalUnusable, JournalWriter
from . import outcomes
from .gateway import GatewayError
from .loop import Agent, cancel_cause
from .session import (
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
    resume_workspace,
    run_start,
    run_until_signal,
    session_to_resume,
)

HELP = "commands: /log  /fork [SEQ]  /sessions  /quit   (Ctrl+C stops a turn; Ctrl+D or /quit leaves)"


def chat(settings: Settings, resume_ref: str | None) -> int:
    out = settings.printer
    working_in = None
    if resume_ref is not None:
        chosen: list[tuple[Settings, str]] = []

        def decide(plan: ResumePlan) -> None:
            if plan.replayed.uncertain_calls:
                raise ResumeStop(EXIT_REFUSED, refusal(plan))
            chosen.append(resume_workspace(settings, plan))

        try:
            writer, plan = open_resume(session_to_resume(settings.folder, resume_ref or None), decide)
        except ResumeStop as stop:
            out.line("wren: " + stop.text)
            return stop.status
        except JournalCorrupt as exc:
            out.line(f"wren: {exc.path}: {exc.reason}; nothing was written")
            return EXIT_ERROR
        messages = plan.replayed.messages
        settings, working_in = chosen[0]
    else:
        writer, messages = new_session(settings, None), []
    agent = make_agent(settings, writer, messages)
    out.line(f"session {session_id_of(writer.path)}  (journal: {writer.path})")
    if working_in is not None:
        out.line(working_in)
    out.line(HELP)
    run_start(agent, settings.workspace, resumed=resume_ref is not None)
    end: Literal["done", "cancelled"] = "done"
    status = EXIT_OK
    try:
        while True:
            try:
                with _stopped_by_signals():
                    line = input("you > ").strip()
            except EOFError:
                break
            except KeyboardInterrupt:
                end, status = "cancelled", EXIT_INTERRUPTED
                break
            except _Stopped as stopped:
                out.line(f"[stopped by {outcomes.SIGNAL_CAUSES[stopped.signal.name]}]")
                end, status = "cancelled", 128 + stopped.signal.value
                break
            if not line:
                continue
            if line.startswith("/"):
                if line.split()[0] in ("/quit", "/exit"):
                    break
                agent = _command(agent, settings, line)
                continue
            current, text = agent, line
            turn_status = run_until_signal(lambda: _turn(current, text))  # noqa: B023 (called before the loop moves on)
            if turn_status > 128 and turn_status != EXIT_INTERRUPTED:
                # SIGTERM or SIGHUP: the chat ends with the turn; Ctrl+C only stops the turn.
                end, status = "cancelled", turn_status
                break
    except JournalUnusable as exc:
        out.line(f"wren: {str(exc).rstrip('.')}. The chat stopped; nothing more was recorded.")
        return EXIT_ERROR
    finally:
        with contextlib.suppress(JournalUnusable):
            agent.append(RunEnd(reason=end))
        agent.writer.close()
    out.line(f'continue with: wren resume {session_id_of(agent.writer.path)} "MESSAGE"')
    return status


class _Stopped(Exception):
    """SIGTERM or SIGHUP at the prompt: the chat ends as it would after Ctrl+C, recording run_end."""

    def __init__(self, sig: signal.Signals) -> None:
        super().__init__(sig.name)
        self.signal = sig


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """While the prompt waits, SIGTERM and SIGHUP raise _Stopped instead of ending the process unrecorded."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise _Stopped(signal.Signals(signum))

    ignored = [sig for sig in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(sig) is signal.SIG_IGN]
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP) if sig not in ignored}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def _turn(agent: Agent, text: str) -> int:
    agent.say(ChatMessage(role="user", content=text))
    try:
        await agent.turn()
    except asyncio.CancelledError as exc:
        cause = cancel_cause(exc)
        agent.printer.line(f"[turn stopped by {cause}]" if cause else "[turn cancelled]")
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
