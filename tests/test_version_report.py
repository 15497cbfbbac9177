"""`wren --version` says where it runs: the version, the C modules in use or Python's fallback, the durable sync.

Run as a user runs it (a separate process). The fallback is shown by a process in which the C modules cannot
be imported (a sitecustomize on its path refuses them, as an install without a compiler has none).
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_wren
from wren_tui import __version__
from wren_tui.cli.about import C_MODULES

pytestmark = pytest.mark.reading  # Windows runs it (the reading-commands subset)

MODULES = [name for name, _what, _fallback in C_MODULES]

# A sitecustomize that makes the named modules unimportable, as on an install that could not compile them.
REFUSE = """\
import sys
from importlib.abc import MetaPathFinder

class _NoC(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in {names!r}:
            raise ImportError(f"No module named {{name!r}} (refused by the test)")
        return None

sys.meta_path.insert(0, _NoC())
"""


def _built(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def test_the_version_report_names_the_version_each_c_module_and_the_durable_sync(tmp_path: Path) -> None:
    done = run_wren(["--version"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"wren {__version__}"
    built = [name for name in MODULES if _built(name)]
    assert f"C modules: {len(built)} of {len(MODULES)} in use" in lines
    for name in MODULES:
        short = name.removeprefix("wren_tui.")
        (line,) = [line for line in lines if line.strip().startswith(f"{short}:")]
        assert (": C (" in line) == (name in built), line
    (sync,) = [line for line in lines if line.startswith("Journal's durable sync: ")]
    assert sync.split(": ", 1)[1] in {"F_FULLFSYNC", "fdatasync", "fsync"}


def test_the_durable_sync_and_liveness_reported_are_the_ones_the_portable_layer_chose(tmp_path: Path) -> None:
    from wren_tui import portable

    done = run_wren(["--version"], cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert f"Journal's durable sync: {portable.DURABLE_SYNC}" in lines
    assert f"A writer seen live by: {portable.LIVENESS}" in lines


@pytest.mark.parametrize("refused", [MODULES, MODULES[:1]], ids=["none built", "one missing"])
def test_a_c_module_that_cannot_be_imported_is_reported_as_pythons_fallback(tmp_path: Path, refused: list[str]) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(REFUSE.format(names=set(refused)), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(Path(__file__).resolve().parents[1])])
    done = subprocess.run(
        [sys.executable, "-m", "wren_tui", "--version"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    in_use = [name for name in MODULES if name not in refused and _built(name)]
    assert f"C modules: {len(in_use)} of {len(MODULES)} in use" in lines
    for name in refused:
        short = name.removeprefix("wren_tui.")
        (line,) = [line for line in lines if line.strip().startswith(f"{short}:")]
        assert "Python's fallback" in line and "refused by the test" in line, line
