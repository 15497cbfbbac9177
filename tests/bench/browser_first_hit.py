"""The browser's `/`: seconds from Enter to the first hit drawn, in-process through Textual's Pilot.

`python -m tests.bench.browser_first_hit (--dir FOLDER | --agent NAME) PATTERN ROWS [--times N]` opens
`wren watch --dir FOLDER` (or `wren watch --agent NAME`, its folders from the environment) headless,
waits for ROWS sessions listed, types PATTERN in the search box, then times Enter: the clock stops
when the app writes the frame that holds the first hit's row (the frame rendered to the escape codes
a terminal would get, the hit's session id in them). One app per time (a person's first search),
each printed as a line of seconds; the hits found and sessions searched go to stderr. The bench
(`bench_search_index.py`) runs it as a subprocess, with the environment that names the agents' folders.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from textual._compositor import CompositorUpdate
from textual.screen import Screen

from wren_tui.cli.foreign import agents_browser
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.session_list import SessionList

SIZE = (160, 40)


def _app(args: argparse.Namespace) -> WrenApp:
    if args.agent:
        return agents_browser(argparse.Namespace(agent=args.agent, dir=None, poll=False))
    return WrenApp(folder=Path(args.dir))


async def first_hit(app: WrenApp, pattern: str, rows: int) -> float:
    """Seconds from Enter in the search box to the frame that draws the first hit."""
    drawn = asyncio.Event()
    at = [0.0]
    display = app._display

    def watched(screen: Screen[object], renderable: object) -> None:
        display(screen, renderable)  # type: ignore[arg-type]
        if drawn.is_set() or not isinstance(screen, SessionList) or not screen.results_shown:
            return
        hits = screen.results.hits
        text = renderable.render_segments(app.console) if isinstance(renderable, CompositorUpdate) and hits else ""
        if hits and hits[0].session in text:
            at[0] = time.perf_counter()
            drawn.set()

    app._display = watched  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        browser = app.screen
        assert isinstance(browser, SessionList)
        deadline = time.monotonic() + 600
        while browser.table.rows.row_count < rows:
            assert time.monotonic() < deadline, f"{browser.table.rows.row_count} of {rows} sessions listed"
            await pilot.pause(0.05)
        await pilot.press("/")
        browser.query_one("#search-all").value = pattern  # type: ignore[attr-defined]
        await pilot.pause()
        await asyncio.sleep(0.3)  # the app idle, as a person's Enter finds it
        start = time.perf_counter()
        press = asyncio.create_task(pilot.press("enter"))
        await asyncio.wait_for(drawn.wait(), 120)
        await press
        results = browser.results
        while not results.done:
            await pilot.pause(0.05)
        print(f"{results.found} hits in {results.searched} sessions", file=sys.stderr)
        await pilot.press("q")
    return at[0] - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.browser_first_hit", description=__doc__)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--dir", help="a Wren journals folder: wren watch --dir")
    where.add_argument("--agent", help="another agent's sessions: wren watch --agent")
    parser.add_argument("pattern")
    parser.add_argument("rows", type=int, help="wait for this many sessions listed")
    parser.add_argument("--times", type=int, default=5)
    args = parser.parse_args(argv)
    for _ in range(args.times):
        print(f"{asyncio.run(first_hit(_app(args), args.pattern, args.rows)):.6f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
