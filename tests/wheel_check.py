"""`python tests/wheel_check.py PROJECT`: an installed wheel works (cibuildwheel's test-command, on every system).

Run by cibuildwheel in a fresh environment with only the built wheel installed (and its dependencies), on each
CPython it selects: `wren --version` says the four C modules are in use (the wheel carries them and this Python
loads them), and `wren search` reads the repository's sample journals (a reading command, which every system
runs) and finds a match. Only the standard library: the test environment has no dev extras.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def wren(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "wren_tui", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)


def main(project: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="wren-wheel-check-") as state:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")}
        env["XDG_STATE_HOME"] = state
        version = wren("--version", env=env)
        print(version.stdout, version.stderr, sep="")
        if version.returncode != 0 or "C modules: 4 of 4 in use" not in version.stdout:
            print("the wheel's C modules are not all in use", file=sys.stderr)
            return 1
        journals = Path(state, "journals")  # a copy: search keeps its index beside the journals it reads
        shutil.copytree(project / "journals", journals)
        found = wren("search", "--dir", str(journals), "median", env=env)
        print(found.stdout, found.stderr, sep="")
        if found.returncode != 0:
            print(f"wren search exited {found.returncode} over the sample journals", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])))
