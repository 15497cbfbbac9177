"""A hypothesis state machine over a journal's life: append, tear, crash, reopen, fork, resume.

After every step: the journal reads to exactly the events acknowledged (a torn tail at most), the
parent of every fork is unchanged by it, every fork is whole, and resume sees exactly the calls
whose outcome is unknown.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.reliability.dial import examples
from wren_tui.journal.events import ChatMessage, Event, Fork, Message, ToolCall, ToolEnd, ToolStart
from wren_tui.journal.forking import fork, fork_points
from wren_tui.journal.reader import read_events
from wren_tui.journal.replay import replay
from wren_tui.journal.writer import JournalWriter

NAME = "s-20260101-000000-abcd.jsonl"


class JournalLife(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="wren-stateful-"))
        self.path = self.folder / NAME
        self.writer: JournalWriter | None = None
        self.acked: list[Event] = []
        self.torn = b""
        self.calls = 0
        self.open_calls: dict[str, bool] = {}  # call id -> started with side effects
        self.forks: dict[Path, list[Event]] = {}

    @initialize()
    def create(self) -> None:
        self.writer = JournalWriter.create(self.path, fsync="none")

    def _append(self, event: Message | ToolStart | ToolEnd) -> None:
        assert self.writer is not None
        self.acked.append(self.writer.append(event))

    @precondition(lambda self: self.writer is not None)
    @rule(text=st.text(max_size=20), tools=st.integers(0, 2))
    def model_turn(self, text: str, tools: int) -> None:
        if not self.open_calls:
            self._append(Message(message=ChatMessage(role="user", content=text)))
        calls = []
        for _ in range(tools):
            self.calls += 1
            calls.append(ToolCall(id=f"c{self.calls}", name="run_command", args="{}"))
        self._append(Message(message=ChatMessage(role="assistant", content=text, tool_calls=calls or None)))
        self.open_calls.update({c.id: False for c in calls})

    @precondition(lambda self: self.writer is not None and self.open_calls)
    @rule(read_only=st.booleans(), finish=st.booleans())
    def run_a_tool(self, read_only: bool, finish: bool) -> None:
        call_id = next(iter(self.open_calls))
        self._append(ToolStart(id=call_id, name="run_command", read_only=read_only))
        self.open_calls[call_id] = not read_only
        if finish:
            self._append(ToolEnd(id=call_id, ok=True, elapsed_ms=1))
            self._append(Message(message=ChatMessage(role="tool", content="ok", tool_call_id=call_id)))
            del self.open_calls[call_id]

    @precondition(lambda self: self.writer is not None)
    @rule(cut=st.integers(1, 60))
    def tear(self, cut: int) -> None:
        """The writer dies halfway through a line."""
        assert self.writer is not None
        self.crash()
        line = b'{"seq":%d,"ts":"2026-01-01T00:00:00.000Z","type":"delta","text":"half a line"}\n' % (
            len(self.acked) + 1
        )
        with open(self.path, "ab") as f:
            f.write(line[:cut])
        self.torn = line[:cut]

    @precondition(lambda self: self.writer is not None)
    @rule()
    def crash(self) -> None:
        """kill -9: the descriptor goes, nothing is flushed or closed properly."""
        assert self.writer is not None
        fd = self.writer._fd
        assert fd is not None
        os.close(fd)
        self.writer._fd = None
        self.writer = None

    @precondition(lambda self: self.writer is None)
    @rule()
    def reopen(self) -> None:
        self.writer = JournalWriter.open(self.path, fsync="none")
        self.torn = b""
        assert self.writer.last_seq == len(self.acked)

    @rule(data=st.data())
    def fork_a_clean_point(self, data: st.DataObject) -> None:
        if self.writer is not None:
            self.writer.sync()
        points = fork_points(read_events(self.path).events)
        if not points:
            return
        point = data.draw(st.sampled_from(points))
        before = hashlib.sha256(self.path.read_bytes()).hexdigest()
        forked = fork(self.path, point.seq, folder=self.folder)
        assert hashlib.sha256(self.path.read_bytes()).hexdigest() == before
        self.forks[forked.path] = [e for e in self.acked if e.seq <= point.seq]

    @rule()
    def resume(self) -> None:
        replayed = replay(read_events(self.path).events)
        assert {c.call.id for c in replayed.uncertain_calls} == {i for i, side in self.open_calls.items() if side}
        assert {c.call.id for c in replayed.open_calls} == set(self.open_calls)
        assert replayed.replayed == sum(isinstance(e, Message) for e in self.acked)

    @invariant()
    def journal_reads_to_what_was_acknowledged(self) -> None:
        if not self.path.exists():
            return
        result = read_events(self.path)
        assert result.events == self.acked
        assert result.torn == bool(self.torn) and (result.ok or result.torn)
        for path, prefix in self.forks.items():
            got = read_events(path)
            assert got.ok and got.events[:-1] == prefix and isinstance(got.events[-1], Fork)

    def teardown(self) -> None:
        if self.writer is not None:
            self.writer.close()
        shutil.rmtree(self.folder, ignore_errors=True)


JournalLife.TestCase.settings = examples(ci=60, torture=1500)
test_journal_life = JournalLife.TestCase
