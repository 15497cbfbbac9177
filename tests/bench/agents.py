"""Other agents' sessions, made big or many from the real recordings in tests/fixtures/agents.

A big Claude Code session repeats the second turn of a real one (prompt, tool call, result, answer,
the client's bookkeeping between them) with fresh ids, each turn chained to the one before it, until
the file is as big as asked. A folder of many sessions copies the real recordings into each agent's
own nested layout under fresh names.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES

_RECORDINGS = FIXTURES / "agents"
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_IDS = re.compile(r"^(msg|toolu|call|req)_[0-9A-Za-z]+$")
# The second turn of the Claude Code recording: lines 31 to 42.
_TURN = slice(30, 42)


def _fresh(value: str, mapping: dict[str, str]) -> str:
    if value not in mapping:
        if _UUID.match(value):
            mapping[value] = str(uuid.uuid4())
        else:
            prefix = value.split("_", 1)[0]
            mapping[value] = f"{prefix}_{uuid.uuid4().hex[:24]}"
    return mapping[value]


def _renamed(value: Any, mapping: dict[str, str], shift: timedelta) -> Any:
    if isinstance(value, dict):
        return {k: _renamed(v, mapping, shift) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, mapping, shift) for v in value]
    if isinstance(value, str):
        if _UUID.match(value) or _IDS.match(value):
            return _fresh(value, mapping)
        if len(value) == 24 and value.endswith("Z") and value[10:11] == "T":
            moment = datetime.fromisoformat(value.replace("Z", "+00:00")) + shift
            return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return value


def claude_session(path: Path, size: int) -> Path:
    """A Claude Code session of at least `size` bytes: the real first run, then its second turn again and again."""
    lines = (_RECORDINGS / "claude-code" / "multi-turn.jsonl").read_bytes().splitlines(keepends=True)
    head, turn = lines[: _TURN.start], [json.loads(line) for line in lines[_TURN]]
    session_id = turn[0]["sessionId"]
    leaf = next(json.loads(line)["uuid"] for line in reversed(head) if b'"uuid"' in line)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        out.write(b"".join(head))
        written, repeat = sum(map(len, head)), 0
        while written < size:
            repeat += 1
            mapping: dict[str, str] = {session_id: session_id}
            shift = timedelta(seconds=2 * repeat)
            for entry in turn:
                fresh = _renamed(entry, mapping, shift)
                if "uuid" in fresh:
                    if fresh.get("parentUuid") is not None or entry is turn[2]:
                        fresh["parentUuid"] = leaf  # each line goes on from the one before it
                    leaf = fresh["uuid"]
                data = json.dumps(fresh, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
                out.write(data)
                written += len(data)
    return path


_LAYOUT = {
    "claude": ("claude-code", "projects/-var-tmp-project-{n}/{id}.jsonl"),
    "codex": ("codex", "sessions/2026/11/{day:02d}/rollout-2026-11-{day:02d}T09-00-00-{id}.jsonl"),
    "pi": ("pi", "sessions/--var-tmp-project-{n}--/2026-11-{day:02d}T09-00-00-000Z_{id}.jsonl"),
}


def many_sessions(root: Path, count: int) -> dict[str, Path]:
    """`count` sessions shared among the three agents, each in its own layout under `root/<agent>`; their roots."""
    names = ("simple", "tool-error", "multi-turn")
    recordings = {
        agent: [(_RECORDINGS / folder / f"{name}.jsonl").read_bytes() for name in names]
        for agent, (folder, _layout) in _LAYOUT.items()
    }
    agents = list(_LAYOUT)
    for n in range(count):
        agent = agents[n % 3]
        _folder, layout = _LAYOUT[agent]
        relative = layout.format(n=n % 40, day=1 + n % 28, id=uuid.uuid4())
        path = root / agent / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(recordings[agent][n % 3])
        then = 1_700_000_000 + n
        os.utime(path, (then, then))
    return {agent: root / agent / _LAYOUT[agent][1].split("/")[0] for agent in agents}
