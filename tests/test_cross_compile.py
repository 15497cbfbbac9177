"""Every C file compiles for the systems the wheels are built for, warnings as errors, with Zig's C compiler.

The wheels (docs/packaging.md) are built on each system by that system's compiler; this checks on Linux,
before any of them runs, that no C file leans on one system: a GNU extension Windows' C libraries lack
(memmem was one), POSIX threads outside their guard, x86 intrinsics outside theirs, a variable or
function only one architecture's path uses (an error with -Wall on arm64 once), and nothing beyond
CPython's limited API (the macro setup.py builds with). Each file is compiled to an object (`-c`), so
the code generator sees each target's intrinsics and attributes too.

Python's headers: the running Python's own `Include/` for the Linux and macOS targets, on a Linux host
(its `pyconfig.h` describes a 64-bit LP64 Unix, as both targets are; the test runs on Linux only).
Windows needs a `pyconfig.h` of its own, and the host's cannot serve (it names POSIX headers such as
sys/select.h that Windows has not), so the test writes one: WINDOWS_PYCONFIG below, ours, the few facts
Python's headers ask of a 64-bit Windows (LLP64: a long is 4 bytes; a wide char 2; MS_WINDOWS, so symbols
are imported from the DLL) and nothing more.
It proves our files compile against the limited API's declarations with MinGW's C library for 64-bit
Windows; it does not prove MSVC takes them (the Windows wheel is built with MSVC, in
.github/workflows/wheels.yml), nor that they link against python3.dll or run there.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
C_FILES = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "wren_tui").rglob("*.c"))
TARGETS = ["aarch64-linux-gnu", "x86_64-macos", "aarch64-macos", "x86_64-windows-gnu"]

# What Python's headers ask of the platform, for 64-bit Windows (LLP64), written for this test.
WINDOWS_PYCONFIG = """\
/* pyconfig.h for a 64-bit Windows target, written by tests/test_cross_compile.py (not CPython's file):
   only what Python's headers ask of the platform, for a syntax and code check of Wren's C files. */
#ifndef Py_CONFIG_H
#define Py_CONFIG_H
#define MS_WINDOWS
#define MS_WIN32
#define MS_WIN64
#define NT_THREADS
#define WITH_THREAD
#define Py_ENABLE_SHARED 1
#define SIZEOF_SHORT 2
#define SIZEOF_INT 4
#define SIZEOF_LONG 4
#define SIZEOF_LONG_LONG 8
#define SIZEOF_VOID_P 8
#define SIZEOF_SIZE_T 8
#define SIZEOF_TIME_T 8
#define SIZEOF_WCHAR_T 2
#define SIZEOF_FLOAT 4
#define SIZEOF_DOUBLE 8
#define SIZEOF_FPOS_T 8
#define SIZEOF__BOOL 1
#define SIZEOF_OFF_T 4
#define SIZEOF_PID_T SIZEOF_INT
#define ALIGNOF_SIZE_T 8
#define ALIGNOF_LONG 4
#define HAVE_UINTPTR_T 1
#define HAVE_INTPTR_T 1
#define HAVE_WCHAR_H 1
#endif
"""


def _limited_api() -> str:
    """The Py_LIMITED_API value setup.py builds the modules with (one place says it)."""
    found = re.search(r'"Py_LIMITED_API",\s*"(0x[0-9A-Fa-f]+)"', (REPO / "setup.py").read_text(encoding="utf-8"))
    assert found, "setup.py no longer names Py_LIMITED_API: update this test with it"
    return found.group(1)


@pytest.fixture(scope="module")
def windows_include(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The host's Python headers with our Windows pyconfig.h in place of the host's.

    A copy, because Python.h includes "pyconfig.h" from its own folder before any -I folder."""
    folder = tmp_path_factory.mktemp("windows-include") / "include"
    shutil.copytree(sysconfig.get_paths()["include"], folder)
    (folder / "pyconfig.h").write_text(WINDOWS_PYCONFIG, encoding="utf-8")
    return folder


@pytest.mark.skipif(importlib.util.find_spec("ziglang") is None, reason="Zig is not installed: pip install -e '.[dev]'")
@pytest.mark.skipif(sys.platform != "linux", reason="the targets' headers are a Linux host's; Linux CI runs it")
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", C_FILES)
def test_each_c_file_compiles_for_each_wheel_target_without_a_warning(
    source: str, target: str, windows_include: Path, tmp_path: Path
) -> None:
    include = windows_include if "windows" in target else Path(sysconfig.get_paths()["include"])
    command = [
        sys.executable, "-m", "ziglang", "cc", "-target", target, "-O2",
        "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
        f"-DPy_LIMITED_API={_limited_api()}",
        # Python's own headers as system headers: a warning there is not ours to fix.
        "-isystem", str(include),
        "-c", source, "-o", str(tmp_path / "out.o"),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{source} does not compile for {target}:\n{done.stderr}"
    assert not done.stderr.strip(), f"{source} compiles for {target} with output:\n{done.stderr}"
    assert (tmp_path / "out.o").stat().st_size > 0


def test_the_c_files_are_the_three_modules_setup_builds() -> None:
    """A new C file is compiled above only if it is found; and each file found is one setup.py builds."""
    declared = re.findall(r'"(wren_tui/[\w/]+\.c)"', (REPO / "setup.py").read_text(encoding="utf-8"))
    assert sorted(declared) == C_FILES
