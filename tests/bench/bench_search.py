"""Search across sessions: `wren search` over 1,000 journals (about 1 GB, one of 1M events) against `grep -rlF`.

The folder is bench-data/many: 999 generated sessions of about 600 kB (seeded apart, so a phrase is
in some and not others) and a hard link to the 1M-event journal of `just bench-data`; it is made
once (a few minutes) and reused. Each pattern is timed for `wren search --json`, for `grep -rlF`
(the issue's baseline) and for `grep -rnF` in the same run, warm cache for all (each runs once before
it is timed), and the sessions found must be the same set. grep -l stops reading a file at its first
match while search reports every match; grep -n through a pipe must read every byte and print every
matching line, as search does, so it is the honest floor (not to /dev/null: GNU grep then stops at
the first match as with -q). Both greps match case as typed; search ignores case for a pattern
without a capital letter (all three here), which costs it more.

The viewer's figure: from Enter in the browser's search box to the first hit in the results list,
over the same folder, on a real terminal (tmux, the screen captured in a loop).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from tests.bench import BenchRow, absolute, compare
from tests.bench.bench_scale import DATA, big_journal
from tests.bench.gen import generate_bytes
from tests.tmux import python_argv, terminal

FOLDER = DATA / "many"
COUNT = 1000
SMALL_BYTES = 600_000
# In no session; in one; in about one in eight (the generator's prose, so spread through each file).
PATTERNS = ("Kestrel", "zero because the guard", "calc.py then edit")
# The results' progress line once a hit is listed (the hit and the count are drawn in the same frame).
_FOUND = re.compile(r"sessions, [1-9][0-9]* matches|[1-9][0-9]* matches in")


def folder_of_journals() -> Path:
    """bench-data/many, made if it is missing or incomplete."""
    big = big_journal()
    names = sorted(p.name for p in FOLDER.glob("s-*.jsonl")) if FOLDER.exists() else []
    if len(names) == COUNT:
        return FOLDER
    FOLDER.mkdir(parents=True, exist_ok=True)
    print(f"making {FOLDER} ({COUNT} journals, about 1 GB) once ...", file=sys.stderr, flush=True)
    for n in range(COUNT - 1):
        path = FOLDER / f"s-20250101-{n // 60 % 60 * 100 + n % 60:06d}-{n:04d}.jsonl"
        if not path.exists():
            generate_bytes(path, SMALL_BYTES, seed=n + 1)
    link = FOLDER / "s-20250102-000000-big1.jsonl"
    if not link.exists():
        os.link(big, link)
    return FOLDER


def _run(argv: list[str]) -> tuple[float, float, bytes]:
    """Wall time, peak RSS (MB) and stdout of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)  # its own rusage, not every child's so far
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, out


def _wren() -> str:
    return str(Path(sys.executable).parent / "wren")


def _sessions_of_search(out: bytes) -> set[str]:
    return {row["session"] for row in map(json.loads, out.splitlines()) if row["type"] == "hit"}


def _sessions_of_grep(out: bytes) -> set[str]:
    return {Path(line.decode()).stem for line in out.splitlines()}


def _sessions_of_grep_n(out: bytes) -> set[str]:
    # path:line:text; the folder's paths hold no colon
    return {Path(line.split(b":", 1)[0].decode()).stem for line in out.splitlines()}


def _first_hit_on_screen(folder: Path, pattern: str) -> float:
    """Seconds from Enter in the browser's search box to the first hit on a real terminal (tmux)."""
    with terminal("wren-bench-search") as term:
        term.start(python_argv("watch", "--dir", str(folder)), folder, (160, 40), report_exit=False)
        term.wait_for(" 1000000 ", timeout=60)  # the browser lists the folder (the 1M journal's row)
        term.keys("/")
        term.wait_for("search every session listed")
        term.keys("-l", pattern)
        term.wait_for(pattern)
        start = time.perf_counter()
        term.keys("Enter")
        deadline = start + 60
        while not _FOUND.search(term.capture()):
            assert time.perf_counter() < deadline, "no hit on screen after 60 s"
        took = time.perf_counter() - start
        term.keys("q")
        return took


def run() -> list[BenchRow]:
    folder = folder_of_journals()
    size_gb = sum(p.stat().st_size for p in folder.glob("s-*.jsonl")) / 1e9
    wren = _wren()
    rows: list[BenchRow] = []
    for pattern in PATTERNS:
        search = [wren, "search", "--json", "--dir", str(folder), pattern]
        # Not into .index/: the search index `wren search` keeps in the folder is no session.
        grep = ["grep", "-rlF", "--exclude-dir=.index", pattern, str(folder)]
        every = ["grep", "-rnF", "--exclude-dir=.index", pattern, str(folder)]
        _run(search), _run(grep), _run(every)  # warm the cache for all
        ours, rss, found = min((_run(search) for _ in range(3)), key=lambda r: r[0])
        theirs, _, listed = min((_run(grep) for _ in range(3)), key=lambda r: r[0])
        floor, _, lines = min((_run(every) for _ in range(3)), key=lambda r: r[0])
        sessions, grepped = _sessions_of_search(found), _sessions_of_grep(listed)
        same = (
            "same sessions"
            if sessions == grepped == _sessions_of_grep_n(lines)
            else (f"DIFFERENT: {len(sessions)} vs {len(grepped)}")
        )
        what = f"wren search {pattern!r} over {COUNT:,} journals ({size_gb:.2f} GB)"
        rows.append(compare(f"{what} vs grep -rlF: {same} ({len(sessions)} found)", ours, theirs, at_most=2.0))
        rows.append(compare(f"{what} vs grep -rnF, every match (the floor)", ours, floor))
        rows.append(absolute(f"wren search {pattern!r}: peak RSS", rss, unit="MB"))
    first = min(_first_hit_on_screen(folder, PATTERNS[2]) for _ in range(2))
    rows.append(absolute(f"viewer: Enter to the first hit on screen, tmux ({COUNT:,} journals)", first, at_most=0.3))
    return rows
