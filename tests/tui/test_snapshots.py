"""SVG snapshots of every scene at a fixed size, from fixed journals and a fixed clock.

Update them with `pytest tests/tui/test_snapshots.py --snapshot-update` after a deliberate change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.scenes import SCENES, Scene, play


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_scene_looks_as_recorded(
    scene: Scene, snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = scene.build(tmp_path)

    async def keys(pilot: Pilot[object]) -> None:
        await play(scene, pilot)

    assert snap_compare(app, terminal_size=scene.size, run_before=keys)
