"""`wren chat`: a REPL over one session. Ctrl+C during a turn cancels the turn; at the prompt it ends the chat."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
from pathlib import Path
from typing import Literal

from ..journal.events import ChatMessage, Error, RunEnd, event_type
from ..journal.fork import NotAForkPoint, fork, fork_listing, fork_points
from ..journal.reader import JournalError, read_events
from ..journal.replay import replay
from ..journal.store import list_sessions, session_id_of, write_problem
from ..journal.writer import JournalCorrupt, JournalUnusable, JournalWriter
from .gateway import GatewayError
from .loop import Agent
from .session import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REFUSED,
    ResumePlan,
    ResumeStop,
    Settings,
    continue_with,
    make_agent,
    new_session,
    open_resume,
    refusal,
    resumed_line,
    run_start,
    run_until_signal,
    session_to_resume,
    start_new,
)

HELP = "commands: /log  /fork [SEQ]  /sessions  /quit   (Ctrl+C stops a turn; Ctrl+D or /quit leaves)"
NOTHING_YET = "nothing yet: this session's journal is created with your first message"


def chat(settings: Settings, resume_ref: str | None) -> int:
    out = settings.printer
    agent: Agent | None = None
    if resume_ref is not None:

        def decide(plan: ResumePlan) -> None:
            if plan.replayed.uncertain_calls:
                raise ResumeStop(EXIT_REFUSED, refusal(plan, settings))

        try:
            writer, plan = open_resume(session_to_resume(settings.folder, resume_ref or None), decide)
        except ResumeStop as stop:
            out.line("wren: " + stop.text)
            return stop.status
        except JournalCorrupt as exc:
            out.line(f"wren: {exc.path}: {exc.reason}; nothing was written")
            return EXIT_ERROR
        agent = make_agent(settings, writer, plan.replayed.messages)
        out.line(resumed_line(plan, writer))
        run_start(agent, settings.workspace, resumed=True)
    else:
        check_folder(settings.folder)
        out.line(f"new session in {settings.folder}: its journal is created with your first message")
    out.line(HELP)
    end: Literal["done", "cancelled"] = "done"
    try:
        while True:
            try:
                line = input("you > ").strip()
            except EOFError:
                out.line("")  # the cursor is still on the prompt's line
                break
            except KeyboardInterrupt:
                out.line("")
                end = "cancelled"
                break
            if not line:
                continue
            if line.startswith("/"):
                if line.split()[0] in ("/quit", "/exit"):
                    break
                agent = _command(agent, settings, line)
                continue
            if agent is None:
                writer = new_session(settings, None)
                agent = start_new(settings, writer)
                out.line(f"session {session_id_of(writer.path)}  (journal: {writer.path})")
            current, text = agent, line
            run_until_signal(lambda: _turn(current, text))  # noqa: B023 (called before the loop moves on)
    except JournalUnusable as exc:
        out.line(f"wren: {str(exc).rstrip('.')}. The chat stopped; nothing more was recorded.")
        return EXIT_ERROR
    finally:
        if agent is not None:
            with contextlib.suppress(JournalUnusable):
                agent.append(RunEnd(reason=end))
            agent.writer.close()
    if agent is not None:
        out.line(f"continue with: {continue_with(settings, agent.writer.path)}")
    return EXIT_INTERRUPTED if end == "cancelled" else EXIT_OK


def check_folder(folder: Path) -> None:
    """Refuse, before anything is typed, a journals folder that is a file or that this user cannot write."""
    problem = None
    if os.path.lexists(folder) and not folder.is_dir():
        problem = write_problem(folder, NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
    elif folder.is_dir() and not os.access(folder, os.W_OK):
        code = errno.EROFS if os.statvfs(folder).f_flag & os.ST_RDONLY else errno.EACCES
        problem = write_problem(folder, OSError(code, os.strerror(code)))
    if problem is not None:
        raise JournalError(f"{problem}; give --dir a folder you can write (or set WREN_DIR)")


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


def _command(agent: Agent | None, settings: Settings, line: str) -> Agent | None:
    from ..cli import summarize

    out = settings.printer
    name, *rest = line.split()
    if name == "/sessions":
        for info in list_sessions(settings.folder):
            mark = "*" if agent is not None and info.path == agent.writer.path else " "
            out.line(f"{mark} {info.id}  {info.state:<15}  {info.events:>5} events")
    elif name not in ("/log", "/fork"):
        out.line(HELP)
    elif agent is None:
        out.line(NOTHING_YET)
    elif name == "/log":
        result = read_events(agent.writer.path)
        for event in result.events:
            out.line(f"{event.seq:>5}  {event_type(event):<10}  {summarize(event)}")
    elif not rest:
        points = fork_points(read_events(agent.writer.path).events)
        out.line("clean fork points (fork with /fork SEQ):" if points else "no clean fork point yet")
        for listed in fork_listing(points):
            out.line(f"  {listed}")
    else:
        return _switch_to_fork(agent, settings, rest[0])
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
    except OSError as exc:
        out.line(f"wren: {write_problem(agent.writer.path.parent, exc)}, so the fork was not made")
        return agent
    agent.append(RunEnd(reason="done"))
    agent.writer.close()
    writer = JournalWriter.open(forked.path)
    child = make_agent(settings, writer, replay(read_events(forked.path).events).messages)
    run_start(child, settings.workspace, resumed=True)
    out.line(f"forked {forked.parent} at seq {forked.at_seq}: now in {forked.id}")
    return child
