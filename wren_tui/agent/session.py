"""Running a session: a new one for a task, or a resumed one under the refusal rule."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, assert_never

from .. import __version__
from ..journal.calls import OpenCall
from ..journal.commandline import wren_command
from ..journal.errors import JournalChanged, JournalError, JournalUnusable
from ..journal.events import (
    ChatMessage,
    Compaction,
    Error,
    Event,
    Fork,
    Injected,
    Message,
    Recovery,
    Rewind,
    RunEnd,
    RunStart,
    Snapshot,
    Usage,
)
from ..journal.forking import fork_points
from ..journal.offsets import LineScanner
from ..journal.reader import open_for_reading
from ..journal.redact import Redactor
from ..journal.replay import Replayed, Replayer
from ..journal.store import (
    is_session_id,
    latest_of_project,
    resolve,
    session_id_of,
    session_path,
    write_problem,
)
from ..journal.verdict import ReadVerdict
from ..journal.writer import FsyncPolicy, JournalWriter
from ..portable import STOP_SIGNALS
from ..snapshots.rewinding import finish_plan
from ..snapshots.store import SnapshotError, Store, store_of
from . import outcomes
from .approval import ApprovalGate, preview_call
from .context import Gauge, tools_chars, window_from
from .errors import Ended, ResumeRefused, SessionFinished, SnapshotStopped, UsageError, WorkspaceGone, WorkspaceUnclear
from .injection import (
    INSTRUCTIONS_MARK,
    Given,
    fingerprint,
    instructions_message,
    read_instructions,
    resolve_references,
    total_line,
)
from .loop import MAX_REPLY, Agent, Limits, Printer, cancel_cause, not_run_label
from .models import MODELS, default_model, unknown_model
from .models.base import Gateway, GatewayError, ModelSetup, ModelUnavailable
from .snapshotting import Snapshotter
from .tools import COMMAND_TIMEOUT, TOOLS, Toolbox

SYSTEM_PROMPT = (
    "You are Wren, a coding agent working in the workspace folder {root}. Use the tools to look before you "
    "change anything; run the tests after a change; keep replies short. "
    + outcomes.prompt_guide().replace("{", "{{").replace("}", "}}")
)
# The signals that stop a run the same way: the cancel is recorded, the command's group killed.


@dataclass
class Settings:
    workspace: Path
    folder: Path
    # The person named the workspace (--workspace); otherwise resume works in the session's own.
    workspace_given: bool = False
    # A name in MODELS; None follows the default rule (openai when WREN_API_KEY is set, else scripted).
    model: str | None = None
    yes: bool = False
    pace: float = 0.0
    max_steps: int = 30
    command_timeout: float = COMMAND_TIMEOUT
    seq_fd: int | None = None
    printer: Printer = field(default_factory=Printer)
    # fdatasync after every event unless a benchmark asks otherwise.
    fsync: FsyncPolicy = "event"
    # Characters of one model reply; None: WREN_MAX_REPLY, or MAX_REPLY.
    max_reply: int | None = None
    # Snapshot the workspace before each call with side effects and at each turn's end (--no-snapshots: off).
    snapshots: bool = True
    # Keep the context gauge (each request's size against the model's window); off only to measure its cost.
    gauge: bool = True
    # The share of the window past which the conversation is compacted (WREN_COMPACT_AT, a percent, sets it).
    compact_at: float = 0.8

    def __post_init__(self) -> None:
        if self.model is not None and self.model not in MODELS:
            raise UsageError(unknown_model(self.model))
        if self.max_reply is None:
            self.max_reply = max_reply_from(os.environ)
        self.compact_at = compact_at_from(os.environ, self.compact_at)


def compact_at_from(env: Mapping[str, str], default: float) -> float:
    """WREN_COMPACT_AT (a percent of the window, 1 to 99), or `default` when it is unset."""
    raw = env.get("WREN_COMPACT_AT", "").strip().removesuffix("%")
    if not raw:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= 99:
        raise UsageError(f"WREN_COMPACT_AT={raw[:40]!r} is not a percent of the window from 1 to 99")
    return int(raw) / 100


def max_reply_from(env: Mapping[str, str]) -> int:
    """WREN_MAX_REPLY (characters of one reply, a positive whole number), or MAX_REPLY when it is unset."""
    raw = env.get("WREN_MAX_REPLY", "").strip()
    if not raw:
        return MAX_REPLY
    if not raw.isdigit() or int(raw) == 0:
        raise UsageError(f"WREN_MAX_REPLY={raw[:40]!r} is not a positive whole number of characters")
    return int(raw)


def choose_gateway(settings: Settings) -> Gateway:
    """The gateway of the model named in the settings (or by the default rule), made by its factory in MODELS."""
    setup = ModelSetup(
        workspace=settings.workspace,
        system=SYSTEM_PROMPT.format(root=settings.workspace),
        pace=settings.pace,
        env=os.environ,
    )
    try:
        return MODELS[settings.model or default_model(os.environ)](setup)
    except ModelUnavailable as exc:
        raise UsageError(str(exc)) from None


def make_agent(
    settings: Settings, writer: JournalWriter, messages: list[ChatMessage] | None = None, seqs: list[int] | None = None
) -> Agent:
    reporter = _seq_reporter(settings.seq_fd)
    gateway = choose_gateway(settings)
    gauge: Gauge | None = None
    if settings.gauge:
        window, _source = window_from(gateway.model, os.environ)
        fixed = len(SYSTEM_PROMPT.format(root=settings.workspace)) + tools_chars(list(TOOLS.values()))
        gauge = Gauge(window, fixed, messages or [])
    return Agent(
        writer,
        gateway,
        Toolbox(settings.workspace, protected=(settings.folder,), command_timeout=settings.command_timeout),
        ApprovalGate.for_terminal(settings.yes),
        redactor=Redactor(),
        limits=Limits(
            max_steps=settings.max_steps, max_reply=settings.max_reply or MAX_REPLY, compact_at=settings.compact_at
        ),
        printer=settings.printer,
        on_append=reporter,
        messages=messages,
        snapshots=Snapshotter(
            settings.folder, settings.workspace, session_id_of(writer.path), enabled=settings.snapshots
        ),
        gauge=gauge,
        seqs=seqs,
    )


def _seq_reporter(fd: int | None) -> Callable[[int], None] | None:
    if fd is None:
        return None

    def report(seq: int) -> None:
        # After append returns the event is durable, so a supervisor may count on every seq it reads here.
        with contextlib.suppress(OSError):
            os.write(fd, b"%d\n" % seq)

    return report


def run_until_signal(work: Callable[[], Awaitable[Ended]]) -> Ended:
    """Run `work` with SIGINT (Ctrl+C), SIGTERM and SIGHUP cancelling it, so it can record the cancel and return.

    The cancel carries the signal's name, so what the model and the person read says which one; a
    cancelled ending comes back with the signal that caused it (the command exits 128 + its number).
    """
    received: list[signal.Signals] = []

    async def main() -> Ended:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def stop(sig: signal.Signals) -> None:
            # One cancel: a second signal while the first is being recorded would cut the recording short.
            if not received:
                task.cancel(outcomes.SIGNAL_CAUSES[sig.name])
            received.append(sig)

        # A signal ignored on entry stays ignored: `nohup wren run ...` must outlive its terminal.
        previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
        handled = [sig for sig in STOP_SIGNALS if previous[sig] is not signal.SIG_IGN]
        for sig in handled:
            loop.add_signal_handler(sig, stop, sig)
        try:
            return await work()
        finally:
            for sig in handled:
                loop.remove_signal_handler(sig)
                # The loop leaves the default action behind; a caller's own handler (chat's) comes back.
                if previous[sig] is not None:
                    signal.signal(sig, previous[sig])

    ended = asyncio.run(main())
    if ended.cancelled and received:
        return Ended(cancelled=True, signal=received[0])
    return ended


async def drive(agent: Agent, turn: Callable[[], Awaitable[str]]) -> Ended:
    """One unit of work between run_start and run_end; every way out records how it ended.

    Raises:
        GatewayError: the model failed; recorded as an `error` event and run_end `error`.
        JournalUnusable: the journal refused a write (JournalChanged: it changed under the run);
            nothing more is recorded, and a changed journal never ends as done or cancelled.
    """
    try:
        reason = await turn()
    except asyncio.CancelledError as exc:
        _end(agent, "cancelled")
        cause = cancel_cause(exc)
        agent.printer.line(f"[stopped by {cause}]" if cause else "[cancelled]")
        return Ended(cancelled=True)
    except GatewayError as exc:
        agent.append(Error(message=str(exc), retryable=exc.retryable, attempt=exc.attempt))
        _end(agent, "error")
        raise
    except SnapshotStopped:
        _end(agent, "error")  # the loop recorded why, and the call as not run
        raise
    _end(agent, "limit" if reason == "limit" else "done")
    return Ended()


def _end(agent: Agent, reason: Literal["done", "cancelled", "error", "limit"]) -> None:
    try:
        agent.append(RunEnd(reason=reason))
    except JournalChanged:
        raise
    except JournalUnusable:
        pass


def run_start(agent: Agent, workspace: Path, *, resumed: bool) -> None:
    agent.append(
        RunStart(pid=os.getpid(), cwd=str(workspace), model=agent.gateway.model, version=__version__, resumed=resumed)
    )
    if agent.snapshots is not None:
        agent.snapshots.announce(agent.append)


def give_instructions(agent: Agent, settings: Settings, before: frozenset[tuple[str, str, int]] | None) -> None:
    """Give the project's instructions at a run's start: when none were given yet, or the files changed since.

    Each file is journaled (an `injected` event: path, hash, size, tokens, or why it was refused)
    before the message that carries the text, so a resume or a fork sends the model what this run sent.
    """
    given = read_instructions(settings.workspace, settings.folder)
    now = fingerprint(given)
    if now == (before or frozenset()):
        if given:
            settings.printer.line("instructions: unchanged since they were given")
        return
    changed = "changed since they were given; " if before else ""
    settings.printer.line(f"instructions: {changed}{len(given)} file{'' if len(given) == 1 else 's'}")
    _journal_given(agent, given)
    text = instructions_message(given)
    if text is None:
        if not any(sha for _, sha, _ in before or ()):
            return  # nothing was given before, and nothing is now (each file refused, and said)
        text = (
            f"{INSTRUCTIONS_MARK} The project's instruction files given before are no longer given (gone, or "
            "refused as printed); no project instructions apply now."
        )
    agent.say(ChatMessage(role="user", content=text))


def _journal_given(agent: Agent, given: list[Given]) -> None:
    for item in given:
        agent.printer.line(item.line())
        agent.append(
            Injected(
                kind=item.kind,
                path=item.path,
                ref=item.label if item.kind == "reference" else None,
                sha256=item.sha256,
                size=item.size,
                chars=item.chars,
                tokens=item.tokens,
                note=item.note,
                refused=item.text is None,
            )
        )
    if len(given) > 1 or any(g.kind == "reference" for g in given):
        agent.printer.line(total_line(given))


def tell(agent: Agent, settings: Settings, text: str) -> ChatMessage:
    """Say a message the person typed, its `@` references resolved into it (each printed and journaled first)."""
    content, given = resolve_references(text, settings.workspace, settings.folder)
    if given:
        agent.printer.line("references:")
        _journal_given(agent, given)
    return agent.say(ChatMessage(role="user", content=content))


def instructions_given(events: list[Event]) -> frozenset[tuple[str, str, int]]:
    """The fingerprint of the last project instructions these events gave."""
    tracker = _GivenInstructions()
    tracker.feed(events)
    return frozenset(tracker.last)


class _LastUsage:
    """The server's count of the journal's last request (its last `usage`), and the messages after that request.

    Found at C speed: per run, a count of types. A compaction or a rewind after it voids it (the messages it
    counted are no longer the conversation's).
    """

    def __init__(self) -> None:
        self.tokens: int | None = None
        self.later = 0

    def feed(self, events: list[Event]) -> None:
        kinds = list(map(type, events))
        if Usage in kinds:
            at = len(kinds) - 1 - kinds[::-1].index(Usage)
            usage = events[at]
            assert isinstance(usage, Usage)
            # The reply that usage counted the request of was journaled just before it.
            self.tokens, self.later = usage.input_tokens, 1 + kinds[at:].count(Message)
        else:
            self.later += kinds.count(Message)
        for voids in (Compaction, Rewind):
            if voids in kinds and (Usage not in kinds or kinds[::-1].index(voids) < kinds[::-1].index(Usage)):
                self.tokens = None


class _GivenInstructions:
    """The fingerprint of the last instructions a journal gave (its consecutive `injected` instructions events)."""

    def __init__(self) -> None:
        self.last: set[tuple[str, str, int]] = set()
        self._seq = -1

    def feed(self, events: list[Event]) -> None:
        kinds = set(map(type, events))
        if Injected not in kinds and Rewind not in kinds:
            return
        for event in events:
            if isinstance(event, Rewind):
                # The conversation went back: which instructions it now holds is not known here, so the next
                # run gives them again (at worst once more than needed; never a model left with stale ones).
                self.last, self._seq = set(), -1
            elif isinstance(event, Injected) and event.kind == "instructions":
                if event.seq != self._seq + 1:
                    self.last = set()
                self.last.add((event.path, event.sha256, event.size))
                self._seq = event.seq


# --- wren run -----------------------------------------------------------------------------------


def new_session(settings: Settings, session_id: str | None) -> JournalWriter:
    if session_id is not None and not is_session_id(session_id):
        raise UsageError(f"--session-id {session_id!r} is not a session id (expected s-YYYYMMDD-HHMMSS-xxxx)")
    from ..journal.store import new_session_id

    path = session_path(settings.folder, session_id or new_session_id())
    if path.exists():
        raise UsageError(f"{path}: a session with this id already exists; choose a new id or resume it")
    try:
        return JournalWriter.create(path, fsync=settings.fsync)
    except OSError as exc:
        raise JournalError(
            f"{write_problem(settings.folder, exc)}; give --dir a folder you can write (or set WREN_DIR)"
        ) from None


def start_new(settings: Settings, writer: JournalWriter) -> Agent:
    """The agent on a journal just created, and its run_start; a journal whose first event fails is removed.

    Nothing is in it then, and an empty journal left behind would become the latest session.
    """
    try:
        agent = make_agent(settings, writer)
        run_start(agent, settings.workspace, resumed=False)
        give_instructions(agent, settings, None)
    except BaseException as exc:
        _remove_unwritten(writer)
        if isinstance(exc, JournalUnusable):
            why = exc.__cause__.strerror if isinstance(exc.__cause__, OSError) else None
            raise JournalError(
                f"{writer.path}: writing its first event failed ({why or exc}), so it was removed; free some "
                "space or give --dir another folder (or set WREN_DIR)"
            ) from None
        raise
    return agent


def _remove_unwritten(writer: JournalWriter) -> None:
    """Unlink a journal that never got an event, while its writer still holds the lock (no one else appends)."""
    with contextlib.suppress(OSError):
        if writer.last_seq == 0 and os.stat(writer.path).st_size == 0:
            os.unlink(writer.path)


def continue_with(settings: Settings, path: Path) -> str:
    """The command that continues this session with a message, as the person can type it from here."""
    return wren_command(
        "resume", session_id_of(path), folder=settings.folder, workspace=settings.workspace, tail='"MESSAGE"'
    )


async def run_task(settings: Settings, task: str, session_id: str | None) -> Ended:
    """A new session on `task`, worked to its end; `continue with` is said unless the journal changed under it."""
    writer = new_session(settings, session_id)
    with writer:
        agent = start_new(settings, writer)
        settings.printer.line(f"session {session_id_of(writer.path)}  (journal: {writer.path})")

        async def turn() -> str:
            tell(agent, settings, task)
            return await agent.turn()

        try:
            ended = await drive(agent, turn)
        except JournalChanged:
            raise
        except (GatewayError, JournalUnusable, SnapshotStopped):
            # What was recorded up to the failure can be continued; the command says what failed.
            settings.printer.line(f"continue with: {continue_with(settings, writer.path)}")
            raise
        say_gauge(agent)
    settings.printer.line(f"continue with: {continue_with(settings, writer.path)}")
    return ended


def seed_gauge(agent: Agent, plan: ResumePlan) -> None:
    """A resumed gauge starts from the server's count of the journal's last request, not from characters."""
    if agent.gauge is not None and plan.usage is not None:
        tokens, later = plan.usage
        if later <= len(agent.messages):
            agent.gauge.seed(tokens, agent.messages[len(agent.messages) - later :])


def say_gauge(agent: Agent) -> None:
    """The context the next request would fill, said at a run's end (`wren run`, `wren resume`)."""
    if agent.gauge is not None:
        agent.printer.line(f"context: {agent.gauge.text()}")


# --- wren resume --------------------------------------------------------------------------------


@dataclass
class ResumePlan:
    path: Path
    result: ReadVerdict
    replayed: Replayed
    # The cwd of the journal's last run_start: the folder the session last worked in.
    workspace: str | None = None
    # The session's last rewind when nothing ran since (a kill may have cut it short: `rewind_cut_short`).
    rewind: Rewind | None = None
    # The project instructions the journal gave last (path, hash, size of each file).
    instructions: frozenset[tuple[str, str, int]] = frozenset()
    # The server's count of the last request, and the messages after it (None: no usage, or compacted since).
    usage: tuple[int, int] | None = None


class _LastWorkspace:
    """The cwd of the last run_start fed to it (or a later fork event's workspace), found at C speed.

    Runs of events are mostly neither.
    """

    def __init__(self) -> None:
        self.cwd: str | None = None
        self.rewind: Rewind | None = None

    def feed(self, events: list[Event]) -> None:
        kinds = list(map(type, events))
        if Rewind in kinds or (self.rewind is not None and (RunStart in kinds or Snapshot in kinds)):
            for event in events:
                if isinstance(event, Rewind):
                    self.rewind = event
                elif isinstance(event, RunStart | Snapshot):
                    self.rewind = None
        if RunStart in kinds or Fork in kinds:
            for event in reversed(events):
                if isinstance(event, RunStart):
                    self.cwd = event.cwd
                    return
                if isinstance(event, Fork) and event.workspace:
                    self.cwd = event.workspace  # a fork with its files works where they were written
                    return


def session_to_resume(folder: Path, ref: str | None, workspace: Path) -> Path:
    """ID (or a journal path), else the latest session of this workspace: never another project's."""
    return resolve(folder, ref) if ref else latest_of_project(folder, workspace)


def open_resume(path: Path, decide: Callable[[ResumePlan], object]) -> tuple[JournalWriter, ResumePlan]:
    """Read the journal once, under the writer's lock, replaying as it streams; memory holds the messages only.

    `decide` sees the plan before anything is written: an exception from it (ResumeRefused,
    SessionFinished...) leaves the journal byte-identical, a torn tail still in place.

    Raises:
        JournalCorrupt: a bad line before the end (nothing is appended after it).
        JournalLocked: another process is writing the session.
        JournalError: the journal cannot be opened for appending (the sentence names its folder).
    """
    replayer = Replayer()
    workspace = _LastWorkspace()
    instructions = _GivenInstructions()
    usage = _LastUsage()
    plans: list[ResumePlan] = []

    def feed(events: list[Event], lines: object) -> None:
        replayer.feed(events)
        workspace.feed(events)
        instructions.feed(events)
        usage.feed(events)

    def check(verdict: ReadVerdict) -> None:
        counted = (usage.tokens, usage.later) if usage.tokens is not None else None
        plans.append(
            ResumePlan(
                path,
                verdict,
                replayer.result(),
                workspace.cwd,
                rewind=workspace.rewind,
                instructions=frozenset(instructions.last),
                usage=counted,
            )
        )
        decide(plans[0])

    try:
        writer = JournalWriter.open(path, on_events=feed, check=check)
    except OSError as exc:
        raise JournalError(
            f"{write_problem(path.parent, exc)}, so {path.name} cannot be appended to. Nothing was written. "
            "Copy the journal to a folder you can write and resume it there with --dir."
        ) from None
    return writer, plans[0]


def resume_workspace(settings: Settings, plan: ResumePlan) -> tuple[Settings, str]:
    """The settings with the workspace a resume works in, and the line that says which; WorkspaceGone if it is gone.

    That is the session's own (its last run_start's cwd), from whatever folder resume was typed in,
    unless --workspace names another. WorkspaceUnclear when the recorded one is a relative path or `/`.
    """
    recorded = Path(plan.workspace) if plan.workspace else None
    if settings.workspace_given or recorded is None:
        chosen = settings.workspace
        if recorded is None:
            said = f"working in {chosen}: the journal records no workspace, so the current folder"
        elif recorded == chosen:
            said = f"working in {chosen}, the session's workspace"
        else:
            said = f"working in {chosen} (--workspace); the session last worked in {recorded}"
        return settings, said
    sid = session_id_of(plan.path)
    if not recorded.is_absolute():
        # Resolved from wherever resume is typed, it would name a different folder each time.
        raise WorkspaceUnclear(
            f"will not resume {sid}: its workspace {str(recorded)!r} is not an absolute path, so it names no one "
            "folder. Nothing was written. Give the folder to work in with --workspace DIR."
        )
    if recorded == Path("/"):
        raise WorkspaceUnclear(
            f"will not resume {sid}: its workspace is / (the whole disk). Nothing was written. To work there, "
            "say so with --workspace /; else give the folder to work in with --workspace DIR."
        )
    if not recorded.is_dir():
        raise WorkspaceGone(
            f"will not resume {sid}: its workspace {recorded} (where it last ran) no longer exists. Nothing was "
            "written. To continue it in another folder, give --workspace DIR.",
        )
    return dataclasses.replace(settings, workspace=recorded), f"working in {recorded}, the session's workspace"


def _events(path: Path) -> Iterator[Event]:
    fd = open_for_reading(path)
    try:
        yield from (event for chunk in LineScanner(path, fd).chunks() for event in chunk.events)
    finally:
        os.close(fd)


def refusal(plan: ResumePlan, settings: Settings) -> str:
    """Why resume will not guess: each call whose outcome is unknown, and what a person can do."""
    sid = session_id_of(plan.path)
    folder = plan.path.parent
    lines = [f"will not resume {sid}: a call with side effects started and its outcome is unknown."]
    for open_call in plan.replayed.uncertain_calls:
        start = open_call.started
        when = f"started at {start.ts} (seq {start.seq})" if start else "started"
        if open_call.ended is not None:
            when += f"; {outcomes.ended_but_lost(open_call.ended)}"
        lines.append(f"  {preview_call(open_call.call)}  [{open_call.call.id}] {when}")
    lines.append("Nothing was written. Choose one:")
    assume = wren_command("resume", sid, "--assume-failed", folder=folder, workspace=settings.workspace)
    lines.append(
        f"  {assume}   record that its outcome is unknown, tell the model to check before redoing it, and continue"
    )
    points = fork_points(_events(plan.path))
    if points:
        branch = wren_command("fork", sid, str(points[-1].seq), folder=folder)
        lines.append(
            f"  {branch}   branch a new session from the last clean point (seq {points[-1].seq}), then resume that"
        )
    return "\n".join(lines)


def _has_work(replayed: Replayed, message: str | None) -> bool:
    if message or replayed.open_calls:
        return True
    last = replayed.messages[-1] if replayed.messages else None
    return last is not None and not (last.role == "assistant" and not last.tool_calls)


async def resume_session(settings: Settings, ref: str | None, message: str | None, assume_failed: bool) -> Ended:
    """Continue a session (ID, or this workspace's latest), optionally with a message, under the refusal rule.

    Raises (each before anything is written):
        ResumeRefused: a call with side effects has an unknown outcome and --assume-failed was not given.
        SessionFinished: there is nothing to continue and no message.
        WorkspaceGone: the session's workspace is gone and no other was named.
        WorkspaceUnclear: the session's workspace is a relative path or / and no other was named.
        JournalCorrupt, JournalLocked, JournalError: as `open_resume` says.
    """
    path = session_to_resume(settings.folder, ref, settings.workspace)
    chosen: list[tuple[Settings, str]] = []

    def decide(plan: ResumePlan) -> None:
        cut = rewind_cut_short(plan)
        if cut is not None:
            raise ResumeRefused(cut)
        if plan.replayed.uncertain_calls and not assume_failed:
            raise ResumeRefused(refusal(plan, settings))
        if not _has_work(plan.replayed, message):
            sid = session_id_of(plan.path)
            state = "is finished" if plan.replayed.messages else "holds no conversation yet"
            again = wren_command("resume", sid, folder=plan.path.parent, workspace=settings.workspace, tail='"MESSAGE"')
            raise SessionFinished(f"{sid} {state}; give a message to continue it: {again}")
        chosen.append(resume_workspace(settings, plan))

    writer, plan = open_resume(path, decide)
    settings, working_in = chosen[0]
    with writer:
        agent = make_agent(settings, writer, plan.replayed.messages, plan.replayed.seqs)
        seed_gauge(agent, plan)
        settings.printer.line(resumed_line(plan, writer))
        settings.printer.line(working_in)
        run_start(agent, settings.workspace, resumed=True)

        async def turn() -> str:
            await settle(agent, plan.replayed.open_calls)
            give_instructions(agent, settings, plan.instructions)
            if message:
                tell(agent, settings, message)
            last = agent.messages[-1] if agent.messages else None
            if last is not None and last.role == "assistant" and not last.tool_calls:
                return "done"
            return await agent.turn()

        ended = await drive(agent, turn)
        say_gauge(agent)
        return ended


def rewind_cut_short(plan: ResumePlan) -> str | None:
    """Why resume will not go on after a rewind a kill cut short (some paths still hold their old files), or None.

    Only asked when the session's last event of its files is a rewind; one snapshot of the workspace tells.
    """
    rewind, workspace = plan.rewind, plan.workspace
    if rewind is None or workspace is None or not os.path.isabs(workspace) or not os.path.isdir(workspace):
        return None
    store = Store(store_of(plan.path.parent))
    sid = session_id_of(plan.path)
    try:
        if not store.exists():
            return None
        now = store.take(Path(workspace), sid, leave_out=(plan.path.parent,)).id
        rest = finish_plan(store, rewind, now)
    except SnapshotError:
        return None  # the run's own first snapshot says what is wrong with the workspace or the store
    if not rest.restore and not rest.delete:
        return None
    again = wren_command("rewind", sid, "--finish", folder=plan.path.parent)
    left = len(rest.restore) + len(rest.delete)
    return (
        f"will not resume {sid}: its rewind at seq {rewind.seq} was cut short, and {left} of its files are still as "
        f"they were before it. Nothing was written. Finish it with `{again}`, then resume."
    )


def resumed_line(plan: ResumePlan, writer: JournalWriter) -> str:
    """What resume (and chat --resume) says first: which session, how much was replayed, a torn tail set aside."""
    count = plan.replayed.replayed
    line = f"session {session_id_of(plan.path)} resumed ({count} message{'' if count == 1 else 's'} replayed)"
    if writer.torn_aside is not None:
        line += f"\n[the torn last line was moved aside to {writer.torn_aside.name}]"
    return line


async def settle(agent: Agent, open_calls: list[OpenCall]) -> None:
    """Close the calls a previous process left open, each as `calls` says resume does, before the model goes on.

    A call resume refuses reaches here only with --assume-failed.
    """
    for open_call in open_calls:
        call = open_call.call
        match open_call.on_resume:
            case "run":
                await agent.run_call(call, note="  [it had not started before the interruption]")
            case "run_again":
                await agent.run_call(call, note="  [running it again: it is read-only and was cut off]")
            case "say_not_run":
                # It was decided before the interruption that this call would not run: say so again.
                stopped = open_call.ended.stopped_by if open_call.ended else None
                agent.say(ChatMessage(role="tool", tool_call_id=call.id, content=agent.not_run_message(call, stopped)))
                agent.printer.line(
                    f"  [{preview_call(call)}: not run ({not_run_label(call, stopped)}), as recorded before]"
                )
            case "refuse":
                _assume_failed(agent, open_call)
            case _:
                assert_never(open_call.on_resume)


def _assume_failed(agent: Agent, open_call: OpenCall) -> None:
    """Record the decision, tell the model what is known (nothing, or how it ended) and to check before redoing it."""
    call, ended = open_call.call, open_call.ended
    when = open_call.started.ts if open_call.started else "an unknown time"
    if ended is None:
        decision = "assumed failed (--assume-failed); the model is told its outcome is unknown"
        told = outcomes.outcome_unknown(when)
        printed = "outcome unknown; the model is told so, and to check"
    elif ended.stopped_by == "cancel":
        decision = "interrupted, output lost (--assume-failed); the model is told to check"
        told = outcomes.interrupted_and_lost(when, outcomes.ended_but_lost(ended))
        printed = "it was interrupted and its output was lost; the model is told to check"
    else:
        decision = "output lost (--assume-failed); the model is told to check"
        told = outcomes.output_lost(when, outcomes.ended_but_lost(ended))
        printed = "it finished but its output was lost; the model is told to check"
    agent.append(Recovery(id=call.id, decision=decision))
    agent.say(ChatMessage(role="tool", tool_call_id=call.id, content=told))
    agent.printer.line(f"  [{preview_call(call)}: {printed}]")
