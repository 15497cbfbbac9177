"""How many lines `wren ls --agent` says a big session has: estimated from its two ends when they hold
enough lines to say, counted when a few huge lines fill them (an estimate from two lines is a guess)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_wren
from tests.foreign.sessions import age, lines_of


def _claude_folder(tmp_path: Path, body: list[bytes]) -> Path:
    folder = tmp_path / "projects" / "-var-tmp-ws"
    folder.mkdir(parents=True)
    path = folder / "f8014127-6f7a-48fd-b929-dddf69eafff6.jsonl"
    path.write_bytes(b"".join(body))
    age(path, 3600)
    return path


def _row(tmp_path: Path) -> dict[str, object]:
    done = run_wren(["ls", "--agent", "claude", "--dir", str(tmp_path / "projects"), "--json"], cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    (row,) = json.loads(done.stdout)
    return row


def _huge(line: bytes, size: int) -> bytes:
    """`line` (a Claude Code user prompt) with its prompt padded to about `size` bytes."""
    record = json.loads(line)
    record["message"]["content"] = "x" * size
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def test_a_big_session_of_three_huge_lines_lists_three_lines_counted_not_a_guess(tmp_path: Path) -> None:
    lines = lines_of("claude", "simple")
    prompt = next(line for line in lines if b'"type":"user"' in line and b'"content":"List' in line)
    _claude_folder(tmp_path, [lines[0], _huge(prompt, 12 << 20), lines[-1]])
    row = _row(tmp_path)
    assert row["lines"] == 3, row


def test_a_big_session_of_many_small_lines_is_still_estimated_from_its_ends(tmp_path: Path) -> None:
    lines = lines_of("claude", "simple")
    body = lines * (((2 << 20) // sum(map(len, lines))) + 1)  # over 2 MB of ordinary lines
    _claude_folder(tmp_path, body)
    row = _row(tmp_path)
    assert isinstance(row["lines"], int) and abs(row["lines"] - len(body)) <= len(body) // 5, (row, len(body))
