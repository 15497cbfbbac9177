"""An agent's appends for the fleet's tests: JournalWriter, an fdatasync per event, at a steady rate, in a process.

`python -m tests.fleet.writer FOLDER --sessions 2 --rate 200 --count 400 [--big-every 50 --big-size 600000]`
prints the session ids (one JSON line) when the journals exist, then appends; it stops after
`--count` events per session or when its stdin closes, and prints a JSON summary: its elapsed time
and the append durations (what the agent would feel).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

from wren_tui.journal.events import ChatMessage, Delta, Message, Usage
from wren_tui.journal.store import new_session_id
from wren_tui.journal.writer import JournalWriter


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--rate", type=float, default=100.0, help="events per second, all sessions together")
    parser.add_argument("--count", type=int, default=0, help="events per session (0: until stdin closes)")
    parser.add_argument("--big-every", type=int, default=0)
    parser.add_argument("--big-size", type=int, default=600_000)
    args = parser.parse_args()
    stopped = threading.Event()

    def watch_stdin() -> None:
        sys.stdin.read()
        stopped.set()

    if not args.count:
        threading.Thread(target=watch_stdin, daemon=True).start()
    ids: list[str] = []
    while len(ids) < args.sessions:
        sid = new_session_id()
        if sid not in ids:
            ids.append(sid)
    writers = [JournalWriter.create(args.folder / f"{sid}.jsonl") for sid in ids]
    print(json.dumps(ids), flush=True)
    durations: list[float] = []
    start = due = time.monotonic()
    n = 0
    try:
        while not stopped.is_set() and (not args.count or n < args.count * len(writers)):
            writer = writers[n % len(writers)]
            step = n // len(writers) + 1
            event: Message | Delta | Usage
            if args.big_every and step % args.big_every == 0:
                event = Message(message=ChatMessage(role="tool", content="o" * args.big_size, tool_call_id=f"c{step}"))
            elif step % 5 == 0:
                event = Usage(input_tokens=100 + step, output_tokens=10, model="scripted")
            elif step % 2:
                event = Delta(text=f"thinking about step {step} ")
            else:
                event = Message(message=ChatMessage(role="assistant", content=f"step {step} done"))
            before = time.monotonic()
            writer.append(event)
            durations.append(time.monotonic() - before)
            n += 1
            due += 1 / args.rate
            time.sleep(max(0.0, due - time.monotonic()))
    finally:
        for writer in writers:
            writer.close()
    durations.sort()
    summary = {
        "elapsed": time.monotonic() - start,
        "events": n,
        "p95_append_ms": 1000 * durations[int(len(durations) * 0.95) - 1] if durations else 0.0,
        "max_append_ms": 1000 * durations[-1] if durations else 0.0,
    }
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
