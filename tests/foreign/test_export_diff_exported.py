"""`wren export` and `wren diff` of a session kept otherwise than in lines: an OpenCode database (`DB`, `DB#ID`) and an
aider chat history. ATIF goes out (read back as the same conversation); Markdown, HTML, JSON and diff are refused in
the sentence that names the agent, ATIF and the fork, never "neither a session id … nor a path to a .jsonl journal"."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from atif import Trajectory

from tests.conftest import run_wren
from tests.foreign.sessions import AGENTS, AN_HOUR, age
from tests.foreign.test_opencode import SIMPLE_ID, database
from tests.tui.journals import SESSION, finished_story, write_journal


def _aider(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".aider.chat.history.md"
    shutil.copyfile(AGENTS / "aider" / "simple.chat.history.md", path)
    age(path, AN_HOUR)
    return path


def _targets(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """How a user names each session, and the agent's label in the sentences."""
    db = database(tmp_path / "opencode")
    return {
        "OpenCode DB": (str(db), "an OpenCode"),
        "OpenCode DB#ID": (f"{db}#{SIMPLE_ID}", "an OpenCode"),
        "aider": (str(_aider(tmp_path / "todo-app")), "an aider"),
    }


def _messages(path: str, cwd: Path) -> list[tuple[str, str]]:
    done = run_wren(["log", path, "--json"], cwd=cwd)
    assert done.returncode == 0, done.stderr
    events = json.loads(done.stdout)["events"]
    return [
        (e["message"]["role"], e["message"]["content"])
        for e in events
        if e["type"] == "message" and e["message"]["role"] in ("user", "assistant") and e["message"]["content"]
    ]


@pytest.mark.parametrize("which", ["OpenCode DB", "OpenCode DB#ID", "aider"])
def test_a_database_or_chat_history_exports_as_atif_and_reads_back_as_the_same_conversation(
    which: str, tmp_path: Path
) -> None:
    target, _label = _targets(tmp_path)[which]
    source = target.partition("#")[0]
    digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
    out = tmp_path / "out" / "trajectory.json"
    out.parent.mkdir()
    done = run_wren(["export", target, "--format", "atif", "-o", str(out)], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {out}"
    Trajectory.model_validate_json(out.read_bytes())  # valid ATIF, by a reader that is not ours
    said = _messages(target, tmp_path)
    assert said and _messages(str(out), tmp_path) == said
    assert hashlib.sha256(Path(source).read_bytes()).hexdigest() == digest  # only read


@pytest.mark.parametrize("which", ["OpenCode DB", "OpenCode DB#ID", "aider"])
def test_export_to_another_format_and_diff_refuse_a_database_or_chat_history_naming_atif_and_the_fork(
    which: str, tmp_path: Path
) -> None:
    target, label = _targets(tmp_path)[which]
    journal = write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", finished_story())
    work = tmp_path / "work"
    work.mkdir()
    runs = {
        "export md": ["export", target, "-o", str(work / "out.md")],
        "export html": ["export", target, "--format", "html"],
        "export json": ["export", target, "--format", "json"],
        "diff A": ["diff", target, str(journal)],
        "diff B": ["diff", str(journal), target],
    }
    for name, argv in runs.items():
        proc = run_wren(argv, cwd=work)
        assert proc.returncode == 2, (name, proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        command = name.split()[0]
        assert line.startswith(f"wren: {target}: is {label} session, not a Wren journal, and wren {command}"), line
        assert "neither a session id" not in line and "`wren fork " in line
        if command == "export":
            assert "--format atif" in line
    assert list(work.iterdir()) == []
