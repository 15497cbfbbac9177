"""`wren demo`: a fresh demo workspace, the scripted agent in its own process, the viewer on it."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Added by the viewer work (issue 4)."""
