"""What a resume reads of a session's state besides its messages (the gauge's last count, the instructions it
gave) follows a rewind too: after the conversation went back, neither is taken from the conversation left."""

from __future__ import annotations

import os
from pathlib import Path

from wren_tui.agent.session import ResumePlan, instructions_given, open_resume
from wren_tui.journal.events import ChatMessage, Injected, Message, Rewind, RunStart, Usage
from wren_tui.journal.writer import JournalWriter


def _session(path: Path, *, rewind: bool) -> None:
    with JournalWriter.create(path, fsync="none") as writer:
        writer.append(RunStart(pid=os.getpid(), cwd=str(path.parent), model="scripted", version="test"))
        writer.append(Injected(kind="instructions", path="/w/AGENTS.md", sha256="ab" * 32, size=10))
        for n in range(3):
            writer.append(Message(message=ChatMessage(role="user", content=f"question {n}")))
            writer.append(Message(message=ChatMessage(role="assistant", content=f"answer {n}")))
        writer.append(Usage(input_tokens=120_000, output_tokens=10))
        if rewind:
            writer.append(Rewind(at_seq=4, snapshot="0" * 40, before="1" * 40))


def _plan(path: Path) -> ResumePlan:
    plans: list[ResumePlan] = []
    writer, plan = open_resume(path, plans.append)
    writer.close()
    return plan


def test_a_rewind_voids_the_last_usage_count_and_the_instructions_given(tmp_path: Path) -> None:
    kept, rewound = tmp_path / "s-20261207-000000-aaaa.jsonl", tmp_path / "s-20261207-000000-bbbb.jsonl"
    _session(kept, rewind=False)
    _session(rewound, rewind=True)
    before = _plan(kept)
    assert before.usage == (120_000, 1) and before.instructions == {("/w/AGENTS.md", "ab" * 32, 10)}
    after = _plan(rewound)
    # The count was of a request of the conversation the rewind left: the gauge must not start from it.
    assert after.usage is None
    # Which instructions the conversation at seq 4 holds is not known from the fingerprint: given again.
    assert after.instructions == frozenset()
    assert [m.content for m in after.replayed.messages] == ["question 0", "answer 0"]  # the conversation at seq 4


def test_the_fingerprint_of_the_instructions_is_empty_after_a_rewind_and_set_again_by_the_next_given() -> None:
    given = Injected(seq=2, kind="instructions", path="/w/AGENTS.md", sha256="cd" * 32, size=12)
    back = Rewind(seq=9, at_seq=4, snapshot="0" * 40, before="1" * 40)
    again = Injected(seq=11, kind="instructions", path="/w/AGENTS.md", sha256="ef" * 32, size=14)
    assert instructions_given([given]) == {("/w/AGENTS.md", "cd" * 32, 12)}
    assert instructions_given([given, back]) == frozenset()
    assert instructions_given([given, back, again]) == {("/w/AGENTS.md", "ef" * 32, 14)}
