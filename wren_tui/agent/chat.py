"""`wren chat`: a REPL over one session. Ctrl+C during a turn cancels the turn; at the prompt it ends the chat."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
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
    prompt = _Prompt(sys.stdin.fileno())
    try:
        with _stopped_by_signals():
            while True:
                try:
                    typed = prompt.read("you > ")
                except KeyboardInterrupt:
                    end, status = "cancelled", EXIT_INTERRUPTED
                    break
                if typed is None:
                    break
                line = typed.strip()
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
    except _Stopped as stopped:
        out.line(f"[stopped by {outcomes.SIGNAL_CAUSES[stopped.signal.name]}]")
        end, status = "cancelled", 128 + stopped.signal.value
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
    """Between turns, SIGTERM and SIGHUP raise _Stopped, so the chat ends on the record (run_end) wherever it is."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise _Stopped(signal.Signals(signum))

    handled = [sig for sig in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(sig) is not signal.SIG_IGN]
    previous = {sig: signal.signal(sig, stop) for sig in handled}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Prompt:
    """The `you >` prompt, waited on through the event loop so a signal is seen whenever it comes.

    (A blocking input() misses a SIGTERM that lands between writing the prompt and the read.)
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._pending = b""
        self._eof = False
        # A regular file never blocks, and the event loop cannot wait on one.
        self._wait = not stat.S_ISREG(os.fstat(fd).st_mode)

    def read(self, prompt: str) -> str | None:
        """The next line typed, without its newline; None at end of input. Ctrl+C raises KeyboardInterrupt."""
        if not self._wait or self._eof or b"\n" in self._pending:
            _say(prompt)
            prompt = ""
        while b"\n" not in self._pending and not self._eof:
            if self._wait:
                self._wait_readable(prompt)
                prompt = ""
            try:
                data = os.read(self._fd, 65536)
            except OSError:
                data = b""
            self._pending += data
            self._eof = not data
        if not self._pending:
            return None
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("utf-8", errors="replace")

    def _wait_readable(self, prompt: str) -> None:
        """Wait until the input has something (the prompt written once the signals are watched)."""
        fd = self._fd

        async def readable() -> int:
            _say(prompt)
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[None] = loop.create_future()

            def wake() -> None:
                if not ready.done():
                    ready.set_result(None)

            loop.add_reader(fd, wake)
            try:
                await ready
            except asyncio.CancelledError:
                return EXIT_INTERRUPTED
            finally:
                loop.remove_reader(fd)
            return EXIT_OK

        status = run_until_signal(readable)
        if status == EXIT_INTERRUPTED:
            raise KeyboardInterrupt
        if status > 128:
            raise _Stopped(signal.Signals(status - 128))


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


def _say(text: str) -> None:
    if text:
        with contextlib.suppress(OSError):
            sys.stdout.write(text)
            sys.stdout.flush()
