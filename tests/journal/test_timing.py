"""Where a session's time went: the model, the tools, a person; summed from the events in order."""

from __future__ import annotations

from datetime import timedelta

import msgspec

from tests.tui.journals import START, STEP, finished_story, ts_at, user
from wren_tui.journal.events import Event, Fork, RunEnd, RunStart, ToolStart
from wren_tui.journal.timing import TimeSpent, duration, ts_ms


def _stamped(events: list, start=START) -> list[Event]:  # type: ignore[no-untyped-def,type-arg]
    return [msgspec.structs.replace(e, seq=i + 1, ts=ts_at(i, start)) for i, e in enumerate(events)]


def test_the_demo_session_spends_its_time_on_the_model_and_the_tools() -> None:
    spent = TimeSpent()
    for event in _stamped(finished_story()):
        spent.add(event)
    step = int(STEP.total_seconds() * 1000)
    # tool_start to tool_end: four calls, one step each.
    assert spent.tools_ms == 4 * step
    # user or tool result to the next reply: the model (a retry's wait included).
    assert spent.model_ms > spent.tools_ms
    assert spent.model_ms + spent.tools_ms + spent.person_ms == (len(finished_story()) - 1) * step - step


def test_time_before_a_resume_or_a_fork_is_nobody_s_but_a_person_s() -> None:
    events = _stamped(finished_story()[:2])  # run_start, then the user's message: waiting for the model
    spent = TimeSpent()
    for event in events:
        spent.add(event)
    later = START + timedelta(days=1)
    spent.add(RunStart(pid=1, cwd="/", model="m", version="v", seq=3, ts=ts_at(0, later)))
    assert spent.model_ms == 0 and spent.person_ms > 86_000_000
    spent.add(Fork(from_="s", at_seq=3, seq=4, ts=ts_at(5, later)))
    assert spent.model_ms == 0


def test_a_message_typed_over_a_call_left_open_does_not_count_the_wait_as_the_tool_s() -> None:
    events = _stamped([e for e in finished_story() if not isinstance(e, RunEnd)])
    open_at = max(i for i, e in enumerate(events) if isinstance(e, ToolStart))
    spent = TimeSpent()
    for event in events[: open_at + 1]:  # the last call started, and its writer was gone
        spent.add(event)
    tools_before, person_before = spent.tools_ms, spent.person_ms
    later = START + timedelta(days=30)
    spent.add(msgspec.structs.replace(user("a question, a month later"), seq=open_at + 2, ts=ts_at(0, later)))
    assert spent.tools_ms == tools_before
    assert spent.person_ms - person_before > 29 * 86_400_000
    assert spent.phase == "model"


def test_a_live_session_counts_the_phase_under_way_up_to_now() -> None:
    spent = TimeSpent()
    for event in _stamped(finished_story()[:2]):
        spent.add(event)
    assert spent.model_ms == 0
    now = ts_ms(ts_at(9))
    assert now is not None
    assert spent.until(now).model_ms == 8 * int(STEP.total_seconds() * 1000)
    assert spent.model_ms == 0  # a copy: the sums themselves wait for the next event


def test_stamps_and_durations_read_as_people_read_them() -> None:
    assert ts_ms("1970-01-01T00:00:01.250Z") == 1250
    assert ts_ms("1970-01-01T00:01:00Z") == 60_000
    assert ts_ms("not a time") is None
    assert [duration(ms) for ms in (850, 4200, 187_000, 7_500_000)] == ["850 ms", "4.2 s", "3m07s", "2h05m"]
