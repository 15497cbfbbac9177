"""`wren chat`: a REPL over one session. Ctrl+C during a turn cancels the turn; at the prompt it ends the chat.

What goes wrong in a turn or a `/fork` is handed to `report` (the command says it) and the chat
goes on; what ends the chat is raised, after its run_end is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Literal

from ..journal.errors import JournalChanged, JournalError, JournalUnusable
from ..journal.events import Error, RunEnd, describe, event_type
from ..journal.forking import fork, fork_listing, fork_points
from ..journal.reader import read_events
from ..journal.replay import replay
from ..journal.store import list_sessions, session_id_of, write_problem
from ..journal.writer import JournalWriter
from ..portable import END_SIGNALS, folder_read_only
from . import outcomes
from .errors import Ended, ResumeRefused, SnapshotStopped, UsageError
from .loop import Agent, cancel_cause
from .models.base import GatewayError
from .session import (
    ResumePlan,
    Settings,
    continue_with,
    give_instructions,
    instructions_given,
    make_agent,
    new_session,
    open_resume,
    refusal,
    resume_workspace,
    resumed_line,
    rewind_cut_short,
    run_start,
    run_until_signal,
    seed_gauge,
    session_to_resume,
    start_new,
    tell,
)

HELP = "commands: /log  /fork [SEQ]  /compact  /sessions  /quit   (Ctrl+C stops a turn; Ctrl+D or /quit leaves)"
NOTHING_YET = "nothing yet: this session's journal is created with your first message"
# Takes what went wrong in a turn or a /fork, for the command to say; the chat goes on.
Report = Callable[[Exception], object]


def chat(settings: Settings, resume_ref: str | None, report: Report) -> Ended:
    """The REPL, on a new session (its journal made with the first message) or on `resume_ref` ("": the latest).

    Raises:
        ResumeRefused, WorkspaceGone, JournalCorrupt, JournalLocked, JournalError: the session to
            resume cannot be continued (as `wren resume` says); nothing was written.
        JournalChanged: the journal changed under the chat, which stopped (no run_end after it).
        JournalUnusable: the journal refused a write; the chat stopped and records nothing more.
    """
    out = settings.printer
    agent: Agent | None = None
    if resume_ref is not None:
        chosen: list[tuple[Settings, str]] = []

        def decide(plan: ResumePlan) -> None:
            cut = rewind_cut_short(plan)
            if cut is not None:
                raise ResumeRefused(cut)
            if plan.replayed.uncertain_calls:
                raise ResumeRefused(refusal(plan, settings))
            chosen.append(resume_workspace(settings, plan))

        writer, plan = open_resume(session_to_resume(settings.folder, resume_ref or None, settings.workspace), decide)
        settings, working_in = chosen[0]
        agent = make_agent(settings, writer, plan.replayed.messages, plan.replayed.seqs)
        seed_gauge(agent, plan)
        out.line(resumed_line(plan, writer))
        out.line(working_in)
        run_start(agent, settings.workspace, resumed=True)
        give_instructions(agent, settings, plan.instructions)
    else:
        check_folder(settings.folder)
        out.line(f"new session in {settings.folder}: its journal is created with your first message")
    out.line(HELP)
    end: Literal["done", "cancelled"] = "done"
    ended = Ended()
    prompt = _Prompt(sys.stdin.fileno())
    try:
        with _stopped_by_signals():
            while True:
                try:
                    # The context the next message would be sent with, against the model's window.
                    gauge = f"{agent.gauge.short()} " if agent is not None and agent.gauge is not None else ""
                    typed = prompt.read(f"{gauge}you > ")
                except KeyboardInterrupt:
                    out.line("")
                    end, ended = "cancelled", Ended(cancelled=True, signal=signal.SIGINT)
                    break
                if typed is None:
                    out.line("")  # the cursor is still on the prompt's line
                    break
                line = typed.strip()
                if not line:
                    continue
                if line.startswith("/"):
                    if line.split()[0] in ("/quit", "/exit"):
                        break
                    agent = _command(agent, settings, line, report)
                    continue
                if agent is None:
                    writer = new_session(settings, None)
                    agent = start_new(settings, writer)
                    out.line(f"session {session_id_of(writer.path)}  (journal: {writer.path})")
                current, text, now = agent, line, settings
                turn = run_until_signal(lambda: _turn(current, now, text, report))  # noqa: B023 (called before the loop moves on)
                if turn.signal in END_SIGNALS:
                    # The chat ends with the turn; Ctrl+C only stops the turn.
                    end, ended = "cancelled", turn
                    break
    except _Stopped as stopped:
        out.line(f"[stopped by {outcomes.SIGNAL_CAUSES[stopped.signal.name]}]")
        end, ended = "cancelled", Ended(cancelled=True, signal=stopped.signal)
    finally:
        if agent is not None:
            with contextlib.suppress(JournalUnusable):
                agent.append(RunEnd(reason=end))
            agent.writer.close()
    if agent is None:
        return ended
    if agent.writer.changed:  # found by the run_end above: no `continue with` over a lost journal
        raise JournalChanged(agent.writer.changed)
    out.line(f"continue with: {continue_with(settings, agent.writer.path)}")
    return ended


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

    handled = [sig for sig in END_SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN]
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

        async def readable() -> Ended:
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
                return Ended(cancelled=True)
            finally:
                loop.remove_reader(fd)
            return Ended()

        waited = run_until_signal(readable)
        if waited.signal in END_SIGNALS:
            raise _Stopped(waited.signal)
        if waited.cancelled:
            raise KeyboardInterrupt


def check_folder(folder: Path) -> None:
    """Refuse, before anything is typed, a journals folder that is a file or that this user cannot write."""
    problem = None
    if os.path.lexists(folder) and not folder.is_dir():
        problem = write_problem(folder, NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
    elif folder.is_dir() and not os.access(folder, os.W_OK):
        code = errno.EROFS if folder_read_only(folder) else errno.EACCES
        problem = write_problem(folder, OSError(code, os.strerror(code)))
    if problem is not None:
        raise JournalError(f"{problem}; give --dir a folder you can write (or set WREN_DIR)")


async def _turn(agent: Agent, settings: Settings, text: str, report: Report) -> Ended:
    tell(agent, settings, text)
    try:
        await agent.turn()
    except asyncio.CancelledError as exc:
        cause = cancel_cause(exc)
        agent.printer.line(f"[turn stopped by {cause}]" if cause else "[turn cancelled]")
        return Ended(cancelled=True)
    except GatewayError as exc:
        # Recorded, said, and the chat goes on: the next message may find the model back.
        agent.append(Error(message=str(exc), retryable=exc.retryable, attempt=exc.attempt))
        report(exc)
    except SnapshotStopped as exc:
        # Recorded (the call as not run), said, and the chat goes on: space may be freed before the next message.
        report(exc)
    return Ended()


def _command(agent: Agent | None, settings: Settings, line: str, report: Report) -> Agent | None:
    out = settings.printer
    name, *rest = line.split()
    if name == "/sessions":
        for info in list_sessions(settings.folder):
            mark = "*" if agent is not None and info.path == agent.writer.path else " "
            out.line(f"{mark} {info.id}  {info.state:<15}  {info.events:>5} events")
    elif name not in ("/log", "/fork", "/compact"):
        out.line(HELP)
    elif agent is None:
        out.line(NOTHING_YET)
    elif name == "/compact":
        current = agent
        run_until_signal(lambda: _compact_now(current, report))
    elif name == "/log":
        result = read_events(agent.writer.path)
        for event in result.events:
            out.line(f"{event.seq:>5}  {event_type(event):<10}  {describe(event)}")
    elif not rest:
        points = fork_points(read_events(agent.writer.path).events)
        out.line("clean fork points (fork with /fork SEQ):" if points else "no clean fork point yet")
        for listed in fork_listing(points):
            out.line(f"  {listed}")
    else:
        return _switch_to_fork(agent, settings, rest[0], report)
    return agent


async def _compact_now(agent: Agent, report: Report) -> Ended:
    """/compact: the whole conversation replaced by the model's summary (journal first), or why not."""
    try:
        done = await agent.compact()
    except asyncio.CancelledError:
        agent.printer.line("[compaction stopped: nothing was compacted]")
        return Ended(cancelled=True)
    except GatewayError as exc:
        agent.append(Error(message=str(exc), retryable=exc.retryable, attempt=exc.attempt))
        report(exc)
        return Ended()
    if not done:
        agent.printer.line("[nothing to compact yet: the conversation holds fewer than two messages to summarize]")
    return Ended()


def _switch_to_fork(agent: Agent, settings: Settings, seq_text: str, report: Report) -> Agent:
    out = settings.printer
    try:
        seq = int(seq_text)
    except ValueError:
        report(UsageError(f"/fork takes a seq number, not {seq_text!r}"))
        return agent
    try:
        forked = fork(agent.writer.path, seq, folder=agent.writer.path.parent)
    except JournalError as exc:  # not a clean point (NotAForkPoint), or the journal cannot be read
        report(exc)
        return agent
    except OSError as exc:
        report(JournalError(f"{write_problem(agent.writer.path.parent, exc)}, so the fork was not made"))
        return agent
    agent.append(RunEnd(reason="done"))
    agent.writer.close()
    writer = JournalWriter.open(forked.path)
    events = read_events(forked.path).events
    replayed = replay(events)
    child = make_agent(settings, writer, replayed.messages, replayed.seqs)
    run_start(child, settings.workspace, resumed=True)
    give_instructions(child, settings, instructions_given(events))
    out.line(f"forked {forked.parent} at seq {forked.at_seq}: now in {forked.id}")
    return child


def _say(text: str) -> None:
    if text:
        with contextlib.suppress(OSError):
            sys.stdout.write(text)
            sys.stdout.flush()
