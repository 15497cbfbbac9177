"""The reliability suite's dial: WREN_TORTURE=1 (`just torture`) multiplies examples and iterations."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

TORTURE = os.environ.get("WREN_TORTURE") == "1"


def scaled(ci: int, torture: int) -> int:
    """An iteration count: `ci` in the default run, `torture` under `just torture`."""
    return torture if TORTURE else ci


def examples(ci: int, torture: int) -> settings:
    """Hypothesis settings with `ci` or `torture` examples and no per-example deadline (the machine is shared)."""
    return settings(
        max_examples=scaled(ci, torture),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
