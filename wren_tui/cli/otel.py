"""`wren otel`: sessions sent as OpenTelemetry GenAI traces over OTLP/HTTP, once or followed live.

The spans are made by wren_tui.export.otel from the journal's events; the journal is only read. With
--follow the journals are read again as their folder changes (journal.watching, the viewer's watcher; at
least every quarter of a second, every fifth where no watcher can run) and each span is sent when it
closes; a run whose writer is gone without a run_end is closed then, its open calls sent as errors
(outcome unknown). Sending a session again never duplicates a span: the ids come from the session and seq.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..export.otel import SEMCONV, OtelMissing, OtlpSender, SendFailed, Spans
from ..journal.errors import JournalError
from ..journal.locks import lock_holder
from ..journal.reader import Tail
from ..journal.store import journal_paths, session_id_of
from ..journal.verdict import Stop
from . import fleet
from .console import err, out
from .exits import CommandFailed, Exit, Unreadable
from .options import folder_of, named_folder_of

if TYPE_CHECKING:
    from ..sessions import Session

POLL_S = 0.2  # where the folder cannot be watched, and for a fleet's session
# The viewer's: an append wakes the follower in about 8 ms.
DEBOUNCE_MS = 10
STEP_MS = 5


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    from .options import command_parser

    p = command_parser(
        sub,
        "otel",
        cmd_otel,
        "Send a session (or --all of the folder's) as OTLP traces following the OpenTelemetry "
        f"GenAI semantic conventions v{SEMCONV}: an invoke_agent span per run, a chat span per model call with "
        "its token usage, an execute_tool span per tool call with its outcome; gen_ai.conversation.id is the "
        "session id. Messages, arguments and results are sent only with --content. Sending again never "
        "duplicates spans. Needs the otel extra (pip install 'wren-tui[otel]'). See docs/tracing.md.",
        common,
    )
    p.add_argument(
        "session",
        metavar="ID|PATH|nats://SERVER/HOST/ID",
        nargs="?",
        help="a session id, a journal file, another agent's session file, or a session a fleet's mirror ships "
        "(or --all)",
    )
    p.add_argument("--all", action="store_true", help="every session of the journals folder (--dir)")
    p.add_argument(
        "--endpoint",
        required=True,
        metavar="URL",
        help="the OTLP/HTTP endpoint: its base (http://127.0.0.1:4318, Phoenix: http://127.0.0.1:6006) or "
        "its full traces URL (…/v1/traces)",
    )
    p.add_argument(
        "--follow",
        action="store_true",
        help="keep reading the journals and send each span when it closes, until interrupted (Ctrl+C)",
    )
    p.add_argument(
        "--content",
        action="store_true",
        help="also send the messages, tool arguments and tool results (off by default: they may hold secrets)",
    )


class _Followed:
    """One journal being sent: its tail and its spans."""

    def __init__(self, path: Path, sender: OtlpSender, content: bool) -> None:
        self.path = path
        self.tail = Tail(path)
        self.spans = Spans(session_id_of(path), sender.add, content=content)
        self.stop: Stop | None = None

    def read(self) -> bool:
        """Read what was appended; whether anything was."""
        batch = self.tail.read()
        if batch.restarted:
            self.spans = Spans(self.spans.session, self.spans.emit, content=self.spans.content)
        if batch.events:
            self.spans.take(batch.events)
        self.stop = batch.stop
        return bool(batch.events)


def cmd_otel(args: argparse.Namespace) -> Exit:
    if args.all == (args.session is not None):
        raise CommandFailed("name one session, or --all for every session of the journals folder")
    remote = args.session is not None and fleet.is_remote(args.session)
    # --all of a folder that is not there is a typo, never "nothing to send".
    folder = named_folder_of(args) if args.all else folder_of(args)
    # Every journal of the folder, each opened in its turn; or the one session named, opened first.
    sessions: Iterable[Session] = (
        []
        if remote
        else (_opened(path) for path in journal_paths(folder))
        if args.all
        else [_named(args.session, args.dir)]
    )
    try:
        sender = OtlpSender(args.endpoint)
    except (OtelMissing, SendFailed) as exc:
        raise CommandFailed(str(exc)) from None
    try:
        if remote:
            return _remote(args.session, sender, args.content, args.follow)
        if args.follow:
            return _follow(folder, sessions, sender, args.all, args.content)
        return _once(sessions, sender, args.content)
    except SendFailed as exc:
        raise CommandFailed(str(exc)) from None
    finally:
        sender.close()


def _named(ref: str, folder: str | None) -> Session:
    from ..sessions.opening import open_session

    return open_session(ref, folder, fleet=False, say=err)


def _opened(path: Path) -> Session:
    from ..sessions.opening import open_file

    return open_file(path, None)


def _once(sessions: Iterable[Session], sender: OtlpSender, content: bool) -> Exit:
    stopped: tuple[str, Stop] | None = None
    for source in sessions:
        spans = Spans(source.id, sender.add, content=content, agent=source.agent)
        with closing(source):
            # Another agent's session: the branch the viewer shows, its secrets redacted.
            verdict = source.scan(lambda events, _lines, spans=spans: spans.take(events), redact=True)  # type: ignore[misc]
            spans.finish(writer_alive=source.writer_alive())
        stop = verdict.stop
        sent = sender.flush()
        out(
            f"sent {sent} spans of {spans.session} to {sender.url}"
            + (" (still running: open spans not sent)" if spans.open else "")
        )
        if stop is not None and not stop.torn:
            stopped = (source.where, stop)
    if stopped is not None:
        raise Unreadable(stopped[0], stopped[1], done="The spans of what comes before it were sent.")
    return Exit.OK


def _remote(target: str, sender: OtlpSender, content: bool, follow: bool) -> Exit:
    """A session a fleet's mirror ships (nats://SERVER/HOST/SESSION), sent once or followed as it is mirrored."""
    import asyncio

    from ..fleet import FleetError
    from ..fleet.names import parse_ref

    ref = parse_ref(target)
    if ref.host is None or ref.session is None:
        raise FleetError(f"{target!r}: wren otel sends one session: nats://SERVER[:PORT]/HOST/SESSION")
    module = fleet.fleet_module("remote")
    try:
        asyncio.run(_remote_spans(module, ref, sender, content, follow))
    except KeyboardInterrupt:
        sender.flush(stopping=True)  # what is left, the next Ctrl+C stopping it at once
    return Exit.OK


