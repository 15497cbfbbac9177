"""Lineage and time at scale: the waterfall's first paint on the 1M-event journal, and `wren export` speed.

The waterfall is measured exactly as the session screen is: a fresh process from interpreter start
to the first frame that shows the pane's rows (the waterfall's bars, or the conversation), the best
of three each, on the same 1M-event journal (`just bench-data`). The export runs `wren export
--format html` (and md, json) as a user does, on the 100k-event journal, against `cat` of it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench import BenchRow, absolute, compare
from tests.bench.bench_scale import DATA, MAKE_DATA, big_journal
from tests.bench.gen import is_current

REPEAT = 3
MID = DATA / "bench-100k.jsonl"

_PAINT = r"""
import asyncio, sys, time
from pathlib import Path
import wren_tui.tui.app
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.sessions.local import LocalJournal
from wren_tui.tui.widgets.conversation import ConversationView
from wren_tui.tui.widgets.waterfall import Waterfall

class Bench(WrenApp):
    # Absolute: a class made by `python -c` has no file to find a relative stylesheet from.
    CSS_PATH = str(Path(wren_tui.tui.app.__file__).parent / "app.tcss")

    def session_screen(self, path: Path) -> SessionScreen:
        return SessionScreen(LocalJournal(path), clock=self.clock, waterfall=sys.argv[2] == "waterfall")

async def main() -> None:
    path, pane = Path(sys.argv[1]), sys.argv[2]
    app = Bench(folder=path.parent, session=path, watch_mode="poll")
    async with app.run_test(size=(160, 45)) as pilot:
        # The pane has rows to draw: the waterfall its calls, the conversation its items.
        if pane == "waterfall":
            view = app.screen.query_one(Waterfall)
            has_rows = lambda: view.timeline.calls > 0 and view.virtual_size.height > 1
        else:
            view = app.screen.query_one(ConversationView)
            has_rows = lambda: view.virtual_size.height > 0
        while not has_rows():
            await pilot.pause(0.001)
        painted: list[float] = []
        # The next frame after the pane has rows is the first one that shows them.
        app.call_after_refresh(lambda: painted.append(time.monotonic()))
        while not painted:
            await pilot.pause(0.001)
        print(painted[0], flush=True)

asyncio.run(main())
"""


def _first_paint(path: Path, pane: str) -> float:
    """Seconds from launching a fresh viewer process to its first frame showing `pane`'s rows."""
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", _PAINT, str(path), pane], capture_output=True, text=True, check=True, timeout=300
    )
    return float(out.stdout.split()[-1]) - start


def _wren() -> str:
    return str(Path(sys.executable).parent / "wren")


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def run() -> list[BenchRow]:
    big = big_journal()
    if not MID.exists() or not is_current(MID):
        raise SystemExit(f"{MID} is missing or old: make it with `{MAKE_DATA}`")
    rows: list[BenchRow] = []

    session = min(_first_paint(big, "conversation") for _ in range(REPEAT))
    waterfall = min(_first_paint(big, "waterfall") for _ in range(REPEAT))
    rows.append(
        compare(
            "waterfall first paint vs the session screen's, 1M-event journal (fresh process)",
            waterfall,
            session,
            at_most=1.2,
        )
    )

    size_mb = MID.stat().st_size / 1e6
    cat = min(_timed(["cat", str(MID)]) for _ in range(REPEAT))
    with tempfile.TemporaryDirectory(prefix="wren-bench-export-") as tmp:
        for fmt, at_least in (("html", 50.0), ("md", None), ("json", None)):
            out = Path(tmp) / f"out.{fmt}"
            seconds = min(_timed([_wren(), "export", str(MID), "--format", fmt, "-o", str(out)]) for _ in range(REPEAT))
            rows.append(
                absolute(
                    f"wren export --format {fmt}, 100k-event journal ({size_mb:.0f} MB), input read per second",
                    size_mb / seconds,
                    unit="MB/s",
                    at_least=at_least,
                )
            )
    rows.append(BenchRow("cat of the same journal", f"{size_mb / cat:,.0f} MB/s", "-", None, "-", "-"))
    return rows


def main() -> int:
    for row in run():
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
