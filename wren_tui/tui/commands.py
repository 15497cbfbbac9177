"""The viewer's commands (watch, demo): registered on the `wren` parser."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Added by the viewer work (issue 4)."""
