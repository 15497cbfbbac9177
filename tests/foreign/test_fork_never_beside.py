"""A fork of another agent's session never goes beside that agent's files, whatever --dir or WREN_DIR says."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_wren

AGENTS = Path(__file__).parent.parent / "fixtures" / "agents"


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


@pytest.mark.parametrize("how", ["--dir", "WREN_DIR"])
def test_a_fork_is_never_written_beside_another_agent_s_files(tmp_path: Path, how: str) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-work-demo"
    project.mkdir(parents=True)
    session = project / "aaaaaaaa-1111-2222-3333-444444444444.jsonl"
    shutil.copy(AGENTS / "claude-code" / "multi-turn.jsonl", session)
    loose = tmp_path / "loose"  # a copy outside any agent's folder: its own folder is still another agent's
    loose.mkdir()
    shutil.copy(AGENTS / "pi" / "multi-turn.jsonl", loose / "pi.jsonl")
    env = {"HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state")}
    for source, folder, whose in (
        (session, project, f"the folder of {session.name}"),
        (session, project / "deeper", "in Claude Code's sessions folder"),
        (loose / "pi.jsonl", loose, "the folder of pi.jsonl"),
        (session, home / "link-to-project", f"the folder of {session.name}"),  # a link to it
    ):
        if folder.name == "link-to-project":
            os.symlink(project, folder)
        points = run_wren(["fork", str(source), "--json"], cwd=tmp_path, env=env)
        seq = str(json.loads(points.stdout)[-1]["seq"])
        before = {root: _tree(root) for root in (home / ".claude", loose)}
        argv = ["fork", str(source), seq]
        if how == "--dir":
            proc = run_wren([*argv, "--dir", str(folder)], cwd=tmp_path, env=env)
        else:
            proc = run_wren(argv, cwd=tmp_path, env={**env, "WREN_DIR": str(folder)})
        assert proc.returncode == 1, proc.stdout
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith(f"wren: {folder}: is {whose}") and "never beside another agent's files" in line
        assert {root: _tree(root) for root in (home / ".claude", loose)} == before
        assert not (project / "deeper").exists()
    # Into Wren's own journals folder it is made, as ever.
    proc = run_wren(["fork", str(session), seq, "--dir", str(tmp_path / "journals")], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "journals").glob("s-*.jsonl"))) == 1
