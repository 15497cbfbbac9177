"""The four C modules, declared here because pyproject.toml's [tool.setuptools.ext-modules] is still
experimental in setuptools (it warns at every build); everything else is in pyproject.toml.

Each module is optional (unless WREN_REQUIRE_C_MODULES=1): without a C compiler the install goes on and
Python's fallback does the same work, slower, with the same answers (`wren --version` says which runs).
Each is built against CPython's limited API (abi3) of 3.11, so one wheel serves CPython 3.11 and every later
version (docs/packaging.md).
"""

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# The stable ABI of CPython 3.11: Py_buffer (the y* argument every module takes) joined it in 3.11.
LIMITED_API = ("Py_LIMITED_API", "0x030B0000")
# A wheel for a package index must carry the modules: WREN_REQUIRE_C_MODULES=1 (set by `just wheel` and
# cibuildwheel's configuration) makes a failed compile fail the build rather than fall back quietly.
OPTIONAL = os.environ.get("WREN_REQUIRE_C_MODULES", "") != "1"


def module(name: str, source: str, depends: list[str]) -> Extension:
    # -O2 everywhere but MSVC, which takes /O2 of its own from setuptools' defaults.
    flags = [] if sys.platform == "win32" else ["-O2"]
    return Extension(
        name,
        sources=[source],
        depends=depends,
        optional=OPTIONAL,
        py_limited_api=True,
        define_macros=[LIMITED_API],
        extra_compile_args=flags,
    )


class BuildExt(build_ext):
    """build_ext that removes a version-specific build left in the source tree by an older checkout.

    Python imports `_lines.cpython-311-x86_64-linux-gnu.so` before `_lines.abi3.so`: an editable install
    made before the modules moved to the limited API would keep its old build in use."""

    def run(self) -> None:
        super().run()
        for ext in self.extensions:
            leaf = ext.name.rpartition(".")[2]
            for old in Path(ext.sources[0]).parent.glob(f"{leaf}.cp*"):
                if old.suffix in {".so", ".pyd"} and ".abi3." not in old.name:
                    print(f"removing {old}: a version-specific build, imported before the abi3 one")
                    old.unlink()


setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=[
        # The reader's line check (see its header); without it reader.py checks the same lines in Python.
        module("wren_tui.journal._lines", "wren_tui/journal/_lines.c", ["wren_tui/_crc32.h"]),
        # Search's raw pass (see its header); without it search/rawpass.py does the same in Python.
        module("wren_tui.search._scan", "wren_tui/search/_scan.c", ["wren_tui/_crc32.h"]),
        # The line count of a big aider history's start; without it foreign/aider.py counts in Python.
        module("wren_tui.foreign._aider", "wren_tui/foreign/_aider.c", []),
        # The line diff `wren blame` runs on each snapshot and the next; without it linediff.py does the same.
        module("wren_tui.snapshots._linediff", "wren_tui/snapshots/_linediff.c", []),
    ],
    # The wheel's tag: cp311-abi3, which pip installs on CPython 3.11, 3.12, 3.13, ...
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
