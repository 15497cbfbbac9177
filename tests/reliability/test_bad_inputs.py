"""Every bad input of the table: read_events neither crashes nor loses a readable event, and `wren log` says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.bad_inputs import CASES, Case, measure


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_input_is_read_as_far_as_it_can_be_and_reported(tmp_path: Path, case: Case) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    got = measure(case, folder)
    assert (got.events, got.outcome) == (case.events, case.outcome), got.text
    assert case.phrase in got.text
    assert got.log_exit == case.log_exit, got.log_output
    if case.log_exit == 4:
        assert got.log_output.startswith("stopped at line") and case.phrase in got.log_output
    elif case.log_exit == 1:
        assert case.phrase in got.log_output and "Traceback" not in got.log_output
