"""The Linux wheels, as a user gets them from a package index: built, their tags read, installed on each CPython here.

`python -m tests.wheel` (`just wheel`) builds the sdist, and from it the manylinux wheels for x86_64 and
aarch64 (tests/wheel.py says how, and why Zig). Here: each wheel's tags are the ones an index takes and pip
installs on every CPython from 3.11 (cp311-abi3-manylinux_2_17), auditwheel finds it consistent with that
policy, it holds the four C modules, built for its machine; and on each of CPython 3.11, 3.12 and 3.13 found
on this machine, a fresh virtualenv installs this machine's wheel, `wren --version` says the C modules are in
use, the demo workspace is prepared, the scripted agent works on it, and `wren search` finds what it did. An
interpreter that is not here is skipped, saying so. The other machine's wheel cannot run here.

Time: the wheels are built once for the module (about 35 s each). Each venv is made, and the wheel installed
with its dependencies (resolved against the index, as a user's install is), by uv from its cache: about 2 s
each where uv is installed (the dev extra), against about a minute each with pip, the fallback.
"""

from __future__ import annotations

import email.parser
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest

from tests.wheel import MACHINES, POLICY_GLIBC, REPO, build_linux_wheels

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="the wheel built here is Linux's; CI builds the others"),
]
MODULES = [
    "wren_tui/journal/_lines",
    "wren_tui/search/_scan",
    "wren_tui/foreign/_aider",
    "wren_tui/snapshots/_linediff",
]
ELF_MACHINE = {"x86_64": 62, "aarch64": 183}  # an ELF header's e_machine


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("ziglang", reason="Zig is not installed: pip install -e '.[dev]'")
    pytest.importorskip("auditwheel", reason="auditwheel is not installed: pip install -e '.[dev]'")
    pytest.importorskip("build", reason="build is not installed: pip install -e '.[dev]'")
    return build_linux_wheels(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def built(wheels: dict[str, Path]) -> Path:
    """The wheel for this machine."""
    return wheels[MACHINES[0]]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_wheel_is_tagged_for_every_cpython_from_311_on_manylinux2014(wheels: dict[str, Path], machine: str) -> None:
    built = wheels[machine]
    policy = f"manylinux_{POLICY_GLIBC.replace('.', '_')}_{machine}"
    name = built.name
    assert name.startswith("wren_tui-0.1.0-cp311-abi3-"), name
    assert policy in name and f"manylinux2014_{machine}" in name, name
    with zipfile.ZipFile(built) as wheel:
        names = wheel.namelist()
        meta = email.parser.Parser().parsestr(wheel.read("wren_tui-0.1.0.dist-info/WHEEL").decode())
        tags = sorted(meta.get_all("Tag") or [])
        assert tags == sorted([f"cp311-abi3-manylinux2014_{machine}", f"cp311-abi3-{policy}"])
        assert meta["Root-Is-Purelib"] == "false"
        for module in MODULES:
            assert f"{module}.abi3.so" in names, f"{module} is missing: {sorted(n for n in names if '.so' in n)}"
            header = wheel.read(f"{module}.abi3.so")[:20]
            assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == ELF_MACHINE[machine]
    # auditwheel reads each module's glibc symbols and needed libraries: the policy holds.
    shown = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", str(built)], capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    floor = re.search(r'consistent with the following platform tag: "manylinux_(\d+)_(\d+)_', said)
    assert floor, said
    assert (int(floor.group(1)), int(floor.group(2))) <= (2, 17), said


def test_the_sdist_holds_what_the_readmes_relative_links_point_to(built: Path) -> None:
    (sdist,) = built.parent.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    linked = {
        target.split("#")[0]
        for target in re.findall(r"\]\(([^)\s]+)\)", readme)
        if not re.match(r"[a-z]+:", target) and not target.startswith("#")
    }
    assert linked, "the README links to nothing in the repository?"
    missing = sorted(target for target in linked if target.rstrip("/") not in names)
    assert not missing, f"the sdist lacks what the README links to: {missing}"


def _uv() -> str | None:
    """uv (the dev extra): it makes a venv and installs a wheel with its dependencies from its cache."""
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else shutil.which("uv")


def _interpreter(minor: int) -> str | None:
    """CPython 3.MINOR on this machine: pyenv's versions, then PATH; None when there is none."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates = sorted(glob.glob(f"{root}/versions/3.{minor}.*/bin/python3.{minor}"), reverse=True)
    candidates += [p for p in [shutil.which(f"python3.{minor}"), f"/usr/bin/python3.{minor}"] if p]
    for candidate in candidates:
        try:
            said = subprocess.run(
                [candidate, "-c", "import sys, venv; print(sys.implementation.name, *sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except OSError:
            continue
        if said.returncode == 0 and said.stdout.split() == ["cpython", "3", str(minor)]:
            return candidate
    return None


@pytest.mark.parametrize("minor", [11, 12, 13])
def test_the_wheel_installs_and_runs_the_demo_and_a_search_on_cpython(built: Path, minor: int) -> None:
    python = _interpreter(minor)
    if python is None:
        pytest.skip(f"no CPython 3.{minor} on this machine (looked in pyenv's versions and on PATH)")
    with tempfile.TemporaryDirectory(prefix=f"wren-wheel-3{minor}-") as work:
        home = Path(work)
        venv = home / "venv"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WREN_", "PYTHON", "VIRTUAL_ENV"))}
        env.update(XDG_STATE_HOME=str(home / "state"), PIP_DISABLE_PIP_VERSION_CHECK="1")
        # The system's certificates, as pip's (truststore): behind a proxy with its own authority (CI's), uv's
        # bundled roots refuse the index. Both names: uv renamed the variable.
        env.update(UV_SYSTEM_CERTS="1", UV_NATIVE_TLS="1")

        def run(*argv: str | Path) -> subprocess.CompletedProcess[str]:
            argv_ = [str(a) for a in argv]
            done = subprocess.run(argv_, cwd=home, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
            return done

        uv = _uv()
        installed = False
        if uv is not None:  # the venv and the install in about 2 s, from uv's cache
            run(uv, "venv", "--quiet", "--python", python, venv)
            argv = [uv, "pip", "install", "--quiet", "--python", venv / "bin" / "python", built]
            by_uv = subprocess.run(
                [str(a) for a in argv], cwd=home, env=env, capture_output=True, text=True, timeout=600
            )
            # uv that cannot reach the index (where pip can: its own certificates, proxy settings) is not the
            # wheel's failure: pip, the user's own installer, is the test then. Any other failure is.
            assert by_uv.returncode == 0 or "Failed to fetch" in by_uv.stderr, by_uv.stderr
            installed = by_uv.returncode == 0
            if not installed:
                shutil.rmtree(venv)
        if not installed:  # about a minute each
            run(python, "-m", "venv", venv)
            run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", built)
        wren = venv / "bin" / "wren"
        loaded = run(venv / "bin" / "python", "-c", "import wren_tui.journal._lines as m; print(m.__file__)")
        assert loaded.stdout.strip().startswith(str(venv)), loaded.stdout  # the wheel's, not this checkout's
        assert loaded.stdout.strip().endswith(".abi3.so"), loaded.stdout
        version = run(wren, "--version")
        assert "C modules: 4 of 4 in use" in version.stdout, version.stdout
        run(wren, "demo", "--prepare", home / "ws")
        task = "run the tests, find the failing case and fix it"
        ran = run(wren, "run", "--yes", "--model", "scripted", "--workspace", home / "ws", "--dir", home / "j", task)
        session = re.search(r"s-\d{8}-\d{6}-\w+", ran.stdout + ran.stderr)
        assert session, ran.stdout
        found = run(wren, "search", "--dir", home / "j", "test_mean_of_empty_list_is_zero")
        assert session.group(0) in found.stdout, found.stdout
