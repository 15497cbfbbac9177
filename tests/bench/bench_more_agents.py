"""First paint of a 50 MB session of Gemini CLI, Qwen Code and Copilot CLI, each against a 10-event Wren journal
in the same run (a fresh process, interpreter start to the first frame with the conversation drawn).

Each big session is the agent's real multi-turn recording (tests/fixtures/agents) whose second turn is
repeated, with fresh ids and later times, until the file is 50 MB.
"""

from __future__ import annotations

import json
import re
import tempfile
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.bench import BenchRow, absolute, compare
from tests.bench.bench_viewer import _first_paint
from tests.bench.gen import generate
from tests.conftest import FIXTURES

BIG_MB = 50
PAINT_RUNS = 5
# Each recording's second turn (after its resume): the lines repeated, 0-based.
TURN = {"gemini": slice(15, 24), "qwen": slice(8, 16), "copilot": slice(15, 27)}
FOLDER = {"gemini": "gemini-cli", "qwen": "qwen-code", "copilot": "copilot-cli"}
LABEL = {"gemini": "Gemini CLI", "qwen": "Qwen Code", "copilot": "Copilot CLI"}
# Members that hold an id: given a fresh one per repeat (the same within it, so a call and its result still meet).
_ID_KEYS = frozenset({"id", "uuid", "parentUuid", "parentId", "toolCallId", "callId", "call_id", "messageId"})
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _fresh(value: Any, mapping: dict[str, str], shift: timedelta, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _fresh(v, mapping, shift, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_fresh(v, mapping, shift, key) for v in value]
    if isinstance(value, str):
        if key in _ID_KEYS:
            return mapping.setdefault(value, f"{value.split('_', 1)[0]}_{uuid.uuid4().hex}")
        if _TIME.match(value):
            moment = datetime.fromisoformat(value.replace("Z", "+00:00")) + shift
            return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return value


def big_session(agent: str, path: Path, size: int) -> Path:
    """A session of `agent` of at least `size` bytes: its real multi-turn run, then its second turn again and again."""
    lines = (FIXTURES / "agents" / FOLDER[agent] / "multi-turn.jsonl").read_bytes().splitlines(keepends=True)
    turn = [json.loads(line) for line in lines[TURN[agent]]]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        head = b"".join(lines[: TURN[agent].stop])
        out.write(head)
        # The newest entry of the run repeated, which the first repeat goes on from (Qwen Code's chain).
        ids = (e.get("uuid") or e.get("id") for e in map(json.loads, reversed(lines[: TURN[agent].stop])))
        last = next((str(i) for i in ids if i), "")
        written, repeat = len(head), 0
        while written < size:
            repeat += 1
            mapping: dict[str, str] = {}
            for entry in turn:
                fresh = _fresh(entry, mapping, timedelta(seconds=2 * repeat))
                for parent, own in (("parentUuid", "uuid"), ("parentId", "id")):
                    if parent in fresh and own in fresh:
                        if last:
                            fresh[parent] = last  # each entry goes on from the one before it
                        last = fresh[own]
                data = json.dumps(fresh, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
                out.write(data)
                written += len(data)
    return path


def run() -> list[BenchRow]:
    rows: list[BenchRow] = []
    with tempfile.TemporaryDirectory(prefix="wren-bench-more-agents-") as tmp:
        folder = Path(tmp)
        small = generate(folder / "s-20250101-000000-sml1.jsonl", 10)
        _first_paint(small)  # warm the interpreter's file cache
        for agent in TURN:
            big = big_session(agent, folder / agent / "big.jsonl", BIG_MB << 20)
            _first_paint(big)
            # The best of a few runs of each, taken in turns: the least disturbed by the other work on the machine.
            small_runs, big_runs = [], []
            for _ in range(PAINT_RUNS):
                small_runs.append(_first_paint(small))
                big_runs.append(_first_paint(big))
            (small_paint, _small_rss), (big_paint, _big_rss) = min(small_runs), min(big_runs)
            size = f"{big.stat().st_size / 1e6:.0f} MB"
            rows.append(absolute(f"agents: first paint, {LABEL[agent]} session ({size}), process start", big_paint))
            rows.append(
                compare(
                    f"agents: first paint, {size} {LABEL[agent]} session vs 10-event Wren journal",
                    big_paint,
                    small_paint,
                    at_most=1.2,
                )
            )
            big.unlink()
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
