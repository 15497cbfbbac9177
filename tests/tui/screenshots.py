"""Render the viewer's scenes to screenshots/*.svg (`just screenshots`)."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from tests.tui.scenes import SCENES, Scene, play

OUT = Path(__file__).resolve().parents[2] / "screenshots"


async def _render(scene: Scene, out: Path) -> Path:
    with tempfile.TemporaryDirectory() as root:
        cwd = os.getcwd()
        os.chdir(root)
        try:
            app = scene.build(Path(root))
            async with app.run_test(size=scene.size) as pilot:
                await play(scene, pilot)
                await pilot.pause()
                await pilot.wait_for_scheduled_animations()
                return Path(app.save_screenshot(filename=f"{scene.name}.svg", path=str(out)))
        finally:
            os.chdir(cwd)


def main() -> int:
    OUT.mkdir(exist_ok=True)
    for scene in SCENES:
        sys.stdout.write(f"{asyncio.run(_render(scene, OUT))}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
