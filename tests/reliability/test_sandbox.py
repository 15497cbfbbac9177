"""Every path trick against every file tool: refused with one sentence, or done inside the workspace only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.sandbox import TOOLS, TRICKS, Trick, measure, verdict


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("trick", TRICKS, ids=[t.name for t in TRICKS])
def test_a_path_trick_never_reads_or_changes_anything_outside_the_workspace(
    tmp_path: Path, trick: Trick, tool: str
) -> None:
    cell = measure(trick, tool, tmp_path)
    assert verdict(trick, tool, cell) == [], cell
