"""`wren export` and `wren diff` take Wren journals: another agent's session file is refused, nothing written."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import run_wren
from tests.tui.journals import SESSION, finished_story, write_journal

AGENTS = Path(__file__).parent / "fixtures" / "agents"
LABELS = {"claude-code": "Claude Code", "codex": "Codex", "pi": "pi"}


@pytest.mark.parametrize("agent", list(LABELS))
def test_export_and_diff_refuse_another_agent_s_session_and_write_nothing(tmp_path: Path, agent: str) -> None:
    foreign = AGENTS / agent / "multi-turn.jsonl"
    digest = hashlib.sha256(foreign.read_bytes()).hexdigest()
    journal = write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", finished_story())
    work = tmp_path / "work"
    work.mkdir()
    runs = {
        "export": ["export", str(foreign), "--format", "html"],
        "export -o": ["export", str(foreign), "-o", str(work / "out.md")],
        "diff A": ["diff", str(foreign), str(journal)],
        "diff B": ["diff", str(journal), str(foreign)],
    }
    for name, argv in runs.items():
        proc = run_wren(argv, cwd=work)
        assert proc.returncode == 2, (name, proc.stderr)
        assert proc.stdout == "" and "Traceback" not in proc.stderr
        (line,) = proc.stderr.strip().splitlines()  # one sentence
        command = name.split()[0]
        assert line.startswith(f"wren: {foreign}: is a {LABELS[agent]} session, not a Wren journal, and wren {command}")
        assert f"`wren fork {foreign}" in line and "it has no seq" not in line
    assert list(work.iterdir()) == []  # no export, no temporary file
    assert hashlib.sha256(foreign.read_bytes()).hexdigest() == digest
