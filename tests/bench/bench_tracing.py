"""Sessions out to tracing tools: ATIF export speed and memory, and how soon `wren otel --follow` shows a call.

ATIF: `wren export --format atif` as a user runs it on a 100,000-event journal (tests/bench/gen.py),
the journal read per second (target ≥ 50 MB/s) and the process's peak RSS (target < 300 MB), beside
`wren export --format json` of the same journal (which copies the lines as they are) and `cat`.

OTLP follow: a real Arize Phoenix on loopback (the phoenix extra), `wren otel --follow` on a journal a
writer appends to; for each of 40 calls, the time from its tool_end being appended to its span being
returned by Phoenix's API (polled every 20 ms), p50 and p95 (target p95 ≤ 2 s). Phoenix batches its
inserts, so this includes its own ingestion delay.
"""

from __future__ import annotations

import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench import BenchRow, absolute, compare
from tests.bench.bench_scale import DATA
from tests.bench.gen import generate, is_current

REPEAT = 3
EVENTS = 100_000
CALLS = 40


def _wren() -> str:
    return str(Path(sys.executable).parent / "wren")


_MEASURED = r"""
import resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _measured(command: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of `command`, run by a fresh process that waits for it alone."""
    out = subprocess.run([sys.executable, "-c", _MEASURED, *command], check=True, capture_output=True, text=True)
    seconds, kb = out.stdout.split()
    return float(seconds), int(kb) / 1024


def _journal(folder: Path) -> Path:
    """The 100k-event journal of `just bench-data`, or one made here the same way."""
    shared = DATA / "bench-100k.jsonl"
    if shared.exists() and is_current(shared):
        return shared
    return generate(folder / "bench-100k.jsonl", EVENTS)


def _atif(folder: Path) -> list[BenchRow]:
    journal = _journal(folder)
    size_mb = journal.stat().st_size / 1e6
    rows = []
    best: dict[str, float] = {}
    for fmt, at_least in (("atif", 50.0), ("json", None)):
        out = folder / f"out.{fmt}.json"
        runs = [_measured([_wren(), "export", str(journal), "--format", fmt, "-o", str(out)]) for _ in range(REPEAT)]
        seconds = best[fmt] = min(s for s, _ in runs)
        rss = max(r for _, r in runs)
        what = f"wren export --format {fmt}, {EVENTS:,}-event journal ({size_mb:.0f} MB), input read per second"
        rows.append(absolute(what, size_mb / seconds, unit="MB/s", at_least=at_least))
        if fmt == "atif":
            rows.append(absolute(f"wren export --format atif, peak RSS ({size_mb:.0f} MB journal)", rss, unit="MB",
                                 at_most=300.0))  # fmt: skip
    # The JSON export copies the journal's lines as they are: what reading the journal costs, the floor.
    rows.append(compare("wren export --format atif vs --format json (the reader's floor), same journal",
                        best["atif"], best["json"], at_most=1.5))  # fmt: skip
    start = time.perf_counter()
    subprocess.run(["cat", str(journal)], check=True, stdout=subprocess.DEVNULL)
    rows.append(BenchRow("cat of the same journal", f"{size_mb / (time.perf_counter() - start):,.0f} MB/s", "-", None,
                         "-", "-"))  # fmt: skip
    return rows


def _follow(folder: Path) -> list[BenchRow]:
    from tests.otel.conftest import running_phoenix
    from wren_tui.journal.events import ChatMessage, Message, RunEnd, RunStart, ToolCall, ToolEnd, ToolStart, Usage
    from wren_tui.journal.writer import JournalWriter

    work = folder / "phoenix"
    work.mkdir()
    sid = "s-20261201-120000-flow"
    journal = folder / f"{sid}.jsonl"
    latencies: list[float] = []
    with running_phoenix(work) as phoenix:
        writer = JournalWriter.create(journal, fsync="none")
        follower = subprocess.Popen(
            [_wren(), "otel", str(journal), "--follow", "--endpoint", phoenix.url],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            writer.append(RunStart(pid=1, cwd=str(folder), model="scripted", version="0.1.0"))
            writer.append(Message(message=ChatMessage(role="user", content="go")))
            for n in range(CALLS):
                call = ToolCall(f"call_{n}", "run_command", '{"command": "true"}')
                writer.append(Message(message=ChatMessage(role="assistant", content="", tool_calls=[call])))
                writer.append(Usage(input_tokens=10, output_tokens=2, model="scripted"))
                writer.append(ToolStart(id=call.id, name="run_command", read_only=False, approval="approved"))
                writer.append(ToolEnd(id=call.id, ok=True, elapsed_ms=1, chars=0))
                appended = time.perf_counter()
                while not any(s["attributes"].get("gen_ai.tool.call.id") == call.id for s in phoenix.spans(sid)):
                    if time.perf_counter() - appended > 60:
                        raise SystemExit(f"the span of {call.id} did not arrive within 60 s")
                    time.sleep(0.02)
                latencies.append(time.perf_counter() - appended)
                writer.append(Message(message=ChatMessage(role="tool", content="", tool_call_id=call.id)))
            writer.append(RunEnd(reason="done"))
        finally:
            writer.close()
            follower.send_signal(signal.SIGINT)
            follower.wait(30)
    p95 = statistics.quantiles(latencies, n=20)[-1]
    return [
        absolute(
            f"wren otel --follow: tool_end appended -> span in Phoenix's API, p95 of {CALLS}",
            p95,
            unit="s",
            at_most=2.0,
        ),
        absolute("wren otel --follow: the same, p50", statistics.median(latencies), unit="s"),
    ]


def run() -> list[BenchRow]:
    with tempfile.TemporaryDirectory(prefix="wren-bench-tracing-") as tmp:
        folder = Path(tmp)
        rows = _atif(folder)
        try:
            import phoenix.server.main  # noqa: F401
        except ImportError:
            rows.append(BenchRow("wren otel --follow latency", "-", "-", None, "≤ 2 s", "SKIPPED: no Phoenix"))
        else:
            rows += _follow(folder)
    return rows


def main() -> int:
    for row in run():
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
