"""Realistic journals for benchmarks: the agent's mix of streamed deltas, messages, tool calls and usage.

`python -m tests.bench.gen DIR` writes 10k-, 100k- and 1M-event journals (about 400 bytes an event)
through the real JournalWriter, so their bytes are exactly what the agent writes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec

from wren_tui.journal.events import (
    ChatMessage,
    Delta,
    KnownEvent,
    Message,
    RunEnd,
    RunStart,
    ToolCall,
    ToolEnd,
    ToolStart,
    Usage,
)
from wren_tui.journal.writer import JournalWriter

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
_PROSE = (
    "the test suite fails on divide by zero because the guard checks the wrong operand so I will read "
    "calc.py then edit the function and run pytest again to confirm every case passes now import def "
    "return assert raise ValueError None self args kwargs module package fixture expected actual line"
)
_WORDS = _PROSE.split()
# Stamped in each journal's run_start: a file made by an older generator is made again, not reused.
GEN_VERSION = "bench-gen-2"
_TOOLS = (("read_file", True), ("list_files", True), ("search", True), ("run_command", False), ("edit_file", False))


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _output(rng: random.Random) -> str:
    """Tool output: a median of 1.2 kB, sometimes a long listing or log (a log-normal size, capped at 32 kB).

    Sized so the whole mix comes to about 400 bytes an event, as issue 6 describes a 1M-event journal.
    """
    chars = min(int(rng.lognormvariate(7.1, 1.1)), 32_000)
    lines: list[str] = []
    total = 0
    while total < chars:
        folder, name, lineno = rng.choice(("src", "tests", "lib")), rng.choice(_WORDS), rng.randint(1, 400)
        lines.append(f"{folder}/{name}.py:{lineno}: {_text(rng, 8)}")
        total += len(lines[-1]) + 1
    return "\n".join(lines)[:chars]


def turns(rng: random.Random) -> Iterator[KnownEvent]:
    """An endless agent session: user asks, the model streams, calls tools, reads the results."""
    call_no = 0
    while True:
        yield Message(message=ChatMessage(role="user", content=_text(rng, rng.randint(5, 40))))
        for _step in range(rng.randint(2, 12)):
            reply = _text(rng, rng.randint(5, 60))
            for i in range(0, len(reply), 48):
                yield Delta(text=reply[i : i + 48])
            calls = []
            for _ in range(rng.choice((0, 1, 1, 1, 2))):
                call_no += 1
                name, _ro = rng.choice(_TOOLS)
                args = json.dumps({"path": f"src/{rng.choice(_WORDS)}.py", "pattern": _text(rng, 3)})
                calls.append(ToolCall(id=f"call_{call_no}", name=name, args=args))
            yield Message(message=ChatMessage(role="assistant", content=reply, tool_calls=calls or None))
            yield Usage(input_tokens=rng.randint(500, 60_000), output_tokens=rng.randint(10, 800), model="scripted")
            for call in calls:
                read_only = dict(_TOOLS)[call.name]
                approval = "auto" if read_only else "approved"
                yield ToolStart(id=call.id, name=call.name, read_only=read_only, approval=approval)
                out = _output(rng)
                yield ToolEnd(id=call.id, ok=rng.random() > 0.2, elapsed_ms=rng.randint(1, 3000), chars=len(out))
                yield Message(message=ChatMessage(role="tool", content=out, tool_call_id=call.id))
            if not calls:
                break


def generate(path: Path, events: int, seed: int = 1) -> Path:
    """A journal of exactly `events` events, ended by run_end, written without fsync."""
    rng = random.Random(seed)
    with JournalWriter.create(path, fsync="none") as writer:
        writer.append(RunStart(pid=os.getpid(), cwd="/work/demo", model="scripted", version=GEN_VERSION))
        stream = turns(rng)
        for _ in range(events - 2):
            writer.append(next(stream))
        writer.append(RunEnd(reason="done"))
    return path


def generate_bytes(path: Path, target_bytes: int, seed: int = 1) -> Path:
    """A journal of about `target_bytes` (whole events, ended by run_end)."""
    rng = random.Random(seed)
    with JournalWriter.create(path, fsync="none") as writer:
        writer.append(RunStart(pid=os.getpid(), cwd="/work/demo", model="scripted", version=GEN_VERSION))
        stream = turns(rng)
        while writer.size < target_bytes:
            writer.append(next(stream))
        writer.append(RunEnd(reason="done"))
    return path


def is_current(path: Path) -> bool:
    """True when `path` was written by this generator (its run_start carries GEN_VERSION)."""
    with open(path, "rb") as f:
        first = f.readline()
    try:
        return bool(msgspec.json.decode(first).get("version") == GEN_VERSION)
    except (msgspec.DecodeError, AttributeError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.gen", description=__doc__)
    parser.add_argument("folder", type=Path, help="where to write the journals (created 0700)")
    parser.add_argument("--sizes", nargs="*", default=list(SIZES), choices=list(SIZES))
    args = parser.parse_args(argv)
    for name in args.sizes:
        path = args.folder / f"bench-{name}.jsonl"
        if path.exists():
            if is_current(path):
                print(f"{path} exists and is current; keeping it", file=sys.stderr)
                continue
            print(f"{path} was made by an older generator; making it again", file=sys.stderr)
            path.unlink()
        generate(path, SIZES[name])
        print(f"{path}: {SIZES[name]:,} events, {path.stat().st_size / 1e6:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
