"""Secret redaction covers every text field of every event type by construction, nested ones included.

The events come from the union of event types (tests/journal/strategies.py), with a secret in
every string they hold, so a new event type is checked here without a line added.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.journal.strategies import EVENT_TYPES, struct_of, texts
from wren_tui.agent.approval import ApprovalGate
from wren_tui.agent.loop import Agent
from wren_tui.agent.models.scripted import ScriptedModel
from wren_tui.agent.tools import Toolbox
from wren_tui.journal.events import KnownEvent
from wren_tui.journal.reader import read_events
from wren_tui.journal.redact import MARK, Redactor
from wren_tui.journal.writer import JournalWriter

SECRET = "s3cr3t-value-0123456789"
# Every string drawn holds the secret; a Literal field (a role, a reason) draws its own few words.
secret_texts = st.builds(lambda before, after: before + SECRET + after, texts, texts)
_settings = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=[c.__name__ for c in EVENT_TYPES])
@_settings
@given(data=st.data())
def test_an_event_of_any_type_reaches_the_journal_with_no_secret_in_any_field(
    tmp_path: Path, cls: type[KnownEvent], data: st.DataObject
) -> None:
    event: KnownEvent = data.draw(struct_of(cls, secret_texts))
    path = tmp_path / "j.jsonl"
    path.unlink(missing_ok=True)
    with JournalWriter.create(path, fsync="none") as writer:
        agent = Agent(
            writer,
            ScriptedModel(tmp_path),
            Toolbox(tmp_path),
            ApprovalGate.for_terminal(True),
            redactor=Redactor({"WREN_API_KEY": SECRET}),
        )
        stamped = agent.append(event)
    assert SECRET.encode() not in path.read_bytes()
    # Still an event of its type, valid, that reads back as written.
    result = read_events(path)
    assert result.ok and result.events == [stamped] and type(stamped) is cls
    assert MARK in repr(stamped) or SECRET not in repr(event)


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=[c.__name__ for c in EVENT_TYPES])
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_an_event_without_a_secret_is_left_as_it_is(cls: type[KnownEvent], data: st.DataObject) -> None:
    event: KnownEvent = data.draw(struct_of(cls, st.sampled_from(["", "plain words", "sk-short"])))
    assert Redactor({"WREN_API_KEY": SECRET}).clean_fields(event) is event
