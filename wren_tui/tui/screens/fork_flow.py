"""Forking from the session screen: its points, the picker, the question asked, the fork made, what is said after.

A Wren journal forks in place (`SessionSource.fork`), or with its workspace's files through the
viewer's child (`tui/write_child.py`); another agent's session forks into a new Wren journal off the UI. With
`wren watch --pick` the point chosen ends the app instead (`Picked`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from textual.app import App
from textual.dom import DOMNode

from ...journal.commandline import wren_command
from ...journal.errors import JournalError
from ...journal.events import Message
from ...journal.forking import ForkPoint, preview
from ...journal.store import project_of
from ...journal.verdict import Stop
from ...sessions import ForeignSource, SessionSource
from ...sessions.local import LocalJournal
from .. import strings
from ..session_reader import Cancelled, SessionReader
from ..text import shorten
from ..wren_child import run_wren
from ..write import Failed
from ..write_child import fork_with_files
from .dialogs import AskFolder, Confirm, Notice
from .fork_picker import ForkPicker, RewindTo, WithFiles


@dataclass(frozen=True)
class Picked:
    """The point chosen in `wren watch --pick`, and where reading the journal stopped, as the screen showed it.

    The fork picker opens only once the whole journal is indexed, so `stop` is the journal's own.
    """

    session: str
    seq: int
    stop: Stop | None = None


class ForkFlow:
    """From `p` on the session screen to a fork made (or the point picked): every step's screen and its answer."""

    def __init__(self, screen: DOMNode, reader: SessionReader, *, pick: bool) -> None:
        self.screen = screen
        self.reader = reader
        self.pick = pick
        source = reader.source
        self.session = source.session
        # Another agent's session: its points on every branch, a fork into a new Wren journal.
        self.foreign = source if isinstance(source, ForeignSource) else None

    @property
    def app(self) -> App[object]:
        return self.screen.app

    @property
    def source(self) -> SessionSource:
        return self.reader.source

    def points(self) -> None:
        """Offer the session's clean points in the picker (another agent's: once read, off the UI)."""
        reader = self.reader
        if self.foreign is not None:
            if reader.is_open:
                self.app.notify(strings.FINDING_POINTS, timeout=2)
                own = self.foreign.share()
                reader.runner.in_thread("points", partial(self._foreign_points, reader.generation, own))
            return
        if self.source.fork_folder is None:
            self.app.notify(strings.NOT_FORKABLE, timeout=3)
            return
        if reader.indexing is not None:
            self.app.notify(strings.STILL_INDEXING, timeout=3)
            return
        points = []
        timeline = reader.timeline
        for position in timeline.fork_items:
            event = timeline.event(position)
            if isinstance(event, Message):
                after = timeline.fork_after.get(position, 0)
                points.append(ForkPoint(event.seq, event.message.role, preview(event.message.content), after))
        journal = self.source.path if isinstance(self.source, LocalJournal) else None
        self.app.push_screen(ForkPicker(self.session, points, pick=self.pick, journal=journal), self._chosen)

    def _foreign_points(self, generation: int, own: SessionSource, cancelled: Cancelled) -> None:
        """Every branch's clean points of another agent's session: its whole file is read (in a thread)."""
        assert isinstance(own, ForeignSource)
        to_ui = self.reader.runner.to_ui
        with closing(own):
            try:
                points = own.fork_points()
            except (JournalError, OSError) as exc:
                to_ui(partial(self.app.notify, str(exc), severity="error"))
                return
        if not cancelled():
            to_ui(partial(self._show_points, generation, points))

    def _show_points(self, generation: int, points: list[ForkPoint]) -> None:
        if generation == self.reader.generation:
            self.app.push_screen(ForkPicker(self.session, points, pick=self.pick), self._chosen)

    def _chosen(self, point: ForkPoint | None) -> None:
        if point is None:
            return
        if self.pick:
            # Another agent's session is named by its file: `wren fork PATH SEQ` takes it as printed.
            session = str(self.foreign.origin) if self.foreign is not None else self.session
            self.app.exit(Picked(session, point.seq, self.reader.stopped))
            return
        source = self.source
        if self.foreign is not None:
            question = strings.CONFIRM_FORK_FOREIGN.format(
                agent=self.foreign.agent, seq=point.seq, point=str(point), folder=self.foreign.fork_folder
            )
            self.app.push_screen(Confirm(question), partial(self._confirmed, self._fork_foreign, point))
            return
        if isinstance(point, RewindTo) and isinstance(source, LocalJournal):
            self.reader.runner.in_thread("rewind", partial(self._rewind_preview, source.path, point))
            return
        if isinstance(point, WithFiles) and isinstance(source, LocalJournal):
            question = strings.CONFIRM_FORK_FILES.format(session=self.session, seq=point.seq, point=str(point))
            offered = fork_folder_for(source.path, point.seq)
            self.app.push_screen(AskFolder(question, offered), partial(self._folder_chosen, source.path, point))
            return
        folder = shorten(str(source.fork_folder), 80)
        question = strings.CONFIRM_FORK.format(session=self.session, seq=point.seq, point=str(point), folder=folder)
        self.app.push_screen(Confirm(question), partial(self._confirmed, self._fork, point))

    def _folder_chosen(self, journal: Path, point: ForkPoint, target: Path | None) -> None:
        if target is not None:
            self._fork_with_files(journal, target, point)

    def _confirmed(self, fork: Callable[[ForkPoint], None], point: ForkPoint, yes: bool | None) -> None:
        if yes:
            fork(point)

    def _fork(self, point: ForkPoint) -> None:
        folder = self.source.fork_folder
        assert folder is not None, "fork points are offered only for a session that can be forked"
        try:
            forked = self.source.fork(point.seq)
        except JournalError as exc:
            self._notice(strings.FORK_FAILED.format(reason=exc))
            return
        except OSError as exc:
            self._notice(strings.FORK_FAILED.format(reason=_cannot_write(folder, exc)))  # a folder it cannot write
            return
        command = wren_command("resume", forked.id, folder=forked.path.parent)
        self._notice(strings.FORKED.format(parent=forked.parent, seq=forked.at_seq, new=forked.id, command=command))

    def _fork_foreign(self, point: ForkPoint) -> None:
        self.reader.runner.in_thread("fork", partial(self._fork_foreign_now, point))

    def _fork_foreign_now(self, point: ForkPoint, cancelled: Cancelled) -> None:
        """Another agent's session into a new Wren journal (in a thread: its whole file is read twice)."""
        assert self.foreign is not None
        own = self.foreign.share()
        assert isinstance(own, ForeignSource)
        folder, to_ui = own.fork_folder, self.reader.runner.to_ui
        with closing(own):
            try:
                forked = own.fork(point.seq)
            except JournalError as exc:
                to_ui(partial(self._notice, strings.FORK_FAILED.format(reason=exc)))
                return
            except OSError as exc:
                to_ui(partial(self._notice, strings.FORK_FAILED.format(reason=_cannot_write(folder, exc))))
                return
        command = wren_command("resume", forked.id, folder=forked.path.parent)
        text = strings.FORKED_FOREIGN.format(
            agent=own.agent, parent=self.session, seq=forked.at_seq, new=forked.id, command=command
        )
        note: str | None = getattr(forked, "workspace_note", None)
        if note is not None:
            text += "\n\n" + strings.FORK_NO_WORKSPACE.format(why=note)
        to_ui(partial(self._notice, text))

    def _fork_with_files(self, journal: Path, target: Path, point: ForkPoint) -> None:
        self.reader.runner.in_thread("fork", partial(self._fork_with_files_now, journal, point, target))

    def _fork_with_files_now(self, journal: Path, point: ForkPoint, target: Path, cancelled: Cancelled) -> None:
        """`fork_with_files` in the viewer's child (`tui/write_child.py`): the viewer writes nothing."""
        to_ui = self.reader.runner.to_ui
        done = fork_with_files(journal, point.seq, target)
        if isinstance(done, Failed):
            to_ui(partial(self._notice, strings.FORK_FAILED.format(reason=done.said)))
            return
        command = wren_command("resume", done.id, folder=Path(done.path).parent)
        text = strings.FORKED_FILES.format(
            parent=self.session, seq=point.seq, new=done.id, target=target, command=command
        )
        to_ui(partial(self._notice, text))

    def _rewind_preview(self, journal: Path, point: ForkPoint, cancelled: Cancelled) -> None:
        """`wren rewind JOURNAL SEQ` with no answer on its stdin: it prints its preview and changes nothing."""
        to_ui = self.reader.runner.to_ui
        done = run_wren(["rewind", str(journal), str(point.seq)])
        if not done.ok:
            to_ui(partial(self._notice, strings.REWIND_FAILED.format(reason=done.said)))
            return
        said = "\n".join(
            line for line in done.stdout.splitlines() if line.strip() and line.strip() != "nothing was changed"
        )
        question = strings.CONFIRM_REWIND.format(session=self.session, seq=point.seq, preview=said.strip())
        rewind = partial(self._rewind, journal)
        to_ui(partial(self._ask, question, partial(self._confirmed, rewind, point)))

    def _ask(self, question: str, then: Callable[[bool | None], None]) -> None:
        self.app.push_screen(Confirm(question), then)

    def _rewind(self, journal: Path, point: ForkPoint) -> None:
        self.reader.runner.in_thread("rewind", partial(self._rewind_now, journal, point))

    def _rewind_now(self, journal: Path, point: ForkPoint, cancelled: Cancelled) -> None:
        """`wren rewind JOURNAL SEQ --yes` as a person types it, in a child: the viewer writes nothing."""
        to_ui = self.reader.runner.to_ui
        done = run_wren(["rewind", str(journal), str(point.seq), "--yes"])
        if not done.ok:
            to_ui(partial(self._notice, strings.REWIND_FAILED.format(reason=done.said)))
            return
        command = wren_command("rewind", self.session, folder=journal.parent, tail="--undo")
        text = strings.REWOUND.format(session=self.session, seq=point.seq, said=done.stdout.strip(), command=command)
        to_ui(partial(self._notice, text))

    def _notice(self, text: str) -> None:
        self.app.push_screen(Notice(text))


def _cannot_write(folder: Path | None, exc: OSError) -> str:
    """Why a fork could not be written: a folder it cannot write, a full disk."""
    return strings.CANNOT_WRITE.format(folder=folder, why=(exc.strerror or str(exc)).lower())


def fork_folder_for(journal: Path, seq: int) -> Path:
    """Where a fork with files goes: beside the session's workspace, named after it and the point, never a used name."""
    project = project_of(journal)
    base = Path(project) if project else journal.parent.parent / journal.stem
    target = base.with_name(f"{base.name}-fork-{seq}")
    number = 2
    while target.exists():
        target = base.with_name(f"{base.name}-fork-{seq}-{number}")
        number += 1
    return target
