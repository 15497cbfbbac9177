"""The agent's commands (run, chat, resume, demo --prepare): registered on the `wren` parser."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Added by the agent work (issue 3)."""
