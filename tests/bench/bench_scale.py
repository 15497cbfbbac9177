"""Scale: a million-event journal and a folder of a thousand, against the tools a user would otherwise pick.

The 1M-event journal comes from `just bench-data` (tests/bench/gen.py, into git-ignored bench-data/)
and is reused. Every figure has a baseline or a peer measured in the same run on the same file:
Toolong (`tl`, from a throwaway virtualenv: `python -m venv /tmp/toolong-venv && /tmp/toolong-venv/bin/pip
install toolong`, or TOOLONG=/path/to/tl), `cp`, `cat | wc -l`, a `json.loads` loop.

WREN_BENCH_APPEND_S sets how long the agent appends 100 events/s (the issue says 30 s; 10 by default).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from tests.bench import BenchRow, absolute, compare, speedup
from tests.bench.gen import generate, is_current
from tests.bench.latency import percentiles, screen_latency
from tests.tmux import terminal
from wren_tui.journal.events import Message
from wren_tui.journal.forking import fork_points
from wren_tui.journal.offsets import LineScanner

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "bench-data"
BIG = DATA / "bench-1m.jsonl"
MAKE_DATA = "just bench-data"
TOOLONG = Path(os.environ.get("TOOLONG", "/tmp/toolong-venv/bin/tl"))
APPEND_S = float(os.environ.get("WREN_BENCH_APPEND_S", "10"))
APPEND_RATE = 100


def big_journal() -> Path:
    """The 1M-event journal, or SystemExit with how to make it."""
    if not BIG.exists():
        raise SystemExit(f"{BIG} is missing: make it once (about a minute, ~400 MB) with `{MAKE_DATA}`")
    if not is_current(BIG):
        raise SystemExit(f"{BIG} was made by an older generator: make it again with `{MAKE_DATA}`")
    return BIG


# --- the viewer under tmux: first paint, against Toolong on the same file -----------------------


def _tmux_first_paint(command: list[str], marker: str, name: str) -> tuple[float, float]:
    """Seconds from launch until `marker` is on the terminal, and the process's peak RSS (MB) by then."""
    with terminal(f"wren-bench-{name}") as term:
        start = time.monotonic()
        term.start(command, DATA if DATA.is_dir() else REPO, (160, 45), report_exit=False)
        assert term.pid is not None
        # The polling step is the resolution of this measure.
        term.wait_for(marker, timeout=120, poll=0.01)
        painted = time.monotonic() - start
        return painted, _peak_rss_mb(term.pid)


def _peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(match.group(1)) / 1024 if match else float("nan")


# --- the viewer in a fresh process: memory after scrolling the whole journal ---------------------

_SCROLL = r"""
import asyncio, re, sys
from pathlib import Path
from wren_tui.tui.app import WrenApp
from wren_tui.tui.screens.session import SessionScreen
from wren_tui.tui.widgets.conversation import ConversationView

async def main() -> None:
    path = Path(sys.argv[1])
    app = WrenApp(folder=path.parent, session=path, watch_mode="poll")
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        while screen.reader.indexing is not None or not len(screen.timeline):
            await pilot.pause(0.05)
        view = screen.query_one(ConversationView)
        await pilot.press("home")
        # Forty stops from the top to the bottom, a few pages read at each.
        for stop in range(41):
            view.scroll_to(y=view.max_scroll_y * stop // 40, animate=False, immediate=True)
            for _ in range(3):
                await pilot.press("pagedown")
        await pilot.press("end")
        await pilot.pause(0.2)
        # VmHWM, not ru_maxrss: on Linux ru_maxrss keeps the parent's peak across fork and exec.
        peak = re.search(r"VmHWM:\s+(\d+) kB", open("/proc/self/status").read())
        print(len(screen.timeline), int(peak.group(1)) * 1024, flush=True)

asyncio.run(main())
"""


def _scrolled_rss(path: Path) -> tuple[int, float]:
    out = subprocess.run(
        [sys.executable, "-c", _SCROLL, str(path)], capture_output=True, text=True, check=True, timeout=600
    ).stdout.split()
    return int(out[0]), int(out[1]) / 2**20