async def _remote_spans(module: Any, ref: Any, sender: OtlpSender, content: bool, follow: bool) -> None:
    """Read the session from the fleet's stream; with `follow`, go on as lines are mirrored, until interrupted.

    The run is closed as dead once the session's row says no one writes it any more (its state is
    not live) and every line that row counts has been read.
    """
    import asyncio

    host, session = ref.host, ref.session
    spans = Spans(session, sender.add, content=content)
    async with await module.Fleet.connect(ref.server, reconnect=follow) as remote:
        if follow:
            out(f"following {ref}, sending to {sender.url} (Ctrl+C stops)")
            sys.stdout.flush()  # said at once, also into a pipe: what follows may wait long
            await remote.wait_for_list()  # started before the host's mirror: its lines are waited for too
        found = await remote.session(host, session)
        if not follow:
            async for chunk in remote.read(host, session):
                spans.take(chunk.events)
            spans.finish(writer_alive=found is not None and found.state == "live")
            sent = await asyncio.to_thread(sender.flush)
            out(f"sent {sent} spans of {session} to {sender.url}")
            return
        row = [found.row if found is not None else None]
        chunks: asyncio.Queue[Any] = asyncio.Queue()

        async def rows() -> None:
            async for seen in remote.watch_session(host, session):
                if seen.row is not None:
                    row[0] = seen.row

        async def lines() -> None:
            async for chunk in remote.read(host, session, follow=True):
                await chunks.put(chunk)

        tasks = [asyncio.create_task(rows()), asyncio.create_task(lines())]
        last, failing = 0, False
        try:
            while True:
                try:
                    chunk = await asyncio.wait_for(chunks.get(), POLL_S)
                except TimeoutError:
                    chunk = None
                if chunk is not None and chunk.events:
                    spans.take(chunk.events)
                    last = chunk.events[-1].seq
                for task in tasks:
                    if task.done() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]
                now = row[0]
                if spans.open and now is not None and now.state != "live" and now.last_seq == last:
                    spans.finish(writer_alive=False)
                try:
                    await asyncio.to_thread(sender.flush)
                    failing = False
                except SendFailed as exc:
                    if not failing:
                        err(f"{exc}; the spans are kept and sent again until it does")
                    failing = True
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def _follow(folder: Path, sessions: Iterable[Session], sender: OtlpSender, every: bool, content: bool) -> Exit:
    from ..sessions.foreign import ForeignFile

    paths = []
    for source in sessions:
        source.close()  # followed by its tail, below
        if isinstance(source, ForeignFile):
            raise CommandFailed(
                f"{source.where}: --follow follows Wren journals; send this {source.label} session without it"
            )
        paths.append(Path(source.where))
    followed = {path: _Followed(path, sender, content) for path in paths}
    # Each followed journal's folder, not the file (one written anew is seen), and with --all the folder's new ones.
    folders = sorted({path.parent for path in paths} | ({folder} if every else set()))
    out(f"following {len(followed)} session{'s' if len(followed) != 1 else ''}, sending to {sender.url} (Ctrl+C stops)")
    sys.stdout.flush()
    failing = False
    try:
        for _wake in _wakes(folders):
            if every:
                for path in journal_paths(folder):
                    if path not in followed:
                        followed[path] = _Followed(path, sender, content)
            for one in followed.values():
                try:
                    one.read()
                except JournalError as exc:
                    err(str(exc))
                    continue
                if one.spans.open and lock_holder(one.path) is None:
                    # Read once more, so nothing written just before the writer went is missed.
                    one.read()
                    one.spans.finish(writer_alive=False)
            try:
                sender.flush()
                failing = False
            except SendFailed as exc:
                if not failing:
                    err(f"{exc}; the spans are kept and sent again until it does")
                failing = True
    except KeyboardInterrupt:
        sender.flush(stopping=True)  # what is left, the next Ctrl+C stopping it at once
    return Exit.OK


def _wakes(folders: list[Path]) -> Iterator[None]:
    """When to read the followed journals again: at once, then at each change in `folders` and at least every
    WAKE_MS (a writer gone changes no file); every POLL_S, forever, where the folders cannot be watched."""
    yield  # the first read, before the watcher starts: its first wake re-reads what was written meanwhile
    try:
        from ..journal.watching import folder_changes_blocking  # watchfiles, for --follow only

        for _paths in folder_changes_blocking(*folders, debounce_ms=DEBOUNCE_MS, step_ms=STEP_MS):
            yield
    except (OSError, RuntimeError):
        pass  # no inotify, too many watches, an unsupported filesystem: the timer, as before
    while True:
        time.sleep(POLL_S)
        yield
