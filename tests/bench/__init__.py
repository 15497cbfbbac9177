"""Benchmarks: each `bench_*.py` module here has `run() -> list[BenchRow]`; `python -m tests.bench` prints them.

Every figure is a ratio against a baseline measured in the same run on the same machine, so the
table says how Wren compares with the obvious alternative, not how fast this machine is.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BenchRow:
    """One line of the table: our figure, the baseline's, their ratio, the target and whether it is met."""

    what: str
    ours: str
    baseline: str
    ratio: float | None
    target: str
    verdict: str


def compare(
    what: str,
    ours: float,
    baseline: float,
    *,
    unit: str = "s",
    at_most: float | None = None,
    at_least: float | None = None,
) -> BenchRow:
    """A row for `ours / baseline` (lower is better for times); the target bounds that ratio."""
    ratio = ours / baseline if baseline > 0 else float("inf")
    return BenchRow(
        what,
        fmt(ours, unit),
        fmt(baseline, unit),
        ratio,
        _target(at_most, at_least),
        _verdict(ratio, at_most, at_least),
    )


def speedup(what: str, ours: float, baseline: float, *, unit: str = "s", at_least: float | None = None) -> BenchRow:
    """A row for how many times faster ours is (`baseline / ours`), with a minimum if there is one."""
    ratio = baseline / ours if ours > 0 else float("inf")
    target = "-" if at_least is None else f">= {at_least:g}x faster"
    return BenchRow(what, fmt(ours, unit), fmt(baseline, unit), ratio, target, _verdict(ratio, None, at_least))


def absolute(
    what: str, ours: float, *, unit: str = "s", at_most: float | None = None, at_least: float | None = None
) -> BenchRow:
    """A row with no baseline: the figure itself against a bound."""
    return BenchRow(
        what, fmt(ours, unit), "-", None, _target(at_most, at_least, unit), _verdict(ours, at_most, at_least)
    )


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of `repeat` runs in seconds: the least disturbed by the other work on the machine."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def fmt(value: float, unit: str) -> str:
    if unit == "s":
        if value < 1e-3:
            return f"{value * 1e6:.1f} µs"
        if value < 1:
            return f"{value * 1e3:.1f} ms"
        return f"{value:.2f} s"
    return f"{value:,.1f} {unit}".rstrip()


def _target(at_most: float | None, at_least: float | None, unit: str = "") -> str:
    suffix = f" {unit}" if unit else ""
    parts = []
    if at_most is not None:
        parts.append(f"<= {at_most:g}{suffix}")
    if at_least is not None:
        parts.append(f">= {at_least:g}{suffix}")
    return ", ".join(parts) or "-"


def _verdict(value: float, at_most: float | None, at_least: float | None) -> str:
    if at_most is None and at_least is None:
        return "-"
    ok = (at_most is None or value <= at_most) and (at_least is None or value >= at_least)
    return "met" if ok else "MISSED"


def plain_interpreter(folder: Path) -> Path:
    """An interpreter that starts as a wheel's user's does: a virtual environment of this Python (no pip) whose
    site-packages lists this checkout and this environment's site-packages as paths, so that no `.pth` of the
    editable install runs at start (a path line of a `.pth` is added to sys.path; its own `.pth` files are not read)."""
    import site
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(folder)
    python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    ask = "import site; print(site.getsitepackages()[-1])"
    packages = subprocess.run([python, "-c", ask], capture_output=True, text=True, check=True).stdout.strip()
    checkout = str(Path(__file__).resolve().parents[2])
    Path(packages, "wren-bench.pth").write_text("\n".join([checkout, *site.getsitepackages()]) + "\n")
    return python


def wheel_script(folder: Path) -> Path:
    """The `wren` script a wheel's install writes (what pip's console script runs), in `folder`: run by a
    `plain_interpreter`, the command starts as a wheel's user's does."""
    script = folder / "wren"
    script.write_text("import sys\nfrom wren_tui.cli import main\nsys.exit(main())\n")
    return script