# --- append-to-screen latency while an agent appends ----------------------------------------------

# --- the commands -------------------------------------------------------------------------------


def _timed(command: list[str], **kwargs: object) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **kwargs)  # type: ignore[call-overload]
    return time.perf_counter() - start


def _until_prompt(command: list[str], prompt: bytes, **kwargs: object) -> tuple[float, float]:
    """Seconds until `prompt` is on the command's stdout, and its peak RSS (MB) by then; then its stdin is closed."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, **kwargs)  # type: ignore[call-overload]
    assert proc.stdin is not None and proc.stdout is not None
    seen = b""
    while prompt not in seen:
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            proc.wait()
            raise SystemExit(
                f"{command[:3]} ended (status {proc.returncode}) before its prompt {prompt!r}: {seen[-300:]!r}"
            )
        seen += chunk
    elapsed = time.perf_counter() - start
    rss = _peak_rss_mb(proc.pid)
    proc.stdin.close()
    proc.stdout.read()
    proc.wait()
    return elapsed, rss


_JSON_LOOP = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"


def _wren() -> str:
    return str(Path(sys.executable).parent / "wren")


def _scan(path: Path) -> tuple[int, int]:
    """The bytes of the messages a resume replays, and the last clean fork point."""
    size = 0
    encode = msgspec.json.encode

    def messages() -> object:
        nonlocal size
        fd = os.open(path, os.O_RDONLY)
        try:
            for chunk in LineScanner(path, fd).chunks():
                for event in chunk.events:
                    if isinstance(event, Message):
                        size += len(encode(event.message))
                    yield event
        finally:
            os.close(fd)

    points = fork_points(messages())  # type: ignore[arg-type]
    return size, points[-1].seq


def _folder_of_journals(folder: Path, big: Path, count: int) -> None:
    """`count` journals: one is the 1M-event journal (a hard link), the rest 300-event sessions."""
    model = generate(folder / "model.jsonl", 300)
    data = model.read_bytes()
    model.unlink()
    for n in range(count - 1):
        (folder / f"s-20250101-{n // 60 % 60 * 100 + n % 60:06d}-{n:04d}.jsonl").write_bytes(data)
    name = folder / "s-20250102-000000-big1.jsonl"
    try:
        os.link(big, name)
    except OSError:
        shutil.copyfile(big, name)


def run() -> list[BenchRow]:
    big = big_journal()
    size_mb = big.stat().st_size / 1e6
    rows: list[BenchRow] = []
    wren = _wren()

    # First paint under tmux, ours and Toolong's, same file, same terminal size.
    if not shutil.which("tmux"):
        raise SystemExit("tmux is needed for the first-paint figures (apt-get install tmux)")
    ours_paint, ours_rss = _tmux_first_paint([wren, "watch", str(big)], "#1000000 ", "wren")
    if TOOLONG.exists():
        tl_paint, tl_rss = _tmux_first_paint([str(TOOLONG), str(big)], '"seq":1000000,', "toolong")
        rows.append(
            compare(
                f"first paint of the 1M journal ({size_mb:.0f} MB) under tmux vs Toolong",
                ours_paint,
                tl_paint,
                at_most=1.0,
            )
        )
        rows.append(compare("viewer RSS at first paint vs Toolong's", ours_rss, tl_rss, unit="MB"))
    else:
        rows.append(BenchRow("Toolong", "-", "-", None, "-", f"not run: no {TOOLONG} (see this module's docstring)"))
    rows.append(absolute("first paint of the 1M journal under tmux (last event on screen)", ours_paint, at_most=1.0))

    items, scrolled_rss = _scrolled_rss(big)
    rows.append(
        absolute(
            f"viewer peak RSS, 1M journal open, scrolled top to bottom ({items:,} items)",
            scrolled_rss,
            unit="MB",
            at_most=300,
        )
    )

    with tempfile.TemporaryDirectory(prefix="wren-bench-scale-", dir=DATA) as tmp:
        folder = Path(tmp)
        live = folder / "live"
        live.mkdir()
        copy = live / "s-20250101-000000-live.jsonl"
        shutil.copyfile(big, copy)
        count = int(APPEND_S * APPEND_RATE)
        p50, p95 = percentiles(asyncio.run(screen_latency(copy, count, APPEND_RATE, (160, 45))))
        copy.unlink()
        rows.append(absolute(f"append-to-screen p50, 1M journal open, {APPEND_RATE}/s for {APPEND_S:g} s", p50))
        rows.append(
            absolute(f"append-to-screen p95, 1M journal open, {APPEND_RATE}/s for {APPEND_S:g} s", p95, at_most=0.1)
        )

        # wren log --json against a json.loads loop over the same lines.
        log_s = min(_timed([wren, "log", "--json", str(big)]) for _ in range(2))
        loads_s = _timed([sys.executable, "-c", _JSON_LOOP, str(big)])
        rows.append(absolute("wren log --json over the 1M journal", size_mb / log_s, unit="MB/s", at_least=200))
        rows.append(speedup("wren log --json vs a json.loads loop", log_s, loads_s, at_least=5))

        # wren ls over 1,000 journals (one of them the 1M journal) against wc -l reading them all.
        journals = folder / "many"
        journals.mkdir()
        _folder_of_journals(journals, big, 1000)
        ls_s = min(_timed([wren, "ls", "--dir", str(journals)]) for _ in range(3))
        wc_s = _timed(["sh", "-c", f"cat {shlex.quote(str(journals))}/*.jsonl | wc -l"])
        rows.append(absolute("wren ls over 1,000 journals (one of 1M events)", ls_s, at_most=0.5))
        rows.append(compare("wren ls vs reading every byte (cat | wc -l)", ls_s, wc_s))

        # Resume to the prompt: `wren chat --resume` on a copy, timed until "you > " is on its stdout.
        messages_bytes, last_point = _scan(big)
        resumed = folder / "resume"
        resumed.mkdir()
        shutil.copyfile(big, resumed / big.name.replace("bench-1m", "s-20250101-000000-rsm1"))
        rid = "s-20250101-000000-rsm1"
        resume = [wren, "chat", "--dir", str(resumed), "--resume", rid, "--workspace", str(resumed)]
        timings = []
        for _ in range(2):
            os.sync()  # the copy's write-back is not the resume's
            timings.append(_until_prompt(resume, b"you > ", cwd=resumed))
        resume_s, resume_rss = min(timings)
        rows.append(absolute("resume of the 1M journal to the prompt (wren chat --resume)", resume_s, at_most=2.0))
        rows.append(
            compare(
                "resume peak RSS vs the replayed messages' size",
                resume_rss,
                messages_bytes / 2**20,
                unit="MB",
                at_most=2.0,
            )
        )

        # Fork at the last clean point against cp of the same bytes.
        forks = folder / "forks"
        forks.mkdir()
        parent = forks / "s-20250102-000000-big1.jsonl"
        try:
            os.link(big, parent)
        except OSError:
            shutil.copyfile(big, parent)
        copy = forks / "copy.jsonl"

        def settled(command: list[str]) -> float:
            """Best of three, each from a clean slate: no earlier output, nothing dirty left to write back."""
            best = float("inf")
            for _ in range(3):
                for child in forks.iterdir():
                    if child != parent:
                        child.unlink()
                os.sync()  # else one run's write-back lands on the next run's clock
                best = min(best, _timed(command))
            return best

        fork_s = settled([wren, "fork", "--dir", str(forks), parent.stem, str(last_point)])
        cp_s = settled(["cp", str(big), str(copy)])
        cp_sync_s = settled(
            ["sh", "-c", f"cp {shlex.quote(str(big))} {shlex.quote(str(copy))} && sync {shlex.quote(str(copy))}"]
        )
        rows.append(compare(f"wren fork at the last point (seq {last_point}) vs cp", fork_s, cp_s, at_most=1.2))
        rows.append(compare("the same fork vs cp + sync of the copy (a durable copy, as a fork is)", fork_s, cp_sync_s))
    rows.append(BenchRow("1M journal", f"{size_mb:.0f} MB", "-", None, "-", "-"))
    return rows


def main(argv: list[str] | None = None) -> int:
    for row in run():
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
