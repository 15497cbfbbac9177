"""The property tests' events cover every member of KnownEvent, and each type goes through the writer and back."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from tests.journal.strategies import EVENT_TYPES, known_events, struct_of
from wren_tui.journal.events import KNOWN_TYPES, KnownEvent
from wren_tui.journal.reader import read_events
from wren_tui.journal.writer import JournalWriter


def test_the_strategies_are_built_from_the_union_of_event_types() -> None:
    assert set(EVENT_TYPES) == set(get_args(KnownEvent))
    assert {str(cls.__struct_config__.tag) for cls in EVENT_TYPES} == KNOWN_TYPES


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=[c.__name__ for c in EVENT_TYPES])
def test_the_journals_property_tests_read_hold_events_of_every_type(cls: type[KnownEvent]) -> None:
    found = find(known_events, lambda e: type(e) is cls, settings=settings(max_examples=2000, database=None))
    assert type(found) is cls


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=[c.__name__ for c in EVENT_TYPES])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_event_type_reads_back_as_it_was_written(
    tmp_path: Path, cls: type[KnownEvent], data: st.DataObject
) -> None:
    events = data.draw(st.lists(struct_of(cls), min_size=1, max_size=4))
    path = tmp_path / "j.jsonl"
    path.unlink(missing_ok=True)
    with JournalWriter.create(path, fsync="none") as writer:
        written = [writer.append(e) for e in events]
    result = read_events(path)
    assert result.ok and result.events == written
